//! Third-party sources for the real-build tests and the build benchmark, fetched through cargo
//! (tests/third-party/Cargo.toml pins the crates) and copied into a scratch directory, so the
//! builds may write next to them and nothing third-party is ever committed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The registry directories of the pinned crates, by crate name.
fn crate_dirs() -> &'static Vec<(String, PathBuf)> {
    static DIRS: OnceLock<Vec<(String, PathBuf)>> = OnceLock::new();
    DIRS.get_or_init(|| {
        let manifest = crate::repo_root().join("tests/third-party/Cargo.toml");
        let fetch = crate::run(Command::new("cargo").args(["fetch", "--locked", "--manifest-path"]).arg(&manifest));
        crate::assert_success(&fetch, "cargo fetch --locked of tests/third-party (needs crates.io or a filled cache, and its Cargo.lock in step with its Cargo.toml)");
        let metadata = crate::run(
            Command::new("cargo")
                .args(["metadata", "--format-version", "1", "--offline", "--locked", "--manifest-path"])
                .arg(&manifest),
        );
        crate::assert_success(&metadata, "cargo metadata of tests/third-party");
        let json: serde_json::Value = serde_json::from_slice(&metadata.stdout).expect("cargo metadata JSON");
        json["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|p| {
                let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
                (p["name"].as_str().expect("name").to_string(), manifest.parent().unwrap().to_path_buf())
            })
            .collect()
    })
}

/// Copies `subdir` of the fetched crate `name` to `dest` (created) and returns `dest`.
pub fn copy_source(name: &str, subdir: &str, dest: &Path) -> PathBuf {
    let root = crate_dirs()
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} is not in tests/third-party/Cargo.toml"))
        .1
        .join(subdir);
    crate::copy_dir(&root, dest);
    dest.to_path_buf()
}

/// The Lua 5.4 distribution (top-level Makefile, src/ with lua.c and its makefile).
pub fn lua(dest: &Path) -> PathBuf {
    copy_source("rlua-lua54-sys", "lua-5.4.6", dest)
}

/// The SQLite amalgamation and shell: sqlite3.c, sqlite3.h, shell.c.
pub fn sqlite(dest: &Path) -> PathBuf {
    copy_source("sqlite3-src", "source", dest)
}

/// The lz4 1.10.0 distribution (top-level Makefile, lib/, programs/ with the `lz4` program).
pub fn lz4(dest: &Path) -> PathBuf {
    copy_source("lz4-sys", "liblz4", dest)
}

/// The zlib 1.3.1 library sources (zlib.h and the .c files; no build files).
pub fn zlib(dest: &Path) -> PathBuf {
    copy_source("libz-sys", "src/zlib", dest)
}

/// The xz 5.2.5 sources with their CMakeLists.txt (liblzma and the `xz` program).
pub fn xz(dest: &Path) -> PathBuf {
    copy_source("lzma-sys", "xz-5.2", dest)
}
