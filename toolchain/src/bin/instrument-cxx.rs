//! `instrument-c++` (and `instrument-cxx`): clang++-22 with the pass plugin and the runtime.
fn main() {
    instrument_toolchain::wrapper::main(instrument_toolchain::wrapper::Language::Cxx)
}
