//! How a benchmark builds a project: with the plain compilers or the wrappers, and the
//! wrappers' settings. Shared by bench-builds and bench-intrusion; every command it makes starts
//! without the developer's `INSTRUMENT_*` environment and finds the wrappers on PATH.

use crate::{bin, bin_dir};
use std::path::Path;
use std::process::Command;

#[derive(Clone, Copy)]
pub struct Variant {
    pub name: &'static str,
    pub instrumented: bool,
    pub env: &'static [(&'static str, &'static str)],
}

pub const PLAIN: Variant = Variant { name: "plain", instrumented: false, env: &[] };

impl Variant {
    pub fn cc(self) -> String {
        self.tool("clang-22", "instrument-cc")
    }

    pub fn cxx(self) -> String {
        self.tool("clang++-22", "instrument-c++")
    }

    pub fn fc(self) -> String {
        self.tool("flang-22", "instrument-fc")
    }

    fn tool(self, plain: &str, wrapper: &str) -> String {
        if self.instrumented {
            bin(wrapper).display().to_string()
        } else {
            plain.to_string()
        }
    }

    /// `program` in `dir` with this variant's settings.
    pub fn command(self, program: &str, dir: &Path) -> Command {
        let mut command = Command::new(program);
        crate::without_instrument_env(&mut command).current_dir(dir).envs(self.env.iter().copied());
        let path = format!("{}:{}", bin_dir().display(), std::env::var("PATH").unwrap_or_default());
        command.env("PATH", path).env_remove("RUSTFLAGS").env_remove("CARGO_ENCODED_RUSTFLAGS");
        command
    }
}
