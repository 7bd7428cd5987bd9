//! Compiles the C part of the runtime (shim/exec.c: the exec wrappers, which include variadic
//! functions that stable Rust cannot define). Like the Rust part, it is never instrumented.
fn main() {
    println!("cargo:rerun-if-changed=shim/exec.c");
    cc::Build::new().file("shim/exec.c").warnings(true).compile("instrument_rt_exec");
}
