//! `third-party-sources DEST`: copies the pinned third-party sources the real-build tests use
//! (lz4, zlib, xz, Lua, SQLite: tests/third-party) to DEST/<name>, leaving a name already there
//! as it is, for scripts/real-experiment.

use instrument_tests::third_party;
use std::path::{Path, PathBuf};

/// Copies one project's sources to the directory it is given, and returns that directory.
type Copy = fn(&Path) -> PathBuf;

const SOURCES: [(&str, Copy); 5] = [
    ("lz4", third_party::lz4),
    ("zlib", third_party::zlib),
    ("xz", third_party::xz),
    ("lua", third_party::lua),
    ("sqlite", third_party::sqlite),
];

fn main() {
    let Some(dest) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: third-party-sources DEST");
        std::process::exit(2);
    };
    for (name, copy) in SOURCES {
        let to = dest.join(name);
        if !to.is_dir() {
            copy(&to);
        }
    }
}
