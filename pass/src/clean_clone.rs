//! Code duplication (Arnold and Ryder, PLDI 2001): a routine whose entry counts inline also gets
//! a clean clone, made before any probe goes in, which the inline count tail-calls when the
//! runtime only counts the routine or has switched it off. Those calls then run the routine's
//! own code (its tail calls, its registers) instead of the probed body, whose changes no
//! run-time window can see (they are in the counted and the timed executions alike), so that
//! the windows that measure a timed call against inline counts see them too. Only routines
//! without loop or call-statement events get one: those events' probes are in the probed body.

use crate::PROBED_ATTRIBUTE;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::values::{AsValueRef, FunctionValue};
use std::ffi::{c_char, CString};

/// The suffix of a clean clone's name (`<routine>.instrument.clean`, internal).
pub const SUFFIX: &str = ".instrument.clean";

/// The clean clone of `f`, which must not have been probed yet; None where a tail call could not
/// forward its arguments (see the shim).
pub fn make(f: FunctionValue<'_>) -> Option<FunctionValue<'_>> {
    let suffix = CString::new(SUFFIX).expect("no NUL");
    let probed = CString::new(PROBED_ATTRIBUTE).expect("no NUL");
    // SAFETY: `f` is a function definition of a live module; the shim clones it into that
    // module and returns the clone or null, reading the two strings only during the call.
    let clone = unsafe { instrument_clean_clone(f.as_value_ref(), suffix.as_ptr(), probed.as_ptr()) };
    // SAFETY: a non-null result is a function of `f`'s module, which outlives `'_`.
    (!clone.is_null()).then(|| unsafe { FunctionValue::new(clone) }).flatten()
}

extern "C" {
    /// The shim: LLVM's CloneFunction of `f`, renamed, internal, noinline, marked probed.
    fn instrument_clean_clone(f: LLVMValueRef, suffix: *const c_char, probed: *const c_char) -> LLVMValueRef;
}
