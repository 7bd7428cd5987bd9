//! The sealed runtime keeps the probes' code together at a cache-line boundary
//! (toolchain/src/runtime.rs `HOT_SECTION`), so that what a probe costs does not move with
//! unrelated runtime code: in a linked program the trampolines and the hot path's bodies lie in
//! one section that starts on a 64-byte boundary.

use instrument_tests::*;
use instrument_toolchain::runtime::HOT_SECTION;
use std::process::Command;

/// (address, section, name) of every function symbol in `program`.
fn functions(program: &std::path::Path) -> Vec<(u64, String, String)> {
    let output = run(Command::new("llvm-objdump-22").arg("-t").arg(program));
    assert_success(&output, "llvm-objdump-22 -t");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.contains(" F "))
        .filter_map(|l| {
            let (address, rest) = l.split_once(' ')?;
            let mut fields = rest.split_whitespace().skip_while(|f| *f != "F").skip(1);
            let section = fields.next()?.to_string();
            let name = fields.last()?.to_string();
            Some((u64::from_str_radix(address, 16).ok()?, section, name))
        })
        .collect()
}

/// The function symbol named `wanted` (exactly, else the first whose name holds it).
fn find<'a>(symbols: &'a [(u64, String, String)], wanted: &str) -> &'a (u64, String, String) {
    symbols
        .iter()
        .find(|(_, _, name)| name == wanted)
        .or_else(|| symbols.iter().find(|(_, _, name)| name.contains(wanted)))
        .unwrap_or_else(|| panic!("{wanted} is not there"))
}

/// The trampolines of both probe sets and the hot path's bodies.
const HOT: [&str; 7] = [
    "__instrument_enter",
    "__instrument_exit_pm",
    "__instrument_loop_exit",
    "instrument_rt11pathed_path20enter_pathed_fast_pm",
    "instrument_rt6probes5enter17h",
    "instrument_rt6probes15enter_throttled",
    "instrument_rt6probes4exit17h",
];

#[test]
fn the_probes_code_is_one_section_on_a_cache_line_boundary() {
    let dir = scratch();
    let program = functions(&build_instrumented(dir.path(), "calls", &[]));
    let sealed = functions(&bin_dir().join("libinstrument_rt.sealed.a"));
    for wanted in HOT {
        let (_, section, name) = find(&sealed, wanted);
        assert_eq!(section, HOT_SECTION, "{name} is outside the hot section of the sealed runtime");
    }
    // The section's first member (the C entry trampoline) carries its alignment into the link.
    let start = find(&program, "__instrument_enter").0;
    assert_eq!(start % 64, 0, "__instrument_enter at {start:#x}, not on a cache line");
    // The link keeps the section whole: from the trampolines to the last hot body, every function
    // is one of the section's own (whatever the section's size, nothing else lies among them).
    let members: std::collections::HashSet<&str> = sealed
        .iter()
        .filter(|(_, section, _)| section == HOT_SECTION)
        .map(|(_, _, name)| name.as_str())
        .collect();
    let end = HOT.iter().map(|wanted| find(&program, wanted).0).max().unwrap();
    for (address, _, name) in program.iter().filter(|(address, _, _)| (start..=end).contains(address)) {
        assert!(members.contains(name.as_str()), "{name} at {address:#x} lies among the probes' code");
    }
}
