//! Finding the LLVM 22 tools, with one clear message (and the apt-get line) when one is missing.

use crate::{Result, ToolchainError};
use instrument_contract::settings;
use std::path::PathBuf;

/// A tool of the LLVM 22 toolchain: the setting that overrides it (whose default is the tool's
/// name on PATH), and the Debian package that provides it.
pub struct Tool {
    pub env: settings::Setting,
    pub package: &'static str,
}

pub const CLANG: Tool = Tool { env: settings::CLANG, package: "clang-22" };
pub const CLANGXX: Tool = Tool { env: settings::CLANGXX, package: "clang-22" };
pub const FLANG: Tool = Tool { env: settings::FLANG, package: "flang-22" };
pub const LLD: Tool = Tool { env: settings::LLD, package: "lld-22" };
pub const OBJCOPY: Tool = Tool { env: settings::OBJCOPY, package: "llvm-22" };
pub const AR: Tool = Tool { env: settings::AR, package: "llvm-22" };

impl Tool {
    /// The tool's name on PATH when its setting is unset.
    pub fn program(&self) -> &'static str {
        self.env.default
    }

    pub fn find(&self) -> Result<PathBuf> {
        let wanted = self.env.path();
        let name = wanted.clone().unwrap_or_else(|| PathBuf::from(self.program()));
        if let Some(found) = search_path(&name) {
            return Ok(found);
        }
        Err(match wanted {
            Some(path) => ToolchainError::NotExecutable { setting: self.env.name, path },
            None => ToolchainError::ToolNotFound {
                program: self.program(),
                package: self.package,
                setting: self.env.name,
            },
        })
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
