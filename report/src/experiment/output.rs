//! The experiment's results in the paper's Table 1 layout (as text and Markdown; MPI programs
//! in its Table 2 layout), as CSV and JSON for scripts, and as an SVG chart of the errors
//! against MO.

use super::interval::Interval;
use super::results::{ControlSummary, Level, Paired, ProgramSummary, RankCell, Trial};
use crate::error::{ReportError, Result};
use std::fmt::Write;
use std::path::Path;

/// Table 2's rows for an MPI program: the highest and lowest per-rank minima (microseconds)
/// and `%error (mean:high)`.
fn rank_rows(s: &ProgramSummary, cells: &[(Level, Option<RankCell>)]) -> Vec<Vec<String>> {
    let us = |f: fn(&RankCell) -> f64| -> Vec<String> {
        cells.iter().map(|(_, c)| c.as_ref().map_or("-".into(), |c| format!("{:.0}", f(c) / 1e3))).collect()
    };
    let ranks = cells.iter().find_map(|(_, c)| c.map(|c| c.ranks)).unwrap_or(0);
    let mut high = vec![format!("{} ({ranks} ranks)", s.program), "min (high)".into()];
    high.extend(us(|c| c.high_ns));
    let mut low = vec![String::new(), "min (low)".into()];
    low.extend(us(|c| c.low_ns));
    let mut error = vec![String::new(), "%error (mean:high)".into()];
    error.extend(cells.iter().map(|(_, c)| match c {
        Some(RankCell { error_mean_pct: Some(a), error_high_pct: Some(b), .. }) => format!("{a:.1} : {b:.1}"),
        _ => String::new(),
    }));
    vec![high, low, error]
}

/// Table 1: per program a `min` row, a `mean` row (microseconds), a `%error (min:mean)` row
/// and a `noise (±2 s.e.)` row (see `stats`); Table 2's rows for MPI programs.
pub fn table(summaries: &[ProgramSummary], markdown: bool) -> String {
    let levels: Vec<Level> =
        summaries.first().map(|s| s.cells.iter().map(|(l, _)| *l).collect()).unwrap_or_default();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["Experiment".to_string(), String::new()];
    header.extend(levels.iter().map(|l| format!("{} usecs", l.name())));
    for s in summaries {
        match &s.ranks {
            Some(cells) => rows.extend(rank_rows(s, cells)),
            None => rows.extend(level_rows(s)),
        }
        rows.extend(paired_rows(s));
        push_failures(&mut rows, s, levels.len());
    }
    if markdown {
        let mut out = format!("| {} |\n", header.join(" | "));
        out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
        for r in rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        return out;
    }
    aligned(&header, &rows)
}

/// A program's min, mean, % error and noise rows (Table 1).
fn level_rows(s: &ProgramSummary) -> [Vec<String>; 4] {
    let us = |f: fn(&super::results::Cell) -> f64| -> Vec<String> {
        s.cells.iter().map(|(_, c)| c.as_ref().map_or("-".into(), |c| format!("{:.0}", f(c) / 1e3))).collect()
    };
    let mut min = vec![s.program.clone(), "min".into()];
    min.extend(us(|c| c.min_ns));
    let mut mean = vec![String::new(), "mean".into()];
    mean.extend(us(|c| c.mean_ns));
    let mut error = vec![String::new(), "%error (min:mean)".into()];
    error.extend(s.cells.iter().map(|(_, c)| match c {
        Some(super::results::Cell { error_min_pct: Some(a), error_mean_pct: Some(b), .. }) => {
            format!("{a:.1} : {b:.1}")
        }
        _ => String::new(),
    }));
    let mut noise = vec![String::new(), NOISE_LABEL.into()];
    noise.extend(
        s.cells
            .iter()
            .map(|(_, c)| c.and_then(|c| c.noise_pct).map_or(String::new(), |n| format!("±{n:.1}"))),
    );
    [min, mean, error, noise]
}

/// The rows as a text table: the first two columns left-aligned, the numbers right-aligned.
fn aligned(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| if i < 2 { format!("{c:<w$}") } else { format!("{c:>w$}") })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(out, "{}", line(header));
    let _ = writeln!(out, "{}", "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
    for r in rows {
        let _ = writeln!(out, "{}", line(r).trim_end());
    }
    out
}

/// The label of the row holding each mean error's noise (`results::Cell::noise_pct`).
pub const NOISE_LABEL: &str = "noise (±2 s.e.)";

/// An interval as `+1.2 [-0.3, +2.9]` (%).
pub fn interval(i: &Interval) -> String {
    format!("{:+.1} [{:+.1}, {:+.1}]", i.median, i.low, i.high)
}

/// The labels of the paired rows: against MO, against PA-off; `*` marks control-normalised.
pub fn paired_labels(normalised: bool) -> [String; 2] {
    let mark = if normalised { "*" } else { "" };
    [format!("median vs MO [95% CI]{mark}"), format!("median vs PA-off [95% CI]{mark}")]
}

/// The paired rows of a program: each level's median per-round error against MO and, when
/// PA-off ran, against PA-off, with their intervals (rows with no interval are left out).
pub fn paired_rows(s: &ProgramSummary) -> Vec<Vec<String>> {
    let labels = paired_labels(s.normalised);
    let picks: [fn(&super::results::Cell) -> Paired; 2] = [|c| c.vs_mo, |c| c.vs_off];
    let mut rows = Vec::new();
    for (label, pick) in labels.into_iter().zip(picks) {
        let values: Vec<String> = s
            .cells
            .iter()
            .map(|(_, c)| {
                c.and_then(|c| pick(&c).shown(s.normalised)).map_or(String::new(), |i| interval(&i))
            })
            .collect();
        if values.iter().any(|v| !v.is_empty()) {
            let mut row = vec![String::new(), label];
            row.extend(values);
            rows.push(row);
        }
    }
    rows
}

/// The lines under the table: what its rows mean and the machine's noise floor.
pub fn notes(summaries: &[ProgramSummary], trials: &[Trial]) -> Vec<String> {
    let mut notes = Vec::new();
    if summaries.iter().any(|s| s.ranks.is_none()) {
        notes.push("(noise: two standard errors of the mean's error, from the trials' spread; a mean error inside it is not distinguishable from run-to-run variation)".to_string());
    }
    if summaries.iter().any(|s| s.ranks.is_some()) {
        notes.push("(MPI programs: each rank's main less its MPI_Init and MPI_Finalize, the launcher's start-up and tear-down)".to_string());
    }
    if summaries.iter().flat_map(paired_rows).next().is_some() {
        notes.push("(median vs MO: the median over rounds of each round's % error against that round's MO, with a distribution-free 95 % interval; * = control-normalised: each trial scaled by the noise control run just before it, shown where that narrows the intervals)".to_string());
    }
    if summaries.iter().any(|s| s.cells.iter().any(|(l, c)| *l == Level::PaOff && c.is_some())) {
        notes.push("(PA-off: the PA build with every probe but main's switched off at run time. PA-off vs MO is what instrumenting changed in the compiled code, which no compensation can remove; vs PA-off is what the probes cost, or compensation left, while running)".to_string());
    }
    let all: Vec<&Trial> = trials.iter().collect();
    if let Some(ControlSummary { runs, median_ns, spread_pct: Some(spread) }) = ControlSummary::of(&all) {
        notes.push(format!(
            "noise floor: the control workload ({:.1} ms) varied ±{spread:.2} % (robust s.d. over {runs} runs)",
            median_ns / 1e6
        ));
    }
    notes
}

fn push_failures(rows: &mut Vec<Vec<String>>, s: &ProgramSummary, levels: usize) {
    if s.failures > 0 {
        let mut note = vec![String::new(), format!("{} failed trial(s)", s.failures)];
        note.extend((0..levels).map(|_| String::new()));
        rows.push(note);
    }
}

pub fn csv(summaries: &[ProgramSummary], path: &Path) -> Result<()> {
    let failed = |source| ReportError::Csv { path: path.into(), source };
    let mut writer = csv::Writer::from_path(path).map_err(failed)?;
    writer.write_record(CSV_COLUMNS).map_err(failed)?;
    for s in summaries {
        for (level, cell) in &s.cells {
            let Some(c) = cell else { continue };
            writer.write_record(csv_record(s, *level, c)).map_err(failed)?;
        }
    }
    writer.flush().map_err(|e| failed(e.into()))
}

/// The columns of results.csv, one row per program and level.
const CSV_COLUMNS: [&str; 21] = [
    "program",
    "level",
    "trials",
    "min_us",
    "mean_us",
    "error_min_pct",
    "error_mean_pct",
    "noise_pct",
    "ranks",
    "high_us",
    "low_us",
    "error_rank_mean_pct",
    "error_high_pct",
    "normalised",
    "rounds",
    "vs_mo_median_pct",
    "vs_mo_low_pct",
    "vs_mo_high_pct",
    "vs_off_median_pct",
    "vs_off_low_pct",
    "vs_off_high_pct",
];

/// One program's row at `level` (`c`, its cell), in `CSV_COLUMNS` order.
fn csv_record(s: &ProgramSummary, level: Level, c: &super::results::Cell) -> [String; 21] {
    let pct = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
    let r = s.ranks.as_ref().and_then(|r| r.iter().find(|(l, _)| *l == level)).and_then(|(_, c)| *c);
    let us = |v: f64| format!("{:.3}", v / 1e3);
    let (vs_mo, vs_off) = (c.vs_mo.shown(s.normalised), c.vs_off.shown(s.normalised));
    let end = |i: Option<Interval>, f: fn(&Interval) -> f64| pct(i.as_ref().map(f));
    [
        s.program.clone(),
        level.name().to_string(),
        c.trials.to_string(),
        format!("{:.3}", c.min_ns / 1e3),
        format!("{:.3}", c.mean_ns / 1e3),
        pct(c.error_min_pct),
        pct(c.error_mean_pct),
        pct(c.noise_pct),
        r.map(|r| r.ranks.to_string()).unwrap_or_default(),
        r.map(|r| us(r.high_ns)).unwrap_or_default(),
        r.map(|r| us(r.low_ns)).unwrap_or_default(),
        pct(r.and_then(|r| r.error_mean_pct)),
        pct(r.and_then(|r| r.error_high_pct)),
        s.normalised.to_string(),
        vs_mo.or(vs_off).map(|i| i.n.to_string()).unwrap_or_default(),
        end(vs_mo, |i| i.median),
        end(vs_mo, |i| i.low),
        end(vs_mo, |i| i.high),
        end(vs_off, |i| i.median),
        end(vs_off, |i| i.low),
        end(vs_off, |i| i.high),
    ]
}

/// A grouped bar chart: per program, one bar per instrumented level with its error (min) in %.
/// Bars are scaled on a signed square-root axis so that a 2 % and a 200 % error both stay
/// readable; every bar carries its value.
pub fn svg(summaries: &[ProgramSummary]) -> String {
    const COLORS: [&str; 5] = ["#999999", "#d95f02", "#1b9e77", "#7570b3", "#66a61e"];
    let levels: Vec<Level> = Level::ALL.into_iter().filter(|l| *l != Level::Mo).collect();
    let values: Vec<Vec<Option<f64>>> = summaries
        .iter()
        .map(|s| {
            levels
                .iter()
                .map(|l| {
                    s.cells.iter().find(|(x, _)| x == l).and_then(|(_, c)| c.and_then(|c| c.error_min_pct))
                })
                .collect()
        })
        .collect();
    let max = values.iter().flatten().flatten().fold(1.0f64, |m, v| m.max(v.abs()));
    let scale = |v: f64| v.signum() * (v.abs() / max).sqrt();
    let (group, bar, height, top, left) = (110.0, 22.0, 300.0, 50.0, 60.0);
    let zero = top + height / 2.0;
    let width = left + group * summaries.len() as f64 + 20.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        top + height + 60.0
    );
    let _ = writeln!(out, "<text x=\"{left}\" y=\"20\" font-size=\"14\">Error of main's time against MO (min over trials, %)</text>");
    for (i, l) in levels.iter().enumerate() {
        let x = left + i as f64 * 90.0;
        let _ = writeln!(out, "<rect x=\"{x}\" y=\"30\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"39\">{}</text>", COLORS[i], x + 14.0, l.name());
    }
    let _ = writeln!(
        out,
        "<line x1=\"{left}\" x2=\"{}\" y1=\"{zero}\" y2=\"{zero}\" stroke=\"black\"/>",
        width - 10.0
    );
    for (g, (s, vals)) in summaries.iter().zip(&values).enumerate() {
        let x0 = left + g as f64 * group;
        for (i, v) in vals.iter().enumerate() {
            let Some(v) = v else { continue };
            let h = scale(*v) * height / 2.0;
            let (y, hh) = if h >= 0.0 { (zero - h, h) } else { (zero, -h) };
            let x = x0 + 5.0 + i as f64 * bar;
            let _ = writeln!(out, "<rect x=\"{x}\" y=\"{y:.1}\" width=\"{}\" height=\"{:.1}\" fill=\"{}\"><title>{} {}: {v:.2} %</title></rect>", bar - 3.0, hh.max(0.5), COLORS[i], s.program, levels[i].name());
            let ty = if h >= 0.0 { y - 3.0 } else { y + hh + 10.0 };
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{ty:.1}\" font-size=\"8\" text-anchor=\"middle\">{v:.1}</text>",
                x + (bar - 3.0) / 2.0
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x0 + group / 2.0 - 10.0,
            top + height + 20.0,
            s.program
        );
    }
    out.push_str("</svg>\n");
    out
}
