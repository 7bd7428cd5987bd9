//! The profile at the end of the run: merge every thread, convert ticks to nanoseconds, and
//! write versioned JSON atomically (a temporary file created exclusively with owner-only
//! permissions, then renamed), so a reader never sees a half-written profile.

use crate::assemble;
use crate::clock::Calibration;
use crate::lifecycle::Ending;
use crate::registry;
use crate::thread::{self, Counters, Record};
use crate::{compensate, mpi, overhead};
use instrument_profile::{
    Clock, Communication, Compensation, EventCosts, InPlaceCost, InlineCharge, Mpi, Overhead, PairCosts,
    Piggyback, ProbeCost, ProbeCosts, ProbeKind, Profile, Recalibration, Throttle, Totals, FORMAT, VERSION,
};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Profiles are named `<program>.<pid>.instrument.json`: a configure script's
/// `rm -f conftest*` also removes the profiles of its conftest programs.
pub const PROFILE_SUFFIX: &str = "instrument.json";
/// Profiles of one program and pid kept side by side before writing fails.
const MAX_SAME_NAME: u32 = 100;

pub struct Snapshot {
    records: Vec<Record>,
    counters: Counters,
    threads: u64,
    running: u64,
    idle: u64,
    end_ticks: u64,
    callpaths: Vec<thread::ThreadPaths>,
    per_thread: Vec<thread::ThreadRecords>,
}

impl Snapshot {
    /// Merged records of finished threads plus a snapshot of the threads still running. (Copied,
    /// not moved out: after a failed exec the profile is written again.)
    pub fn take(end_ticks: u64) -> Snapshot {
        let merged = thread::lock_merged();
        let mut all = thread::Merged {
            records: merged.records.clone(),
            counters: merged.counters,
            threads: merged.threads,
            live: Vec::new(),
            callpaths: Vec::new(),
            per_thread: Vec::new(),
        };
        let mut callpaths = merged.callpaths.clone();
        let mut per_thread = merged.per_thread.clone();
        // Alive but outside every event (a thread pool's idle workers): their data is complete.
        let mut idle = 0;
        for &state in &merged.live {
            // SAFETY: `live` lists attached states; a thread removes its own under this lock
            // before freeing it, so every one listed is mapped. Their owners may go on
            // updating them: the profile of a still-running thread is a snapshot.
            let ts = unsafe { &*(state as *const thread::ThreadState) };
            idle += u64::from(ts.depth == 0);
            thread::merge_into(&mut all, ts);
            all.counters.waited_ns += ts.waited();
            callpaths.extend(thread::thread_paths(ts));
            per_thread.push(thread::thread_records(ts));
        }
        callpaths.sort_by_key(|t| t.thread);
        per_thread.retain(|t| !t.records.is_empty());
        per_thread.sort_by_key(|t| t.thread);
        Snapshot {
            records: all.records,
            counters: all.counters,
            threads: all.threads,
            running: merged.live.len() as u64 - idle,
            idle,
            end_ticks,
            callpaths,
            per_thread,
        }
    }
}

/// Writes the profile and returns its path.
pub fn write(snapshot: &Snapshot, calibration: &Calibration, ending: &Ending) -> Result<PathBuf, String> {
    let mut profile = build(snapshot, calibration);
    profile.pid = ending.pid;
    profile.ended_by = ending.ended_by.map(String::from);
    profile.forked_from = ending.forked_from;
    let directory = profile_directory();
    let base = match &profile.mpi {
        Some(mpi) => format!("{}.rank{}.{}", program_name(&profile.command), mpi.rank, profile.pid),
        None => format!("{}.{}", program_name(&profile.command), profile.pid),
    };
    let name = format!("{base}.{PROFILE_SUFFIX}");
    // A file-size limit must fail the write (EFBIG), not kill the program with SIGXFSZ.
    // SAFETY: sets a signal's disposition to a constant; restored below.
    let previous = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let result = match write_new(&directory, &name, &profile) {
        Ok(temporary) => publish(&temporary, &directory, &base).map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            e.to_string()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let json = serde_json::to_vec(&profile).map_err(|e| e.to_string());
            json.and_then(|json| {
                crate::reserve::write(ending.pid, &json, &directory.join(&name)).unwrap_or(Err(e.to_string()))
            })
        }
        Err(e) => Err(e.to_string()),
    }
    .map_err(|e| {
        format!(
            "cannot write the profile {name} to {} ({e}); set INSTRUMENT_PROFILE_DIR to a writable directory",
            directory.display()
        )
    });
    // SAFETY: puts back the disposition signal() returned above.
    unsafe { libc::signal(libc::SIGXFSZ, previous) };
    if !result.as_ref().is_ok_and(|path| crate::reserve::holds(ending.pid, path)) {
        crate::reserve::discard(ending.pid);
    }
    if let (Ok(path), Some(true)) = (&result, crate::settings::flag(&crate::settings::VERBOSE)) {
        eprintln!("instrument: profile written to {}", path.display());
    }
    if let Ok(path) = &result {
        // Not in the signal writer: opendir allocates with libc's malloc, whose lock the
        // interrupted thread may hold for good there (a thread retiring in malloc when SIGTERM
        // came: the writer hung until it was killed, and the program took 10 s to die).
        if !crate::alloc::fresh_mappings() {
            remove_stale_temporaries(&directory, ending.pid);
        }
        if ending.ended_by.is_none() {
            crate::hint::after_write(&profile, path);
        }
    }
    result
}

/// Removes the temporary files (`.<name>.<pid>.instrument.json.<n>.tmp`) that writers which
/// no longer exist left in `directory` (a process killed while writing its profile), so that
/// they do not pile up. Only this user's files, and only those whose process is gone.
fn remove_stale_temporaries(directory: &Path, own_pid: u32) {
    let Ok(entries) = std::fs::read_dir(directory) else { return };
    // SAFETY: a system call without arguments.
    let uid = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) =
            name.to_str().and_then(|n| temporary_pid(n).or_else(|| crate::reserve::reserve_pid(n)))
        else {
            continue;
        };
        let mine = std::os::unix::fs::MetadataExt::uid(&match entry.metadata() {
            Ok(m) => m,
            Err(_) => continue,
        }) == uid;
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let gone = pid != own_pid
            && unsafe { libc::kill(pid as libc::pid_t, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if mine && gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The writer's pid in a temporary profile file name, if `name` is one.
fn temporary_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (profile, attempt) = inner.rsplit_once('.')?;
    attempt.parse::<u32>().ok()?;
    writer_pid(profile)
}

/// The pid in a profile's name, `<program>[.rank<R>].<pid>.instrument.json`.
pub fn writer_pid(profile: &str) -> Option<u32> {
    let base = profile.strip_suffix(&format!(".{PROFILE_SUFFIX}"))?;
    base.rsplit_once('.')?.1.parse().ok()
}

/// Gives the finished temporary file its name: `<base>.instrument.json`, or if that is taken,
/// `<base>.2.instrument.json` and so on. A profile never replaces another: the same program
/// exec'd in the same process, or a pid used again, gets the next name. Hard links fail on a
/// name that exists, even a symlink; where the file system has none, a free name is renamed to.
fn publish(temporary: &Path, directory: &Path, base: &str) -> std::io::Result<PathBuf> {
    for n in 1..=MAX_SAME_NAME {
        let name =
            if n == 1 { format!("{base}.{PROFILE_SUFFIX}") } else { format!("{base}.{n}.{PROFILE_SUFFIX}") };
        let path = directory.join(name);
        match std::fs::hard_link(temporary, &path) {
            Ok(()) => {
                let _ = std::fs::remove_file(temporary);
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) if path.symlink_metadata().is_err() => {
                std::fs::rename(temporary, &path)?;
                return Ok(path);
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{MAX_SAME_NAME} profiles named {base} exist already"),
    ))
}

/// Writes the profile to a new owner-only temporary file in `directory` and returns its path;
/// removes it if writing fails. The file is created exclusively and never through a symlink:
/// in a shared directory, a name someone else took is skipped, never opened.
fn write_new(directory: &Path, name: &str, profile: &Profile) -> std::io::Result<PathBuf> {
    let mut attempt = 0;
    let (file, path) = loop {
        let path = directory.join(format!(".{name}.{attempt}.tmp"));
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path);
        match opened {
            Ok(file) => break (file, path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let mut out = std::io::BufWriter::new(file);
    let written = serde_json::to_writer(&mut out, profile)
        .map_err(std::io::Error::other)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            Err(e)
        }
    }
}

/// The profile directory as resolved at start-up (`remember_directory`).
static DIRECTORY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Resolves the profile directory now, at start-up: `INSTRUMENT_PROFILE_DIR` (relative to the
/// working directory of now) or the working directory, so that a program that changes its
/// directory (daemons chdir to /) still writes its profile where it started.
pub fn remember_directory() {
    DIRECTORY.get_or_init(|| {
        let named = crate::settings::PROFILE_DIR.path();
        let dir = named.unwrap_or_else(|| PathBuf::from("."));
        std::path::absolute(&dir).unwrap_or(dir)
    });
}

/// At start-up, before the program can sandbox itself: the profile directory, the command
/// line (a sandbox may forbid reading /proc later) and the reserved file (`reserve`).
pub fn remember_start() {
    remember_directory();
    crate::settings::remember();
    let command = COMMAND.get_or_init(read_command_line);
    if let Some(dir) = DIRECTORY.get() {
        crate::reserve::make(dir, &program_name(command));
    }
}

/// The command line as read at start-up.
static COMMAND: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// The directory resolved at start-up.
fn profile_directory() -> PathBuf {
    remember_directory();
    DIRECTORY.get().cloned().unwrap_or_else(|| PathBuf::from("."))
}

/// Program names longer than this are shortened: the file name (with a dot, the pid, a
/// counter, the suffix and `.tmp`) must stay under the 255-byte limit of file systems.
const NAME_MAX: usize = 64;

fn program_name(command: &[String]) -> String {
    let argv0 = command.first().map(String::as_str).unwrap_or("program");
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    let clean: String =
        base.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    let name = if clean.is_empty() || clean.starts_with('.') { format!("program{clean}") } else { clean };
    if name.len() <= NAME_MAX {
        return name;
    }
    // The start of the name, and a hash of the whole so that two long names stay apart.
    let hash =
        name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{}-{hash:016x}", &name[..NAME_MAX - 17])
}

/// The command line read at start-up (`remember_start`), or now.
fn command_line() -> Vec<String> {
    COMMAND.get().cloned().unwrap_or_else(read_command_line)
}

fn read_command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|bytes| {
            bytes
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn build(snapshot: &Snapshot, calibration: &Calibration) -> Profile {
    let costs = overhead::costs();
    let units = assemble::Units {
        ticks_per_second: calibration.ticks_per_second,
        compensated: compensate::enabled(),
    };
    let infos = registry::events();
    let events = assemble::events(&infos, &snapshot.records, &units);
    let mut profile = Profile {
        format: FORMAT.into(),
        version: VERSION,
        command: command_line(),
        pid: std::process::id(),
        ended_by: None,
        forked_from: None,
        clock: Clock {
            source: crate::clock::source(),
            ticks_per_second: calibration.ticks_per_second,
            calibration_ns: calibration.window_ns,
        },
        placement: registry::placement(),
        small_threshold: registry::small_threshold(),
        throttle: crate::switch::rule().map(|r| Throttle { calls: r.calls, per_call_us: r.per_call_us }),
        settings: crate::settings::in_effect(),
        totals: totals(snapshot, calibration, &units),
        functions: events.functions,
        loops: events.loops,
        callsites: events.callsites,
        callpaths: assemble::callpaths(&snapshot.callpaths, &infos, &events.canonical, &units),
        threads: assemble::threads(&snapshot.per_thread, &infos, &events.canonical, &units),
        timeline: None, // added by `instrument run --timeline`, which samples from outside
        compensation: costs
            .filter(|_| compensate::enabled())
            .map(|costs| compensation(costs, snapshot, &events.canonical, &infos, &units)),
        overhead: None,
        mpi: mpi::rank().map(|(rank, size, job)| Mpi { rank, size, job }),
        communication: Vec::new(),
    };
    let (records, dropped) = mpi::records();
    profile.communication = communication(&records, &events.canonical, &infos, &units);
    profile.totals.communication_dropped = dropped;
    profile.overhead =
        costs.map(|costs| overhead_section(&profile, costs, &event_costs(&events.canonical, &units), &units));
    profile
}

/// The run's totals: wall time, threads, events and the anomalies counted.
fn totals(snapshot: &Snapshot, calibration: &Calibration, units: &assemble::Units) -> Totals {
    let calls: u64 = snapshot.records.iter().map(|r| r.calls + r.counted).sum();
    let c = &snapshot.counters;
    Totals {
        wall_ns: units.ns(snapshot.end_ticks.saturating_sub(calibration.start_ticks)),
        threads: snapshot.threads,
        threads_running_at_exit: snapshot.running,
        threads_idle_at_exit: snapshot.idle,
        communication_dropped: 0,
        events: 2 * calls,
        frames_closed_at_exit: c.closed_at_exit,
        frames_reconciled: c.reconciled,
        stack_overflow_events: c.stack_overflow,
        unmatched_exits: c.unmatched_exits,
        unregistered_events: c.unregistered,
        inline_counted: c.inlined,
        waited_ns: c.waited_ns,
    }
}

/// What compensation used and removed, with the in-place estimates.
fn compensation(
    costs: &overhead::Costs,
    snapshot: &Snapshot,
    canonical: &[u32],
    infos: &[registry::EventInfo],
    units: &assemble::Units,
) -> Compensation {
    Compensation {
        strategy: compensate::strategy(),
        routine: probe_cost(costs, overhead::STANDARD, units),
        loop_probe: probe_cost(costs, overhead::LOOP, units),
        calibration_ns: units.ns(costs.ticks),
        removed_ns: units.ns(compensate::scaled_to_ticks(snapshot.counters.overhead)),
        negative_results: snapshot.records.iter().map(|r| r.negative).sum(),
        piggyback: piggyback(units),
        recalibration: recalibration(units),
        in_place: in_place(canonical, infos, units),
        inline_count: inline_charge(units),
        bare_flush_ns: bare_flush(units),
    }
}

/// The calibrated flush of a bare window's calls, where bare windows could run with callpaths
/// (flushes.rs).
fn bare_flush(units: &assemble::Units) -> Option<f64> {
    let flush = compensate::untimed_costs().flush;
    (crate::switch::bare_windows_possible() && crate::callpath::depth() != 0 && flush != 0)
        .then(|| units.scaled_ns(flush))
}

/// What each inline count was charged at the end (where code counted inline).
fn inline_charge(units: &assemble::Units) -> Option<InlineCharge> {
    let untimed = compensate::untimed_costs();
    crate::switch::inline_possible().then(|| InlineCharge {
        calibrated_ns: units.scaled_ns(untimed.inline),
        bare_ns: units.scaled_ns(untimed.bare),
        charged_ns: units.scaled_ns(compensate::inline_count_cost()),
        dispatch_ns: units.scaled_ns(untimed.dispatch),
    })
}

/// The PMPI layer's COM records with canonical event ids (a site the profile hides, such as a
/// calibration event, becomes no site), sorted by site, operation and peer.
fn communication(
    records: &[mpi::Record],
    canonical: &[u32],
    infos: &[registry::EventInfo],
    units: &assemble::Units,
) -> Vec<Communication> {
    let site = |id: u32| {
        infos.get(id as usize).filter(|i| !assemble::hidden(i))?;
        Some(canonical.get(id as usize).copied().unwrap_or(id))
    };
    let mut merged: std::collections::BTreeMap<_, (u64, u64, u64, u64)> = Default::default();
    for r in records {
        let totals = merged.entry((r.site.and_then(site), r.operation, r.peer)).or_default();
        totals.0 += r.calls;
        totals.1 += r.bytes;
        totals.2 += r.ticks;
        totals.3 += r.wait_ticks;
    }
    merged
        .into_iter()
        .map(|((site, operation, peer), (calls, bytes, ticks, wait))| Communication {
            site,
            operation: operation.into(),
            peer,
            calls,
            bytes,
            time_ns: units.ns(ticks),
            wait_ns: units.ns(wait).min(units.ns(ticks)),
        })
        .collect()
}

/// Malony and Shende's Δi, δ and Δe of one probe kind.
/// What piggybacking did, when this rank sent or received an overhead.
fn piggyback(units: &assemble::Units) -> Option<Piggyback> {
    let (messages, inherited, cost) = crate::piggyback::totals();
    (messages > 0 || cost > 0).then(|| Piggyback {
        messages,
        inherited_ns: units.ns(inherited),
        cost_ns: units.ns(cost),
    })
}

fn recalibration(units: &assemble::Units) -> Option<Recalibration> {
    let s = crate::recalibrate::summary()?;
    Some(Recalibration {
        rounds: s.rounds,
        cost_ns: units.ns(s.spent),
        routine_low_ns: units.scaled_ns(s.routine.0),
        routine_high_ns: units.scaled_ns(s.routine.1),
        counted_low_ns: units.scaled_ns(s.counted.0),
        counted_high_ns: units.scaled_ns(s.counted.1),
    })
}

/// The events whose probe costs were measured in place (canonical ids; hidden ones left out).
fn in_place(canonical: &[u32], infos: &[registry::EventInfo], units: &assemble::Units) -> Vec<InPlaceCost> {
    let signed_ns = |scaled: i64| scaled.signum() as f64 * units.scaled_ns(scaled.unsigned_abs());
    crate::inplace::estimates()
        .iter()
        .filter(|e| infos.get(e.id as usize).is_some_and(|i| !assemble::hidden(i)))
        .map(|e| InPlaceCost {
            id: canonical.get(e.id as usize).copied().unwrap_or(e.id),
            timed_ns: units.scaled_ns(e.timed),
            counted_ns: units.scaled_ns(e.counted),
            difference_ns: signed_ns(e.difference),
            standard_error_ns: units.scaled_ns(e.standard_error),
            pairs: e.pairs,
            window: e.window,
            counted_pairs: e.counted_pairs,
            own_ns: (e.fenced_windows != 0).then(|| units.scaled_ns(e.own)),
            inside_ns: (e.fenced_windows != 0).then(|| units.scaled_ns(e.inside)),
            fenced_windows: e.fenced_windows,
            pathed_ns: (e.pathed_pairs != 0).then(|| units.scaled_ns(e.pathed)),
            pathed_pairs: e.pathed_pairs,
            inline_count_ns: (e.double_pairs != 0)
                .then(|| (signed_ns(e.shadow_measured), units.scaled_ns(e.shadow_error))),
            double_pairs: e.double_pairs,
            inline_over_bare_ns: (e.first_pairs != 0)
                .then(|| (signed_ns(e.first_measured), units.scaled_ns(e.first_error))),
            first_pairs: e.first_pairs,
            bare_pairs: e.over_bare_pairs,
            counted_over_bare_ns: (e.over_bare_pairs != 0)
                .then(|| (signed_ns(e.over_bare_measured), units.scaled_ns(e.over_bare_error))),
            counted_over_tally_ns: (e.counted_pairs != 0)
                .then(|| (signed_ns(e.counted_measured), units.scaled_ns(e.counted_error))),
            // The estimate keeps the inline count less the counted call: turned round.
            counted_over_inline_ns: (e.inline_pairs != 0)
                .then(|| (-signed_ns(e.inline_measured), units.scaled_ns(e.inline_error))),
            inline_pairs: e.inline_pairs,
            counted_reference: Some(e.reference),
        })
        .collect()
}

fn probe_cost(costs: &overhead::Costs, kind: usize, units: &assemble::Units) -> ProbeCost {
    let (outer, own) = (units.scaled_ns(costs.measured[kind]), units.scaled_ns(costs.own[kind]));
    ProbeCost { inclusive_overhead_ns: outer, own_ns: own, exclusive_overhead_ns: outer - own }
}

/// The in-place costs of the events that have them (inplace's table, as compensation uses
/// them), under their canonical ids.
fn event_costs(canonical: &[u32], units: &assemble::Units) -> Vec<EventCosts> {
    let mut list: Vec<EventCosts> = Vec::new();
    for (id, &canonical_id) in canonical.iter().enumerate() {
        let (timed, counted) =
            (crate::inplace::costs(id as u32).0, crate::inplace::run_counted_cost(id as u32));
        if timed == 0 || list.iter().any(|e| e.id == canonical_id) {
            continue;
        }
        let (measured_ns, counted_ns) = (units.scaled_ns(timed), units.scaled_ns(counted));
        let (standard_error, counted_error) =
            crate::inplace::used_standard_errors(id as u32).unwrap_or((0, 0));
        let (standard_error_ns, counted_standard_error_ns) =
            (units.scaled_ns(standard_error), units.scaled_ns(counted_error));
        let untimed_ns = crate::inplace::untimed_cost(id as u32).map(|c| units.scaled_ns(c));
        let signed_ns = |scaled: f64| scaled.signum() * units.scaled_ns(scaled.abs().round() as u64);
        let inline_extra_ns =
            crate::inplace::inline_mean(id as u32).map(|(m, se)| (signed_ns(m), signed_ns(se)));
        list.push(EventCosts {
            id: canonical_id,
            measured_ns,
            counted_ns,
            standard_error_ns,
            counted_standard_error_ns,
            untimed_ns,
            inline_extra_ns,
            inside_ns: crate::inplace::split_cost(id as u32).1.map(|i| units.scaled_ns(i)),
            counted_reference: crate::inplace::used_reference(id as u32),
        });
    }
    list
}

/// The measured costs, and every event's activations times them (in-place costs where an
/// event has them).
fn overhead_section(
    profile: &Profile,
    costs: &overhead::Costs,
    in_place: &[EventCosts],
    units: &assemble::Units,
) -> Overhead {
    let pair = |kind: usize| PairCosts {
        measured_ns: units.scaled_ns(costs.measured[kind]),
        counted_ns: units.scaled_ns(costs.untimed.counted[kind]),
        off_ns: units.scaled_ns(costs.untimed.off[kind]),
    };
    let mut section = Overhead {
        costs: ProbeCosts { routine: pair(overhead::STANDARD), loop_probe: pair(overhead::LOOP) },
        calibration_ns: units.ns(costs.ticks),
        total_ns: 0.0,
        percent_of_run: 0.0,
        estimation_ns: units.ns(crate::inplace::bookkeeping_ticks()) as f64,
        recalibration_ns: crate::recalibrate::summary().map_or(0, |s| units.ns(s.spent)) as f64,
        in_place: in_place.to_vec(),
        // Only a run whose code can count inline has that cost (instrument cost predicts with
        // it): in place where double windows measured it, else its calibration.
        inline_count_ns: if crate::switch::inline_possible() {
            units.scaled_ns(compensate::measured_inline_count_cost().unwrap_or(costs.untimed.inline))
        } else {
            0.0
        },
        inline_share: 0.0,
        unestimated_scale: crate::population::UNESTIMATED.scale(),
        pathed_scale: crate::population::PATHED.scale(),
        pathed_scale_events: crate::population::PATHED.events(),
    };
    let counted: u64 = profile
        .activations()
        .filter(|&(_, kind, ..)| kind == ProbeKind::Routine)
        .map(|(.., untimed)| untimed)
        .sum();
    if counted != 0 {
        section.inline_share = (profile.totals.inline_counted as f64 / counted as f64).min(1.0);
    }
    // With callpaths and compensation, each step that missed its node's cache cost apart.
    let misses: f64 = profile
        .callpaths
        .iter()
        .flat_map(|c| &c.threads)
        .map(|t| t.step_misses as f64 * t.step_miss_ns)
        .sum();
    section.total_ns = misses
        + section.estimation_ns
        + section.recalibration_ns
        + profile
            .activations()
            .map(|(id, kind, calls, untimed)| section.of_event(id, kind, calls, untimed))
            .sum::<f64>();
    let wall = profile.totals.wall_ns as f64;
    section.percent_of_run = if wall > 0.0 { 100.0 * section.total_ns / wall } else { 0.0 };
    section
}

#[cfg(test)]
mod tests {
    use super::{program_name, temporary_pid};

    #[test]
    fn temporary_names_give_their_writer() {
        assert_eq!(temporary_pid(".app.4242.instrument.json.0.tmp"), Some(4242));
        assert_eq!(temporary_pid(".ring.rank1.77.instrument.json.3.tmp"), Some(77));
        assert_eq!(temporary_pid("app.4242.instrument.json"), None);
        assert_eq!(temporary_pid(".app.x.instrument.json.0.tmp"), None);
        assert_eq!(temporary_pid(".notes.0.tmp"), None);
    }

    #[test]
    fn long_program_names_are_shortened_apart() {
        let long = |c: &str| vec![format!("/bin/{}", c.repeat(250))];
        let (a, b) = (program_name(&long("a")), program_name(&long("b")));
        assert!(a.len() <= 64 && b.len() <= 64, "{a} {b}");
        assert!(a.starts_with("aaaa") && a != program_name(&long("c")));
        assert_eq!(program_name(&["./app".to_string()]), "app");
    }
}
