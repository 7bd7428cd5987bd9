//! The sealed runtime. Cargo builds the runtime as an ordinary staticlib, which carries its own
//! copy of Rust's std with global symbols; linked as is, it would clash with a Rust program's std
//! or a second copy of itself. Sealing merges the archive into one relocatable object
//! (`ld.lld -r`), keeps only the runtime's C entry points global (`llvm-objcopy
//! --keep-global-symbol`) and archives it again. The merge also gathers the probes' code into one
//! section aligned to a cache line (`HOT_SECTION`), so that what a probe costs depends on the
//! probes' code alone, not on where unrelated runtime code happens to push it (a change elsewhere
//! in the runtime once moved the probe bodies by 16 bytes and made a counted call 0.4 ns dearer). The result is cached next to the archive it came
//! from and rebuilt when that archive changes; concurrent builds (make -j) each write a private
//! temporary and rename it into place.

use crate::{layout, toolchain};
use crate::{Result, ToolchainError};
use instrument_contract::{inline_count, probes};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The runtime's C ABI besides the probe sets' symbols (`exported_symbols` adds them): with
/// them, the only symbols left global.
const OTHER_EXPORTED_SYMBOLS: &[&str] = &[
    probes::UNWIND,
    inline_count::THREAD,
    inline_count::MODES,
    inline_count::PER_CALL,
    "__instrument_register_module",
    "__instrument_finish",
    "__instrument_now",
    "__instrument_mpi_record",
    "__instrument_mpi_rank",
    "__instrument_mpi_piggyback",
    "__instrument_mpi_overhead",
    "__instrument_mpi_inherit",
    "__instrument_mpi_piggyback_cost",
    "ompt_start_tool",
];

/// libc functions the runtime wraps (`--wrap`): the exec family, which would otherwise end the
/// process without its profile (rt/shim/exec.c).
pub const INTERCEPTED: &[&str] =
    &["execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve"];

/// Native libraries the runtime needs (`rustc --print native-static-libs`, less what every C
/// link has anyway).
pub const NATIVE_LIBS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"];

/// One argument a link of an instrumented program adds: an input file the front end passes on
/// (the sealed runtime), or an argument for the linker itself. Every front end's driver takes
/// the first as it is and needs its own pass-through syntax for the second (`-Wl,`, `-L`,
/// `-Clink-arg=`), so the list is kept once here and written out by each caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkArgument {
    Input(PathBuf),
    Linker(String),
}

/// What a link of an instrumented executable adds, in order: the sealed runtime, its native
/// libraries, the interception of `INTERCEPTED`, and the runtime's C entry points exported (so
/// that an instrumented shared library loaded later binds to the executable's runtime, and
/// LLVM's OpenMP runtime finds the OMPT tool).
pub fn link_arguments() -> Result<Vec<LinkArgument>> {
    let mut arguments = vec![LinkArgument::Input(sealed()?)];
    arguments.extend(NATIVE_LIBS.iter().map(|l| LinkArgument::Linker(l.to_string())));
    arguments.extend(INTERCEPTED.iter().map(|f| LinkArgument::Linker(format!("--wrap={f}"))));
    arguments.push(LinkArgument::Linker("--export-dynamic-symbol=__instrument_*".into()));
    // LLVM's OpenMP runtime looks the OMPT tool up among the executable's dynamic symbols.
    arguments.push(LinkArgument::Linker("--export-dynamic-symbol=ompt_start_tool".into()));
    Ok(arguments)
}

const SEALED_FILE: &str = "libinstrument_rt.sealed.a";

/// Path of the sealed runtime archive, sealing it first if needed.
pub fn sealed() -> Result<PathBuf> {
    let archive = layout::runtime_archive()?;
    let directory = cache_directory(&archive)?;
    let sealed = directory.join(SEALED_FILE);
    if is_newer(&sealed, &archive) {
        return Ok(sealed);
    }
    seal(&archive, &directory, &sealed)
        .map_err(|source| ToolchainError::Seal { archive: archive.clone(), source: Box::new(source) })?;
    Ok(sealed)
}

/// Where built parts of the runtime are kept: beside the runtime archive, or in the user's cache.
pub fn cache() -> Result<PathBuf> {
    cache_directory(&layout::runtime_archive()?)
}

fn cache_directory(archive: &Path) -> Result<PathBuf> {
    let beside = archive.parent().map(Path::to_path_buf).unwrap_or_default();
    if is_writable(&beside) {
        return Ok(beside);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or(ToolchainError::NoCacheDirectory)?;
    let dir = base.join("instrument");
    std::fs::create_dir_all(&dir).map_err(|source| ToolchainError::Io {
        action: "create",
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

fn is_writable(dir: &Path) -> bool {
    tempfile::Builder::new().prefix(".instrument-probe").tempfile_in(dir).is_ok()
}

fn is_newer(file: &Path, than: &Path) -> bool {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    matches!((modified(file), modified(than)), (Some(a), Some(b)) if a >= b)
}

/// The runtime's C ABI: the only symbols left global.
pub fn exported_symbols() -> impl Iterator<Item = &'static str> {
    probes::SETS.iter().flat_map(probes::ProbeSet::symbols).chain(OTHER_EXPORTED_SYMBOLS.iter().copied())
}

/// The output section of the probes' code in the sealed object.
pub const HOT_SECTION: &str = ".text.instrument_probes";

/// The code the probes run, by input section: the trampolines the pass calls (C symbols), then the
/// Rust modules of the hot path (`rt/src/trampolines.rs`, `rt/src/timed_path.rs`,
/// `rt/src/pathed_path.rs`, `rt/src/probes.rs`, `rt/src/flush_path.rs` (a flush the paths call, past
/// the bodies they miss to), whose functions are each in a section named for their mangled symbol).
fn hot_input_sections() -> Vec<String> {
    let trampolines = probes::SETS
        .iter()
        .flat_map(probes::ProbeSet::symbols)
        .chain([probes::UNWIND])
        .map(|symbol| format!(".text.{symbol}"));
    let modules = ["trampolines", "timed_path", "pathed_path", "probes", "flush_path"]
        .iter()
        .map(|m| format!(".text._ZN13instrument_rt{}{m}*", m.len()));
    trampolines.chain(modules).collect()
}

/// The linker script of the merge: the hot path's sections in one section aligned to 64 bytes
/// (a cache line), each of its functions on a line of its own (`SUBALIGN`: a function added to
/// the hot modules once moved `enter_throttled` from 0 to 32 mod 64), in `hot_input_sections`' order (one input description each: one description
/// takes its sections in input-file order); every other section is an orphan, merged as without
/// a script.
fn hot_script() -> String {
    let inputs: String = hot_input_sections().iter().map(|section| format!("    *({section})\n")).collect();
    format!("SECTIONS {{\n  {HOT_SECTION} : ALIGN(64) SUBALIGN(64) {{\n{inputs}  }}\n}}\n")
}

fn seal(archive: &Path, directory: &Path, sealed: &Path) -> Result<()> {
    let work = tempfile::Builder::new()
        .prefix(".instrument-seal")
        .tempdir_in(directory)
        .map_err(ToolchainError::Scratch)?;
    let merged = work.path().join("instrument_rt.o");
    let script = work.path().join("hot.ld");
    std::fs::write(&script, hot_script()).map_err(|source| ToolchainError::Io {
        action: "write",
        path: script.clone(),
        source,
    })?;
    run(Command::new(toolchain::LLD.find()?)
        .arg("-r")
        .arg("--whole-archive")
        .arg(archive)
        .arg("-T")
        .arg(&script)
        .arg("-o")
        .arg(&merged))?;
    let mut objcopy = Command::new(toolchain::OBJCOPY.find()?);
    objcopy.arg("--strip-debug");
    for symbol in exported_symbols() {
        objcopy.arg(format!("--keep-global-symbol={symbol}"));
    }
    for function in INTERCEPTED {
        objcopy.arg(format!("--keep-global-symbol=__wrap_{function}"));
    }
    run(objcopy.arg(&merged))?;
    let staged = work.path().join(SEALED_FILE);
    run(Command::new(toolchain::AR.find()?).arg("rcs").arg(&staged).arg(&merged))?;
    std::fs::rename(&staged, sealed).map_err(|source| ToolchainError::Move {
        what: "the sealed runtime",
        to: sealed.to_path_buf(),
        source,
    })
}

pub(crate) fn run(command: &mut Command) -> Result<()> {
    let program = PathBuf::from(command.get_program());
    let output = match command.output() {
        Ok(output) => output,
        Err(source) => return Err(ToolchainError::Spawn { program, source }),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(ToolchainError::ToolFailed { program, status: output.status, stderr });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hot_script_gathers_both_probe_sets_and_the_hot_modules() {
        let script = hot_script();
        for section in
            [".text.__instrument_enter", ".text.__instrument_exit_if_pm", ".text.__instrument_unwind"]
        {
            assert!(script.contains(&format!("*({section})")), "{section} missing from {script}");
        }
        assert!(script.contains("*(.text._ZN13instrument_rt6probes*)"), "{script}");
        assert!(
            script.find("__instrument_enter)") < script.find("_rt6probes"),
            "trampolines first: {script}"
        );
        assert!(script.contains(".text._ZN13instrument_rt11trampolines*"), "{script}");
        assert!(script.contains(".text._ZN13instrument_rt10timed_path*"), "{script}");
        assert!(script.contains(&format!("{HOT_SECTION} : ALIGN(64)")), "{script}");
    }
}
