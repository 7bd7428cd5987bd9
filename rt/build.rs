//! Compiles the C part of the runtime: shim/exec.c (the exec wrappers, which include variadic
//! functions that stable Rust cannot define) and shim/ompt.c (the OMPT tool, by clang-22 against its
//! omp-tools.h, with the operation numbers generated from the contract).
//! Like the Rust part, it is never instrumented.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=shim/exec.c");
    println!("cargo:rerun-if-changed=shim/ompt.c");
    cc::Build::new()
        .file("shim/exec.c")
        .warnings(true)
        .warnings_into_errors(true)
        .compile("instrument_rt_exec");
    let generated = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let header = generated.join(instrument_contract::mpi::C_HEADER_NAME);
    std::fs::write(&header, instrument_contract::mpi::c_header()).expect("the operations header");
    // omp-tools.h is one of clang's own headers.
    cc::Build::new()
        .compiler("clang-22")
        .file("shim/ompt.c")
        .include(&generated)
        .warnings(true)
        .warnings_into_errors(true)
        .compile("instrument_rt_ompt");
}
