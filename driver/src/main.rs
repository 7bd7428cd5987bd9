//! `instrument`: reports, the bitcode rewriter, the demo and the benchmarks. The compiler
//! wrappers are the separate binaries `instrument-cc` and `instrument-c++`.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use instrument_contract::settings;
use instrument_driver::{bench, demo, experiment, run};
use instrument_report::callpaths::Threads;
use instrument_report::view::View;
use instrument_report::{export, profiles};
use instrument_toolchain::{link, rewrite};
use std::path::PathBuf;

mod report_cli;

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
        INSTRUMENT_PLACEMENT=late|early (probes after optimisation, the default: the plain build's code;\n\
        or before inlining: every source routine, but slower code where small routines are inlined),\n\
        INSTRUMENT_CLOCK=tsc|tsc-unordered|monotonic, INSTRUMENT_STACK_FRAMES (shadow-stack depth, default 65536)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a profile as a table sorted by exclusive time, or another view of it (or as JSON)
    Report(report_cli::ReportArgs),
    /// Write a profile for other tools: folded stacks, flame graph, speedscope, TAU, pprof
    #[command(long_about = "Write a profile for other tools.\n\n  \
        instrument export --format flamegraph -o app.svg\n  \
        instrument export --format speedscope -o app.speedscope.json\n  \
        instrument export --format pprof -o app.pb.gz          (go tool pprof app.pb.gz)\n  \
        instrument export --format tau -o tau rank0.json rank1.json   (paraprof tau)\n\n\
        TAU export writes one profile.<node>.0.<thread> per profile given (node = its position) and per \
        thread. Times are compensated when the profile was (see --raw).")]
    Export {
        /// Profile files (several only for --format tau: one node each); default: the newest
        profiles: Vec<PathBuf>,
        #[arg(long, value_enum)]
        format: export::Format,
        /// Output file, or directory for --format tau (default: standard output)
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// One thread (0 is the first) instead of all merged (folded, flamegraph)
        #[arg(long, value_name = "N")]
        thread: Option<u64>,
        /// Export raw times even when the profile has compensated ones
        #[arg(long)]
        raw: bool,
    },
    /// Run an instrumented program with measurement settings
    Run {
        /// Record callpaths of depth K (`all` for the whole calling context); default: flat
        #[arg(long, value_name = "K", value_parser = run::parse_depth)]
        callpath: Option<u32>,
        /// Calibrate the probes at start-up and remove their cost from every time
        #[arg(long)]
        compensate: bool,
        /// Where to write the profile (default: INSTRUMENT_PROFILE_DIR or the working directory)
        #[arg(long, value_name = "DIR")]
        profile_dir: Option<PathBuf>,
        /// Sample time histograms of the N busiest routines and loops while the program runs
        /// (from outside, through its live segment) into its profile: see report --timeline
        #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "8", require_equals = true)]
        timeline: Option<usize>,
        /// The program and its arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true, value_name = "PROGRAM")]
        program: Vec<String>,
    },
    /// Instrument a bitcode file: write instrumented bitcode (-o x.bc) or a native object (-o x.o)
    Rewrite {
        /// Input bitcode (.bc)
        input: PathBuf,
        /// Output file: .o for a native object, anything else for bitcode
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Link a program built with `instrument rewrite` by its own front end, adding the runtime
    #[command(long_about = "Link a program whose objects came from `instrument rewrite`, with the \
        front end's own driver, adding the runtime's archive and linker arguments in that driver's \
        syntax. For a front end the wrappers do not wrap (D's ldc2, or one built on an older LLVM):\n\n  \
        ldc2 -c -O -output-bc app.d -of=app.bc\n  \
        instrument rewrite app.bc -o app.o\n  \
        instrument link -- ldc2 app.o -of=app\n\n\
        The syntax is known from the driver's name (ldc2/ldmd2: -L, swiftc: -Xlinker, rustc: -Clink-arg=, \
        anything else: -Wl,); --syntax chooses it.")]
    Link {
        /// How the driver passes arguments to the linker (default: from its name)
        #[arg(long, value_enum)]
        syntax: Option<link::Syntax>,
        /// The front end's link command
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            required = true,
            value_name = "DRIVER ARGS"
        )]
        command: Vec<std::ffi::OsString>,
    },
    /// Build and run the bundled C example and print its profile
    Demo,
    /// Run the MO / PA-off / PA / PA-comp / CA / CA-comp experiment matrix and print Table 1
    #[command(long_about = "Run Malony and Shende's experiments: every program is built with only main \
        instrumented (MO) and with all routines (PA), then run in rounds: each round runs every level once, \
        in a fresh random order, each trial right after a short fixed control workload. Levels: MO, PA-off \
        (the PA build with every probe but main's switched off: what instrumenting changed in the compiled \
        code), PA, PA-comp (compensated), CA (callpaths), CA-comp. Main's inclusive time is compared with \
        MO's as the paper's % error of the minimum and of the mean, and as the median of the per-round errors \
        (each round against its own MO, and against its own PA-off) with a distribution-free 95 % interval; \
        where scaling each trial by its control narrows the intervals, those errors are control-normalised \
        (marked *). The control's spread is printed as the machine's noise floor.\n\n  \
        instrument experiment --class W --rounds 10\n  \
        instrument experiment --class W --until 1% --budget 2h   (add rounds until every interval is within ±1 %)\n  \
        instrument experiment npb.toml --levels MO,PA-off,PA,PA-comp\n\n\
        Programs come from a TOML matrix file (see driver/src/experiment/matrix.rs) \
        or, by default, the bench-nas kernels at --class. Results go to --out (Markdown, CSV, JSON, SVG); every \
        trial is cached there, so an interrupted run resumes with whole rounds.\n\nMPI programs (--ranks N, or \
        `ranks` in the matrix) run under mpirun; every rank's main is measured and the results follow the paper's \
        Table 2: per level the highest and lowest of the per-rank minima, and the % error of the rank-by-rank \
        mean and of the highest against MO. With compensation on, ranks piggyback their overhead on their \
        messages (INSTRUMENT_PIGGYBACK=0 in a program's env turns that off).")]
    Experiment {
        /// The matrix file (TOML); default: the bench-nas kernels
        matrix: Option<PathBuf>,
        /// bench-nas class for the default matrix
        #[arg(long, default_value = "W", value_parser = ["S", "W", "A"])]
        class: String,
        /// Rounds to run (each runs every level of every program once; default: the matrix's
        /// `trials`, 10); with --until, the rounds to run at least
        #[arg(long, visible_alias = "trials", value_name = "N")]
        rounds: Option<u32>,
        /// Keep adding rounds until every level's interval is within ±WIDTH % (as 1% or 0.5)
        #[arg(long, value_name = "WIDTH", value_parser = parse_percent)]
        until: Option<f64>,
        /// Stop adding rounds after this much wall time (as 90s, 45m, 2h; default with --until: 1h)
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        budget: Option<std::time::Duration>,
        /// Levels to run (comma separated)
        #[arg(long, value_delimiter = ',', default_value = "MO,PA-off,PA,PA-comp,CA,CA-comp", value_parser = parse_level)]
        levels: Vec<experiment::results::Level>,
        /// Only these programs (names, or kernel names such as cg)
        #[arg(long, value_delimiter = ',')]
        programs: Vec<String>,
        /// Probe placement for the builds: early (before inlining) or late (after optimisation)
        #[arg(long, value_parser = ["early", "late"])]
        placement: Option<String>,
        /// Callpath depth for the CA levels (default: the matrix's, all)
        #[arg(long)]
        callpath: Option<String>,
        /// Output directory (results and the trial cache)
        #[arg(long, default_value = "instrument-experiment")]
        out: PathBuf,
        /// Compensation strategy for the -comp levels (on = inplace: hot events' probe costs
        /// measured where they run; calibrated: the paper's start-up constant; fenced:
        /// serialized probes)
        #[arg(long, default_value = "on", value_parser = ["on", "inplace", "calibrated", "fenced"])]
        compensate: String,
        /// Run every program under mpirun with N ranks and report the paper's Table 2 (the
        /// default suite becomes bench-nas's MPI kernels)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        ranks: Option<u32>,
        /// Align loops to BYTES in every level's C and C++ compiles (clang's -falign-loops), so
        /// that MO and PA do not differ by where a hot loop falls in a cache line; 0 leaves
        /// the compiler's alignment
        #[arg(long, value_name = "BYTES", default_value_t = 64)]
        align_loops: u32,
        /// Run the instrumented levels with the default throttling (TAU's rule: hot tiny
        /// routines only counted after 1000 calls, 100000 when compensating, their time
        /// estimated) instead of timing every routine fully as the paper's levels do
        #[arg(long)]
        throttle: bool,
    },
    /// Watch a running instrumented program: its busiest routines and loops, live
    #[command(long_about = "Watch a running instrumented program without stopping it: its busiest \
        routines, loops and call statements of the last interval, with their times and calls so far, \
        refreshed every second. The program publishes its counters in a shared-memory segment (a memfd \
        only its owner can open; INSTRUMENT_LIVE=0 turns it off).\n\n  \
        instrument top 4242                       (full screen: arrows select, space switches off/on)\n  \
        instrument top 4242 --batch 5 --json      (five updates for scripts)\n  \
        instrument top 4242 --off 'blas_*'        (stop measuring these routines)\n  \
        instrument top 4242 --on 'blas_*'\n\n\
        A probe switched off returns at once (about 1 ns) and counts nothing; until no call of the routine \
        is open it still counts calls without timing them. The profile written at the end holds what was \
        measured while the probes were on.")]
    Top(instrument_driver::live::top::TopArgs),
    /// Predict what instrumentation costs, from an earlier profile and probe costs measured now
    #[command(long_about = "Predict what instrumenting a program costs before building or running it \
        again: the calls of an earlier profile times what each probe costs on this machine, measured now \
        by a tiny instrumented program in the setting asked for. Change the build or the run on the \
        command line to see what it would save:\n\n  \
        instrument cost                              (the newest profile's build and run)\n  \
        instrument cost --select filter.txt          (a build leaving out filter.txt's routines)\n  \
        instrument cost --runtime-select filter.txt  (the same binary, those probes switched off)\n  \
        instrument cost --throttle off               (every call timed)\n  \
        instrument cost --callpath 4 --compensate\n\n\
        The costs are those of probes back to back, so the prediction is close for short independent \
        routines and an upper bound next to long dependency chains, which hide the probes. \
        `instrument report --suggest-filter FILE` writes a filter to try. Every profile also says what \
        its own probes cost (its `overhead` section, and the `probes:` line of `instrument report`).")]
    Cost(instrument_driver::cost::CostArgs),
    /// Benchmarks that print ratios measured in one run
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Cost of an instrumented event against the cost of two clock reads
    Probes(BenchArgs),
    /// Cost per call in callpath mode at k = 1, 2, 4, 8 and unlimited, against flat mode
    Callpaths(BenchArgs),
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Print JSON (probes: {"ns_per_call","clock_pair_ns","ratio",...})
    #[arg(long)]
    json: bool,
    /// Repetitions of each measurement; the minimum is kept
    #[arg(long, default_value_t = 5)]
    repeat: u32,
    /// Scale of the workloads (1 = 10^8 leaf calls)
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
}

impl BenchArgs {
    fn settings(&self) -> bench::Settings {
        bench::Settings { json: self.json, repeat: self.repeat.max(1), scale: self.scale }
    }
}

fn main() {
    // Like other Unix filters: `instrument report | head` ends quietly when the reader goes away
    // (Rust ignores SIGPIPE, which would turn the closed pipe into a panic on the next print).
    // SAFETY: restoring a signal's default disposition before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if let Err(error) = run(Cli::parse()) {
        eprintln!("instrument: {error:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Report(args) => report_cli::run(args),
        Command::Rewrite { input, output } => {
            rewrite::rewrite(&input, &output, rewrite::Emit::from_output(&output))
                .with_context(|| format!("cannot instrument {}", input.display()))
        }
        Command::Export { profiles, format, output, thread, raw } => {
            export_command(profiles, format, output, thread.map_or(Threads::Merged, Threads::One), raw)
        }
        Command::Run { callpath, compensate, profile_dir, timeline, program } => {
            let code = run::run(&run::RunOptions { callpath, compensate, profile_dir, timeline, program })?;
            std::process::exit(code)
        }
        Command::Link { syntax, command } => std::process::exit(link::run(syntax, &command)?),
        Command::Demo => demo::run(),
        Command::Experiment {
            matrix,
            class,
            rounds,
            until,
            budget,
            levels,
            programs,
            placement,
            callpath,
            out,
            compensate,
            ranks,
            align_loops,
            throttle,
        } => experiment::run(&experiment::Settings {
            matrix,
            class,
            rounds,
            until,
            budget,
            out,
            levels,
            programs,
            placement,
            callpath,
            compensate,
            ranks,
            align_loops,
            throttle,
        }),
        Command::Top(args) => instrument_driver::live::top::run(&args),
        Command::Cost(args) => {
            let path = profile_path(args.profile.clone())?;
            instrument_driver::cost::run(&args, path)
        }
        Command::Bench { which: BenchCommand::Probes(args) } => bench::probes(&args.settings()),
        Command::Bench { which: BenchCommand::Callpaths(args) } => bench::callpaths(&args.settings()),
    }
}

/// The HTML page of an experiment's results (`results.json` in its output directory).
fn experiment_html(dir: &std::path::Path) -> Result<String> {
    let path = if dir.is_dir() { dir.join("results.json") } else { dir.to_path_buf() };
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let summaries: Vec<experiment::results::ProgramSummary> = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an experiment's results.json", path.display()))?;
    Ok(instrument_report::html::experiment_page(&summaries, &path.display().to_string()))
}

fn export_command(
    paths: Vec<PathBuf>,
    format: export::Format,
    output: Option<PathBuf>,
    threads: Threads,
    raw: bool,
) -> Result<()> {
    if paths.len() > 1 && !format.is_directory() {
        anyhow::bail!("only --format tau exports several profiles at once (one node each)");
    }
    let profiles = if paths.is_empty() {
        vec![load(None)?]
    } else {
        paths.into_iter().map(|p| load(Some(p))).collect::<Result<_>>()?
    };
    let view = View::for_profile(&profiles[0], raw);
    if format.is_directory() {
        let dir = output.context("--format tau writes a directory: give it with -o DIR")?;
        let files = export::tau::files(&profiles, view)?;
        return Ok(export::tau::write_dir(&dir, &files)?);
    }
    let stacked =
        matches!(format, export::Format::Folded | export::Format::Flamegraph | export::Format::Speedscope);
    if stacked && profiles[0].callpaths.is_none() {
        eprintln!(
            "instrument: this profile is flat, so every stack is one routine deep; record callpaths for whole \
             stacks (INSTRUMENT_CALLPATH=all, or instrument run --callpath all)"
        );
    }
    let bytes = export::render(&profiles[0], format, threads, view)?;
    match output {
        Some(path) => write_output(&path, &bytes),
        None if format.is_binary() && std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            anyhow::bail!("--format pprof is binary: give a file with -o (or redirect standard output)")
        }
        None => std::io::Write::write_all(&mut std::io::stdout(), &bytes)
            .context("cannot write to standard output"),
    }
}

/// A width in percent: `1%`, `0.5 %` or `2`.
fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{text}` is not a positive percentage (such as 1% or 0.5)")),
    }
}

/// A wall time: seconds, or a number with s, m or h (`90s`, `45m`, `2h`, `1.5h`).
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last() {
        Some((i, c @ ('s' | 'm' | 'h'))) => (&text[..i], c),
        _ => (text, 's'),
    };
    let scale = match unit {
        'h' => 3600.0,
        'm' => 60.0,
        _ => 1.0,
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(std::time::Duration::from_secs_f64(v * scale)),
        _ => Err(format!("`{text}` is not a duration (such as 90s, 45m or 2h)")),
    }
}

fn parse_level(text: &str) -> Result<experiment::results::Level, String> {
    experiment::results::Level::parse(text)
        .ok_or_else(|| format!("{text:?} is not a level (MO, PA, PA-comp, CA, CA-comp)"))
}

fn load(profile: Option<PathBuf>) -> Result<instrument_profile::Profile> {
    Ok(profiles::load(&profile_path(profile)?)?)
}

/// The profile given, the newest one in a directory given, or the newest in the default place.
fn profile_path(profile: Option<PathBuf>) -> Result<PathBuf> {
    match profile {
        Some(dir) if dir.is_dir() => Ok(profiles::newest(&dir)?),
        Some(path) => Ok(path),
        None => Ok(profiles::newest(&default_profile_dir())?),
    }
}

/// Writes a report or export to the output the user named (see `profiles::write_output`),
/// readable by everyone.
fn write_output(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    Ok(profiles::write_output(path, bytes, 0o644)?)
}

fn default_profile_dir() -> PathBuf {
    settings::PROFILE_DIR.path().unwrap_or_else(|| ".".into())
}
