//! Cargo cannot name a binary `instrument-c++`: that name is linked to `instrument-cxx` in the
//! output directory (the wrapper picks its language from argv[0]).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out
    let Some(bin_dir) = out.ancestors().nth(3) else { return };
    let link = bin_dir.join("instrument-c++");
    if std::fs::symlink_metadata(&link).is_err() {
        let _ = std::os::unix::fs::symlink("instrument-cxx", &link);
    }
}
