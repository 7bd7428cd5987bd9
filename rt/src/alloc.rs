//! The runtime's allocator: the system's malloc, except in the process a fatal signal forks to
//! write the profile. That process is a copy of one taken at an arbitrary moment, possibly while
//! another thread held a malloc lock (threads starting or ending), which no thread would ever
//! release there; so it allocates from fresh mappings instead and never frees (it lives for one
//! write). Only the runtime's own Rust code uses this allocator: the sealed runtime keeps its
//! allocator symbols to itself.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

static BUMP: AtomicBool = AtomicBool::new(false);
/// The current mapping's next free byte and its end.
static NEXT: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);
const CHUNK: usize = 64 << 20;

/// From now on (in the single-threaded writer process) allocations come from fresh mappings.
pub fn use_fresh_mappings() {
    BUMP.store(true, Relaxed);
}

/// Whether this process allocates from fresh mappings (the signal writer): libc's own malloc
/// may be locked for good here, so nothing may call a libc function that allocates (opendir).
pub fn fresh_mappings() -> bool {
    BUMP.load(Relaxed)
}

pub struct RuntimeAlloc;

// SAFETY: the system allocator's contract is kept as it is; bump allocations are fresh,
// suitably aligned mappings that are never handed out twice.
unsafe impl GlobalAlloc for RuntimeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if BUMP.load(Relaxed) {
            bump(layout)
        } else {
            // SAFETY: the caller keeps GlobalAlloc::alloc's contract, which System's shares.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !BUMP.load(Relaxed) {
            // SAFETY: before BUMP every block came from System (BUMP is never cleared), with
            // this layout (the caller's contract).
            unsafe { System.dealloc(ptr, layout) };
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !BUMP.load(Relaxed) {
            // SAFETY: as in dealloc, `ptr` came from System with `layout`.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: GlobalAlloc::realloc's contract: `new_size` rounded up to `layout.align()`
        // does not overflow isize, and the alignment is a power of two.
        let new = bump(unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) });
        if !new.is_null() {
            // SAFETY: `ptr` holds `layout.size()` bytes and `new` at least `new_size`, in
            // different allocations (a bump block is fresh).
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
        }
        new
    }
}

/// `layout` from the current mapping, or from a new one. Single-threaded by construction.
fn bump(layout: Layout) -> *mut u8 {
    let align = layout.align().max(16);
    let start = (NEXT.load(Relaxed) + align - 1) & !(align - 1);
    if start != 0 && start + layout.size() <= END.load(Relaxed) {
        NEXT.store(start + layout.size(), Relaxed);
        return start as *mut u8;
    }
    let len = (layout.size() + align).max(CHUNK);
    let Some(memory) = crate::pages::map(len) else { return std::ptr::null_mut() };
    let base = memory.as_ptr() as usize;
    let start = (base + align - 1) & !(align - 1);
    NEXT.store(start + layout.size(), Relaxed);
    END.store(base + len, Relaxed);
    start as *mut u8
}
