//! Every `INSTRUMENT_*` environment setting, declared once: its name, what it takes, its default
//! and a one-line description, with one parser per kind and one boolean grammar. The runtime,
//! the pass, the wrappers and the tools read settings only through these declarations, so a
//! value means the same everywhere and a bad value is one line naming the variable (the runtime
//! then keeps the default, the build tools stop). The README's settings table is tested against
//! `ALL`.

use std::fmt;

/// What a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// On or off: `1`, `on`, `yes`, `true` or `0`, `off`, `no`, `false` (any case).
    Flag,
    /// A whole number of at least `min`.
    Number { min: u64 },
    /// One of these words; the boolean words also read as `on` and `off` when those are listed.
    Choice(&'static [&'static str]),
    /// A file or directory.
    Path,
    /// Text that its reader parses (a list, a depth).
    Text,
}

/// Who reads a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The pass, when a program is built (set for the compiler wrappers).
    Build,
    /// The runtime, when an instrumented program runs.
    Run,
    /// The `instrument` tools and the wrappers themselves.
    Tools,
}

/// One environment setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub kind: Kind,
    /// The default, as the documentation says it.
    pub default: &'static str,
    pub doc: &'static str,
    pub scope: Scope,
}

/// A value a setting cannot take, for one line on stderr or an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    pub name: &'static str,
    pub value: String,
    pub expected: String,
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?} is not {}", self.name, self.value, self.expected)
    }
}

impl std::error::Error for BadValue {}

/// The one boolean grammar.
pub fn parse_flag(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => None,
    }
}

impl Setting {
    /// The value in the environment, trimmed; `None` when unset or empty.
    pub fn raw(&self) -> Option<String> {
        let value = std::env::var_os(self.name)?;
        let text = value.to_string_lossy().trim().to_owned();
        (!text.is_empty()).then_some(text)
    }

    /// A `Path` setting's value.
    pub fn path(&self) -> Option<std::path::PathBuf> {
        std::env::var_os(self.name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from)
    }

    /// A `Flag` setting's value.
    pub fn flag(&self) -> Result<Option<bool>, BadValue> {
        self.read(parse_flag)
    }

    /// A `Number` setting's value.
    pub fn number(&self) -> Result<Option<u64>, BadValue> {
        let min = match self.kind {
            Kind::Number { min } => min,
            _ => 0,
        };
        self.read(|text| text.parse::<u64>().ok().filter(|&n| n >= min))
    }

    /// A `Choice` setting's value, as the listed word.
    pub fn choice(&self) -> Result<Option<&'static str>, BadValue> {
        let Kind::Choice(words) = self.kind else { return self.read(|_| None) };
        self.read(|text| {
            let lower = text.to_ascii_lowercase();
            let word = match parse_flag(&lower) {
                Some(true) if words.contains(&"on") => "on",
                Some(false) if words.contains(&"off") => "off",
                _ => lower.as_str(),
            };
            words.iter().copied().find(|w| *w == word)
        })
    }

    /// What a value must be, in words.
    pub fn expected(&self) -> String {
        match self.kind {
            Kind::Flag => "on or off (1, on, yes, true; 0, off, no, false)".to_owned(),
            Kind::Number { min } => format!("a whole number of at least {min}"),
            Kind::Choice(words) => match words.split_last() {
                Some((last, [])) => (*last).to_owned(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => "anything".to_owned(),
            },
            Kind::Path => "a path".to_owned(),
            Kind::Text => self.doc.to_owned(),
        }
    }

    /// A bad value of this setting.
    pub fn bad(&self, value: &str) -> BadValue {
        BadValue { name: self.name, value: value.to_owned(), expected: self.expected() }
    }

    fn read<T>(&self, parse: impl FnOnce(&str) -> Option<T>) -> Result<Option<T>, BadValue> {
        match self.raw() {
            None => Ok(None),
            Some(text) => parse(&text).map(Some).ok_or_else(|| self.bad(&text)),
        }
    }
}

const fn setting(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    scope: Scope,
    doc: &'static str,
) -> Setting {
    Setting { name, kind, default, doc, scope }
}

use Kind::{Choice, Flag, Number, Path, Text};
use Scope::{Build, Run, Tools};

pub const PLACEMENT: Setting = setting(
    "INSTRUMENT_PLACEMENT",
    Choice(&["late", "early"]),
    "late",
    Build,
    "probes after or before optimisation",
);
pub const EVENTS: Setting = setting(
    "INSTRUMENT_EVENTS",
    Text,
    "functions",
    Build,
    "event kinds: a comma-separated list of functions, loops, callsites or all",
);
pub const SELECT: Setting =
    setting("INSTRUMENT_SELECT", Path, "none", Build, "a TAU selection file or Score-P filter for the build");
pub const EXCLUDE: Setting =
    setting("INSTRUMENT_EXCLUDE", Text, "none", Build, "comma-separated mangled names never to instrument");
/// The small-routine threshold of late placement (XRay's `-fxray-instruction-threshold`).
pub const DEFAULT_MIN_INSTRUCTIONS: usize = 200;
pub const MIN_INSTRUCTIONS: Setting = setting(
    "INSTRUMENT_MIN_INSTRUCTIONS",
    Number { min: 0 },
    "200 at late placement, 0 at early",
    Build,
    "routines with fewer IR instructions, no loop and no recursion are not instrumented (main always is)",
);
pub const PROBED_COPIES: Setting = setting(
    "INSTRUMENT_PROBED_COPIES",
    Flag,
    "on",
    Build,
    "late placement, x86-64: routines without loop or call-statement events run their own code when \
     throttled or switched off, their probes in a copy (the instrumented code about 1.4x larger)",
);
pub const CLANG_MARKS: Setting = setting(
    "INSTRUMENT_CLANG_MARKS",
    Flag,
    "off",
    Build,
    "set by the wrappers: clang tagged the routines to probe",
);
pub const PROFILE_DIR: Setting =
    setting("INSTRUMENT_PROFILE_DIR", Path, "the working directory", Run, "where profiles are written");
pub const RUNTIME_SELECT: Setting = setting(
    "INSTRUMENT_RUNTIME_SELECT",
    Path,
    "none",
    Run,
    "a selection file applied when the program starts",
);
pub const CALLPATH: Setting =
    setting("INSTRUMENT_CALLPATH", Text, "flat", Run, "a callpath depth (a whole number) or all");
pub const CALLPATH_NODES: Setting =
    setting("INSTRUMENT_CALLPATH_NODES", Number { min: 1 }, "262144", Run, "callpath nodes per thread");
pub const COMPENSATE: Setting = setting(
    "INSTRUMENT_COMPENSATE",
    Choice(&["on", "off", "inplace", "calibrated", "fenced"]),
    "off",
    Run,
    "overhead compensation and its strategy",
);
pub const RECALIBRATE_MS: Setting = setting(
    "INSTRUMENT_RECALIBRATE_MS",
    Number { min: 0 },
    "50",
    Run,
    "with compensation: milliseconds between calibrations (0: at start-up only)",
);
pub const OMPT: Setting = setting(
    "INSTRUMENT_OMPT",
    Flag,
    "on",
    Run,
    "OpenMP (LLVM's runtime): record barrier, taskwait and lock waits and workers' idle time",
);
pub const PIGGYBACK: Setting = setting(
    "INSTRUMENT_PIGGYBACK",
    Flag,
    "on",
    Run,
    "MPI with compensation: piggyback overheads on messages",
);
pub const THROTTLE: Setting =
    setting("INSTRUMENT_THROTTLE", Flag, "on", Run, "TAU's throttling of tiny, hot events");
pub const THROTTLE_CALLS: Setting = setting(
    "INSTRUMENT_THROTTLE_CALLS",
    Number { min: 1 },
    "1000",
    Run,
    "calls before an event is throttled",
);
pub const INLINE_COUNT: Setting = setting(
    "INSTRUMENT_INLINE_COUNT",
    Flag,
    "on (off with callpaths)",
    Run,
    "throttled routines counted by their own entry code, without a probe call (late placement, x86-64)",
);
pub const THROTTLE_PERCALL_US: Setting = setting(
    "INSTRUMENT_THROTTLE_PERCALL_US",
    Number { min: 0 },
    "10",
    Run,
    "microseconds per call under which an event is throttled",
);
pub const LIVE: Setting =
    setting("INSTRUMENT_LIVE", Flag, "on", Run, "the live segment that instrument top reads and switches");
pub const CLOCK: Setting = setting(
    "INSTRUMENT_CLOCK",
    Choice(&["tsc", "tsc-unordered", "monotonic"]),
    "tsc when invariant",
    Run,
    "the clock (tsc: rdtscp at exits, after the routine's work; tsc-unordered: rdtsc at both ends, for \
         comparison: a dependency chain's time lands in the callers)",
);
pub const STACK_FRAMES: Setting =
    setting("INSTRUMENT_STACK_FRAMES", Number { min: 2 }, "65536", Run, "shadow-stack depth per thread");
pub const SIGNALS: Setting =
    setting("INSTRUMENT_SIGNALS", Flag, "on", Run, "write the profile of a run ended by a fatal signal");
pub const QUIET: Setting = setting(
    "INSTRUMENT_QUIET",
    Flag,
    "off",
    Run,
    "no line at exit when the probes took over 30 % of the run",
);
pub const VERBOSE: Setting = setting("INSTRUMENT_VERBOSE", Flag, "off", Run, "say where the profile went");
pub const WRAPPER_VERBOSE: Setting =
    setting("INSTRUMENT_WRAPPER_VERBOSE", Flag, "off", Tools, "the wrappers print the compiler command");
pub const CLANG: Setting = setting("INSTRUMENT_CLANG", Path, "clang-22", Tools, "the C compiler");
pub const CLANGXX: Setting = setting("INSTRUMENT_CLANGXX", Path, "clang++-22", Tools, "the C++ compiler");
pub const FLANG: Setting = setting("INSTRUMENT_FLANG", Path, "flang-22", Tools, "the Fortran compiler");
pub const LLD: Setting =
    setting("INSTRUMENT_LLD", Path, "ld.lld-22", Tools, "the linker that seals the runtime");
pub const OBJCOPY: Setting = setting("INSTRUMENT_OBJCOPY", Path, "llvm-objcopy-22", Tools, "objcopy");
pub const AR: Setting = setting("INSTRUMENT_AR", Path, "llvm-ar-22", Tools, "ar");
pub const PLUGIN: Setting = setting("INSTRUMENT_PLUGIN", Path, "next to the tools", Tools, "the pass plugin");
pub const RUNTIME: Setting =
    setting("INSTRUMENT_RUNTIME", Path, "next to the tools", Tools, "the runtime archive (unsealed)");
pub const BENCH_NAS: Setting =
    setting("INSTRUMENT_BENCH_NAS", Path, "the repository's bench-nas", Tools, "the NAS kernels' directory");

/// Every setting.
pub const ALL: &[Setting] = &[
    PLACEMENT,
    EVENTS,
    SELECT,
    EXCLUDE,
    MIN_INSTRUCTIONS,
    PROBED_COPIES,
    CLANG_MARKS,
    PROFILE_DIR,
    RUNTIME_SELECT,
    CALLPATH,
    CALLPATH_NODES,
    COMPENSATE,
    RECALIBRATE_MS,
    OMPT,
    PIGGYBACK,
    THROTTLE,
    THROTTLE_CALLS,
    THROTTLE_PERCALL_US,
    INLINE_COUNT,
    LIVE,
    CLOCK,
    STACK_FRAMES,
    SIGNALS,
    QUIET,
    VERBOSE,
    WRAPPER_VERBOSE,
    CLANG,
    CLANGXX,
    FLANG,
    LLD,
    OBJCOPY,
    AR,
    PLUGIN,
    RUNTIME,
    BENCH_NAS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_boolean_grammar() {
        for on in ["1", "on", "YES", " true "] {
            assert_eq!(parse_flag(on), Some(true), "{on}");
        }
        for off in ["0", "Off", "no", "false"] {
            assert_eq!(parse_flag(off), Some(false), "{off}");
        }
        assert_eq!(parse_flag("2"), None);
        assert_eq!(parse_flag("of"), None);
    }

    #[test]
    fn names_are_unique_and_prefixed() {
        for (i, s) in ALL.iter().enumerate() {
            assert!(s.name.starts_with("INSTRUMENT_"), "{}", s.name);
            assert!(ALL[..i].iter().all(|o| o.name != s.name), "{} twice", s.name);
        }
    }

    #[test]
    fn the_readmes_settings_table_lists_every_setting_and_no_other() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
        let start = readme.find("| Setting | Meaning |").expect("the README has a settings table");
        let table: Vec<&str> = readme[start..].lines().take_while(|l| l.starts_with('|')).collect();
        let table = table.join("\n");
        let named: Vec<&str> = table
            .split('`')
            .filter_map(|word| word.split(['=', ' ']).next())
            .filter(|word| word.starts_with("INSTRUMENT_") && word.len() > "INSTRUMENT_".len())
            .filter(|word| *word != "INSTRUMENT_OFF") // a macro of c-fixtures/include/instrument.h
            .collect();
        for setting in ALL {
            assert!(named.contains(&setting.name), "{} is not in the README's settings table", setting.name);
        }
        for name in named {
            assert!(
                ALL.iter().any(|s| s.name == name),
                "the README's settings table names {name}, which is not declared"
            );
        }
    }

    #[test]
    fn a_bad_value_is_one_line_naming_the_variable() {
        let bad = COMPENSATE.bad("fenced2");
        assert_eq!(
            bad.to_string(),
            "INSTRUMENT_COMPENSATE=\"fenced2\" is not on, off, inplace, calibrated or fenced"
        );
        assert_eq!(
            THROTTLE_CALLS.bad("0").to_string(),
            "INSTRUMENT_THROTTLE_CALLS=\"0\" is not a whole number of at least 1"
        );
    }
}
