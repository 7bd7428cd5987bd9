//! What the user chose for this compilation, read from the environment because the plugin is
//! loaded by compilers and linkers whose command lines we do not own (the wrappers turn their
//! `--instrument-*` flags into these variables).

/// Where in the optimisation pipeline probes are inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Before inlining: every source-level routine is measured (as TAU and
    /// -finstrument-functions see them), but the probes' calls change how the code around them
    /// is inlined and vectorised (an order of magnitude slower on inline-heavy C such as lz4).
    Early,
    /// After optimisation, the default (as XRay and `-pg` place theirs): the compiled code is the
    /// plain build's, and routines the optimiser inlined are timed as part of their callers.
    #[default]
    Late,
}

/// Which kinds of events are probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Events {
    pub functions: bool,
    pub loops: bool,
    pub callsites: bool,
}

impl Default for Events {
    fn default() -> Self {
        Events { functions: true, loops: false, callsites: false }
    }
}

impl Events {
    /// Parses `functions,loops,callsites` (any subset, or `all`).
    pub fn parse(text: &str) -> Result<Events, String> {
        let mut events = Events { functions: false, loops: false, callsites: false };
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "functions" | "routines" => events.functions = true,
                "loops" => events.loops = true,
                "callsites" | "calls" => events.callsites = true,
                "all" => events = Events { functions: true, loops: true, callsites: true },
                other => {
                    return Err(format!(
                        "unknown event kind {other:?} in {} (expected functions, loops, callsites or all)",
                        instrument_contract::settings::EVENTS.name
                    ))
                }
            }
        }
        Ok(events)
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub placement: Placement,
    pub events: Events,
    /// Functions (mangled names) never to instrument, from `INSTRUMENT_EXCLUDE` (comma separated).
    pub exclude: Vec<String>,
    /// Routines with fewer IR instructions than this, no loop and no recursion are not instrumented
    /// (`INSTRUMENT_MIN_INSTRUCTIONS`; 0 instruments all; see `skip::too_small`).
    pub min_instructions: usize,
    /// A TAU selective-instrumentation file or Score-P filter (`INSTRUMENT_SELECT`).
    pub selection: Option<instrument_select::Selection>,
    /// The compiler wrapper asked clang to tag every function not marked
    /// `__attribute__((no_instrument_function))` (see [`crate::CLANG_MARK`]): untagged functions
    /// are skipped and the tags are removed. Set by `INSTRUMENT_CLANG_MARKS=1`.
    pub clang_marks: bool,
    /// Routines without loop or call-statement events keep their own code behind the inline
    /// count and get their probes in a copy (`INSTRUMENT_PROBED_COPIES`, on by default; see
    /// `probed_copy`).
    pub probed_copies: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            placement: Placement::default(),
            events: Events::default(),
            exclude: Vec::new(),
            min_instructions: 0,
            selection: None,
            clang_marks: false,
            probed_copies: true,
        }
    }
}

/// The small-routine threshold when `INSTRUMENT_MIN_INSTRUCTIONS` is not set: XRay's default
/// (`-fxray-instruction-threshold`, 200 machine instructions; IR instructions after
/// optimisation are about as many) at late placement, whose events are the compiled code's;
/// none at early placement, which measures every source routine, inlined ones included.
pub fn default_min_instructions(placement: Placement) -> usize {
    match placement {
        Placement::Late => instrument_contract::settings::DEFAULT_MIN_INSTRUCTIONS,
        Placement::Early => 0,
    }
}

impl Options {
    /// Reads the `INSTRUMENT_*` variables. A bad value is an error rather than a silent default.
    pub fn from_env() -> Result<Self, String> {
        use instrument_contract::settings::{
            CLANG_MARKS, EVENTS, EXCLUDE, MIN_INSTRUCTIONS, PLACEMENT, PROBED_COPIES, SELECT,
        };
        let text = |e: instrument_contract::settings::BadValue| e.to_string();
        let placement = match PLACEMENT.choice().map_err(text)? {
            Some("early") => Placement::Early,
            _ => Placement::Late,
        };
        let events = match EVENTS.raw() {
            Some(text) => Events::parse(&text)?,
            None => Events::default(),
        };
        let min_instructions = MIN_INSTRUCTIONS
            .number()
            .map_err(text)?
            .map_or_else(|| default_min_instructions(placement), |n| n as usize);
        let selection = match SELECT.path() {
            Some(path) => Some(instrument_select::Selection::load(&path).map_err(|e| e.to_string())?),
            None => None,
        };
        let exclude = EXCLUDE
            .raw()
            .map(|v| v.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default();
        let clang_marks = CLANG_MARKS.flag().map_err(text)?.unwrap_or(false);
        let probed_copies = PROBED_COPIES.flag().map_err(text)?.unwrap_or(true);
        Ok(Options { placement, events, exclude, min_instructions, selection, clang_marks, probed_copies })
    }
}
