//! Score-P filter files:
//!
//! ```text
//! SCOREP_REGION_NAMES_BEGIN
//!   EXCLUDE *
//!   INCLUDE main solve*
//!           bar
//!   EXCLUDE MANGLED _Z3fooi
//! SCOREP_REGION_NAMES_END
//! SCOREP_FILE_NAMES_BEGIN
//!   EXCLUDE */generated/*
//! SCOREP_FILE_NAMES_END
//! ```
//!
//! Rules apply in order and the last matching rule wins; everything is included by default.
//! Patterns are shell wildcards; `#` starts a comment; `MANGLED` matches the linked symbol
//! instead of the readable name.

use crate::wildcard::{matches_file, Wildcard};

#[derive(Debug, Clone, Default)]
pub struct ScorePFilter {
    regions: Vec<Rule>,
    files: Vec<Rule>,
}

#[derive(Debug, Clone)]
struct Rule {
    include: bool,
    mangled: bool,
    patterns: Vec<Wildcard>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Regions,
    Files,
}

impl ScorePFilter {
    pub fn parse(text: &str) -> Result<ScorePFilter, (usize, String)> {
        let mut filter = ScorePFilter::default();
        let mut block = Block::None;
        let mut opened_at = 0;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            let mut words = line.split_whitespace().peekable();
            while let Some(word) = words.next() {
                match (word, block) {
                    ("SCOREP_REGION_NAMES_BEGIN", Block::None) => (block, opened_at) = (Block::Regions, n),
                    ("SCOREP_FILE_NAMES_BEGIN", Block::None) => (block, opened_at) = (Block::Files, n),
                    ("SCOREP_REGION_NAMES_END", Block::Regions) | ("SCOREP_FILE_NAMES_END", Block::Files) => {
                        block = Block::None
                    }
                    (w, _) if w.starts_with("SCOREP_") => {
                        return Err((
                            n,
                            format!("{w} is not expected here (block opened at line {opened_at})"),
                        ))
                    }
                    (_, Block::None) => {
                        return Err((n, format!("{word:?} is outside a SCOREP_..._BEGIN/END block")))
                    }
                    ("INCLUDE" | "EXCLUDE", _) => {
                        let mangled = words.next_if_eq(&"MANGLED").is_some();
                        if mangled && block == Block::Files {
                            return Err((n, "MANGLED applies to region names, not file names".into()));
                        }
                        let rules =
                            if block == Block::Regions { &mut filter.regions } else { &mut filter.files };
                        rules.push(Rule { include: word == "INCLUDE", mangled, patterns: Vec::new() });
                    }
                    (pattern, _) => {
                        let rules =
                            if block == Block::Regions { &mut filter.regions } else { &mut filter.files };
                        let rule = rules.last_mut().ok_or_else(|| {
                            (n, format!("pattern {pattern:?} before any INCLUDE or EXCLUDE"))
                        })?;
                        rule.patterns.push(Wildcard::shell(pattern).map_err(|e| (n, e))?);
                    }
                }
            }
        }
        if block != Block::None {
            return Err((opened_at, "block is never closed".into()));
        }
        Ok(filter)
    }

    pub fn includes(&self, symbol: &str, readable: &str, file: &str) -> bool {
        let file_ok = last_verdict(&self.files, |p| matches_file(p, file)).unwrap_or(true);
        let name_ok = self.regions.iter().rev().find_map(|rule| {
            let hit = rule.patterns.iter().any(|p| {
                if rule.mangled {
                    p.matches(symbol)
                } else {
                    p.matches(readable) || p.matches(readable.split_once('(').map_or(readable, |(n, _)| n))
                }
            });
            hit.then_some(rule.include)
        });
        file_ok && name_ok.unwrap_or(true)
    }
}

fn last_verdict(rules: &[Rule], hit: impl Fn(&Wildcard) -> bool) -> Option<bool> {
    rules.iter().rev().find_map(|rule| rule.patterns.iter().any(&hit).then_some(rule.include))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILTER: &str = "
# keep only the solver
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *
  INCLUDE main solve*
          bar   # trailing comment
  EXCLUDE MANGLED _Z5solvei
SCOREP_REGION_NAMES_END
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */generated/*
SCOREP_FILE_NAMES_END
";

    #[test]
    fn last_matching_rule_wins() {
        let f = ScorePFilter::parse(FILTER).unwrap();
        assert!(f.includes("main", "main", "/src/a.c"));
        assert!(f.includes("bar", "bar", "/src/a.c"));
        assert!(f.includes("solve_all", "solve_all", "/src/a.c"));
        assert!(!f.includes("other", "other", "/src/a.c"));
        assert!(!f.includes("_Z5solvei", "solve(int)", "/src/a.cpp"), "the MANGLED rule comes last");
        assert!(!f.includes("main", "main", "/src/generated/m.c"));
    }

    #[test]
    fn default_is_include() {
        let f = ScorePFilter::parse("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE tiny\nSCOREP_REGION_NAMES_END\n")
            .unwrap();
        assert!(f.includes("x", "x", "a.c"));
        assert!(!f.includes("tiny", "tiny", "a.c"));
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE a\n", 1, "never closed"),
            ("EXCLUDE a\n", 1, "outside"),
            ("SCOREP_REGION_NAMES_BEGIN\nfoo\nSCOREP_REGION_NAMES_END\n", 2, "before any INCLUDE"),
            ("SCOREP_FILE_NAMES_BEGIN\nEXCLUDE MANGLED x\nSCOREP_FILE_NAMES_END\n", 2, "MANGLED"),
            ("SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_END\n", 2, "not expected"),
            ("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE [z-\nSCOREP_REGION_NAMES_END\n", 2, "bad pattern"),
        ];
        for (text, line, needle) in cases {
            let (n, message) = ScorePFilter::parse(text).unwrap_err();
            assert_eq!(n, line, "{text:?}: {message}");
            assert!(message.contains(needle), "{text:?}: {message}");
        }
    }
}
