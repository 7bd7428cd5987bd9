//! Zeroed memory straight from the kernel for the per-thread tables: mmap does not go through
//! malloc (which may itself be instrumented or interposed), and untouched pages cost nothing.

use std::ptr::NonNull;

/// Maps `bytes` of zeroed, lazily committed memory. Returns None when the kernel refuses.
pub fn map(bytes: usize) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous mapping at an address the kernel chooses replaces nothing.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        None
    } else {
        NonNull::new(ptr.cast())
    }
}

/// Maps `bytes` of zeroed memory with every page touched now (faulted in here, not later).
pub fn map_touched(bytes: usize) -> Option<NonNull<u8>> {
    let memory = map(bytes)?;
    for offset in (0..bytes).step_by(4096) {
        // SAFETY: within the mapping just made; writing zero keeps it zeroed.
        unsafe { std::ptr::write_volatile(memory.as_ptr().add(offset), 0) };
    }
    Some(memory)
}

/// Unmaps a mapping `map` made.
///
/// # Safety
/// `ptr` and `bytes` are a mapping from `map`, and nothing refers to it any more.
pub unsafe fn unmap(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: the caller's contract.
    unsafe { libc::munmap(ptr.as_ptr().cast(), bytes) };
}
