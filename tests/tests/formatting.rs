//! The C and C++ sources of the product (the runtime's and the plugin's shims) and of the NAS
//! kernels are formatted as the repository's .clang-format says, checked with LLVM 22's
//! clang-format. The test fixtures keep their layout (.clang-format-ignore): tests assert the
//! source lines of their loops and call statements. The PMPI layer, which the wrappers compile
//! against the user's MPI with `-w`, is checked here for warnings of its own.

use instrument_tests::{repo_root, run};
use std::path::{Path, PathBuf};
use std::process::Command;

fn c_sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            c_sources(&path, found);
        } else if path.extension().is_some_and(|e| ["c", "h", "cpp", "cc", "hpp"].iter().any(|x| e == *x)) {
            found.push(path);
        }
    }
}

#[test]
fn c_and_cpp_sources_are_formatted() {
    let mut files = Vec::new();
    for dir in ["rt/shim", "pass/shim", "bench-nas"] {
        c_sources(&repo_root().join(dir), &mut files);
    }
    assert!(files.len() >= 15, "the shims and the NAS kernels: {files:?}");
    let output = run(Command::new("clang-format-22").args(["--dry-run", "--Werror"]).args(&files));
    assert!(
        output.status.success(),
        "run `clang-format-22 -i` on these (scripts/install-deps installs it):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The PMPI layer compiles without a warning against Open MPI's mpi.h with the operation list
/// the contract generates. The wrappers compile it with `-w` for the user's own MPI (whose
/// header may warn), so this is where its own warnings are caught; the runtime's other shims
/// are compiled with warnings as errors by rt/build.rs.
#[test]
fn the_pmpi_layer_compiles_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(instrument_contract::mpi::C_HEADER_NAME),
        instrument_contract::mpi::c_header(),
    )
    .unwrap();
    let source = dir.path().join("pmpi.c");
    std::fs::copy(repo_root().join("rt/shim/pmpi.c"), &source).unwrap();
    let flags = run(Command::new("mpicc").arg("-showme:compile"));
    assert!(flags.status.success(), "Open MPI's mpicc (scripts/install-deps installs it)");
    let flags = String::from_utf8(flags.stdout).unwrap();
    let output = run(Command::new("clang-22")
        .args(["-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-c"])
        .args(flags.split_whitespace())
        .arg(&source)
        .arg("-o")
        .arg(dir.path().join("pmpi.o")));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}
