//! `instrument report`: its arguments, the one view they choose, and which profiles it reads.
//! The views are flags for the command line's sake (`--tree`, `--callpaths`...), but they form
//! one group of which at most one may be given, resolved into `ReportView` before anything is
//! read; `--json` prints every text view as JSON.

use crate::{load, profile_path, write_output};
use anyhow::Result;
use instrument_profile::Profile;
use instrument_report::callpaths::{self, Threads};
use instrument_report::view::View;
use instrument_report::{profiles, report, summary, tree};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("view").multiple(false).args(
    ["tree", "callpaths", "cct", "summary", "html", "suggest_filter", "timeline"]
))]
pub struct ReportArgs {
    /// The profile file (reported alone), or a directory to take the newest from; default: the
    /// newest *.instrument.json in INSTRUMENT_PROFILE_DIR or here. The newest profile of an MPI
    /// run brings the other ranks' beside it; several files are reported together
    profile: Vec<PathBuf>,
    /// Print the view as JSON for scripts (the flat table, --tree, --callpaths, --cct, --summary)
    #[arg(long, conflicts_with_all = ["html", "suggest_filter", "timeline"])]
    json: bool,
    /// View: the program graph top-down: program > procedure > loop > call statement
    #[arg(long)]
    tree: bool,
    /// With --tree: only this routine (readable or linked name) and what it contains
    #[arg(long, value_name = "NAME", requires = "tree")]
    focus: Option<String>,
    /// Show file:line next to routine names (the flat table and --tree)
    #[arg(long)]
    lines: bool,
    /// View: the k-callpath table (`main => solve => f`); needs a callpath recording
    #[arg(long)]
    callpaths: bool,
    /// With --callpaths: the k to show (at most the recorded depth; default: as recorded)
    #[arg(long, value_name = "K", requires = "callpaths")]
    depth: Option<u32>,
    /// View: the calling-context tree; needs a callpath recording
    #[arg(long)]
    cct: bool,
    /// One thread's numbers (0 is the first) instead of all threads merged
    #[arg(long, value_name = "N", conflicts_with = "summary")]
    thread: Option<u64>,
    /// One rank of an MPI run instead of the summary over all ranks
    #[arg(long, value_name = "R")]
    rank: Option<u32>,
    /// View: TAU pprof's summary over the units of execution (every thread of every rank): per
    /// event the total, mean, min, max and standard deviation; the default for MPI runs
    #[arg(long)]
    summary: bool,
    /// Show times exactly as measured: not compensated, and without the estimates of
    /// throttled events' untimed calls
    #[arg(long)]
    raw: bool,
    /// Sort the flat table (and its JSON) by this, largest first (loops and call statements:
    /// by inclusive time when sorting by exclusive)
    #[arg(long, value_enum, default_value_t = report::SortKey::Exclusive, conflicts_with = "view")]
    sort: report::SortKey,
    /// Keep only the first N routines (and loops and call statements) of the flat table (and
    /// its JSON)
    #[arg(long, value_name = "N", conflicts_with = "view")]
    top: Option<usize>,
    /// View: a self-contained HTML report (tables, program graph, flame graph) written to this file
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// With --html: report an experiment's results (its --out directory) instead of a profile
    #[arg(long, value_name = "DIR", requires = "html", conflicts_with = "profile")]
    experiment: Option<PathBuf>,
    /// View: a TAU selection file leaving out the routines too cheap to measure (the throttling
    /// rule the run used), written to FILE; use it with INSTRUMENT_SELECT at the next build or
    /// INSTRUMENT_RUNTIME_SELECT at the next run. Several profiles (workloads, ranks) give one
    /// file that leaves out what any of them picks
    #[arg(long, value_name = "FILE")]
    suggest_filter: Option<PathBuf>,
    /// View: the time histograms recorded with `instrument run --timeline`: sparklines here, or a
    /// chart with --timeline=OUT.svg
    #[arg(long, value_name = "OUT.svg", num_args = 0..=1, default_missing_value = "-", require_equals = true)]
    timeline: Option<String>,
}

/// What a report shows: one of these, chosen by the flags of the `view` group.
enum ReportView {
    Table,
    Tree,
    Callpaths,
    Cct,
    Summary,
    Html(PathBuf),
    SuggestFilter(PathBuf),
    Timeline(String),
}

impl ReportArgs {
    /// The view the flags choose (clap lets at most one through).
    fn view(&self) -> ReportView {
        if let Some(out) = &self.html {
            ReportView::Html(out.clone())
        } else if let Some(out) = &self.suggest_filter {
            ReportView::SuggestFilter(out.clone())
        } else if let Some(out) = &self.timeline {
            ReportView::Timeline(out.clone())
        } else if self.tree {
            ReportView::Tree
        } else if self.callpaths {
            ReportView::Callpaths
        } else if self.cct {
            ReportView::Cct
        } else if self.summary {
            ReportView::Summary
        } else {
            ReportView::Table
        }
    }
}

/// Runs `instrument report`.
pub fn run(args: ReportArgs) -> Result<()> {
    match args.view() {
        ReportView::Html(out) => {
            let page = match &args.experiment {
                Some(dir) => crate::experiment_html(dir)?,
                None => {
                    let profile = single(load_run(&args.profile, args.rank)?)?;
                    instrument_report::html::profile_page(&profile, View::for_profile(&profile, args.raw))?
                }
            };
            write_output(&out, page.as_bytes())
        }
        ReportView::SuggestFilter(out) => {
            let run = load_run(&args.profile, args.rank)?;
            write_output(&out, instrument_report::suggest::suggest_filter(&run).as_bytes())
        }
        ReportView::Timeline(out) => timeline(&args, &out),
        view => {
            let run = load_run(&args.profile, args.rank)?;
            let text = match view {
                ReportView::Summary => summary_text(&args, &run),
                ReportView::Table if run.len() > 1 && !args.json => summary_text(&args, &run),
                view => one_profile_text(&args, view, single(run)?)?,
            };
            print!("{text}");
            Ok(())
        }
    }
}

fn timeline(args: &ReportArgs, out: &str) -> Result<()> {
    let profile = single(load_run(&args.profile, args.rank)?)?;
    if out == "-" {
        print!("{}", instrument_report::timeline::sparklines(&profile)?);
        Ok(())
    } else {
        write_output(std::path::Path::new(out), instrument_report::timeline::svg(&profile)?.as_bytes())
    }
}

/// The summary over a run's units of execution (every thread of every rank).
fn summary_text(args: &ReportArgs, run: &[Profile]) -> String {
    let view = View::for_profile(&run[0], args.raw);
    let collected = summary::collect(run, view);
    if args.json {
        return summary::json(&collected) + "\n";
    }
    run_header(run) + &summary::render(&collected) + &summary::communication(run)
}

/// A view of one profile (one thread of it with --thread).
fn one_profile_text(args: &ReportArgs, view: ReportView, profile: Profile) -> Result<String> {
    let threads = args.thread.map_or(Threads::Merged, Threads::One);
    let per_path = matches!(view, ReportView::Callpaths | ReportView::Cct);
    let profile = match args.thread {
        Some(n) if !per_path => summary::one_thread(&profile, n)?,
        _ => profile,
    };
    let shown = View::for_profile(&profile, args.raw);
    let json = args.json;
    Ok(match view {
        ReportView::Callpaths => {
            let rows = callpaths::table(&profile, args.depth, threads)?;
            match json {
                true => callpaths::json_table(&profile, &rows, shown) + "\n",
                false => callpaths::render_table(&profile, &rows, shown),
            }
        }
        ReportView::Cct if json => callpaths::json_cct(&profile, threads, shown)? + "\n",
        ReportView::Cct => callpaths::render_cct(&profile, threads, shown)?,
        ReportView::Tree => {
            let options = tree::TreeOptions { focus: args.focus.as_deref(), lines: args.lines, view: shown };
            match json {
                true => tree::json(&profile, &options)? + "\n",
                false => tree::render(&profile, &options)?,
            }
        }
        _ => {
            let order = report::Order { key: args.sort, top: args.top };
            match json {
                true => report::json_in(&profile, order) + "\n",
                false => report::table_in(&profile, args.lines, shown, order),
            }
        }
    })
}

/// The profiles a report covers: a file named alone; several named together; or the newest
/// (in the directory given, or the default place) with the other ranks of its MPI run beside
/// it. `rank` keeps one rank.
fn load_run(paths: &[PathBuf], rank: Option<u32>) -> Result<Vec<Profile>> {
    let mut run = match paths {
        [file] if !file.is_dir() => vec![load(Some(file.clone()))?],
        [] | [_] => profiles::with_other_ranks(&profile_path(paths.first().cloned())?)?,
        many => many.iter().map(|p| load(Some(p.clone()))).collect::<Result<Vec<_>>>()?,
    };
    if let Some(r) = rank {
        run.retain(|p| p.mpi.as_ref().is_some_and(|m| m.rank == r));
        if run.is_empty() {
            anyhow::bail!(
                "no profile of rank {r} (the profiles are not from an MPI run, or it had fewer ranks)"
            );
        }
    }
    Ok(run)
}

/// The one profile a view of a single profile needs.
fn single(mut run: Vec<Profile>) -> Result<Profile> {
    match run.len() {
        1 => Ok(run.remove(0)),
        n if run.iter().all(|p| p.mpi.is_some()) => {
            anyhow::bail!("{n} profiles (the ranks of an MPI run): choose one with --rank R")
        }
        n => anyhow::bail!("{n} profiles given: this view shows one (name one file, or use --summary)"),
    }
}

/// The first lines of a report over several profiles: the program, or each program when they
/// differ, and the ranks of an MPI run.
fn run_header(run: &[Profile]) -> String {
    let first = &run[0];
    let ranks = match first.mpi.as_ref() {
        Some(m) => {
            format!("{} of {} ranks, job {}", run.len(), m.size, if m.job.is_empty() { "?" } else { &m.job })
        }
        None => format!("{} profiles", run.len()),
    };
    let wall = run.iter().map(|p| p.totals.wall_ns).max().unwrap_or(0);
    let mut programs: Vec<String> = run.iter().map(|p| p.command.join(" ")).collect();
    programs.dedup();
    let programs = match programs.as_slice() {
        [one] => format!("Profile of: {one}"),
        many => {
            let listed = run.iter().map(|p| format!("\n  pid {}: {}", p.pid, p.command.join(" ")));
            format!(
                "Profiles of {} programs, summed over all of them:{}",
                many.len(),
                listed.collect::<String>()
            )
        }
    };
    format!("{programs}\n{ranks}, longest wall {:.3} ms\n\n", wall as f64 / 1e6)
}
