//! `cargo instrument`: builds, runs, tests or benchmarks a Rust project with every crate of the
//! workspace and its dependencies instrumented (the precompiled std is not), in a target
//! directory of its own so the normal build is never touched. The pass runs at link time:
//! rustc hands LLVM bitcode to the linker (`-Clinker-plugin-lto`), and lld loads the pass plugin.

mod environment;
mod rustflags;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::process::Command;

#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum Cargo {
    /// Measured profiling for Rust projects (see `cargo instrument --help`)
    #[command(
        version,
        long_about = "Build, run, test or benchmark with every crate of the workspace and its dependencies \
            instrumented (not the precompiled std).\n\n  \
            cargo instrument run --release -- ARGS   (writes <program>.<pid>.instrument.json here)\n  \
            instrument report                       (read it)\n\n\
            Builds go to <target-dir>/instrument, so the normal build stays as it was. RUSTFLAGS and \
            CARGO_ENCODED_RUSTFLAGS are kept and extended. Optimised profiles get one codegen unit per \
            crate (CARGO_PROFILE_<NAME>_CODEGEN_UNITS=1, unless set), as bitcode handed to the linker \
            loses the inlining between units a plain build has. The dev profile works too (the pass then runs \
            as the link-time pipeline); `--release` places probes after optimisation. `show-env` prints \
            the environment for other tools (`eval \"$(cargo instrument show-env)\"`)."
    )]
    Instrument(Instrument),
}

#[derive(clap::Args)]
struct Instrument {
    #[command(subcommand)]
    command: Action,
}

#[derive(Subcommand)]
enum Action {
    /// cargo build, instrumented
    Build(CargoArgs),
    /// cargo run, instrumented
    Run(CargoArgs),
    /// cargo test, instrumented (each test binary writes its own profile)
    Test(CargoArgs),
    /// cargo bench, instrumented
    Bench(CargoArgs),
    /// Print the environment `cargo instrument build` uses, as shell `export` lines
    ShowEnv {
        /// The build is a release (or bench) build
        #[arg(long)]
        release: bool,
    },
}

#[derive(clap::Args)]
struct CargoArgs {
    /// Arguments for cargo (and after `--`, for the program)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "CARGO ARGS")]
    args: Vec<String>,
}

fn main() {
    let Cargo::Instrument(cli) = Cargo::parse();
    match run(cli.command) {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            eprintln!("cargo-instrument: {error:#}");
            std::process::exit(1);
        }
    }
}

fn run(action: Action) -> Result<i32> {
    let (subcommand, args) = match action {
        Action::ShowEnv { release } => {
            let env = environment::Environment::new(release, None)?;
            print!("{}", env.shell_exports());
            return Ok(0);
        }
        Action::Build(a) => ("build", a.args),
        Action::Run(a) => ("run", a.args),
        Action::Test(a) => ("test", a.args),
        Action::Bench(a) => ("bench", a.args),
    };
    let release = subcommand == "bench" || rustflags::is_release(&args);
    let env = environment::Environment::new(release, rustflags::profile(&args))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command.arg(subcommand);
    if !rustflags::names_target(&args) {
        command.args(["--target", &env.host]);
    }
    command.args(&args).envs(env.variables());
    let status = command.status().with_context(|| format!("cannot run {}", cargo.to_string_lossy()))?;
    Ok(status.code().unwrap_or(1))
}
