//! The experiment matrix file: which programs to build and run, and how. TOML:
//!
//! ```toml
//! trials = 10                 # per program and level (default 10)
//! callpath = "all"            # depth for the CA levels (default all)
//! placement = "early"         # probes before inlining (early) or after optimisation (late)
//! ranks = 1                   # MPI ranks per run (default 1: no launcher)
//! launcher = "mpirun -np {ranks}"
//!
//! [[program]]
//! name = "cg.W"
//! directory = "bench-nas"     # relative to this file; commands run there
//! build = "make BUILD={build} CLASS=W CC='{cc}' FC='{fc}' {build}/cg"
//! run = "{build}/cg"
//! ranks = 4                   # this program's ranks (default: the matrix's)
//! env = { INSTRUMENT_PIGGYBACK = "0" }   # extra environment for its runs
//! ```
//!
//! `{build}` is a build directory per program and variant; `{cc}`, `{cxx}` and `{fc}` are the
//! compiler wrappers with the variant's options (MO: only `main` instrumented). With more than
//! one rank the run command is started by the launcher (or the launcher replaces `{mpirun}` in
//! it), and every rank's main is measured: the results then follow the paper's Table 2.

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
    #[serde(default = "default_ranks")]
    pub ranks: u32,
    #[serde(default = "default_launcher")]
    pub launcher: String,
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
    #[serde(default)]
    pub ranks: Option<u32>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
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

fn default_ranks() -> u32 {
    1
}

fn default_launcher() -> String {
    "mpirun -np {ranks}".into()
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix> {
        // A bare file name has an empty parent: relative directories start at the current one.
        let path =
            &std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read matrix {}", path.display()))?;
        let mut matrix: Matrix = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid experiment matrix", path.display()))?;
        matrix.base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        matrix.check()?;
        Ok(matrix)
    }

    /// The bench-nas kernels at `class`, the default suite; with more than one rank, its MPI
    /// kernels.
    pub fn bench_nas(bench_nas: &Path, class: &str, ranks: u32) -> Result<Matrix> {
        // The builds run in their own directories: a relative path would not reach the kernels.
        let bench_nas = &std::path::absolute(bench_nas)
            .with_context(|| format!("cannot resolve {}", bench_nas.display()))?;
        if !bench_nas.join("Makefile").is_file() {
            bail!(
                "bench-nas not found at {} (set INSTRUMENT_BENCH_NAS or give a matrix file)",
                bench_nas.display()
            );
        }
        let kernels: &[&str] = if ranks > 1 {
            &["ep_mpi", "is_mpi", "cg_mpi"]
        } else {
            &["ep", "is", "cg", "mg", "ft", "bt", "ep_f", "cg_f"]
        };
        let programs = kernels
            .iter()
            .map(|k| Program {
                name: format!("{}.{class}", k.to_uppercase().replace("_F", "-f").replace("_MPI", "-mpi")),
                directory: Some(bench_nas.to_path_buf()),
                build: format!("make -s BUILD={{build}} CLASS={class} CC='{{cc}}' FC='{{fc}}' {{build}}/{k}"),
                run: format!("{{build}}/{k}"),
                ranks: None,
                env: Default::default(),
            })
            .collect();
        let matrix = Matrix {
            trials: default_trials(),
            callpath: default_callpath(),
            placement: default_placement(),
            ranks,
            launcher: default_launcher(),
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
        if self.ranks == 0 || self.programs.iter().any(|p| p.ranks == Some(0)) {
            bail!("ranks must be at least 1");
        }
        for p in &self.programs {
            if !names.insert(p.name.as_str()) {
                bail!("program {:?} appears twice in the matrix", p.name);
            }
        }
        Ok(())
    }

    /// The ranks `program` runs with.
    pub fn ranks(&self, program: &Program) -> u32 {
        program.ranks.unwrap_or(self.ranks)
    }

    /// The command that runs `program` (`{build}` still to fill in): under the launcher when
    /// it has more than one rank.
    pub fn run_command(&self, program: &Program) -> String {
        let ranks = self.ranks(program);
        if ranks <= 1 {
            return program.run.replace("{mpirun}", "");
        }
        let launcher = self.launcher.replace("{ranks}", &ranks.to_string());
        if program.run.contains("{mpirun}") {
            program.run.replace("{mpirun}", &launcher)
        } else {
            format!("{launcher} {}", program.run)
        }
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
    fn the_bench_nas_matrix_builds_in_its_kernels_directory_given_a_relative_path() {
        // Unit tests run in the crate's directory: the repository's bench-nas is one up.
        let m = Matrix::bench_nas(Path::new("../bench-nas"), "S", 1).unwrap();
        let directory = m.programs[0].directory.as_ref().unwrap();
        assert!(directory.is_absolute() && directory.join("Makefile").is_file(), "{}", directory.display());
        assert!(m.base.is_absolute());
    }

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
        std::fs::write(
            &path,
            "ranks = 2\n[[program]]\nname = \"a\"\nbuild = \"b\"\nrun = \"./a\"\n\
             [[program]]\nname = \"b\"\nbuild = \"b\"\nrun = \"env X=1 {mpirun} ./b\"\nranks = 4\n\
             [[program]]\nname = \"c\"\nbuild = \"b\"\nrun = \"./c\"\nranks = 1\nenv = { Y = \"2\" }\n",
        )
        .unwrap();
        let m = Matrix::load(&path).unwrap();
        let commands: Vec<String> = m.programs.iter().map(|p| m.run_command(p)).collect();
        assert_eq!(commands, ["mpirun -np 2 ./a", "env X=1 mpirun -np 4 ./b", "./c"]);
        assert_eq!(m.programs[2].env.get("Y").map(String::as_str), Some("2"));
        std::fs::write(&path, "ranks = 0\n[[program]]\nname = \"a\"\nbuild = \"b\"\nrun = \"r\"\n").unwrap();
        assert!(format!("{:#}", Matrix::load(&path).unwrap_err()).contains("at least 1"));
    }
}
