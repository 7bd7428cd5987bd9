//! `instrument-cc`: clang-22 with the pass plugin and the runtime (see `wrapper`).
fn main() {
    let argv0 = std::env::args().next().unwrap_or_default();
    instrument_toolchain::wrapper::main(instrument_toolchain::wrapper::Language::from_argv0(&argv0))
}
