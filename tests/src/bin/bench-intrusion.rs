//! `bench-intrusion`: what instrumenting does to real programs' run time, per probe placement,
//! measured in one run so the ratios hold on a noisy machine. Each project (lz4, zlib, xz, Lua:
//! inline-heavy C nobody here wrote; Eigen: template-heavy C++) is built plainly, with the wrappers' defaults and with
//! early placement; then every round runs each build once, in turn, on the same input, and the
//! ratio to the plain run of the same round is kept. The table gives each build's median ratio
//! with its 95 % interval (sign-test order statistics), checks that every run printed exactly
//! what the plain build printed, and says what the default build's profile holds. Each
//! instrumented run's profiles also say what their probes cost (`overhead.total_ns`), which is
//! set against what that run took over the round's plain run: the "figure" column, the median
//! of those ratios (issue 23's honest overhead: 1 is right).
//!
//! `cargo run --release -p instrument-tests --bin bench-intrusion -- [--rounds N] [--only lz4,xz]`
//! (after `cargo build --release --workspace`; target: the default build under 1.10 on each).

use clap::Parser;
use instrument_report::experiment::interval::{median_interval, Interval};
use instrument_tests::variant::{Variant, PLAIN};
use instrument_tests::{copy_dir, fixtures, third_party};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Run time of real programs instrumented per placement, as ratios to plain from one run")]
struct Args {
    /// Rounds; each runs every build once
    #[arg(long, default_value_t = 9)]
    rounds: u32,
    /// Only these projects (lz4, zlib, xz, lua, sqlite, eigen)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Print JSON instead of the table
    #[arg(long)]
    json: bool,
}

const VARIANTS: &[Variant] = &[
    PLAIN,
    Variant { name: "default", instrumented: true, env: &[] },
    Variant { name: "early", instrumented: true, env: &[("INSTRUMENT_PLACEMENT", "early")] },
];

/// A project: its sources, its build (returns the program) and its workload's arguments.
struct Project {
    name: &'static str,
    source: fn(&Path) -> PathBuf,
    build: fn(Variant, &Path) -> PathBuf,
    workload: fn(&Path) -> Vec<String>,
    /// A path the build needs that is not part of the project (system headers), and the Debian
    /// package that installs it; a project without it is skipped with a line.
    needs: Option<(&'static str, &'static str)>,
}

const PROJECTS: &[Project] = &[
    Project {
        name: "lz4",
        source: third_party::lz4,
        build: build_lz4,
        workload: |input| args(&["-c", "-1"], input),
        needs: None,
    },
    Project {
        name: "zlib",
        source: third_party::zlib,
        build: build_zlib,
        workload: |_| vec!["24576".into()],
        needs: None,
    },
    Project {
        name: "xz",
        source: third_party::xz,
        build: build_xz,
        workload: |input| args(&["-c", "-2", "-T1"], input),
        needs: None,
    },
    Project {
        name: "lua",
        source: third_party::lua,
        build: build_lua,
        workload: |_| vec![fixtures().join("lua/workload.lua").display().to_string(), "12".into()],
        needs: None,
    },
    Project {
        name: "sqlite",
        source: third_party::sqlite,
        build: build_sqlite,
        workload: |_| {
            vec![":memory:".into(), format!(".read {}", fixtures().join("bench/sqlite.sql").display())]
        },
        needs: None,
    },
    // A quarter of the program's default work: its early build runs about 60 times slower.
    Project {
        name: "eigen",
        source: eigen_source,
        build: build_eigen,
        workload: |_| vec!["1".into()],
        needs: Some((EIGEN, "libeigen3-dev")),
    },
];

/// Eigen's headers, from Debian's libeigen3-dev (scripts/install-deps).
const EIGEN: &str = "/usr/include/eigen3";

/// c-fixtures/bench/eigen.cpp: template-heavy C++ (Eigen's dense and sparse solvers).
fn eigen_source(dest: &Path) -> PathBuf {
    std::fs::create_dir_all(dest).unwrap();
    std::fs::copy(fixtures().join("bench/eigen.cpp"), dest.join("eigen.cpp")).unwrap();
    dest.to_path_buf()
}

fn build_eigen(v: Variant, tree: &Path) -> PathBuf {
    let include = format!("-I{EIGEN}");
    checked(
        v.command(&v.cxx(), tree).args(["-O2", &include, "eigen.cpp", "-o", "eigen"]),
        "compiling eigen.cpp",
    );
    tree.join("eigen")
}

fn args(flags: &[&str], input: &Path) -> Vec<String> {
    flags.iter().map(|f| f.to_string()).chain([input.display().to_string()]).collect()
}

fn checked(command: &mut Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(output.status.success(), "{what} failed:\n{}", String::from_utf8_lossy(&output.stderr));
}

fn build_lz4(v: Variant, tree: &Path) -> PathBuf {
    let cc = format!("CC={}", v.cc());
    checked(v.command("make", &tree.join("programs")).args(["-s", "-j2", "lz4", &cc]), "make lz4");
    tree.join("programs/lz4")
}

fn build_zlib(v: Variant, tree: &Path) -> PathBuf {
    let mut cc = v.command(&v.cc(), tree);
    cc.args(["-O2", "-DHAVE_UNISTD_H", "-DHAVE_STDARG_H", "-I."]);
    for entry in std::fs::read_dir(tree).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "c") {
            cc.arg(path);
        }
    }
    cc.arg(fixtures().join("zpipe.c")).args(["-o", "zpipe"]);
    checked(&mut cc, "compiling zlib and zpipe.c");
    tree.join("zpipe")
}

fn build_xz(v: Variant, tree: &Path) -> PathBuf {
    let build = tree.join("build");
    let cc = format!("-DCMAKE_C_COMPILER={}", v.cc());
    checked(
        v.command("cmake", tree).args(["-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Release", &cc]),
        "cmake xz",
    );
    checked(v.command("cmake", tree).args(["--build", "build", "-j2", "--target", "xz"]), "building xz");
    build.join("xz")
}

fn build_lua(v: Variant, tree: &Path) -> PathBuf {
    let cc = format!("CC={} -std=gnu99", v.cc());
    checked(v.command("make", tree).args(["-s", "-j2", "linux", &cc]), "make lua");
    tree.join("src/lua")
}

/// The amalgamation and its shell, single-threaded, as one compile.
fn build_sqlite(v: Variant, tree: &Path) -> PathBuf {
    let flags = ["-O2", "-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION", "sqlite3.c", "shell.c"];
    checked(v.command(&v.cc(), tree).args(flags).args(["-lm", "-o", "sqlite3"]), "compiling sqlite");
    tree.join("sqlite3")
}

/// A text of words from a small vocabulary, from a fixed seed: compresses as prose does.
fn write_input(path: &Path, bytes: usize) {
    const WORDS: [&str; 15] = [
        "profile", "inline", "probe", "routine", "the", "of", "loop", "compile", "measure", "time", "call",
        "and", "a", "stack", "clock",
    ];
    let mut state: u64 = 12345;
    let mut text = String::with_capacity(bytes + 16);
    while text.len() < bytes {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = (state >> 33) as usize;
        text.push_str(WORDS[r % 15]);
        text.push(if r.is_multiple_of(11) { '\n' } else { ' ' });
    }
    std::fs::write(path, text).unwrap();
}

#[derive(serde::Serialize)]
struct Row {
    project: &'static str,
    build: &'static str,
    median_s: f64,
    ratio: Interval,
    /// The profiles' probe cost over the run's extra time (median over the rounds), where the
    /// variant writes profiles and ran slower.
    figure: Option<Interval>,
    placement: Option<String>,
    routines: usize,
    calls: u64,
}

/// Builds every variant, then `rounds` rounds of one run each; ratios to the round's plain run.
fn measure(project: &Project, args: &Args, scratch: &Path, input: &Path) -> Vec<Row> {
    let source = (project.source)(&scratch.join(format!("{}-source", project.name)));
    let programs: Vec<PathBuf> = VARIANTS
        .iter()
        .map(|v| {
            eprintln!("building {} ({})", project.name, v.name);
            let tree = scratch.join(format!("{}-{}", project.name, v.name));
            copy_dir(&source, &tree);
            (project.build)(*v, &tree)
        })
        .collect();
    let workload = (project.workload)(input);
    let mut seconds = vec![Vec::new(); VARIANTS.len()];
    let mut expected: Option<Vec<u8>> = None;
    for round in 0..args.rounds {
        eprintln!("running {} ({}/{})", project.name, round + 1, args.rounds);
        for (i, (v, program)) in VARIANTS.iter().zip(&programs).enumerate() {
            let profiles = round_profiles(scratch, project, v, round);
            std::fs::create_dir_all(&profiles).unwrap();
            let mut command = v.command(&program.display().to_string(), &profiles);
            command.args(&workload).env("INSTRUMENT_PROFILE_DIR", &profiles);
            let start = Instant::now();
            let output = command.output().expect("the workload runs");
            seconds[i].push(start.elapsed().as_secs_f64());
            assert!(output.status.success(), "{} ({}) failed", project.name, v.name);
            let digest = output.stdout;
            match &expected {
                None => expected = Some(digest),
                Some(e) => {
                    assert!(*e == digest, "{} ({}) printed something else than plain", project.name, v.name)
                }
            }
        }
    }
    rows(project, scratch, &seconds)
}

/// Where the profiles of a variant's run in a round go.
fn round_profiles(scratch: &Path, project: &Project, v: &Variant, round: u32) -> PathBuf {
    scratch.join(format!("profiles-{}-{}-{round}", project.name, v.name))
}

/// The probe cost the profiles of a run say (ns, summed over its processes), if it wrote any.
fn overhead_ns(profiles: &Path) -> Option<f64> {
    let paths = instrument_tests::profile_paths(profiles);
    let costs = paths.iter().map(|p| instrument_tests::load_profile(p).overhead.map(|o| o.total_ns));
    costs.sum::<Option<f64>>().filter(|_| !paths.is_empty())
}

/// Per round, what a variant's profiles say their probes cost over what the run took more than
/// the round's plain run (rounds where it took no more are left out).
fn figures(project: &Project, scratch: &Path, v: &Variant, seconds: &[f64], plain: &[f64]) -> Vec<f64> {
    (0..seconds.len())
        .filter(|&r| seconds[r] > plain[r])
        .filter_map(|r| {
            let said = overhead_ns(&round_profiles(scratch, project, v, r as u32))?;
            Some(said / ((seconds[r] - plain[r]) * 1e9))
        })
        .collect()
}

fn rows(project: &Project, scratch: &Path, seconds: &[Vec<f64>]) -> Vec<Row> {
    VARIANTS
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let ratios: Vec<f64> = seconds[i].iter().zip(&seconds[0]).map(|(s, p)| s / p).collect();
            let profiles = round_profiles(scratch, project, v, 0);
            let figure = figures(project, scratch, v, &seconds[i], &seconds[0]);
            let profile =
                instrument_tests::profile_paths(&profiles).first().map(|p| instrument_tests::load_profile(p));
            Row {
                project: project.name,
                build: v.name,
                median_s: instrument_report::experiment::interval::median(&seconds[i]).unwrap_or(0.0),
                ratio: median_interval(&ratios).unwrap_or_else(|| whole_range(&ratios)),
                figure: (!figure.is_empty())
                    .then(|| median_interval(&figure).unwrap_or_else(|| whole_range(&figure))),
                placement: profile.as_ref().and_then(|p| p.placement.map(|p| p.to_string())),
                routines: profile.as_ref().map_or(0, |p| p.functions.len()),
                calls: profile.as_ref().map_or(0, |p| p.functions.iter().map(|f| f.stats.calls).sum()),
            }
        })
        .collect()
}

/// The median and the whole range, for too few rounds to give a 95 % interval (fewer than 6).
fn whole_range(values: &[f64]) -> Interval {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let median = instrument_report::experiment::interval::median(values).unwrap_or(f64::NAN);
    Interval { n: values.len(), median, low, high }
}

fn main() {
    let args = Args::parse();
    let scratch = tempfile::Builder::new().prefix("bench-intrusion").tempdir().expect("scratch directory");
    let input = scratch.path().join("input.txt");
    write_input(&input, 24 << 20);
    let wanted = |p: &&Project| args.only.is_empty() || args.only.iter().any(|o| o == p.name);
    let available = |p: &&Project| match p.needs {
        Some((path, package)) if !Path::new(path).exists() => {
            eprintln!("skipping {}: {path} is missing (scripts/install-deps installs {package})", p.name);
            false
        }
        _ => true,
    };
    let rows: Vec<Row> = PROJECTS
        .iter()
        .filter(wanted)
        .filter(available)
        .flat_map(|p| measure(p, &args, scratch.path(), &input))
        .collect();
    if args.json {
        println!("{}", serde_json::json!({ "rounds": args.rounds, "rows": rows }));
        return;
    }
    println!(
        "Run time against the plain build, median of {} paired rounds [95 % interval; the range below 6]",
        args.rounds
    );
    println!("(target: the default build under 1.10; identical output checked on every run)");
    println!(
        "figure: the profile's probe cost over the run's extra time, median over the rounds (1: honest)\n"
    );
    println!(
        "{:<6} {:<8} {:>9} {:>26} {:>24} {:>10} {:>9} {:>12}",
        "", "build", "median s", "ratio", "figure", "placement", "routines", "calls"
    );
    let interval = |i: &Interval| format!("{:.3} [{:.3}, {:.3}]", i.median, i.low, i.high);
    for r in &rows {
        let figure = r.figure.as_ref().map_or_else(|| "-".to_string(), interval);
        let placement = r.placement.as_deref().unwrap_or("-");
        println!(
            "{:<6} {:<8} {:>9.3} {:>26} {:>24} {:>10} {:>9} {:>12}",
            r.project,
            r.build,
            r.median_s,
            interval(&r.ratio),
            figure,
            placement,
            r.routines,
            r.calls
        );
    }
}
