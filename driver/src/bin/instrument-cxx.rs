//! `instrument-c++` (and `instrument-cxx`): clang++-22 with the pass plugin and the runtime.
fn main() {
    instrument_driver::wrapper::main(instrument_driver::wrapper::Language::Cxx)
}
