//! `instrument-fc`: flang-22 with the pass plugin and the runtime (see `wrapper`).
fn main() {
    instrument_toolchain::wrapper::main(instrument_toolchain::wrapper::Language::Fortran)
}
