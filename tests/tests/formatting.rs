//! The C and C++ sources of the product (the runtime's and the plugin's shims) and of the NAS
//! kernels are formatted as the repository's .clang-format says, checked with LLVM 22's
//! clang-format. The test fixtures keep their layout (.clang-format-ignore): tests assert the
//! source lines of their loops and call statements.

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
