//! The probe ABI: the symbols instrumented code calls and the calling convention it calls them
//! with (written by pass/src/probes.rs, served by rt/src/trampolines.rs).
//!
//! There are two sets of the same probes, told apart by name so that a call can never meet a
//! callee of another convention (LLVM deletes such a call as undefined):
//!
//! - `PRESERVING`: LLVM's `preserve_most`, what the pass calls on x86-64 under either
//!   placement. Every general-purpose register but `r11` (and `rax` when the probe returns a
//!   value) survives the call, so the register allocator keeps the instrumented code's values in
//!   registers across a probe as in the plain build, instead of moving them to callee-saved
//!   registers or the stack around every probe. Vector registers stay caller-saved. The runtime
//!   saves what its C-convention bodies may clobber, and only on the paths that reach them (a
//!   switched-off probe touches `r11` and the flags alone). Late placement called the C set
//!   until 045a2df. With this set, IS-like key generation in one process (`instrument bench
//!   probes`) ran 0.96-1.07 % slower than plain, with the overhead figure at 0.84-0.97 x that,
//!   against 1.29-1.59 % and 0.47-0.53 x with C probes. A timed pair in a tight loop costs
//!   1.5-2 ns more (the saves around the timed work). On Lua 5.4 built with functions and loops
//!   aligned to 64 bytes, the two sets did not differ beyond the run-to-run spread: the layout of
//!   the code moves Lua by some 4 % either way.
//! - `C`: the C convention, for other targets (the runtime's assembly is x86-64's).

/// One set of probe symbols and the convention they are called with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSet {
    /// `u32 enter(u32 *id_slot)`: non-zero when the exit has something to close.
    pub enter: &'static str,
    /// `void exit(u32 *id_slot, u32 opened)`: `opened` is what the entry returned, which the
    /// runtime's exit reads before anything else (a timed frame's exit reads the clock at once,
    /// others look up the event's mode first), or `UNKNOWN_OPENED` where the caller does not
    /// have it.
    pub exit: &'static str,
    /// `void exit_if(u32 *id_slot, u32 opened)`: the exit when `opened` is non-zero. Early
    /// placement emits it so that the optimiser sees one call at each exit rather than a branch
    /// around it; the pass lowers it to a branch and an `exit` call at the end of the pipeline,
    /// and the runtime serves any call left (a link-time optimiser without the pass).
    pub exit_if: &'static str,
    /// `void loop_exit(u32 *id_slot, u64 iterations)`.
    pub loop_exit: &'static str,
    /// `u32 enter_measured(u32 *id_slot)`: `enter` for an event whose mode byte the caller has
    /// just read as measured (the inline count's code reads it anyway, `inline_count`), which
    /// skips the mode lookup. Same result as `enter`.
    pub enter_measured: &'static str,
    /// LLVM's calling convention number for all five.
    pub convention: u32,
}

impl ProbeSet {
    /// The set's five symbols, for whatever lists them all (the sealed runtime's exports and hot
    /// section).
    pub fn symbols(&self) -> [&'static str; 5] {
        [self.enter, self.exit, self.exit_if, self.loop_exit, self.enter_measured]
    }
}

/// The exit's `opened` where the entry's result is not at hand (an entry declared without one
/// by an older pass): any frame, which the runtime finds out for itself.
pub const UNKNOWN_OPENED: u32 = 1;

/// LLVM's `CallingConv::C`.
pub const C_CONVENTION: u32 = 0;
/// LLVM's `CallingConv::PreserveMost`.
pub const PRESERVE_MOST: u32 = 14;

/// The C-convention probes.
pub const C: ProbeSet = ProbeSet {
    enter: "__instrument_enter",
    exit: "__instrument_exit",
    exit_if: "__instrument_exit_if",
    loop_exit: "__instrument_loop_exit",
    enter_measured: "__instrument_enter_measured",
    convention: C_CONVENTION,
};

/// The `preserve_most` probes (x86-64).
pub const PRESERVING: ProbeSet = ProbeSet {
    enter: "__instrument_enter_pm",
    exit: "__instrument_exit_pm",
    exit_if: "__instrument_exit_if_pm",
    loop_exit: "__instrument_loop_exit_pm",
    enter_measured: "__instrument_enter_measured_pm",
    convention: PRESERVE_MOST,
};

/// Both sets.
pub const SETS: [ProbeSet; 2] = [C, PRESERVING];

/// `void __instrument_unwind(u32 *id_slot)`, with the C convention, at landings: after a landing
/// pad's `landingpad` and on a setjmp's non-zero return (pass/src/landings.rs). The slot names
/// the event still running there, or is null in a routine without events.
pub const UNWIND: &str = "__instrument_unwind";

/// The set a module for `triple` uses: `PRESERVING` on x86-64, under either placement.
pub fn set_for(triple: &str) -> ProbeSet {
    if triple.starts_with("x86_64") {
        PRESERVING
    } else {
        C
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_x86_64_preserves_registers() {
        assert_eq!(set_for("x86_64-pc-linux-gnu"), PRESERVING);
        assert_eq!(set_for("x86_64-unknown-linux-gnu"), PRESERVING);
        assert_eq!(set_for("aarch64-unknown-linux-gnu"), C);
        assert_eq!(set_for(""), C);
    }

    #[test]
    fn the_sets_share_no_symbol() {
        for name in C.symbols() {
            assert!(!PRESERVING.symbols().contains(&name), "{name}");
        }
    }
}
