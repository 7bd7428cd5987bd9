//! What the user chose for this compilation, read from the environment because the plugin is
//! loaded by compilers and linkers whose command lines we do not own.

/// Where in the optimisation pipeline probes are inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Before inlining: every source-level routine is measured (as TAU and
    /// -finstrument-functions see them).
    #[default]
    Early,
    /// After optimisation: only the routines that survived inlining are measured.
    Late,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub placement: Placement,
    /// Functions (mangled names) never to instrument, from `INSTRUMENT_EXCLUDE` (comma separated).
    pub exclude: Vec<String>,
    /// The compiler wrapper asked clang to tag every function not marked
    /// `__attribute__((no_instrument_function))` (see [`crate::CLANG_MARK`]): untagged functions
    /// are skipped and the tags are removed. Set by `INSTRUMENT_CLANG_MARKS=1`.
    pub clang_marks: bool,
}

impl Options {
    /// Reads `INSTRUMENT_PLACEMENT` (`early`, the default, or `late`) and `INSTRUMENT_EXCLUDE`.
    /// An unknown placement is an error rather than a silent default.
    pub fn from_env() -> Result<Self, String> {
        let placement = match std::env::var("INSTRUMENT_PLACEMENT").as_deref() {
            Err(_) | Ok("") | Ok("early") => Placement::Early,
            Ok("late") => Placement::Late,
            Ok(other) => {
                return Err(format!("INSTRUMENT_PLACEMENT={other:?} is not one of \"early\" or \"late\""))
            }
        };
        let exclude = std::env::var("INSTRUMENT_EXCLUDE")
            .map(|v| v.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default();
        let clang_marks = std::env::var("INSTRUMENT_CLANG_MARKS").is_ok_and(|v| v == "1");
        Ok(Options { placement, exclude, clang_marks })
    }
}
