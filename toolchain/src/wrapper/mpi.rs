//! MPI programs. When an executable is linked with an MPI library, the PMPI layer
//! (rt/shim/pmpi.c) is compiled against the program's own mpi.h, with the include and define
//! options of the link line (mpicc passes them when it links too), and linked as an object: its
//! MPI_* functions then come before the library's and forward to PMPI_*. The object is cached
//! under a hash of the source, the compiler and those options; concurrent links (make -j) each
//! write a private temporary and rename it into place. A link line without include options
//! (a Fortran program linked with `mpifort --showme:link`) finds mpi.h beside its -L
//! directories.
//!
//! Fortran: Open MPI's mpif.h includes mpif-sizeof.h, whose MPI_Sizeof interface flang rejects
//! (its specific procedures are not distinguishable to flang). When a Fortran compile's include
//! path holds that file, the wrapper puts a directory in front of it with a copy of mpif.h and
//! an empty mpif-sizeof.h (flang looks for an include beside the including file first), so
//! everything but MPI_Sizeof, which old-style Fortran MPI code does not call, compiles.

use crate::{runtime, toolchain};
use crate::{Result, ToolchainError};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = include_str!("../../../rt/shim/pmpi.c");

/// Whether the link line names an MPI library (`-lmpi`, `-lmpich`, or a libmpi file).
pub fn links_mpi(args: &[String]) -> bool {
    args.iter().any(|a| {
        let file = a.rsplit('/').next().unwrap_or(a);
        a == "-lmpi" || a == "-lmpich" || file.starts_with("libmpi.") || file.starts_with("libmpich.")
    })
}

/// The options of `args` that decide what mpi.h says: include directories and macros.
fn header_options(args: &[String]) -> Vec<String> {
    let mut options = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if matches!(arg.as_str(), "-I" | "-isystem" | "-D" | "-U" | "-idirafter") {
            options.push(arg.clone());
            options.extend(iter.next().cloned());
        } else if ["-I", "-isystem", "-D", "-U", "-idirafter"].iter().any(|p| arg.starts_with(p)) {
            options.push(arg.clone());
        }
    }
    options
}

/// The directory `args[i]` names with `flag`: `-Idir`, or `-I dir` (then in `args[i + 1]`).
fn directory<'a>(args: &'a [String], i: usize, flag: &str) -> Option<&'a Path> {
    match args[i].strip_prefix(flag)? {
        "" => args.get(i + 1).map(Path::new),
        dir => Some(Path::new(dir)),
    }
}

/// An `-I` option for mpi.h when no include directory of the link line has it: the `include`
/// directory next to a -L or -I directory or one of its parents (Open MPI's layout).
fn include_beside_libraries(args: &[String]) -> Vec<String> {
    let dirs: Vec<&Path> = (0..args.len())
        .filter_map(|i| directory(args, i, "-L").or_else(|| directory(args, i, "-I")))
        .collect();
    if dirs.iter().any(|d| d.join("mpi.h").is_file()) {
        return Vec::new();
    }
    dirs.iter()
        .flat_map(|d| d.ancestors().take(4))
        .map(|d| d.join("include"))
        .find(|d| d.join("mpi.h").is_file())
        .map(|d| vec![format!("-I{}", d.display())])
        .unwrap_or_default()
}

/// The PMPI layer's object for this link, compiled if not cached yet.
pub fn pmpi_object(args: &[String]) -> Result<PathBuf> {
    let compiler = toolchain::CLANG.find()?;
    let mut options = header_options(args);
    options.extend(include_beside_libraries(args));
    let mut hasher = std::hash::DefaultHasher::new();
    let header = instrument_contract::mpi::c_header();
    (SOURCE, &header, &compiler, &options).hash(&mut hasher);
    let directory = runtime::cache()?;
    let object = directory.join(format!("pmpi-{:016x}.o", hasher.finish()));
    if object.exists() {
        return Ok(object);
    }
    let work = tempfile::Builder::new()
        .prefix(".instrument-pmpi")
        .tempdir_in(&directory)
        .map_err(ToolchainError::Scratch)?;
    let source = work.path().join("pmpi.c");
    std::fs::write(&source, SOURCE).map_err(ToolchainError::Scratch)?;
    std::fs::write(work.path().join(instrument_contract::mpi::C_HEADER_NAME), header)
        .map_err(ToolchainError::Scratch)?;
    let staged = work.path().join("pmpi.o");
    runtime::run(
        Command::new(&compiler)
            .args(["-O2", "-fPIC", "-w", "-c"])
            .args(&options)
            .arg(&source)
            .arg("-o")
            .arg(&staged),
    )
    .map_err(|source| ToolchainError::PmpiCompile(Box::new(source)))?;
    std::fs::rename(&staged, &object).map_err(|source| ToolchainError::Move {
        what: "it",
        to: object.clone(),
        source,
    })?;
    Ok(object)
}

/// `args` of a Fortran compile with the mpif.h workaround in front of the include directory
/// that holds Open MPI's mpif-sizeof.h (unchanged when none does).
pub fn fortran_includes(args: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(args.len() + 1);
    for (i, arg) in args.iter().enumerate() {
        if let Some(dir) = directory(args, i, "-I").filter(|d| d.join("mpif-sizeof.h").is_file()) {
            out.push(format!("-I{}", mpif_shadow(dir)?.display()));
        }
        out.push(arg.clone());
    }
    Ok(out)
}

/// The directory with a copy of `dir`'s mpif.h and an empty mpif-sizeof.h, made once.
fn mpif_shadow(dir: &Path) -> Result<PathBuf> {
    let mpif = std::fs::read(dir.join("mpif.h"))
        .map_err(|source| ToolchainError::MpifHeader { dir: dir.to_path_buf(), source })?;
    let mut hasher = std::hash::DefaultHasher::new();
    (dir, &mpif).hash(&mut hasher);
    let cache = runtime::cache()?;
    let shadow = cache.join(format!("mpif-{:016x}", hasher.finish()));
    if shadow.join("mpif.h").is_file() {
        return Ok(shadow);
    }
    let work = tempfile::Builder::new()
        .prefix(".instrument-mpif")
        .tempdir_in(&cache)
        .map_err(ToolchainError::Scratch)?;
    std::fs::write(work.path().join("mpif.h"), &mpif).map_err(ToolchainError::Scratch)?;
    std::fs::write(
        work.path().join("mpif-sizeof.h"),
        "! instrument-fc: MPI_Sizeof left out; this MPI's mpif-sizeof.h does not compile with flang\n",
    )
    .map_err(ToolchainError::Scratch)?;
    match std::fs::rename(work.path(), &shadow) {
        Ok(()) => {}
        Err(_) if shadow.join("mpif.h").is_file() => {} // a concurrent compile made it
        Err(source) => return Err(ToolchainError::Io { action: "create", path: shadow, source }),
    }
    Ok(shadow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn mpi_links_are_recognised() {
        assert!(links_mpi(&strings(&["a.o", "-L/x", "-lmpi"])));
        assert!(links_mpi(&strings(&["a.o", "/opt/mpich/lib/libmpich.so"])));
        assert!(!links_mpi(&strings(&["a.o", "-lmpfr", "-lm"])));
    }

    #[test]
    fn header_options_are_kept_in_order() {
        let args = strings(&["-O2", "-I/a", "-I", "/b", "-DX=1", "a.c", "-isystem", "/c", "-lmpi"]);
        assert_eq!(header_options(&args), strings(&["-I/a", "-I", "/b", "-DX=1", "-isystem", "/c"]));
    }
}
