//! The environment of an instrumented cargo run: its own target directory, the merged rustc
//! flags, the host triple (always passed as --target, so build scripts and proc macros, which
//! run on the host, are built without the flags), late probe placement (the pass runs in
//! the link-time optimiser, after rustc has optimised each crate) and one codegen unit per
//! crate in the optimised profiles.
//!
//! Why one codegen unit: a plain release build optimises a crate's 16 units together (rustc's
//! thin local LTO), but with `-Clinker-plugin-lto` each unit is optimised alone before the
//! link, and the link did not make up for it. ripgrep 14.1.1 (`-j1 -c` over 254 MB of sources,
//! 10 shuffled rounds, the note of issue 24), run time against its plain build: built this way
//! with a no-op link pipeline 1.088, with one unit per crate 0.991; instrumented with every probe
//! switched off 1.202, with one unit 1.088; instrumented with the defaults 1.336, with one unit
//! 1.252. A build takes longer (ripgrep 38 s instead of 37). A variable the environment sets
//! already wins.

use anyhow::{bail, Context, Result};
use instrument_contract::settings;
use instrument_toolchain::{layout, runtime};
use std::path::PathBuf;
use std::process::Command;

pub struct Environment {
    pub host: String,
    pub target_dir: PathBuf,
    pub rustflags: String,
    /// `CARGO_PROFILE_<NAME>_CODEGEN_UNITS` for the optimised profiles the run may use.
    pub codegen_units: Vec<String>,
}

impl Environment {
    /// The environment of a run whose profile is `release`, or a custom one named `profile`.
    pub fn new(release: bool, profile: Option<&str>) -> Result<Environment> {
        let ours =
            super::rustflags::instrument_flags(&layout::plugin()?, &runtime::link_arguments()?, release);
        let encoded = std::env::var("CARGO_ENCODED_RUSTFLAGS").ok();
        let plain = std::env::var("RUSTFLAGS").ok();
        let user = super::rustflags::user_flags(encoded.as_deref(), plain.as_deref());
        Ok(Environment {
            host: host()?,
            target_dir: target_dir()?.join("instrument"),
            rustflags: super::rustflags::encode(&user, &ours),
            codegen_units: codegen_unit_variables(profile),
        })
    }

    pub fn variables(&self) -> Vec<(String, String)> {
        let mut variables = vec![
            ("CARGO_TARGET_DIR".to_string(), self.target_dir.display().to_string()),
            ("CARGO_ENCODED_RUSTFLAGS".to_string(), self.rustflags.clone()),
            (settings::PLACEMENT.name.to_string(), "late".into()),
        ];
        variables.extend(self.codegen_units.iter().map(|name| (name.clone(), "1".to_string())));
        variables
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

/// One codegen unit for the release and bench profiles and a custom `profile` (see the module
/// comment), unless the environment sets it already.
fn codegen_unit_variables(profile: Option<&str>) -> Vec<String> {
    let custom = profile.filter(|p| !["dev", "test", "release", "bench"].contains(p));
    ["release", "bench"]
        .into_iter()
        .chain(custom)
        .map(|p| format!("CARGO_PROFILE_{}_CODEGEN_UNITS", p.to_uppercase().replace('-', "_")))
        .filter(|name| std::env::var_os(name).is_none())
        .collect()
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
