//! Routine names read as LLVM's own tools read them: every C++ name of a C++20 program (its
//! constrained templates, which cpp_demangle cannot parse, and libstdc++'s internals) shows in
//! the report exactly as llvm-cxxfilt-22 prints it.

use instrument_tests::*;
use std::process::{Command, Stdio};

#[test]
fn cxx20_names_read_as_llvm_cxxfilt_reads_them() {
    let dir = scratch();
    let program = compile(
        &bin("instrument-c++"),
        dir.path(),
        "cxx20_names",
        &[fixtures().join("cxx20_names.cpp")],
        &["-std=c++20", "-O0"],
    );
    let output =
        run(Command::new(&program).current_dir(dir.path()).env("INSTRUMENT_PROFILE_DIR", dir.path()));
    assert_eq!(output.status.code(), Some(20), "the fixture's result");
    let path = only_profile_path(dir.path());
    let json = run(Command::new(bin("instrument")).args(["report", "--json"]).arg(&path));
    assert_success(&json, "report --json");
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let rows: Vec<(String, String)> = json["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["mangled"].as_str().unwrap().to_string(), f["name"].as_str().unwrap().to_string()))
        .filter(|(mangled, _)| mangled.starts_with("_Z"))
        .collect();
    assert!(rows.len() >= 20, "{rows:?}");
    let mut filt =
        Command::new("llvm-cxxfilt-22").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let input: String = rows.iter().map(|(m, _)| format!("{m}\n")).collect();
    std::io::Write::write_all(&mut filt.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let expected = String::from_utf8(filt.wait_with_output().unwrap().stdout).unwrap();
    for ((mangled, shown), llvm) in rows.iter().zip(expected.lines()) {
        assert_eq!(shown, llvm, "{mangled}");
    }
    let names: Vec<&str> = rows.iter().map(|(_, n)| n.as_str()).collect();
    for constrained in
        ["T twice<int>(T)", "double half<double, 0>(double)", "int addn<5>(int)", "int id<int>(int)"]
    {
        assert!(names.contains(&constrained), "{constrained} in {names:#?}");
    }
}
