//! `campaign`: the long reliability campaigns, one command each (the CI tests run a few seeds of
//! the same checks, tests/tests/campaigns.rs).
//!
//! `cargo run --release -p instrument-tests --bin campaign -- csmith --count 1000 [--reduce]`
//! `cargo run --release -p instrument-tests --bin campaign -- llvm-stress --count 10000`

use clap::{Parser, ValueEnum};
use instrument_tests::campaign::{self, Outcome};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    /// Random C programs: same output and exit code plainly and instrumented
    Csmith,
    /// Random IR modules: still verify and compile after the bitcode rewriter
    LlvmStress,
}

#[derive(Parser)]
#[command(about = "Random programs and random IR through the instrumentation, counting failures")]
struct Args {
    kind: Kind,
    /// Seeds to try
    #[arg(long, default_value_t = 1000)]
    count: u64,
    /// First seed
    #[arg(long, default_value_t = 1)]
    start: u64,
    /// Reduce each csmith failure with creduce into this directory's regressions/
    #[arg(long)]
    reduce: bool,
    /// Where failing inputs are kept, in a run-<pid> subdirectory (default: a new temporary
    /// directory, printed when something failed)
    #[arg(long)]
    work: Option<PathBuf>,
}

fn main() {
    let args = Args::parse();
    let scratch = tempfile::Builder::new().prefix("campaign").tempdir().expect("temporary directory");
    // A directory of its own even inside a shared --work, so that two campaigns never build
    // into each other's files.
    let work = match &args.work {
        Some(dir) => dir.join(format!("run-{}", std::process::id())),
        None => scratch.path().to_path_buf(),
    };
    std::fs::create_dir_all(&work).expect("work directory");
    let mut outcome = Outcome::default();
    for (i, seed) in (args.start..args.start + args.count).enumerate() {
        let failed_before = outcome.failures.len();
        match args.kind {
            Kind::Csmith => campaign::csmith_seed(seed, &work, &mut outcome),
            Kind::LlvmStress => campaign::llvm_stress_seed(seed, &work, &mut outcome),
        }
        if let Some(failure) = outcome.failures.get(failed_before) {
            eprintln!("seed {}: {}", failure.seed, failure.what);
        }
        if (i + 1) % 50 == 0 || i + 1 == args.count as usize {
            eprintln!(
                "{}/{}: {} checked, {} skipped, {} failed",
                i + 1,
                args.count,
                outcome.checked,
                outcome.skipped,
                outcome.failures.len()
            );
        }
    }
    for failure in &outcome.failures {
        println!("seed {}: {} ({})", failure.seed, failure.what, failure.input.display());
        if args.reduce && matches!(args.kind, Kind::Csmith) {
            let regressions = work.join("regressions");
            std::fs::create_dir_all(&regressions).expect("regressions directory");
            match campaign::reduce(failure, &regressions) {
                Ok(path) => println!("  reduced: {}", path.display()),
                Err(e) => println!("  not reduced: {e}"),
            }
        }
    }
    println!(
        "{} seeds from {}: {} checked, {} skipped, {} failed",
        args.count,
        args.start,
        outcome.checked,
        outcome.skipped,
        outcome.failures.len()
    );
    if !outcome.failures.is_empty() {
        let kept = if args.work.is_some() { work } else { scratch.keep() };
        eprintln!("failing inputs kept in {}", kept.join("failures").display());
        std::process::exit(1);
    }
}
