//! Exports read back: TAU profile.N.C.T files with a small TAU reader, pprof protobuf with
//! prost, each compared with the profile it came from (counts exactly, times to rounding).

use instrument_report::export::pprof::proto;
use instrument_tests::tau::{self, TauProfile};
use instrument_tests::*;
use prost::Message;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

const ALL: &str = "--instrument-events=functions,loops,callsites";

/// Builds and runs `fixture` in its own directory; returns the profile's path.
fn record(root: &Path, fixture: &str, flags: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let dir = root.join(fixture);
    std::fs::create_dir_all(&dir).unwrap();
    let program = build_instrumented(&dir, fixture, flags);
    let output = run(Command::new(&program)
        .current_dir(&dir)
        .env("INSTRUMENT_PROFILE_DIR", &dir)
        .envs(env.iter().copied()));
    assert_success(&output, fixture);
    only_profile_path(&dir)
}

fn export(args: &[&str], profiles: &[&Path]) -> std::process::Output {
    run(Command::new(bin("instrument")).arg("export").args(args).args(profiles))
}

fn read_tau(dir: &Path) -> Vec<(String, TauProfile)> {
    let mut files: Vec<(String, TauProfile)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let parsed = tau::parse(&text).unwrap_or_else(|err| panic!("{name}: {err}\n{text}"));
            (name, parsed)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

fn tau_event<'a>(p: &'a TauProfile, prefix: &str) -> &'a tau::Event {
    let mut found = p.events.iter().filter(|(n, _)| n.starts_with(prefix));
    let (_, e) = found.next().unwrap_or_else(|| panic!("no {prefix} in {:#?}", p.events.keys()));
    e
}

#[test]
fn tau_export_has_every_routine_with_exact_counts_and_times_in_microseconds() {
    let dir = scratch();
    let path = record(dir.path(), "calls", &[], &[]);
    let profile = load_profile(&path);
    let out = dir.path().join("tau");
    assert_success(&export(&["--format", "tau", "-o", out.to_str().unwrap()], &[&path]), "export tau");
    let files = read_tau(&out);
    assert_eq!(files.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["profile.0.0.0"]);
    let tau = &files[0].1;
    assert_eq!(tau.metric, "TIME");
    assert!(tau.metadata.starts_with("<metadata>") && tau.metadata.contains("<name>Executable</name>"));
    for (name, calls, subrs) in [("main [", 1, 6), ("a [", 3, 6), ("b [", 6, 6), ("c [", 9, 0)] {
        let e = tau_event(tau, name);
        assert_eq!((e.calls, e.subrs, e.group.as_str()), (calls, subrs, "TAU_DEFAULT"), "{name}");
    }
    assert_eq!(tau.events.len(), profile.functions.len());
    for f in &profile.functions {
        let e = tau_event(tau, &format!("{} [{{", f.name));
        assert!((e.exclusive - f.stats.exclusive_ns as f64 / 1e3).abs() < 1e-9, "{}", f.name);
        assert!((e.inclusive - f.stats.inclusive_ns as f64 / 1e3).abs() < 1e-9, "{}", f.name);
        assert!(e.inclusive >= e.exclusive);
    }
}

#[test]
fn tau_export_writes_one_file_per_thread_and_callpaths() {
    let dir = scratch();
    let path = record(dir.path(), "callpaths", &[ALL], &[("INSTRUMENT_CALLPATH", "2")]);
    let profile = load_profile(&path);
    assert!(profile.threads.len() > 1, "the fixture runs worker threads");
    let out = dir.path().join("tau");
    assert_success(&export(&["--format", "tau", "-o", out.to_str().unwrap()], &[&path]), "export tau");
    let files = read_tau(&out);
    assert_eq!(files.len(), profile.threads.len());
    let mut calls_by_thread = 0;
    for ((name, tau), thread) in files.iter().zip(&profile.threads) {
        assert_eq!(name, &format!("profile.0.0.{}", thread.thread));
        let flat: Vec<&tau::Event> = tau.events.values().filter(|e| e.group != "TAU_CALLPATH").collect();
        assert_eq!(flat.len(), thread.events.len(), "{name}");
        assert_eq!(
            flat.iter().map(|e| e.calls).sum::<u64>(),
            thread.events.iter().map(|e| e.stats.calls).sum::<u64>()
        );
        calls_by_thread += thread.events.iter().map(|e| e.stats.calls).sum::<u64>();
    }
    let merged: u64 = profile.functions.iter().map(|f| f.stats.calls).sum::<u64>()
        + profile.loops.iter().map(|l| l.stats.calls).sum::<u64>()
        + profile.callsites.iter().map(|c| c.stats.calls).sum::<u64>();
    assert_eq!(calls_by_thread, merged, "threads add up to the merged profile");
    let main_thread = &files[0].1;
    let main_to_b = main_thread
        .events
        .iter()
        .find(|(n, _)| n.starts_with("main [") && n.contains(" => Call: b ["))
        .expect("main => call b");
    assert_eq!((main_to_b.1.calls, main_to_b.1.group.as_str()), (1, "TAU_CALLPATH"));
}

#[test]
fn tau_user_events_give_loop_iterations_per_execution() {
    let dir = scratch();
    let path = record(dir.path(), "loops", &["--instrument-events=loops"], &[]);
    let out = dir.path().join("tau");
    assert_success(&export(&["--format", "tau", "-o", out.to_str().unwrap()], &[&path]), "export tau");
    let tau = &read_tau(&out)[0].1;
    let inner = tau.user_events.iter().find(|(n, _)| n.contains("{27,0}")).expect("inner loop of the nest").1;
    assert_eq!(*inner, tau::UserEvent { count: 10, max: 5.0, min: 5.0, mean: 5.0, sumsqr: 250.0 });
    assert_eq!(tau_event(tau, "Loop: nested [").group, "TAU_LOOP");
}

#[test]
fn tau_export_of_several_profiles_is_one_node_each_and_replaces_an_earlier_export_whole() {
    let dir = scratch();
    let first = record(dir.path(), "calls", &[], &[]);
    let second_dir = dir.path().join("again");
    std::fs::create_dir(&second_dir).unwrap();
    std::fs::copy(&first, second_dir.join("copy.instrument.json")).unwrap();
    let second = second_dir.join("copy.instrument.json");
    let out = dir.path().join("tau");
    let o = out.to_str().unwrap();
    assert_success(&export(&["--format", "tau", "-o", o], &[&first, &second]), "export two");
    let names: Vec<String> = read_tau(&out).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["profile.0.0.0", "profile.1.0.0"]);
    assert_success(&export(&["--format", "tau", "-o", o], &[&first]), "export one");
    assert_eq!(read_tau(&out).len(), 1, "no stale node 1 left behind");

    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let refused = export(&["--format", "tau", "-o", o], &[&first]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("holds other files"));
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
}

#[test]
fn tau_file_snapshot() {
    let dir = scratch();
    let path = record(dir.path(), "calls", &[], &[]);
    let out = dir.path().join("tau");
    assert_success(&export(&["--format", "tau", "-o", out.to_str().unwrap()], &[&path]), "export tau");
    let text = std::fs::read_to_string(out.join("profile.0.0.0")).unwrap();
    let fixtures = fixtures().display().to_string();
    let normalised: String = text
        .lines()
        .map(|line| {
            let line = line.replace(&fixtures, "<fixtures>");
            if let Some((name, rest)) = line.strip_prefix('"').and_then(|l| l.split_once("\" ")) {
                let f: Vec<&str> = rest.split(' ').collect();
                format!("\"{name}\" {} {} <excl> <incl> {} {}", f[0], f[1], f[4], f[5])
            } else if line.starts_with("# Name") {
                let pid = regex_free_pid(&line);
                line.replace(&pid, "<pid>")
                    .replace(&dir.path().display().to_string(), "<dir>")
                    .replace("<value>monotonic</value>", "<value>tsc</value>")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(normalised);
}

/// The PID attribute's value in TAU metadata.
fn regex_free_pid(line: &str) -> String {
    let start = line.find("<name>PID</name><value>").unwrap() + "<name>PID</name><value>".len();
    line[start..].split('<').next().unwrap().to_string()
}

fn read_pprof(path: &Path) -> proto::Profile {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
    proto::Profile::decode(bytes.as_slice()).unwrap()
}

fn string(p: &proto::Profile, index: i64) -> &str {
    &p.string_table[index as usize]
}

/// Per leaf function name: (calls, exclusive ns, inclusive ns) summed over samples.
fn by_leaf(p: &proto::Profile) -> std::collections::BTreeMap<String, (i64, i64, i64)> {
    let mut out = std::collections::BTreeMap::new();
    for s in &p.sample {
        let location = p.location.iter().find(|l| l.id == s.location_id[0]).unwrap();
        let function = p.function.iter().find(|f| f.id == location.line[0].function_id).unwrap();
        let e = out.entry(string(p, function.name).to_string()).or_insert((0, 0, 0));
        e.0 += s.value[0];
        e.1 += s.value[1];
        e.2 += s.value[2];
    }
    out
}

#[test]
fn pprof_export_reads_back_with_the_profiles_counts_and_times() {
    let dir = scratch();
    let path = record(dir.path(), "calls", &[], &[]);
    let profile = load_profile(&path);
    let out = dir.path().join("calls.pb.gz");
    assert_success(&export(&["--format", "pprof", "-o", out.to_str().unwrap()], &[&path]), "export pprof");
    let p = read_pprof(&out);
    assert_eq!(p.string_table[0], "");
    let types: Vec<(&str, &str)> =
        p.sample_type.iter().map(|t| (string(&p, t.r#type), string(&p, t.unit))).collect();
    assert_eq!(types, [("calls", "count"), ("exclusive", "nanoseconds"), ("inclusive", "nanoseconds")]);
    assert_eq!(string(&p, p.default_sample_type), "exclusive");
    let leaves = by_leaf(&p);
    for f in &profile.functions {
        let expected = (f.stats.calls as i64, f.stats.exclusive_ns as i64, f.stats.inclusive_ns as i64);
        assert_eq!(leaves[&f.name], expected, "{}", f.name);
        let function = p.function.iter().find(|pf| string(&p, pf.name) == f.name).unwrap();
        assert_eq!(string(&p, function.filename), f.file);
        assert_eq!(function.start_line, i64::from(f.line));
    }
}

#[test]
fn pprof_export_of_callpaths_has_stacks_leaf_first_and_every_nanosecond() {
    let dir = scratch();
    let path = record(dir.path(), "callpaths", &[], &[("INSTRUMENT_CALLPATH", "all")]);
    let profile = load_profile(&path);
    let out = dir.path().join("cp.pb.gz");
    assert_success(&export(&["--format", "pprof", "-o", out.to_str().unwrap()], &[&path]), "export pprof");
    let p = read_pprof(&out);
    let name_of = |id: u64| {
        let l = p.location.iter().find(|l| l.id == id).unwrap();
        string(&p, p.function.iter().find(|f| f.id == l.line[0].function_id).unwrap().name).to_string()
    };
    let stacks: Vec<Vec<String>> =
        p.sample.iter().map(|s| s.location_id.iter().map(|&id| name_of(id)).collect()).collect();
    assert!(stacks.iter().any(|s| s == &["c", "a", "main"]), "{stacks:?}");
    let exclusive: i64 = p.sample.iter().map(|s| s.value[1]).sum();
    let flat: i64 = profile.functions.iter().map(|f| f.stats.exclusive_ns as i64).sum();
    let records = p.sample.len() as i64 + profile.functions.len() as i64;
    assert!((exclusive - flat).abs() <= records, "callpaths {exclusive} vs flat {flat}: only rounding apart");
    let thread_label = p.string_table.iter().position(|s| s == "thread").unwrap() as i64;
    assert!(p.sample.iter().all(|s| s.label.iter().any(|l| l.key == thread_label)), "per-thread samples");
    assert_eq!(leaves_calls(&p, "a"), function(&profile, "a").stats.calls as i64);
}

fn leaves_calls(p: &proto::Profile, name: &str) -> i64 {
    by_leaf(p)[name].0
}

#[test]
fn export_refuses_bad_combinations_with_one_line() {
    let dir = scratch();
    let path = record(dir.path(), "calls", &[], &[]);
    for (args, message) in [
        (vec!["--format", "pprof"], "only --format tau exports several profiles"),
        (vec!["--format", "tau"], "give it with -o DIR"),
    ] {
        let profiles: Vec<&Path> = if message.contains("several") { vec![&path, &path] } else { vec![&path] };
        let output = export(&args, &profiles);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message) && stderr.lines().count() == 1, "{stderr}");
    }
}

#[test]
fn stacks_of_a_flat_profile_say_they_are_one_routine_deep() {
    let dir = scratch();
    let flat = record(dir.path(), "calls", &[], &[]);
    let output = export(&["--format", "folded"], &[&flat]);
    assert_success(&output, "folded");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("this profile is flat") && stderr.contains("INSTRUMENT_CALLPATH=all"),
        "{stderr}"
    );
    let deep = scratch();
    let with_paths = record(deep.path(), "calls", &[], &[("INSTRUMENT_CALLPATH", "all")]);
    let output = export(&["--format", "folded"], &[&with_paths]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("flat"));
    assert!(String::from_utf8_lossy(&output.stdout).contains("main;a;b;c "));
}
