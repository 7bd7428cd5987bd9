//! TAU selective-instrumentation files (tau_instrumentor's `-f` format):
//!
//! ```text
//! BEGIN_EXCLUDE_LIST            routines not to instrument (# is a wildcard)
//! void quicksort(int *, int, int)
//! END_EXCLUDE_LIST
//! BEGIN_INCLUDE_LIST            only these routines
//! BEGIN_FILE_INCLUDE_LIST       only these files (* and ? wildcards)
//! BEGIN_FILE_EXCLUDE_LIST
//! BEGIN_INSTRUMENT_SECTION
//! loops routine="#"             loops of every routine
//! loops file="x.c" routine="foo"
//! END_INSTRUMENT_SECTION
//! ```
//!
//! TAU names routines by signature (`int main(int, char **)`); C symbols carry no signature, so a
//! pattern also matches when its name part (return type and parameters removed) matches the
//! routine's name without parameters.

use crate::wildcard::{matches_file, Wildcard};

#[derive(Debug, Clone, Default)]
pub struct TauSelection {
    exclude: Vec<RoutinePattern>,
    include: Option<Vec<RoutinePattern>>,
    file_exclude: Vec<Wildcard>,
    file_include: Option<Vec<Wildcard>>,
    loops: Vec<LoopRule>,
}

#[derive(Debug, Clone)]
struct RoutinePattern {
    full: Wildcard,
    name: Wildcard,
}

#[derive(Debug, Clone)]
struct LoopRule {
    routine: RoutinePattern,
    file: Option<Wildcard>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Exclude,
    Include,
    FileExclude,
    FileInclude,
    Instrument,
}

impl TauSelection {
    pub fn parse(text: &str) -> Result<TauSelection, (usize, String)> {
        let mut selection = TauSelection::default();
        let mut section = Section::None;
        let mut opened_at = 0;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim();
            if line.is_empty() || (section == Section::None && line.starts_with('#')) {
                continue;
            }
            if let Some(next) = begin(line) {
                if section != Section::None {
                    return Err((n, format!("{line} inside a section opened at line {opened_at}")));
                }
                section = next;
                opened_at = n;
                if next == Section::Include {
                    selection.include.get_or_insert_with(Vec::new);
                }
                if next == Section::FileInclude {
                    selection.file_include.get_or_insert_with(Vec::new);
                }
                continue;
            }
            if line.starts_with("END_") {
                if section == Section::None || end(line) != Some(section) {
                    return Err((n, format!("{line} does not close the open section")));
                }
                section = Section::None;
                continue;
            }
            match section {
                Section::None => {
                    return Err((n, format!("{line:?} is outside any BEGIN_..._LIST or section")))
                }
                Section::Exclude => selection.exclude.push(RoutinePattern::new(line)),
                Section::Include => {
                    selection.include.as_mut().expect("opened").push(RoutinePattern::new(line))
                }
                Section::FileExclude => selection.file_exclude.push(file_pattern(line).map_err(|e| (n, e))?),
                Section::FileInclude => selection
                    .file_include
                    .as_mut()
                    .expect("opened")
                    .push(file_pattern(line).map_err(|e| (n, e))?),
                Section::Instrument => selection.loops.push(LoopRule::parse(line).map_err(|e| (n, e))?),
            }
        }
        if section != Section::None {
            return Err((opened_at, "section is never closed".into()));
        }
        Ok(selection)
    }

    pub fn includes(&self, readable: &str, file: &str) -> bool {
        if let Some(files) = &self.file_include {
            if !files.iter().any(|p| matches_file(p, file)) {
                return false;
            }
        }
        if self.file_exclude.iter().any(|p| matches_file(p, file)) {
            return false;
        }
        if let Some(include) = &self.include {
            if !include.iter().any(|p| p.matches(readable)) {
                return false;
            }
        }
        !self.exclude.iter().any(|p| p.matches(readable))
    }

    pub fn wants_loops(&self, readable: &str, file: &str) -> bool {
        self.loops.iter().any(|rule| {
            rule.routine.matches(readable) && rule.file.as_ref().is_none_or(|f| matches_file(f, file))
        })
    }
}

fn begin(line: &str) -> Option<Section> {
    Some(match line {
        "BEGIN_EXCLUDE_LIST" => Section::Exclude,
        "BEGIN_INCLUDE_LIST" => Section::Include,
        "BEGIN_FILE_EXCLUDE_LIST" => Section::FileExclude,
        "BEGIN_FILE_INCLUDE_LIST" => Section::FileInclude,
        "BEGIN_INSTRUMENT_SECTION" => Section::Instrument,
        _ => return None,
    })
}

fn end(line: &str) -> Option<Section> {
    Some(match line {
        "END_EXCLUDE_LIST" => Section::Exclude,
        "END_INCLUDE_LIST" => Section::Include,
        "END_FILE_EXCLUDE_LIST" => Section::FileExclude,
        "END_FILE_INCLUDE_LIST" => Section::FileInclude,
        "END_INSTRUMENT_SECTION" => Section::Instrument,
        _ => return None,
    })
}

fn file_pattern(line: &str) -> Result<Wildcard, String> {
    Wildcard::shell(line.trim_matches('"'))
}

impl RoutinePattern {
    fn new(pattern: &str) -> RoutinePattern {
        let pattern = pattern.trim_matches('"');
        RoutinePattern {
            full: Wildcard::tau(strip_return_type(pattern)),
            name: Wildcard::tau(name_part(pattern)),
        }
    }

    fn matches(&self, readable: &str) -> bool {
        self.full.matches(readable) || self.name.matches(name_part(readable))
    }
}

/// `void ns::f(int *)` -> `ns::f(int *)`: drops leading words (the return type) before the
/// name, looking only outside parentheses and template brackets.
fn strip_return_type(signature: &str) -> &str {
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in signature.char_indices() {
        match c {
            '(' if depth == 0 => break,
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    &signature[start..]
}

/// `void ns::f(int *)` -> `ns::f`.
fn name_part(signature: &str) -> &str {
    let name = strip_return_type(signature);
    name.split_once('(').map_or(name, |(n, _)| n).trim()
}

impl LoopRule {
    /// `loops routine="NAME"` or `loops file="FILE" routine="NAME"`.
    fn parse(line: &str) -> Result<LoopRule, String> {
        let Some(rest) = line.strip_prefix("loops") else {
            let command = line.split_whitespace().next().unwrap_or(line);
            return Err(format!("instrument command {command:?} is not supported (only `loops`)"));
        };
        let mut routine = None;
        let mut file = None;
        for (key, value) in attributes(rest)? {
            match key.as_str() {
                "routine" => routine = Some(RoutinePattern::new(&value)),
                "file" => file = Some(Wildcard::shell(&value)?),
                other => return Err(format!("unknown attribute {other:?} in a loops command")),
            }
        }
        let routine = routine.ok_or("a loops command needs routine=\"...\"")?;
        Ok(LoopRule { routine, file })
    }
}

/// `key="value" key="value"` pairs.
fn attributes(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (key, after) =
            rest.split_once('=').ok_or_else(|| format!("expected key=\"value\" at {rest:?}"))?;
        let after = after
            .trim_start()
            .strip_prefix('"')
            .ok_or_else(|| format!("expected a quoted value after {key}="))?;
        let (value, tail) =
            after.split_once('"').ok_or_else(|| format!("unterminated quote after {key}="))?;
        pairs.push((key.trim().to_string(), value.to_string()));
        rest = tail.trim_start();
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
# exclude the sorting helpers
BEGIN_EXCLUDE_LIST
void quicksort(int *, int, int)
void sort_#
int helper(char *)
END_EXCLUDE_LIST
BEGIN_FILE_EXCLUDE_LIST
*/generated/*.c
END_FILE_EXCLUDE_LIST
BEGIN_INSTRUMENT_SECTION
loops file="cg.c" routine="conj_grad"
loops routine="main"
END_INSTRUMENT_SECTION
"#;

    #[test]
    fn exclude_lists_match_c_names_and_cpp_signatures() {
        let s = TauSelection::parse(FILE).unwrap();
        assert!(!s.includes("quicksort", "/src/a.c"));
        assert!(!s.includes("sort_5elements", "/src/a.c"));
        assert!(!s.includes("helper(char*)", "/src/a.cpp"), "C++ demangled names match by name part");
        assert!(s.includes("partition", "/src/a.c"));
        assert!(!s.includes("partition", "/src/generated/x.c"));
    }

    #[test]
    fn include_list_keeps_only_listed_routines() {
        let s = TauSelection::parse("BEGIN_INCLUDE_LIST\nint main(int, char **)\nsolve#\nEND_INCLUDE_LIST\n")
            .unwrap();
        assert!(s.includes("main", "a.c"));
        assert!(s.includes("solve_all", "a.c"));
        assert!(!s.includes("other", "a.c"));
    }

    #[test]
    fn file_include_list() {
        let s = TauSelection::parse("BEGIN_FILE_INCLUDE_LIST\nmain.c\nsolver?.c\nEND_FILE_INCLUDE_LIST\n")
            .unwrap();
        assert!(s.includes("f", "/p/main.c"));
        assert!(s.includes("f", "/p/solver2.c"));
        assert!(!s.includes("f", "/p/util.c"));
    }

    #[test]
    fn loops_section() {
        let s = TauSelection::parse(FILE).unwrap();
        assert!(s.wants_loops("conj_grad", "/npb/cg.c"));
        assert!(!s.wants_loops("conj_grad", "/npb/other.c"));
        assert!(s.wants_loops("main", "/any.c"));
        assert!(!s.wants_loops("sparse", "/npb/cg.c"));
        let all =
            TauSelection::parse("BEGIN_INSTRUMENT_SECTION\nloops routine=\"#\"\nEND_INSTRUMENT_SECTION\n")
                .unwrap();
        assert!(all.wants_loops("anything", "x.f90"));
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("BEGIN_EXCLUDE_LIST\nfoo\n", 1, "never closed"),
            ("foo\n", 1, "outside"),
            ("BEGIN_EXCLUDE_LIST\nEND_INCLUDE_LIST\n", 2, "does not close"),
            ("BEGIN_INSTRUMENT_SECTION\nline=3 code=\"x\"\nEND_INSTRUMENT_SECTION\n", 2, "not supported"),
            ("BEGIN_INSTRUMENT_SECTION\nloops file=\"a.c\"\nEND_INSTRUMENT_SECTION\n", 2, "routine="),
            ("\n\nBEGIN_FILE_INCLUDE_LIST\n[a-\nEND_FILE_INCLUDE_LIST\n", 4, "bad pattern"),
            ("BEGIN_EXCLUDE_LIST\nBEGIN_INCLUDE_LIST\n", 2, "inside a section"),
        ];
        for (text, line, needle) in cases {
            let (n, message) = TauSelection::parse(text).unwrap_err();
            assert_eq!(n, line, "{text:?}: {message}");
            assert!(message.contains(needle), "{text:?}: {message}");
        }
    }
}
