//! The environment of an instrumented cargo run: its own target directory, the merged rustc
//! flags, the host triple (always passed as --target, so build scripts and proc macros, which
//! run on the host, are built without the flags) and late probe placement (the pass runs in
//! the link-time optimiser, after rustc has optimised each crate).

use anyhow::{bail, Context, Result};
use instrument_contract::settings;
use instrument_toolchain::{layout, runtime};
use std::path::PathBuf;
use std::process::Command;

pub struct Environment {
    pub host: String,
    pub target_dir: PathBuf,
    pub rustflags: String,
}

impl Environment {
    pub fn new(release: bool) -> Result<Environment> {
        let ours =
            super::rustflags::instrument_flags(&layout::plugin()?, &runtime::link_arguments()?, release);
        let encoded = std::env::var("CARGO_ENCODED_RUSTFLAGS").ok();
        let plain = std::env::var("RUSTFLAGS").ok();
        let user = super::rustflags::user_flags(encoded.as_deref(), plain.as_deref());
        Ok(Environment {
            host: host()?,
            target_dir: target_dir()?.join("instrument"),
            rustflags: super::rustflags::encode(&user, &ours),
        })
    }

    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("CARGO_TARGET_DIR", self.target_dir.display().to_string()),
            ("CARGO_ENCODED_RUSTFLAGS", self.rustflags.clone()),
            (settings::PLACEMENT.name, "late".into()),
        ]
    }

    /// `export NAME='value'` lines for a shell.
    pub fn shell_exports(&self) -> String {
        let mut out = String::new();
        for (name, value) in self.variables() {
            let quoted =
                shlex::try_quote(&value).map(|q| q.into_owned()).unwrap_or_else(|_| format!("'{value}'"));
            out.push_str(&format!("export {name}={quoted}\n"));
        }
        out.push_str(&format!("# and pass --target {} to cargo\n", self.host));
        out
    }
}

fn output_of(command: &mut Command) -> Result<String> {
    let output = command.output().with_context(|| format!("cannot run {:?}", command.get_program()))?;
    if !output.status.success() {
        bail!("{:?} failed: {}", command.get_program(), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The host triple, from `rustc -vV`.
fn host() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let text = output_of(Command::new(rustc).arg("-vV"))?;
    text.lines().find_map(|l| l.strip_prefix("host: ")).map(str::to_string).context("rustc -vV names no host")
}

/// The project's target directory (`cargo metadata`: honours CARGO_TARGET_DIR and config).
fn target_dir() -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let text = output_of(Command::new(cargo).args(["metadata", "--no-deps", "--format-version", "1"]))
        .context("not in a cargo project")?;
    let metadata: serde_json::Value = serde_json::from_str(&text).context("cannot read cargo metadata")?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("cargo metadata names no target directory")
}
