//! The time a thread spent runnable but waiting for a core: the kernel's run delay
//! (`/proc/<pid>/task/<tid>/schedstat`, its second field, in ns).
//!
//! The clock measures wall time, so a thread preempted by another program inside an event has
//! that wait in the event's time, and in compensated and estimated times too: it is not probe
//! cost and nothing removes it. On a shared machine it can be a large part of a short run (a
//! 20 ms run beside one busy loop waited a third of it), and a profile that does not say so
//! reads as exact. So each thread's wait is taken at its start and when it ends (or when the
//! profile is written while it runs) and the profile holds the sum (`Totals::waited_ns`). All of
//! it is cold: a file read when a thread starts and ends, none on the hot path.
//!
//! The file needs a kernel with scheduler statistics (`CONFIG_SCHED_INFO`, the default in
//! distribution kernels); without it every wait reads as nothing.

use std::io::Write;

/// The run delay of thread `tid` of process `pid` so far (ns), or None where the kernel does not
/// say. Reads into a stack buffer through system calls: it runs at thread exit, inside TLS
/// destructors, where the allocator may already be torn down.
pub fn run_delay_ns(pid: i32, tid: i32) -> Option<u64> {
    let mut path = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut path[..]);
    write!(cursor, "/proc/{pid}/task/{tid}/schedstat\0").ok()?;
    let mut text = [0u8; 128];
    // SAFETY: `path` is NUL-terminated (written above, within its 64 bytes: two i32 and the
    // fixed text take at most 45); `text` is a live buffer of the length given to read.
    let read = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let read = libc::read(fd, text.as_mut_ptr().cast(), text.len());
        libc::close(fd);
        read
    };
    parse(text.get(..usize::try_from(read).ok()?)?)
}

/// The calling thread's pid and tid, as `run_delay_ns` takes them.
pub fn own_ids() -> (i32, i32) {
    // SAFETY: plain system calls without arguments.
    unsafe { (libc::getpid(), libc::gettid()) }
}

/// The second of schedstat's three numbers: time on the run queue.
fn parse(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The wait of thread `tid` of `pid` since it read `start`.
pub fn since(pid: i32, tid: i32, start: u64) -> u64 {
    run_delay_ns(pid, tid).map_or(0, |now| now.saturating_sub(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_the_run_queue_time() {
        assert_eq!(parse(b"330465917 284403 25\n"), Some(284403));
        assert_eq!(parse(b"330465917\n"), None);
        assert_eq!(parse(b""), None);
    }

    #[test]
    fn the_calling_threads_wait_reads_and_does_not_go_back() {
        let (pid, tid) = own_ids();
        let Some(first) = run_delay_ns(pid, tid) else {
            return; // a kernel without scheduler statistics: nothing to read
        };
        std::thread::yield_now();
        assert!(run_delay_ns(pid, tid).unwrap() >= first);
        assert_eq!(run_delay_ns(pid, -1), None, "no such thread");
    }
}
