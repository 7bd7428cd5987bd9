//! `instrument`: reports, the bitcode rewriter, the demo and the benchmarks. The compiler
//! wrappers are the separate binaries `instrument-cc` and `instrument-c++`.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use instrument_driver::{bench, demo, profiles, report, rewrite, tree};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "instrument",
    version,
    about = "Measured profiling for LLVM languages: exact calls, inclusive and exclusive times",
    long_about = "Measured profiling for LLVM languages.\n\n\
        Build with the compiler wrappers, run the program as usual, then read the profile:\n\n  \
        CC=instrument-cc make        (or: instrument-cc -O2 app.c -o app)\n  \
        ./app                        (writes app.<pid>.instrument.json)\n  \
        instrument report            (the newest profile in this directory)\n\n\
        Environment: INSTRUMENT_PROFILE_DIR (where profiles go, default: the working directory),\n\
        INSTRUMENT_PLACEMENT=early|late (probes before inlining, the default, or after optimisation),\n\
        INSTRUMENT_CLOCK=tsc|monotonic, INSTRUMENT_STACK_FRAMES (shadow-stack depth, default 65536)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a profile as a table sorted by exclusive time (or as JSON)
    Report {
        /// The profile file; default: the newest *.instrument.json in INSTRUMENT_PROFILE_DIR or here
        profile: Option<PathBuf>,
        /// Print JSON for scripts instead of the table
        #[arg(long, conflicts_with_all = ["tree"])]
        json: bool,
        /// Show the program graph top-down: program > procedure > loop > call statement
        #[arg(long)]
        tree: bool,
        /// With --tree: only this routine (readable or linked name) and what it contains
        #[arg(long, value_name = "NAME", requires = "tree")]
        focus: Option<String>,
        /// Show file:line next to routine names
        #[arg(long)]
        lines: bool,
    },
    /// Instrument a bitcode file: write instrumented bitcode (-o x.bc) or a native object (-o x.o)
    Rewrite {
        /// Input bitcode (.bc)
        input: PathBuf,
        /// Output file: .o for a native object, anything else for bitcode
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Build and run the bundled C example and print its profile
    Demo,
    /// Benchmarks that print ratios measured in one run
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Cost of an instrumented call against the cost of two clock reads
    Probes {
        /// Print JSON ({"ns_per_call","clock_pair_ns","ratio",...})
        #[arg(long)]
        json: bool,
        /// Repetitions of each measurement; the minimum is kept
        #[arg(long, default_value_t = 5)]
        repeat: u32,
        /// Scale of the workloads (1 = 10^8 leaf calls)
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
    },
}

fn main() {
    if let Err(error) = run(Cli::parse()) {
        eprintln!("instrument: {error:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Report { profile, json, tree, focus, lines } => {
            let path = match profile {
                Some(p) => p,
                None => profiles::newest(&default_profile_dir())?,
            };
            let profile = profiles::load(&path)?;
            let text = if json {
                report::json(&profile) + "\n"
            } else if tree {
                tree::render(&profile, &tree::TreeOptions { focus: focus.as_deref(), lines })
                    .map_err(anyhow::Error::msg)?
            } else {
                report::table(&profile, lines)
            };
            print!("{text}");
            Ok(())
        }
        Command::Rewrite { input, output } => {
            rewrite::rewrite(&input, &output, rewrite::Emit::from_output(&output))
                .with_context(|| format!("cannot instrument {}", input.display()))
        }
        Command::Demo => demo::run(),
        Command::Bench { which: BenchCommand::Probes { json, repeat, scale } } => {
            bench::probes(&bench::Settings { json, repeat: repeat.max(1), scale })
        }
    }
}

fn default_profile_dir() -> PathBuf {
    std::env::var_os("INSTRUMENT_PROFILE_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| ".".into())
}
