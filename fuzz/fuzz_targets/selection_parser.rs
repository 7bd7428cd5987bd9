//! Any text given as a selection file (TAU's or Score-P's syntax): the parser accepts it or
//! names a line, and what it accepts answers questions about names and files.
#![no_main]

use instrument_select::Selection;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(selection) = Selection::parse(text) else { return };
    for (symbol, file) in [
        ("main", "main.c"),
        ("_ZN2ns5solveEv", "/src/solver.cpp"),
        ("_RNvCs1234_5crate4work", "src/lib.rs"),
        ("", ""),
        ("matmul_", "kernels/matmul.f90"),
    ] {
        let _ = selection.includes(symbol, file);
        let _ = selection.wants_loops(symbol, file);
    }
    // Names taken from the text itself reach the matchers' less common paths.
    for word in text.split_whitespace().take(8) {
        let _ = selection.includes(word, word);
        let _ = selection.wants_loops(word, word);
    }
});
