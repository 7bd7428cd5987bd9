//! Real builds, each the way its users run it: a CMake project, `./configure CC=instrument-cc
//! && make`, Lua's and SQLite's own sources (fetched through cargo at test time), a multi-file
//! Fortran program with modules, a threaded C++ program with templates and exceptions, and lz4
//! built with the wrappers' defaults.
//! Each is built plainly and instrumented; both must behave identically (output and exit code)
//! and the instrumented one must give a plausible profile with exact counts where the program
//! fixes them.

use instrument_tests::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `program` with `stdin` as its input; profiles (if any) go to `profiles`.
fn run_with_input(program: &Path, args: &[&str], stdin: &str, profiles: &Path) -> Output {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(profiles)
        .env("INSTRUMENT_PROFILE_DIR", profiles)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// What the program itself wrote to standard error: without the runtime's line at exit when
/// the probes dominated the run (these builds place them early).
fn program_stderr(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr.split_inclusive('\n').filter(|l| !l.starts_with("instrument: the probes took about")).collect()
}

/// Plain and instrumented runs agree on exit code, standard output and standard error.
fn assert_same_behaviour(plain: &Output, instrumented: &Output, what: &str) {
    let own = program_stderr(instrumented);
    assert_success(plain, &format!("plain {what}"));
    assert_eq!(plain.status.code(), instrumented.status.code(), "{what}: exit code");
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&instrumented.stdout),
        "{what}"
    );
    assert_eq!(String::from_utf8_lossy(&plain.stderr), own, "{what}");
}

fn make(dir: &Path, args: &[String]) {
    let output = run(Command::new("make").arg("-j2").args(args).env(EARLY.0, EARLY.1).current_dir(dir));
    assert_success(&output, &format!("make {args:?} in {}", dir.display()));
}

fn line_of(file: &Path, text: &str) -> u32 {
    let source = std::fs::read_to_string(file).unwrap();
    1 + source.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("{text:?} in {file:?}")) as u32
}

#[test]
fn cmake_project_with_cmake_c_compiler_instrument_cc() {
    let dir = scratch();
    let build = |compiler: &Path, name: &str| {
        let out = dir.path().join(name);
        // Every event kind, as a user asks for loops: in the environment of configure and build.
        let events = ("INSTRUMENT_EVENTS", "all");
        let configure = run(Command::new("cmake")
            .env(events.0, events.1)
            .env(EARLY.0, EARLY.1)
            .arg("-S")
            .arg(fixtures().join("cmake-project"))
            .arg("-B")
            .arg(&out)
            .arg(format!("-DCMAKE_C_COMPILER={}", compiler.display()))
            .arg("-DCMAKE_BUILD_TYPE=Release"));
        assert_success(&configure, &format!("cmake configure with {}", compiler.display()));
        let build = run(Command::new("cmake")
            .env(events.0, events.1)
            .env(EARLY.0, EARLY.1)
            .arg("--build")
            .arg(&out)
            .arg("-j2"));
        assert_success(&build, &format!("cmake --build with {}", compiler.display()));
        out.join("matrices")
    };
    let plain = build(Path::new("clang-22"), "plain");
    let instrumented = build(&bin("instrument-cc"), "instrumented");
    let profiles = new_dir(dir.path(), "profiles");
    let plain_run = run(&mut Command::new(&plain));
    let (instrumented_run, profile) = run_profiled(&instrumented, &profiles);
    assert_same_behaviour(&plain_run, &instrumented_run, "matrices");
    assert_eq!(function(&profile, "matrix_mul").stats.calls, 3);
    assert_eq!(function(&profile, "matrix_new").stats.calls, 5, "two in main, one per product");
    assert_eq!(function(&profile, "matrix_free").stats.calls, 5);
    let main_c = fixtures().join("cmake-project/src/main.c");
    let rounds = loop_at(&profile, line_of(&main_c, "for (int round"));
    // With call statements instrumented, the loop's children are its five call statements (mul,
    // trace, norm, printf, free) per round, and main's are its seven statements and the loop.
    assert_eq!((rounds.stats.calls, rounds.stats.iterations, rounds.stats.child_calls), (1, 3, 15));
    assert_eq!(function(&profile, "main").stats.child_calls, 7);
    assert_eq!(calls_to(&profile, "printf").iter().map(|c| c.stats.calls).sum::<u64>(), 3);
    let matrix_c = fixtures().join("cmake-project/src/matrix.c");
    assert!(function(&profile, "matrix_mul").file.ends_with("src/matrix.c"));
    assert_eq!(
        loop_at(&profile, line_of(&matrix_c, "for (int j")).stats.calls,
        3 * 64 * 64,
        "innermost loop runs"
    );
    assert_inclusive_covers_exclusive(&profile);
}

const WORDS: &str = "The cat and the dog.\nThe end of the story, the END!\nA cat, a dog; the end.\n";

#[test]
fn autotools_configure_and_make_with_cc_instrument_cc() {
    let dir = scratch();
    let source = dir.path().join("source");
    copy_dir(&fixtures().join("autotools-project"), &source);
    let autoreconf = run(Command::new("autoreconf").arg("-fi").current_dir(&source));
    assert_success(&autoreconf, "autoreconf -fi");
    let build = |cc: &Path, name: &str| {
        let tree = dir.path().join(name);
        copy_dir(&source, &tree);
        let configure = run(Command::new("./configure")
            .arg(format!("CC={}", cc.display()))
            .env(EARLY.0, EARLY.1)
            .current_dir(&tree));
        assert_success(&configure, &format!("./configure CC={}", cc.display()));
        let said = String::from_utf8_lossy(&configure.stdout);
        assert!(said.contains("checking whether we are cross compiling... no"), "ran programs: {said}");
        make(&tree, &[]);
        tree
    };
    let plain = build(Path::new("clang-22"), "plain");
    let instrumented = build(&bin("instrument-cc"), "instrumented");
    // configure compiled, linked and ran its probe programs with the wrapper.
    let config_h = std::fs::read_to_string(instrumented.join("config.h")).unwrap();
    for defined in ["#define HAVE_WORKING_STRLEN 1", "#define HAVE_STRDUP 1", "#define SIZEOF_LONG 8"] {
        assert!(config_h.contains(defined), "{defined} in config.h:\n{config_h}");
    }
    assert_eq!(config_h, std::fs::read_to_string(plain.join("config.h")).unwrap(), "same configuration");
    assert!(profile_paths(&instrumented).is_empty(), "configure's probes left no profiles");

    let profiles = new_dir(dir.path(), "profiles");
    let plain_run = run_with_input(&plain.join("wordfreq"), &[], WORDS, &profiles);
    let instrumented_run = run_with_input(&instrumented.join("wordfreq"), &[], WORDS, &profiles);
    assert_same_behaviour(&plain_run, &instrumented_run, "wordfreq");
    assert!(String::from_utf8_lossy(&plain_run.stdout).starts_with("6 the\n3 end\n"));
    let profile = only_profile(&profiles);
    let words = WORDS.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).count() as u64;
    assert_eq!(function(&profile, "table_add").stats.calls, words);
    assert_eq!(function(&profile, "find").stats.calls, words);
    assert_eq!(function(&profile, "next_word").stats.calls, words + 1, "the last call finds no word");
    // qsort is not instrumented: the comparisons it calls back are table_sort's children.
    assert!(function(&profile, "by_count").stats.calls > 0);
    assert_eq!(
        function(&profile, "table_sort").stats.child_calls,
        function(&profile, "by_count").stats.calls
    );
}

#[test]
fn lua_interpreter_built_with_its_makefile() {
    let dir = scratch();
    let build = |cc: String, name: &str| {
        let tree = third_party::lua(&dir.path().join(name));
        make(&tree, &["linux".into(), format!("CC={cc} -std=gnu99")]);
        tree.join("src/lua")
    };
    let plain = build("clang-22".into(), "plain");
    let instrumented = build(bin("instrument-cc").display().to_string(), "instrumented");
    let script = fixtures().join("lua/workload.lua");
    let script = script.to_str().unwrap();
    let profiles = new_dir(dir.path(), "profiles");
    let plain_run = run(Command::new(&plain).arg(script));
    let (instrumented_run, profile) = run_profiled_with(&instrumented, &profiles, &[script]);
    assert_same_behaviour(&plain_run, &instrumented_run, "lua workload.lua");
    assert_eq!(
        String::from_utf8_lossy(&plain_run.stdout),
        "fib 6765\nsorted 20000 first 9 last 99994\ndistinct 97 failures 100 okok\n"
    );
    for (routine, calls) in [
        ("main", 1),
        ("luaL_newstate", 1),
        ("lua_close", 1),
        ("luaB_print", 3),
        ("str_rep", 1),
        ("luaB_pcall", 100),
        ("luaB_error", 100),
        ("luaD_throw", 100),
        ("sort", 1),
    ] {
        assert_eq!(function(&profile, routine).stats.calls, calls, "{routine}");
    }
    assert!(function(&profile, "luaD_precall").stats.calls > 21891, "fib(20) alone makes 21891 calls");
    assert!(profile.totals.frames_reconciled > 0, "errors longjmp over instrumented frames");
    assert_inclusive_covers_exclusive(&profile);
}

const SQL: &str = "\
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<1000)
  INSERT INTO t(name, score) SELECT 'n'||x, (x*37)%101 FROM c;
CREATE INDEX t_score ON t(score);
SELECT count(*), sum(score), min(name), max(score) FROM t;
SELECT name FROM t WHERE score = 50 ORDER BY id LIMIT 3;
.mode csv
SELECT score, count(*) FROM t GROUP BY score ORDER BY 2 DESC, 1 LIMIT 2;
SELECT no_such_column FROM t;
";

#[test]
fn sqlite_shell_from_the_amalgamation() {
    let dir = scratch();
    let source = third_party::sqlite(&dir.path().join("sqlite"));
    let sources = [source.join("shell.c"), source.join("sqlite3.c")];
    let plain = compile(Path::new("clang-22"), dir.path(), "sqlite3-plain", &sources, &["-O2", "-lm"]);
    let instrumented = compile(&bin("instrument-cc"), dir.path(), "sqlite3", &sources, &["-O2", "-lm"]);
    let profiles = new_dir(dir.path(), "profiles");
    let plain_run = run_with_input(&plain, &[], SQL, &profiles);
    let instrumented_run = run_with_input(&instrumented, &[], SQL, &profiles);
    assert_eq!(plain_run.status.code(), Some(1), "the failing statement makes the shell exit 1");
    assert_eq!(plain_run.status.code(), instrumented_run.status.code());
    assert_eq!(plain_run.stdout, instrumented_run.stdout);
    assert_eq!(String::from_utf8_lossy(&plain_run.stderr), program_stderr(&instrumented_run));
    assert_eq!(
        String::from_utf8_lossy(&plain_run.stdout),
        "1000|50044.0|n1|100.0\nn15\nn116\nn217\n1.0,10\r\n2.0,10\r\n",
        "CSV lines end in CRLF"
    );
    assert!(String::from_utf8_lossy(&plain_run.stderr).contains("no such column: no_such_column"));
    let profile = only_profile(&profiles);
    assert_eq!(function(&profile, "main").stats.calls, 1);
    assert_eq!(function(&profile, "do_meta_command").stats.calls, 1, ".mode csv");
    assert_eq!(function(&profile, "sqlite3_open_v2").stats.calls, 1);
    assert!(function(&profile, "sqlite3VdbeExec").stats.calls >= 6, "one run per statement at least");
    assert!(
        function(&profile, "sqlite3BtreeInsert").stats.calls >= 2000,
        "1000 rows and their index entries"
    );
    assert!(function(&profile, "sqlite3VdbeExec").file.ends_with("sqlite3.c"));
    assert_inclusive_covers_exclusive(&profile);
}

#[test]
fn fortran_program_with_modules_built_by_make() {
    let dir = scratch();
    let build = |fc: String, name: &str| {
        let tree = dir.path().join(name);
        copy_dir(&fixtures().join("fortran-modules"), &tree);
        make(&tree, &[format!("FC={fc}")]);
        tree.join("shapes")
    };
    let plain = build("flang-22".into(), "plain");
    let instrumented = build(bin("instrument-fc").display().to_string(), "instrumented");
    let profiles = new_dir(dir.path(), "profiles");
    let plain_run = run(&mut Command::new(&plain));
    let (instrumented_run, _) = run_profiled(&instrumented, &profiles);
    assert_same_behaviour(&plain_run, &instrumented_run, "shapes");
    let calls = report_calls(&only_profile_path(&profiles));
    for (routine, expected) in [
        ("main program", 1),
        ("statistics::correlation", 4),
        ("statistics::mean", 9),
        ("vectors::norm", 12),
        ("vectors::dot", 16),
        ("vectors::scale", 4),
    ] {
        assert_eq!(calls.get(routine), Some(&expected), "{routine} in {calls:?}");
    }
}

#[test]
fn cpp_program_with_templates_exceptions_and_threads() {
    let dir = scratch();
    let build = |cxx: String, name: &str| {
        let tree = dir.path().join(name);
        copy_dir(&fixtures().join("cpp-project"), &tree);
        make(&tree, &[format!("CXX={cxx}")]);
        tree.join("ledger")
    };
    let plain = build("clang++-22".into(), "plain");
    let instrumented = build(bin("instrument-c++").display().to_string(), "instrumented");
    let profiles = new_dir(dir.path(), "profiles");
    let plain_run = run(&mut Command::new(&plain));
    let (instrumented_run, profile) = run_profiled(&instrumented, &profiles);
    assert_same_behaviour(&plain_run, &instrumented_run, "ledger");
    assert_eq!(
        String::from_utf8_lossy(&plain_run.stdout),
        "refused: insufficient funds\ntotal 400 after 4000 transfers\naccounts 4, sum_of<int> 6\n"
    );
    let calls = report_calls(&only_profile_path(&profiles));
    let get = |name: &str| *calls.get(name).unwrap_or_else(|| panic!("{name} in {calls:?}"));
    assert_eq!(get("Ledger::transfer(int, int, long)"), 4001);
    assert_eq!(get("Account<long>::withdraw(long)"), 4001);
    assert_eq!(get("run_teller(Ledger&, int, int, long&)"), 4);
    assert_eq!(get("int sum_of<int>(std::vector<int, std::allocator<int>> const&)"), 1);
    // An inheriting constructor (`using std::runtime_error::runtime_error`), as llvm-cxxfilt reads it.
    let refused = get("overdraft::overdraft(char const*)");
    assert!(refused >= 1, "main's transfer is always refused");
    assert_eq!(get("Account<long>::deposit(long)") + refused, 4 + 4001, "each transfer deposits or throws");
    assert_eq!(profile.threads.len(), 5, "main and four tellers: {:?}", profile.threads);
    assert_eq!(profile.totals.unmatched_exits, 0);
    assert_inclusive_covers_exclusive(&profile);
}

/// A deterministic text of `bytes` bytes: words from a small vocabulary, as prose compresses.
fn words_text(bytes: usize) -> Vec<u8> {
    const WORDS: [&str; 8] = ["probe", "inline", "the", "of", "loop", "clock", "a", "routine"];
    let mut state: u64 = 7;
    let mut text = Vec::with_capacity(bytes + 16);
    while text.len() < bytes {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        text.extend_from_slice(WORDS[(state >> 33) as usize % WORDS.len()].as_bytes());
        text.push(if (state >> 40).is_multiple_of(9) { b'\n' } else { b' ' });
    }
    text
}

/// The functions a binary defines (`nm`'s text symbols).
fn defined_functions(binary: &Path) -> std::collections::BTreeSet<String> {
    let nm = run(Command::new("llvm-nm-22").arg("--defined-only").arg(binary));
    assert_success(&nm, "llvm-nm-22");
    String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| {
            l.split_whitespace().collect::<Vec<_>>().get(1..3).map(|t| (t[0].to_owned(), t[1].to_owned()))
        })
        .filter(|(kind, _)| matches!(kind.as_str(), "T" | "t" | "W"))
        .map(|(_, name)| name)
        .collect()
}

/// lz4 (inline-heavy C) built by its own makefile with `CC=instrument-cc` and no setting at all:
/// the default placement leaves the compiled code as the plain build's, so every routine the
/// profile shows exists in the plain binary (early placement keeps dozens the plain build
/// inlines), and the program's output is byte for byte the plain one's.
#[test]
fn lz4_built_with_the_defaults_keeps_the_plain_builds_routines() {
    let dir = scratch();
    let build = |cc: String, name: &str| {
        let tree = third_party::lz4(&dir.path().join(name));
        let output = run(Command::new("make")
            .args(["-s", "-j2", "lz4", &format!("CC={cc}")])
            .env_remove(EARLY.0)
            .current_dir(tree.join("programs")));
        assert_success(&output, &format!("make lz4 CC={cc}"));
        tree.join("programs/lz4")
    };
    let plain = build("clang-22".into(), "plain");
    let instrumented = build(bin("instrument-cc").display().to_string(), "instrumented");
    let input = dir.path().join("input.txt");
    std::fs::write(&input, words_text(3 << 20)).unwrap();
    let input = input.to_str().unwrap();
    let profiles = new_dir(dir.path(), "profiles");
    let args = ["-c", "-1", "-T1", input];
    let plain_run = run(Command::new(&plain).args(args));
    let (instrumented_run, profile) = run_profiled_with(&instrumented, &profiles, &args);
    assert_same_behaviour(&plain_run, &instrumented_run, "lz4 -c -1 -T1");
    assert!(plain_run.stdout.len() > 1000 && plain_run.stdout.len() < 3 << 20, "lz4 compressed the text");

    assert_eq!(profile.placement, Some(instrument_profile::Placement::Late), "the wrappers' default");
    let plain_functions = defined_functions(&plain);
    let kept: Vec<&str> =
        profile.functions.iter().map(|f| f.name.as_str()).filter(|n| !plain_functions.contains(*n)).collect();
    assert!(kept.is_empty(), "routines the plain build inlined: {kept:?}");
    assert!(profile.functions.len() >= 10, "lz4's surviving routines are measured: {:?}", profile.functions);
    assert_eq!(function(&profile, "main").stats.calls, 1);
    assert_eq!(profile.totals.unmatched_exits, 0);
    assert_eq!(profile.totals.frames_closed_at_exit, 0);
    assert_inclusive_covers_exclusive(&profile);
}
