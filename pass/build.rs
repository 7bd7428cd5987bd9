//! Builds the C++ shim that registers the pass with LLVM's PassBuilder. The shim is compiled
//! against the same LLVM 22 headers whose shared library inkwell links.
use std::process::Command;

fn llvm_config(arg: &str) -> String {
    let tool = std::env::var("LLVM_CONFIG").unwrap_or_else(|_| "llvm-config-22".into());
    let out = Command::new(&tool)
        .arg(arg)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool} (install llvm-22-dev): {e}"));
    assert!(out.status.success(), "{tool} {arg} failed");
    String::from_utf8(out.stdout).expect("llvm-config output is UTF-8").trim().to_string()
}

fn main() {
    println!("cargo:rerun-if-changed=shim/plugin_shim.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    let mut build = cc::Build::new();
    build.cpp(true).file("shim/plugin_shim.cpp").flag("-fno-rtti").warnings(false);
    for flag in llvm_config("--cxxflags").split_whitespace() {
        build.flag(flag);
    }
    build.compile("instrument_plugin_shim");
}
