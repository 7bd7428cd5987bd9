//! LLVM's demangler, exported for the driver: reports load this plugin with dlopen and call
//! `instrument_demangle` for the names their own demanglers cannot read (C++20's constrained
//! templates, D), so the driver reads every name as LLVM's tools do without linking LLVM.

use std::ffi::c_char;

extern "C" {
    fn instrument_llvm_demangle(mangled: *const c_char, out: *mut c_char, size: usize) -> usize;
}

/// Writes the readable form of the NUL-terminated `mangled` into `out` (at most `size` bytes,
/// NUL-terminated) and returns its full length (a larger buffer is needed when it is not less
/// than `size`).
///
/// # Safety
/// `mangled` is a NUL-terminated string; `out` has room for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn instrument_demangle(mangled: *const c_char, out: *mut c_char, size: usize) -> usize {
    // SAFETY: the caller's contract is the shim's.
    unsafe { instrument_llvm_demangle(mangled, out, size) }
}
