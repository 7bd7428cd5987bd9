//! MPI programs. When an executable is linked with an MPI library, the PMPI layer
//! (rt/shim/pmpi.c) is compiled against the program's own mpi.h, with the include and define
//! options of the link line (mpicc passes them when it links too), and linked as an object: its
//! MPI_* functions then come before the library's and forward to PMPI_*. The object is cached
//! under a hash of the source, the compiler and those options; concurrent links (make -j) each
//! write a private temporary and rename it into place.

use crate::{runtime, toolchain};
use anyhow::{Context, Result};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
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

/// The PMPI layer's object for this link, compiled if not cached yet.
pub fn pmpi_object(args: &[String]) -> Result<PathBuf> {
    let compiler = toolchain::CLANG.find()?;
    let options = header_options(args);
    let mut hasher = std::hash::DefaultHasher::new();
    (SOURCE, &compiler, &options).hash(&mut hasher);
    let directory = runtime::cache()?;
    let object = directory.join(format!("pmpi-{:016x}.o", hasher.finish()));
    if object.exists() {
        return Ok(object);
    }
    let work = tempfile::Builder::new().prefix(".instrument-pmpi").tempdir_in(&directory)?;
    let source = work.path().join("pmpi.c");
    std::fs::write(&source, SOURCE)?;
    let staged = work.path().join("pmpi.o");
    runtime::run(
        Command::new(&compiler)
            .args(["-O2", "-fPIC", "-w", "-c"])
            .args(&options)
            .arg(&source)
            .arg("-o")
            .arg(&staged),
    )
    .context("cannot compile the PMPI layer against this program's mpi.h")?;
    std::fs::rename(&staged, &object).with_context(|| format!("cannot move it to {}", object.display()))?;
    Ok(object)
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
