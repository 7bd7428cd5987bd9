//! Finding the LLVM 22 tools, with one clear message (and the apt-get line) when one is missing.

use anyhow::{bail, Result};
use std::path::PathBuf;

/// A tool of the LLVM 22 toolchain: its default name, the variable that overrides it, and the
/// Debian package that provides it.
pub struct Tool {
    pub name: &'static str,
    pub env: &'static str,
    pub package: &'static str,
}

pub const CLANG: Tool = Tool { name: "clang-22", env: "INSTRUMENT_CLANG", package: "clang-22" };
pub const CLANGXX: Tool = Tool { name: "clang++-22", env: "INSTRUMENT_CLANGXX", package: "clang-22" };
pub const FLANG: Tool = Tool { name: "flang-22", env: "INSTRUMENT_FLANG", package: "flang-22" };
pub const LLD: Tool = Tool { name: "ld.lld-22", env: "INSTRUMENT_LLD", package: "lld-22" };
pub const OBJCOPY: Tool = Tool { name: "llvm-objcopy-22", env: "INSTRUMENT_OBJCOPY", package: "llvm-22" };
pub const AR: Tool = Tool { name: "llvm-ar-22", env: "INSTRUMENT_AR", package: "llvm-22" };

impl Tool {
    pub fn find(&self) -> Result<PathBuf> {
        let wanted = std::env::var_os(self.env).filter(|v| !v.is_empty()).map(PathBuf::from);
        let name = wanted.clone().unwrap_or_else(|| PathBuf::from(self.name));
        if let Some(found) = search_path(&name) {
            return Ok(found);
        }
        match wanted {
            Some(w) => bail!("{} is set to {}, which is not an executable", self.env, w.display()),
            None => bail!(
                "{} not found on PATH (install it: apt-get install {}, or set {})",
                self.name,
                self.package,
                self.env
            ),
        }
    }
}

pub fn search_path(name: &std::path::Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return is_executable(name).then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}
