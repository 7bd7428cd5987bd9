//! `instrument-fc`: flang-22 with the pass plugin and the runtime (see `wrapper`).
fn main() {
    instrument_driver::wrapper::main(instrument_driver::wrapper::Language::Fortran)
}
