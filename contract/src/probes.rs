//! The probe ABI: the symbols instrumented code calls and the calling convention it calls them
//! with (written by pass/src/probes.rs, served by rt/src/trampolines.rs).
//!
//! There are two sets of the same probes, told apart by name so that a call can never meet a
//! callee of another convention (LLVM deletes such a call as undefined):
//!
//! - `C`: the C convention. Late placement's: its probes go into code the optimiser is done
//!   with, and most of a hot program's probes are counted-only calls whose cost this keeps low.
//! - `PRESERVING`: LLVM's `preserve_most` (x86-64 only). Early placement's: every
//!   general-purpose register but `r11` (and `rax` when the probe returns a value) survives the
//!   call, so the optimiser and the register allocator keep the instrumented code's values in
//!   registers across a probe as in the plain build, instead of moving them to callee-saved
//!   registers or the stack around every probe. Vector registers stay caller-saved. The runtime
//!   saves what its C-convention bodies may clobber, and only on the paths that reach them (a
//!   switched-off probe touches `r11` and the flags alone); that costs a counted-only call about
//!   a nanosecond more, which the timed pair hides.

/// One set of probe symbols and the convention they are called with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSet {
    /// `u32 enter(u32 *id_slot)`: non-zero when the exit has something to close.
    pub enter: &'static str,
    /// `void exit(u32 *id_slot)`.
    pub exit: &'static str,
    /// `void exit_if(u32 *id_slot, u32 opened)`: the exit when `opened` is non-zero. Early
    /// placement emits it so that the optimiser sees one call at each exit rather than a branch
    /// around it; the pass lowers it to a branch and an `exit` call at the end of the pipeline,
    /// and the runtime serves any call left (a link-time optimiser without the pass).
    pub exit_if: &'static str,
    /// `void loop_exit(u32 *id_slot, u64 iterations)`.
    pub loop_exit: &'static str,
    /// LLVM's calling convention number for all four.
    pub convention: u32,
}

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
    convention: C_CONVENTION,
};

/// The `preserve_most` probes (x86-64).
pub const PRESERVING: ProbeSet = ProbeSet {
    enter: "__instrument_enter_pm",
    exit: "__instrument_exit_pm",
    exit_if: "__instrument_exit_if_pm",
    loop_exit: "__instrument_loop_exit_pm",
    convention: PRESERVE_MOST,
};

/// Both sets.
pub const SETS: [ProbeSet; 2] = [C, PRESERVING];

/// `void __instrument_unwind(u32 *id_slot)`, in landing pads, with the C convention.
pub const UNWIND: &str = "__instrument_unwind";

/// `u32 __instrument_enter_measured(u32 *id_slot)`: the C set's entry for an event whose mode
/// byte the caller has just read as measured (the inline count's code reads it anyway,
/// `inline_count`), which skips the mode lookup. Same result as `C.enter`.
pub const ENTER_MEASURED: &str = "__instrument_enter_measured";

/// The set a module for `triple` uses: `PRESERVING` under early placement on x86-64.
pub fn set_for(triple: &str, early: bool) -> ProbeSet {
    if early && triple.starts_with("x86_64") {
        PRESERVING
    } else {
        C
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_early_placement_on_x86_64_preserves_registers() {
        assert_eq!(set_for("x86_64-pc-linux-gnu", true), PRESERVING);
        assert_eq!(set_for("x86_64-unknown-linux-gnu", false), C);
        assert_eq!(set_for("aarch64-unknown-linux-gnu", true), C);
        assert_eq!(set_for("", true), C);
    }

    #[test]
    fn the_sets_share_no_symbol() {
        let names = |s: ProbeSet| [s.enter, s.exit, s.exit_if, s.loop_exit];
        for name in names(C) {
            assert!(!names(PRESERVING).contains(&name), "{name}");
        }
    }
}
