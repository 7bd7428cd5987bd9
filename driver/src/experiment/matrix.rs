//! The experiment matrix file: which programs to build and run, and how. TOML:
//!
//! ```toml
//! trials = 10                 # per program and level (default 10)
//! callpath = "all"            # depth for the CA levels (default all)
//! placement = "early"         # probes before inlining (early) or after optimisation (late)
//!
//! [[program]]
//! name = "cg.W"
//! directory = "bench-nas"     # relative to this file; commands run there
//! build = "make BUILD={build} CLASS=W CC='{cc}' FC='{fc}' {build}/cg"
//! run = "{build}/cg"
//! ```
//!
//! `{build}` is a build directory per program and variant; `{cc}`, `{cxx}` and `{fc}` are the
//! compiler wrappers with the variant's options (MO: only `main` instrumented).

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    #[serde(default = "default_trials")]
    pub trials: u32,
    #[serde(default = "default_callpath")]
    pub callpath: String,
    #[serde(default = "default_placement")]
    pub placement: String,
    #[serde(rename = "program")]
    pub programs: Vec<Program>,
    /// Where relative directories start (the matrix file's directory).
    #[serde(skip)]
    pub base: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub name: String,
    #[serde(default)]
    pub directory: Option<PathBuf>,
    pub build: String,
    pub run: String,
}

fn default_trials() -> u32 {
    10
}

fn default_callpath() -> String {
    "all".into()
}

fn default_placement() -> String {
    "early".into()
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read matrix {}", path.display()))?;
        let mut matrix: Matrix = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid experiment matrix", path.display()))?;
        matrix.base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        matrix.check()?;
        Ok(matrix)
    }

    /// The bench-nas kernels at `class`, the default suite.
    pub fn bench_nas(bench_nas: &Path, class: &str) -> Result<Matrix> {
        if !bench_nas.join("Makefile").is_file() {
            bail!(
                "bench-nas not found at {} (set INSTRUMENT_BENCH_NAS or give a matrix file)",
                bench_nas.display()
            );
        }
        let programs = ["ep", "is", "cg", "mg", "ft", "bt", "ep_f", "cg_f"]
            .iter()
            .map(|k| Program {
                name: format!("{}.{class}", k.to_uppercase().replace("_F", "-f")),
                directory: Some(bench_nas.to_path_buf()),
                build: format!("make -s BUILD={{build}} CLASS={class} CC='{{cc}}' FC='{{fc}}' {{build}}/{k}"),
                run: format!("{{build}}/{k}"),
            })
            .collect();
        let matrix = Matrix {
            trials: default_trials(),
            callpath: default_callpath(),
            placement: default_placement(),
            programs,
            base: bench_nas.to_path_buf(),
        };
        matrix.check()?;
        Ok(matrix)
    }

    fn check(&self) -> Result<()> {
        if self.programs.is_empty() {
            bail!("the matrix names no [[program]]");
        }
        if !matches!(self.placement.as_str(), "early" | "late") {
            bail!("placement = {:?} is not \"early\" or \"late\"", self.placement);
        }
        let mut names = std::collections::HashSet::new();
        for p in &self.programs {
            if !names.insert(p.name.as_str()) {
                bail!("program {:?} appears twice in the matrix", p.name);
            }
        }
        Ok(())
    }

    pub fn directory(&self, program: &Program) -> PathBuf {
        match &program.directory {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => self.base.join(d),
            None => self.base.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_matrix_and_rejects_mistakes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        std::fs::write(&path, "trials = 3\n[[program]]\nname = \"x\"\nbuild = \"make\"\nrun = \"./x\"\n")
            .unwrap();
        let m = Matrix::load(&path).unwrap();
        assert_eq!((m.trials, m.callpath.as_str(), m.programs.len()), (3, "all", 1));
        std::fs::write(&path, "[[program]]\nname = \"x\"\nbuild = \"make\"\n").unwrap();
        assert!(format!("{:#}", Matrix::load(&path).unwrap_err()).contains("run"));
        std::fs::write(
            &path,
            "placement = \"sideways\"\n[[program]]\nname = \"x\"\nbuild = \"b\"\nrun = \"r\"\n",
        )
        .unwrap();
        assert!(format!("{:#}", Matrix::load(&path).unwrap_err()).contains("sideways"));
    }
}
