//! `--truth ROUNDS`: what each event of a context costs in the state the run left it in, measured
//! in the same process right after the run, next to what compensation charged its calls.
//!
//! The error a row of the main table shows is a sum over the context's events and over the
//! run's phases, and comparing it with `scripts/gt-states` (each state forced from the start,
//! in another process) was no attribution: this machine runs whole processes in phases whose
//! probe costs differ 1.5 to 1.8 x (the ground truth's nested context, its settled state: 24
//! and 41 ns a unit from one process to the next, the calibration moving alike but not with
//! it). So the harness (ground_truth.c's truth phase) forces, after the measured repetitions,
//! the settled state and then its events switched off one at a time, children first, each
//! alternated with the plain kernel, and each difference of consecutive states is what that
//! event's calls cost there: in place, all effects included, in the run's own process and
//! phase. What compensation charged them is the event's in-place estimate (the profile's
//! `overhead.in_place`, its time-held counted or timed cost), else a calibration. A callpath
//! leaf settled counted is also forced pathed (kept on the shadow stack untimed): that row is its
//! pathed pair in place against what its pathed windows measured, the scale of every callpath
//! parent's charge (`population::PATHED`).
//!
//! With at most four events, the phase also runs every combination of them timed or waiting
//! (counted, or a callpath parent pathed: the states estimations leave the others in), and each
//! event's window difference is set against the step of the chain its estimation took (the
//! events before it in the run's order of estimation timed, those after it waiting): mode
//! `window` rows, whose charged column is the mean difference its windows measured; the
//! all-waiting state with the events switched off one at a time, children first: mode `waiting`
//! rows, what each event's calls cost waiting against the untimed cost charged them; and a
//! `(waiting)` row, what the all-waiting state costs over the plain code a call against what
//! compensation charged it (the events' untimed costs).
//!
//! The truth phase runs the instrumented kernel in forced states, so the run's profile holds
//! its calls too: with `--truth`, the main table is left out (and its removed and error are
//! null in the JSON rows).

use instrument_profile::{CountedReference, Profile};

/// The kernel's routines the truth phase switches off, children first, and their calls per
/// unit of the kernel.
pub struct Plan {
    pub ids: Vec<u32>,
    /// Every event the kernel makes a unit (its loops and call statements too), which the run's
    /// profile, holding the truth phase's calls, cannot say.
    pub events_per_unit: f64,
    names: Vec<String>,
    per_unit: Vec<f64>,
    /// Whether each routine calls others (a callpath parent waits pathed), as the runtime tells a
    /// leaf (`inplace::offers`): by its child calls, since a callpath folds direct recursion.
    parent: Vec<bool>,
}

/// The plan from a callpath profile of a run without a truth phase (`units` of the kernel in
/// all): every routine but `driver`, the deepest first (the last position any path gives it),
/// so that a parent is switched off after its children. None when the kernel has no routine
/// or more than the harness takes (16).
pub fn plan(profile: &Profile, driver: &str, units: f64, events_per_unit: f64) -> Option<Plan> {
    let paths = profile.callpaths.iter().flat_map(|c| &c.threads).flat_map(|t| &t.paths);
    let depth =
        |id: u32| paths.clone().filter_map(|p| p.path.iter().rposition(|&e| e == id)).max().unwrap_or(0);
    let mut kernel: Vec<_> =
        profile.functions.iter().filter(|f| f.name != driver && f.stats.calls > 0).collect();
    kernel.sort_by_key(|f| (std::cmp::Reverse(depth(f.id)), std::cmp::Reverse(f.id)));
    if kernel.is_empty() || kernel.len() > 16 {
        return None;
    }
    Some(Plan {
        parent: kernel.iter().map(|f| f.stats.child_calls > 0).collect(),
        ids: kernel.iter().map(|f| f.id).collect(),
        events_per_unit,
        names: kernel.iter().map(|f| f.name.trim_end_matches("_inst").to_string()).collect(),
        per_unit: kernel.iter().map(|f| f.stats.calls as f64 / units).collect(),
    })
}

/// The harness's extra arguments for a truth phase of `rounds` rounds: the events, the rounds
/// and each event's waiting mode (a parent's pathed with callpaths, else counted).
pub fn arguments(plan: &Plan, rounds: u32, callpath: bool) -> [String; 3] {
    let ids: Vec<String> = plan.ids.iter().map(u32::to_string).collect();
    let wait = |parent: bool| {
        if callpath && parent {
            instrument_live::MODE_PATHED
        } else {
            instrument_live::MODE_COUNTED
        }
    };
    let waits: Vec<String> = plan.parent.iter().map(|&p| wait(p).to_string()).collect();
    [ids.join(","), rounds.to_string(), waits.join(",")]
}

/// The truth phase's output: the events' modes as the run left them, and per round the plain
/// kernel's ns and those of the states S0 .. Sk.
pub struct Phase {
    settled: Vec<u8>,
    rounds: Vec<Vec<f64>>,
    /// Per round, S0 with the first event (a callpath leaf settled counted) counted on the
    /// shadow stack untimed; empty where the harness ran no such state.
    pathed_lead: Vec<f64>,
    /// Per round, every combination of the events timed or waiting, by its mask of timed ones.
    telescope: Vec<Vec<f64>>,
    /// Per round, the all-waiting state with 0, 1, ... k of the events switched off.
    waiting: Vec<Vec<f64>>,
}

/// The truth phase's lines (`settled`, `s`, `p`, `t`, `w`) of the harness's stdout.
pub fn parse(stdout: &str) -> Phase {
    let mut phase = Phase {
        settled: Vec::new(),
        rounds: Vec::new(),
        pathed_lead: Vec::new(),
        telescope: Vec::new(),
        waiting: Vec::new(),
    };
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("settled") => phase.settled = words.filter_map(|w| w.parse().ok()).collect(),
            Some("s") => phase.rounds.push(words.filter_map(|w| w.parse().ok()).collect()),
            Some("t") => phase.telescope.push(words.filter_map(|w| w.parse().ok()).collect()),
            Some("w") => phase.waiting.push(words.filter_map(|w| w.parse().ok()).collect()),
            Some("p") => phase.pathed_lead.extend(words.next().and_then(|w| w.parse::<f64>().ok())),
            _ => {}
        }
    }
    phase
}

/// What one event's calls cost in the state the run left it in (ns a call of that event: the
/// median over rounds with its distribution-free 95 % interval) and what compensation charged
/// each; the switched-off code's row is event `(floor)`, mode `all off`, charged 0.
#[derive(serde::Serialize)]
pub struct EventTruth {
    pub event: String,
    pub mode: String,
    pub in_place_ns: f64,
    pub low_ns: f64,
    pub high_ns: f64,
    pub charged_ns: f64,
    pub charged_from: &'static str,
}

/// The rows of `plan`'s events and the floor's from the truth phase `phase` (`n` units a run),
/// each also printed to stdout after `label` (none when the phase is missing).
pub fn report(label: &str, plan: &Plan, phase: &Phase, n: f64, profile: &Profile) -> Vec<EventTruth> {
    let count = plan.ids.len();
    if phase.rounds.is_empty() || phase.rounds.iter().any(|r| r.len() != count + 2) {
        println!("{label}: no truth phase in the harness's output");
        return Vec::new();
    }
    let mut rows: Vec<EventTruth> = (0..count).map(|i| event_truth(plan, phase, i, n, profile)).collect();
    let calls: f64 = plan.per_unit.iter().sum::<f64>() * n;
    let (in_place_ns, low_ns, high_ns) =
        median_interval(phase.rounds.iter().map(|r| (r[count + 1] - r[0]) / calls));
    rows.extend(pathed_lead(plan, phase, n, profile));
    rows.extend(window_steps(plan, phase, n, profile));
    let (event, mode) = ("(floor)".to_string(), "all off".to_string());
    rows.push(EventTruth {
        event,
        mode,
        in_place_ns,
        low_ns,
        high_ns,
        charged_ns: 0.0,
        charged_from: "nothing",
    });
    for r in &rows {
        println!(
            "{label} {:<14} {:<8}  in place {:>7.2} [{:>7.2}, {:>7.2}]  charged {:>7.2} ({})  charged - in place {:>+7.2}",
            r.event, r.mode, r.in_place_ns, r.low_ns, r.high_ns, r.charged_ns, r.charged_from,
            r.charged_ns - r.in_place_ns
        );
    }
    rows
}

/// Event `i` of `plan`: S(i) - S(i+1) of each round, per call.
fn event_truth(plan: &Plan, phase: &Phase, i: usize, n: f64, profile: &Profile) -> EventTruth {
    let per_call = n * plan.per_unit[i];
    let (in_place_ns, low_ns, high_ns) =
        median_interval(phase.rounds.iter().map(|r| (r[i + 1] - r[i + 2]) / per_call));
    let mode = phase.settled.get(i).copied().unwrap_or(0);
    let (charged_ns, charged_from) = charged(profile, plan.ids[i], mode);
    let (event, mode) = (plan.names[i].clone(), format!("mode {mode}"));
    EventTruth { event, mode, in_place_ns, low_ns, high_ns, charged_ns, charged_from }
}

/// The first event's pathed pair (P - S1 of each round, per call) where the harness forced it
/// (a callpath leaf settled counted), against what its pathed windows measured (the mean of its
/// estimations' `pathed_ns`), which scales every callpath parent's charge.
fn pathed_lead(plan: &Plan, phase: &Phase, n: f64, profile: &Profile) -> Option<EventTruth> {
    if phase.pathed_lead.len() != phase.rounds.len() {
        return None;
    }
    let per_call = n * plan.per_unit[0];
    let differences = phase.pathed_lead.iter().zip(&phase.rounds).map(|(p, r)| (p - r[2]) / per_call);
    let (in_place_ns, low_ns, high_ns) = median_interval(differences);
    let measured: Vec<f64> = profile
        .compensation
        .iter()
        .flat_map(|c| &c.in_place)
        .filter(|e| e.id == plan.ids[0])
        .filter_map(|e| e.pathed_ns)
        .collect();
    if measured.is_empty() {
        return None; // a flat run's, or no pathed window ran
    }
    let charged_ns = measured.iter().sum::<f64>() / measured.len() as f64;
    let (event, mode) = (plan.names[0].clone(), "pathed".to_string());
    Some(EventTruth { event, mode, in_place_ns, low_ns, high_ns, charged_ns, charged_from: "pathed windows" })
}

/// Each estimated event's step of the telescoping chain (mode `window`: the combination with the
/// events estimated before it timed, less the same with it timed too, per call of it) against
/// the mean difference its windows measured, then `waiting_steps` and the all-waiting state
/// over the plain kernel (`waiting_total`). None without the harness's `t` lines, or where an
/// event was throttled (its estimations then compared timing it with the others as they
/// settled, not as they waited).
fn window_steps(plan: &Plan, phase: &Phase, n: f64, profile: &Profile) -> Vec<EventTruth> {
    let states = 1usize << plan.ids.len();
    let malformed =
        phase.telescope.len() != phase.rounds.len() || phase.telescope.iter().any(|t| t.len() != states);
    if malformed || throttled(plan, profile) {
        return Vec::new();
    }
    let estimations: Vec<_> = profile.compensation.iter().flat_map(|c| &c.in_place).collect();
    let mut rows = Vec::new();
    let mut mask = 0usize;
    for i in estimation_order(plan, profile) {
        let (before, after, per_call) = (mask, mask | 1 << i, n * plan.per_unit[i]);
        let (in_place_ns, low_ns, high_ns) =
            median_interval(phase.telescope.iter().map(|t| (t[after] - t[before]) / per_call));
        let measured: Vec<f64> =
            estimations.iter().filter(|e| e.id == plan.ids[i]).map(|e| e.difference_ns).collect();
        let charged_ns = measured.iter().sum::<f64>() / measured.len() as f64;
        let (event, mode, charged_from) =
            (plan.names[i].clone(), "window".to_string(), "windows' difference");
        rows.push(EventTruth { event, mode, in_place_ns, low_ns, high_ns, charged_ns, charged_from });
        mask = after;
    }
    rows.extend(waiting_steps(plan, phase, n, profile));
    rows.push(waiting_total(plan, phase, n, profile));
    rows
}

/// The positions in `plan` of the events the run estimated, in the order of their first
/// estimations (the profile keeps them in the order they were published).
fn estimation_order(plan: &Plan, profile: &Profile) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::new();
    for e in profile.compensation.iter().flat_map(|c| &c.in_place) {
        if let Some(i) = plan.ids.iter().position(|&id| id == e.id).filter(|i| !order.contains(i)) {
            order.push(i);
        }
    }
    order
}

/// The all-waiting state over the plain kernel, per call of every event (`(waiting)`, mode
/// `all wait`), against the untimed costs compensation charged their calls.
fn waiting_total(plan: &Plan, phase: &Phase, n: f64, profile: &Profile) -> EventTruth {
    let calls: f64 = plan.per_unit.iter().sum::<f64>() * n;
    let waiting = phase.telescope.iter().zip(&phase.rounds).map(|(t, r)| (t[0] - r[0]) / calls);
    let (in_place_ns, low_ns, high_ns) = median_interval(waiting);
    let untimed =
        |i: usize| charged(profile, plan.ids[i], instrument_live::MODE_COUNTED).0 * plan.per_unit[i];
    let charged_ns = (0..plan.ids.len()).map(untimed).sum::<f64>() / plan.per_unit.iter().sum::<f64>();
    let (event, mode, charged_from) = ("(waiting)".to_string(), "all wait".to_string(), "untimed costs");
    EventTruth { event, mode, in_place_ns, low_ns, high_ns, charged_ns, charged_from }
}

/// Whether any of `plan`'s events was throttled in the run.
fn throttled(plan: &Plan, profile: &Profile) -> bool {
    profile.functions.iter().any(|f| f.throttled && plan.ids.contains(&f.id))
}

/// Each event's calls in the all-waiting state (mode `waiting`: W(i) - W(i+1), per call of it)
/// against the untimed cost compensation charged them; none without the harness's `w` lines
/// (`window_steps`, its only caller, has left out throttled runs).
fn waiting_steps(plan: &Plan, phase: &Phase, n: f64, profile: &Profile) -> Vec<EventTruth> {
    let count = plan.ids.len();
    if phase.waiting.len() != phase.rounds.len() || phase.waiting.iter().any(|w| w.len() != count + 1) {
        return Vec::new();
    }
    let row = |i: usize| {
        let per_call = n * plan.per_unit[i];
        let (in_place_ns, low_ns, high_ns) =
            median_interval(phase.waiting.iter().map(|w| (w[i] - w[i + 1]) / per_call));
        let (charged_ns, charged_from) = charged(profile, plan.ids[i], instrument_live::MODE_COUNTED);
        let (event, mode) = (plan.names[i].clone(), "waiting".to_string());
        EventTruth { event, mode, in_place_ns, low_ns, high_ns, charged_ns, charged_from }
    };
    (0..count).map(row).collect()
}

/// Per context, mode and event over the processes (`runs`: each run's label and truth rows):
/// the mean in-place cost and charge, and the charge's error with the half-width of its 95 %
/// interval (`interval`), in ns a call and in % of the in-place cost.
pub fn summarize(runs: &[(String, &[EventTruth])], interval: impl Fn(&[f64]) -> (f64, f64)) {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for (label, rows) in runs {
        for r in rows.iter() {
            let key = (label.as_str(), r.event.as_str(), r.mode.as_str());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    println!(
        "\n{:<19} {:<14} {:<8} {:>4} {:>9} {:>9} {:>17} {:>8}",
        "context    mode", "event", "mode", "runs", "in place", "charged", "error [95% CI]", "%"
    );
    for (label, event, mode) in keys {
        let same = runs.iter().filter(|(l, _)| l == label).flat_map(|(_, rows)| rows.iter());
        let rows: Vec<&EventTruth> = same.filter(|r| r.event == event && r.mode == mode).collect();
        let mean = |f: fn(&EventTruth) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / rows.len() as f64;
        let (in_place, charged) = (mean(|r| r.in_place_ns), mean(|r| r.charged_ns));
        let errors: Vec<f64> = rows.iter().map(|r| r.charged_ns - r.in_place_ns).collect();
        let (error, half) = interval(&errors);
        println!(
            "{label:<19} {event:<14} {mode:<8} {:>4} {in_place:>9.2} {charged:>9.2} {error:>+8.2} ±{half:>6.2} {:>+8.1}",
            rows.len(),
            100.0 * error / in_place
        );
    }
    println!(
        "(ns a call of each event, mean over the runs; mode: the one it settled in, as the truth phase found it; error: \
         charged - in place)"
    );
}

/// What compensation charged a call of event `id` in mode `mode`, with where it came from.
fn charged(profile: &Profile, id: u32, mode: u8) -> (f64, &'static str) {
    let estimate = profile.overhead.iter().flat_map(|o| &o.in_place).find(|e| e.id == id);
    let inline = profile.compensation.as_ref().and_then(|c| c.inline_count.as_ref());
    match (mode, estimate, inline) {
        (instrument_live::MODE_INLINE, _, Some(i)) => (i.charged_ns, "inline count"),
        (instrument_live::MODE_MEASURED, Some(e), _) => (e.measured_ns, "estimate, timed"),
        (_, Some(e), _) => (e.counted_ns, untimed_source(e.counted_reference)),
        _ => (f64::NAN, "no estimate: a calibration the profile does not hold"),
    }
}

/// Where an untimed call's charge came from: the path its counted cost was measured against.
fn untimed_source(reference: Option<CountedReference>) -> &'static str {
    match reference {
        Some(CountedReference::Inline) => "estimate, untimed, over its inline count",
        Some(CountedReference::Bare) => "estimate, untimed, over a bare count",
        Some(CountedReference::Tally) => "estimate, untimed, over the tally path",
        Some(CountedReference::Pathed) => "estimate, untimed, pathed",
        Some(CountedReference::Calibration) => "estimate, untimed, calibrated",
        None => "estimate, untimed",
    }
}

/// The median of `values` and a distribution-free 95 % interval for it (order statistics).
fn median_interval(values: impl Iterator<Item = f64>) -> (f64, f64, f64) {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    let k = v.len();
    let half = 1.96 * (k as f64).sqrt() / 2.0;
    let at = |i: f64| v[(i.max(0.0) as usize).min(k - 1)];
    (v[k / 2], at(k as f64 / 2.0 - half), at(k as f64 / 2.0 + half))
}
