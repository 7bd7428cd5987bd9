//! The `instrument` command line: reports (snapshots with times and paths normalised), the
//! bitcode rewriter, the demo, and one clear error line for every kind of bad input.

use instrument_tests::*;
use std::path::Path;
use std::process::{Command, Output};

fn instrument(args: &[&str]) -> Output {
    run(Command::new(bin("instrument")).args(args))
}

/// `instrument rewrite` with every routine of the small fixtures given events.
fn rewrite(args: &[&str]) -> Output {
    run(Command::new(bin("instrument")).arg("rewrite").args(args).env(EVERY_ROUTINE.0, EVERY_ROUTINE.1))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A failed command: non-zero exit and exactly one line on stderr containing `needle`.
fn assert_one_line_error(output: &Output, needle: &str) {
    assert!(!output.status.success(), "expected failure, got success");
    let text = stderr(output);
    assert_eq!(text.trim_end().lines().count(), 1, "one error line expected, got:\n{text}");
    assert!(text.contains(needle), "error should mention {needle:?}: {text}");
}

fn profile_path(dir: &Path) -> String {
    only_profile_path(dir).display().to_string()
}

fn busywait_profile(dir: &Path) -> String {
    let program = build_instrumented(dir, "busywait", &[]);
    let (output, _) = run_profiled(&program, dir);
    assert_success(&output, "busywait");
    profile_path(dir)
}

#[test]
fn report_table_snapshot() {
    let dir = scratch();
    let path = busywait_profile(dir.path());
    let output = instrument(&["report", &path]);
    assert_success(&output, "report");
    // How long the run waited for a core depends on what else the machine runs.
    insta::with_settings!({filters => vec![
        (r"note: threads waited [^\n]*\n", ""),
        (r"Profile of: \S+", "Profile of: [program]"),
        (r"pid \d+", "pid [pid]"),
        (r"clock \w+ at", "clock [source] at"),
        (r" *\d+\.\d+", " [t]"),
    ]}, {
        insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
    });
}

#[test]
fn report_json_snapshot() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    let (output, _) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    let output = instrument(&["report", "--json", &profile_path(dir.path())]);
    assert_success(&output, "report --json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("report --json prints JSON");
    json["functions"].as_array_mut().unwrap().sort_by_key(|f| f["name"].as_str().unwrap().to_string());
    // Written only when the run waited for a core, which depends on what else the machine runs.
    json["totals"].as_object_mut().unwrap().remove("waited_ns");
    insta::assert_json_snapshot!(json, {
        ".command" => "[command]",
        ".pid" => "[pid]",
        ".wall_ns" => "[ns]",
        ".clock" => "[clock]",
        ".totals.wall_ns" => "[ns]",
        ".functions[].exclusive_ns" => "[ns]",
        ".functions[].inclusive_ns" => "[ns]",
        ".functions[].file" => "[file]",
        ".functions[].overhead_ns" => "[ns]",
        ".overhead" => "[overhead]",
    });
}

/// `instrument report | head` ends quietly when the reader goes away, as Unix filters do: killed
/// by SIGPIPE, nothing on stderr (no panic about a broken pipe).
#[test]
fn report_into_a_closed_pipe_ends_quietly() {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch();
    let path = busywait_profile(dir.path());
    let mut fds = [0; 2];
    // SAFETY: pipe() fills two new descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    let output = run(Command::new(bin("instrument")).args(["report", &path]).stdout(writer));
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
}

#[test]
fn report_without_argument_reads_the_newest_profile_of_the_directory() {
    let dir = scratch();
    busywait_profile(dir.path());
    let output = run(Command::new(bin("instrument")).arg("report").env("INSTRUMENT_PROFILE_DIR", dir.path()));
    assert_success(&output, "report");
    assert!(String::from_utf8_lossy(&output.stdout).contains("spin"));
}

#[test]
fn report_errors_are_one_clear_line() {
    let dir = scratch();
    let missing = dir.path().join("missing.json");
    assert_one_line_error(&instrument(&["report", missing.to_str().unwrap()]), "cannot read profile");

    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"format":"instrument-profile","version":99}"#).unwrap();
    assert_one_line_error(&instrument(&["report", newer.to_str().unwrap()]), "newer than this tool");

    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"traceEvents":[]}"#).unwrap();
    assert_one_line_error(&instrument(&["report", foreign.to_str().unwrap()]), "not an instrument profile");

    let real = busywait_profile(dir.path());
    let text = std::fs::read_to_string(&real).unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    assert_one_line_error(&instrument(&["report", truncated.to_str().unwrap()]), "not a valid profile");

    // Parses, but a loop names a routine the profile does not have (found by fuzzing: the TAU
    // export looped forever on such a file).
    let mut inconsistent: serde_json::Value = serde_json::from_str(&text).unwrap();
    inconsistent["loops"] = serde_json::json!([{"id": 4000, "function": 4001, "file": "a.c", "line": 1,
        "count": 1, "iterations": 1, "child_calls": 0, "exclusive_ns": 1, "inclusive_ns": 1}]);
    let broken = dir.path().join("inconsistent.json");
    std::fs::write(&broken, inconsistent.to_string()).unwrap();
    for args in [&["report"][..], &["export", "--format", "folded"]] {
        let mut args = args.to_vec();
        args.push(broken.to_str().unwrap());
        assert_one_line_error(
            &instrument(&args),
            "not a valid profile: loop 4000 is in routine 4001, which the profile does not have",
        );
    }

    let empty = scratch();
    assert_one_line_error(
        &run(Command::new(bin("instrument")).arg("report").env("INSTRUMENT_PROFILE_DIR", empty.path())),
        "no profile",
    );
    let bad_flag = instrument(&["report", "--bogus"]);
    assert!(!bad_flag.status.success());
    assert!(stderr(&bad_flag).contains("--bogus"));
}

#[test]
fn rewrite_bitcode_to_an_object_that_links_and_runs() {
    let dir = scratch();
    let bitcode = dir.path().join("calls.bc");
    let out = run(Command::new("clang-22")
        .args(["-O1", "-c", "-emit-llvm", "-I"])
        .arg(fixtures())
        .arg(fixtures().join("calls.c"))
        .arg("-o")
        .arg(&bitcode));
    assert_success(&out, "clang -emit-llvm");
    let object = dir.path().join("calls.o");
    assert_success(&rewrite(&[bitcode.to_str().unwrap(), "-o", object.to_str().unwrap()]), "rewrite");
    let program = compile(&bin("instrument-cc"), dir.path(), "calls", &[object], &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "rewritten calls");
    assert_eq!(function(&profile, "c").stats.calls, 9);
    assert_eq!(function(&profile, "a").stats.child_calls, 6);
}

#[test]
fn rewriting_twice_does_not_instrument_twice() {
    let dir = scratch();
    let input = dir.path().join("calls.bc");
    let once = dir.path().join("once.bc");
    let twice = dir.path().join("twice.bc");
    let out = run(Command::new("clang-22")
        .args(["-O0", "-c", "-emit-llvm"])
        .arg(fixtures().join("calls.c"))
        .arg("-o")
        .arg(&input));
    assert_success(&out, "clang -emit-llvm");
    assert_success(&rewrite(&[input.to_str().unwrap(), "-o", once.to_str().unwrap()]), "first");
    assert_success(&rewrite(&[once.to_str().unwrap(), "-o", twice.to_str().unwrap()]), "second");
    let probes = |path: &Path| {
        let text = run(Command::new("llvm-dis-22").arg(path).arg("-o").arg("-"));
        String::from_utf8_lossy(&text.stdout)
            .matches("call preserve_mostcc i32 @__instrument_enter_pm(")
            .count()
    };
    assert_eq!(probes(&once), 5, "main, a, b, c and gnu_off (clang marks need the wrapper); not skipped()");
    assert_eq!(probes(&twice), probes(&once));
}

#[test]
fn rewrite_refuses_bad_bitcode_and_writes_nothing() {
    let dir = scratch();
    let garbage = dir.path().join("garbage.bc");
    std::fs::write(&garbage, b"BC\xc0\xde this is not bitcode").unwrap();
    let object = dir.path().join("out.o");
    let output = instrument(&["rewrite", garbage.to_str().unwrap(), "-o", object.to_str().unwrap()]);
    assert_one_line_error(&output, "cannot read bitcode");
    assert!(!object.exists(), "no output on failure");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary left behind");

    let missing = dir.path().join("missing.bc");
    assert_one_line_error(&instrument(&["rewrite", missing.to_str().unwrap(), "-o", "x.o"]), "no such file");
}

#[test]
fn wrapper_reports_a_missing_compiler_or_bad_setting_in_one_line() {
    let dir = scratch();
    let source = fixtures().join("calls.c");
    let object = dir.path().join("x.o");
    let cc = bin("instrument-cc");
    let no_clang =
        run(Command::new(&cc).arg("-c").arg(&source).arg("-o").arg(&object).env("PATH", dir.path()));
    assert_one_line_error(&no_clang, "clang-22 not found on PATH (install it: apt-get install clang-22");
    let bad_override = run(Command::new(&cc)
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(&object)
        .env("INSTRUMENT_CLANG", "/nonexistent/cc"));
    assert_one_line_error(&bad_override, "INSTRUMENT_CLANG is set to /nonexistent/cc");
    let bad_placement = run(Command::new(&cc)
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(&object)
        .env("INSTRUMENT_PLACEMENT", "sideways"));
    assert_one_line_error(&bad_placement, "INSTRUMENT_PLACEMENT=\"sideways\"");
    assert!(!object.exists());
}

#[test]
fn demo_prints_a_real_profile() {
    let output = instrument(&["demo"]);
    assert_success(&output, "demo");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("fib(25) = 75025"), "{text}");
    assert!(
        text.contains("\nplacement: late (after optimisation"),
        "the demo builds with the defaults: {text}"
    );
    let calls = |name: &str| -> u64 {
        let row = text
            .lines()
            .find(|l| l.ends_with(&format!(" {name}")))
            .unwrap_or_else(|| panic!("no {name}: {text}"));
        row.split_whitespace().nth(3).unwrap().parse().unwrap()
    };
    assert_eq!(calls("main"), 1);
    let fib = calls("fib");
    assert!(
        fib > 0 && fib < 242_785,
        "fib(25) makes 242785 source-level calls, clang inlines some of them: {text}"
    );
    assert!(calls("quicksort") > 0);
}

#[test]
fn report_sorts_and_cuts_the_table_and_the_json() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    let (output, profile) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    let path = profile_path(dir.path());
    let mut by_calls: Vec<(u64, String)> =
        profile.functions.iter().map(|f| (f.stats.calls, f.name.clone())).collect();
    by_calls.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let json = instrument(&["report", "--json", "--sort", "calls", "--top", "2", &path]);
    assert_success(&json, "report --json --sort calls --top 2");
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> =
        json["functions"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, [by_calls[0].1.as_str(), by_calls[1].1.as_str()]);

    let table = instrument(&["report", "--sort", "name", "--top", "1", &path]);
    let text = String::from_utf8_lossy(&table.stdout);
    let mut alphabetical: Vec<&str> = profile.functions.iter().map(|f| f.name.as_str()).collect();
    alphabetical.sort();
    assert!(text.lines().any(|l| l.ends_with(&format!("  {}", alphabetical[0]))), "{text}");
    let left_out = profile.functions.len() - 1;
    assert!(text.contains(&format!("({left_out} more routines; --top shows the first 1)")), "{text}");
    let bad = instrument(&["report", "--sort", "size", &path]);
    assert!(
        !bad.status.success()
            && stderr(&bad).contains("possible values: exclusive, inclusive, calls, name, overhead")
    );
}

#[test]
fn report_views_are_one_choice_and_each_prints_json() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    let output = run(Command::new(&program)
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_CALLPATH", "all"));
    assert_success(&output, "calls with callpaths");
    let path = profile_path(dir.path());
    for (a, b) in [("--summary", "--tree"), ("--cct", "--callpaths"), ("--tree", "--cct")] {
        let both = instrument(&["report", a, b, &path]);
        assert!(!both.status.success(), "{a} {b} accepted");
        assert!(stderr(&both).contains("cannot be used with"), "{a} {b}: {}", stderr(&both));
    }
    let html = instrument(&["report", "--summary", "--html", "x.html", &path]);
    assert!(!html.status.success() && stderr(&html).contains("cannot be used with"), "{}", stderr(&html));
    let sorted_tree = instrument(&["report", "--tree", "--sort", "calls", &path]);
    assert!(!sorted_tree.status.success(), "--sort applies to the flat table only");

    let json = |view: &str| -> serde_json::Value {
        let output = instrument(&["report", view, "--json", &path]);
        assert_success(&output, &format!("report {view} --json"));
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{view} --json: {e}"))
    };
    let tree = json("--tree");
    let lines = tree["tree"].as_array().unwrap();
    assert_eq!(lines[0]["depth"], 0, "the program first");
    let b = lines.iter().find(|l| l["label"] == "b" && l["depth"] == 1).expect("routine b in the tree");
    assert_eq!(b["count"].as_u64(), Some(6));

    let cct = json("--cct");
    let main = &cct["cct"].as_array().unwrap()[0];
    assert_eq!((main["name"].as_str(), main["calls"].as_u64()), (Some("main"), Some(1)));
    let inclusive = main["inclusive_ns"].as_i64().unwrap();
    let children: i64 =
        main["children"].as_array().unwrap().iter().map(|c| c["inclusive_ns"].as_i64().unwrap()).sum();
    assert!(children <= inclusive, "children {children} within main's {inclusive}");

    let summary = json("--summary");
    assert_eq!(summary["units"], serde_json::json!(["0"]));
    let callpaths = json("--callpaths");
    assert!(callpaths["callpaths"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["path"] == serde_json::json!(["main", "a", "b"])));
}

#[test]
fn profiles_of_different_programs_reported_together_are_told_apart() {
    let dir = scratch();
    let calls = build_instrumented(dir.path(), "calls", &[]);
    let busywait = build_instrumented(dir.path(), "busywait", &[]);
    for program in [&calls, &busywait] {
        let output =
            run(Command::new(program).current_dir(dir.path()).env("INSTRUMENT_PROFILE_DIR", dir.path()));
        assert_success(&output, "a program");
    }
    let paths = profile_paths(dir.path());
    let pids: Vec<u32> = paths.iter().map(|p| load_profile(p).pid).collect();
    let output = run(Command::new(bin("instrument")).arg("report").args(&paths));
    assert_success(&output, "report of two programs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("Profiles of 2 programs"), "{text}");
    for pid in &pids {
        assert!(text.contains(&format!("pid {pid}: ")), "{text}");
    }
    assert!(text.contains(&format!("(pid.thread: {}.0 {}.0)", pids[0], pids[1])), "{text}");
    let json = run(Command::new(bin("instrument")).args(["report", "--json"]).args(&paths));
    assert_one_line_error(&json, "2 profiles given: this view shows one");
}
