//! Wildcard patterns: shell-style (`*`, `?`, `[...]`) for Score-P and file names, and TAU's
//! routine patterns, where only `#` is a wildcard (`*` is part of C types such as `char *`).

use glob::{MatchOptions, Pattern};

const OPTIONS: MatchOptions = MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

#[derive(Debug, Clone)]
pub struct Wildcard(Pattern);

impl Wildcard {
    /// A shell-style pattern.
    pub fn shell(text: &str) -> Result<Wildcard, String> {
        Pattern::new(text).map(Wildcard).map_err(|e| format!("bad pattern {text:?}: {}", e.msg))
    }

    /// A TAU routine pattern: `#` matches any run of characters, everything else is literal.
    /// A run of `#` is one wildcard (glob would read `**` as a directory wildcard).
    pub fn tau(text: &str) -> Wildcard {
        let mut escaped = String::with_capacity(text.len());
        for c in Pattern::escape(text).chars() {
            if c != '#' {
                escaped.push(c);
            } else if !escaped.ends_with('*') || escaped.ends_with("[*]") {
                escaped.push('*');
            }
        }
        Wildcard(Pattern::new(&escaped).expect("escaped patterns are valid"))
    }

    pub fn matches(&self, text: &str) -> bool {
        self.0.matches_with(text, OPTIONS)
    }
}

/// Whether `pattern` matches `path` or its last component.
pub fn matches_file(pattern: &Wildcard, path: &str) -> bool {
    pattern.matches(path) || path.rsplit('/').next().is_some_and(|base| pattern.matches(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_patterns_use_hash_only() {
        assert!(Wildcard::tau("sort_#").matches("sort_5elements"));
        assert!(Wildcard::tau("void f(char *)").matches("void f(char *)"));
        assert!(!Wildcard::tau("void f(char *)").matches("void f(char x)"));
        assert!(Wildcard::tau("sort##").matches("sort_5"), "a run of # is one wildcard");
        assert!(Wildcard::tau("f(char *#)").matches("f(char *, int)"));
        assert!(!Wildcard::tau("f(char *#)").matches("f(char x)"));
    }

    #[test]
    fn files_match_by_path_or_base_name() {
        let p = Wildcard::shell("*.c").unwrap();
        assert!(matches_file(&p, "/src/a.c"));
        assert!(matches_file(&Wildcard::shell("a?.c").unwrap(), "/src/ab.c"));
        assert!(!matches_file(&p, "/src/a.cpp"));
    }
}
