//! Code duplication (Arnold and Ryder, PLDI 2001): at late placement on x86-64, a routine
//! without loop or call-statement events keeps its own code, behind the inline count's checks
//! at its entry, and its probes go into a copy made before any probe goes in, which the entry
//! tail-calls whenever the call is not counted inline or switched off (`inline_count::dispatch`).
//! Counted and switched-off calls then run the routine's own code (its tail calls, its
//! registers) and not a probed body: what the probes change in the code (a lost tail call's
//! mispredicted return after a system call, about 6 ns) is in the probed calls alone, which the
//! in-place windows measure against inline counts; no window saw it while it was in both. Only
//! where the entry probe returns what it opened (a module probed in part by an older pass may
//! declare it without), and not with `INSTRUMENT_PROBED_COPIES=0` (the instrumented code is
//! about 1.4x larger with them: Lua's 389 KB against 272 KB, 235 KB plain).

use crate::inline_count::Globals;
use crate::plan::FunctionPlan;
use crate::probes::Hooks;
use crate::Options;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::values::{AsValueRef, FunctionValue};
use std::ffi::{c_char, CString};

/// The suffix of a probed copy's name (`<routine>.instrument.probed`, internal).
pub const SUFFIX: &str = ".instrument.probed";

/// Where `plan`'s routine gets a probed copy (its module's entries count inline, and see
/// `wanted`): the inline count's globals and the copy, made now, before any probe goes in.
pub fn for_routine<'ctx>(
    options: &Options,
    hooks: &Hooks<'ctx>,
    plan: &FunctionPlan<'ctx>,
) -> Option<(Globals<'ctx>, FunctionValue<'ctx>)> {
    let counting = hooks.inline_count?;
    if !wanted(options, hooks, plan) {
        return None;
    }
    Some((counting, make(plan.function)?))
}

/// Whether `plan`'s routine gets a probed copy, given the options and the probes of its module.
fn wanted(options: &Options, hooks: &Hooks<'_>, plan: &FunctionPlan<'_>) -> bool {
    options.probed_copies
        && plan.probe_routine
        && hooks.enter.get_type().get_return_type().is_some()
        && plan.loops.is_empty()
        && plan.sites.is_empty()
}

/// The copy of `f` for its probes, next to it in the module; `f` must not have been probed yet.
/// None where a tail call could not forward its arguments (see the shim).
fn make(f: FunctionValue<'_>) -> Option<FunctionValue<'_>> {
    let suffix = CString::new(SUFFIX).expect("no NUL");
    // SAFETY: `f` is a function definition of a live module; the shim clones it into that
    // module and returns the copy or null, reading the suffix only during the call.
    let copy = unsafe { instrument_probed_copy(f.as_value_ref(), suffix.as_ptr()) };
    // SAFETY: a non-null result is a function of `f`'s module, which outlives `'_`.
    (!copy.is_null()).then(|| unsafe { FunctionValue::new(copy) }).flatten()
}

extern "C" {
    /// The shim: LLVM's CloneFunction of `f`, renamed, internal, noinline, placed after `f`.
    fn instrument_probed_copy(f: LLVMValueRef, suffix: *const c_char) -> LLVMValueRef;
}
