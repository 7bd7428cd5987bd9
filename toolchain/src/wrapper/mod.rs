//! `instrument-cc`, `instrument-c++` and `instrument-fc`: drop-in replacements for clang-22,
//! clang++-22 and flang-22.
//! Every argument is passed through in order; the wrapper adds the pass plugin when code is
//! generated and the sealed runtime when an executable is linked, then execs the compiler, so
//! exit codes, signals and diagnostics are the compiler's own.

mod args;
mod mpi;

pub use args::{classify, Invocation};

use crate::{error::chain, layout, runtime, toolchain, Result};
use instrument_contract::settings;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    C,
    Cxx,
    Fortran,
}

impl Language {
    /// From the wrapper's own name: `++` or `cxx` means C++, `fc` or `fortran` means Fortran.
    pub fn from_argv0(argv0: &str) -> Language {
        let name = argv0.rsplit('/').next().unwrap_or(argv0);
        if name.contains("++") || name.contains("cxx") {
            Language::Cxx
        } else if name.ends_with("fc") || name.contains("fortran") {
            Language::Fortran
        } else {
            Language::C
        }
    }

    fn compiler(self) -> &'static toolchain::Tool {
        match self {
            Language::C => &toolchain::CLANG,
            Language::Cxx => &toolchain::CLANGXX,
            Language::Fortran => &toolchain::FLANG,
        }
    }

    pub fn wrapper_name(self) -> &'static str {
        match self {
            Language::C => "instrument-cc",
            Language::Cxx => "instrument-c++",
            Language::Fortran => "instrument-fc",
        }
    }
}

/// Wrapper-only options (`--instrument-NAME=VALUE`), removed before the compiler sees the
/// command line and handed to the pass as `INSTRUMENT_NAME`.
const WRAPPER_OPTIONS: &[(&str, &str)] = &[
    ("--instrument-placement=", settings::PLACEMENT.name),
    ("--instrument-events=", settings::EVENTS.name),
    ("--instrument-select=", settings::SELECT.name),
    ("--instrument-min-instructions=", settings::MIN_INSTRUCTIONS.name),
    ("--instrument-probed-copies=", settings::PROBED_COPIES.name),
];

/// Builds the compiler command for `args`.
pub fn command(language: Language, args: &[String]) -> Result<Command> {
    let mut command = Command::new(language.compiler().find()?);
    let mut passed = Vec::with_capacity(args.len());
    for arg in args {
        match WRAPPER_OPTIONS.iter().find_map(|(flag, var)| Some((arg.strip_prefix(flag)?, *var))) {
            Some((value, var)) => {
                command.env(var, value);
            }
            None => passed.push(arg.clone()),
        }
    }
    check_selection(&mut command)?;
    if language == Language::Fortran {
        passed = mpi::fortran_includes(&passed)?;
    }
    let invocation = classify(&passed);
    let mut full: Vec<OsString> = Vec::new();
    if invocation.generates_code {
        let mut flag = OsString::from("-fpass-plugin=");
        flag.push(layout::plugin()?);
        full.push(flag);
        // flang has no no_instrument_function attribute (and no such flag).
        if language != Language::Fortran && !passed.iter().any(|a| a.starts_with("-finstrument-functions")) {
            // Makes clang tag every function not marked no_instrument_function; the pass reads
            // and removes the tags (pass/src/lib.rs, CLANG_MARK).
            full.push("-finstrument-functions-after-inlining".into());
            command.env(settings::CLANG_MARKS.name, "1");
        }
    }
    if invocation.generates_code && !passed.iter().any(|a| a.starts_with("-g")) {
        // Source files and lines for every routine; debug info does not change generated code.
        full.push("-gline-tables-only".into());
    }
    if (invocation.links_executable || invocation.links_library) && lto_link(&passed) {
        // With LTO the optimiser runs again in the linker, where late placement acts: lld loads
        // the plugin (GNU ld's LTO plugin cannot), and the pass reads clang's marks there.
        if !passed.iter().any(|a| a.starts_with("-fuse-ld=")) {
            full.push("-fuse-ld=lld".into());
        }
        let mut flag = OsString::from("-Wl,--load-pass-plugin=");
        flag.push(layout::plugin()?);
        full.push(flag);
        if language != Language::Fortran && !passed.iter().any(|a| a.starts_with("-finstrument-functions")) {
            command.env(settings::CLANG_MARKS.name, "1");
        }
    }
    if invocation.links_executable && mpi::links_mpi(&passed) {
        full.push(mpi::pmpi_object(&passed)?.into());
    }
    full.extend(passed.iter().map(OsString::from));
    if invocation.links_executable {
        if args::language_in_force(&passed) {
            full.extend(["-x".into(), "none".into()]);
        }
        full.extend(crate::link::Syntax::Cc.render(&runtime::link_arguments()?));
    }
    command.args(full);
    Ok(command)
}

/// Whether a link is an LTO link: the last `-flto`/`-fno-lto` flag asks for it.
fn lto_link(args: &[String]) -> bool {
    args.iter()
        .rev()
        .find(|a| a.starts_with("-flto") || *a == "-fno-lto")
        .is_some_and(|a| a.starts_with("-flto"))
}

/// The wrappers' `main`: exec the compiler, or print one error line and exit 1.
pub fn main(language: Language) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = language.wrapper_name();
    let message = match prepared(language, &args) {
        Ok((mut command, verbose)) => {
            if verbose {
                eprintln!("{name}: {command:?}");
            }
            chain(&command.exec())
        }
        Err(e) => chain(&e),
    };
    eprintln!("{name}: {message}");
    std::process::exit(1)
}

/// The compiler command for `args`, and whether to print it (`INSTRUMENT_WRAPPER_VERBOSE`).
fn prepared(language: Language, args: &[String]) -> Result<(Command, bool)> {
    let command = command(language, args)?;
    Ok((command, settings::WRAPPER_VERBOSE.flag()? == Some(true)))
}

/// A selection file is checked here, before the compiler starts, so that a mistake is one line
/// naming the file and line; the pass receives it by absolute path (builds change directory).
fn check_selection(command: &mut Command) -> Result<()> {
    let from_flag =
        command.get_envs().find(|(k, _)| *k == settings::SELECT.name).and_then(|(_, v)| v.map(PathBuf::from));
    let Some(path) = from_flag.or_else(|| settings::SELECT.path()) else {
        return Ok(());
    };
    instrument_select::Selection::load(&path)?;
    let absolute = std::path::absolute(&path).unwrap_or(path);
    command.env(settings::SELECT.name, absolute);
    Ok(())
}
