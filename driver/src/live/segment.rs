//! Attaching to a running instrumented program: its live segment is a memfd the program keeps
//! open, found among its file descriptors (`/proc/PID/fd`, which only the program's owner may
//! read) and mapped whole. Nothing in the program stops or notices.

use anyhow::{bail, Context, Result};
use instrument_live::{self as layout, Header, Slot};
use memmap2::{MmapOptions, MmapRaw};
use std::fs::File;
use std::path::{Path, PathBuf};

pub struct Segment {
    file: File,
    map: MmapRaw,
    pub pid: u32,
}

impl Segment {
    pub fn attach(pid: u32) -> Result<Segment> {
        let path = find(pid)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open the live segment of process {pid}"))?;
        let map = map(&file)?;
        let segment = Segment { file, map, pid };
        segment.check()?;
        Ok(segment)
    }

    fn check(&self) -> Result<()> {
        let h = self.header();
        if h.magic != layout::MAGIC {
            bail!("process {} is still starting (its live segment has no header yet); try again", self.pid);
        }
        let sizes = (h.record_bytes as u64, h.frame_bytes as u64, h.slot_bytes as u64);
        if h.version != layout::VERSION
            || sizes != (layout::RECORD_BYTES, layout::FRAME_BYTES, layout::SLOT_BYTES)
        {
            bail!(
                "process {} was built with another version of instrument (live segment version {}); \
                 use the instrument it was built with",
                self.pid,
                h.version
            );
        }
        Ok(())
    }

    /// Maps the segment again if it grew (threads started since the last look).
    pub fn refresh(&mut self) -> Result<()> {
        let len = self.file.metadata().context("cannot read the live segment's size")?.len();
        if len as usize != self.map.len() {
            self.map = map(&self.file)?;
        }
        Ok(())
    }

    pub fn header(&self) -> &Header {
        // SAFETY: the mapping is at least THREADS_OFFSET long (checked in `map`) and page
        // aligned; the header's fields the writer changes are atomics.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    /// Thread slot `index`; its fields are atomics the writer changes.
    pub fn slot(&self, index: u64) -> Option<&Slot> {
        let offset = layout::slot_offset(index);
        if index >= layout::MAX_SLOTS || offset + layout::SLOT_BYTES > self.map.len() as u64 {
            return None;
        }
        // SAFETY: in bounds and aligned (slots are 64 bytes from a page boundary).
        Some(unsafe { &*self.map.as_ptr().add(offset as usize).cast::<Slot>() })
    }

    /// A copy of the `T` at `offset`, or None past the end. The writer may be changing it: the
    /// copy is what was there at some moment, possibly torn between fields.
    pub fn read<T: Copy>(&self, offset: u64) -> Option<T> {
        let end = offset.checked_add(size_of::<T>() as u64)?;
        if end > self.map.len() as u64 {
            return None;
        }
        // SAFETY: in bounds; volatile because another process writes the memory.
        Some(unsafe { std::ptr::read_volatile(self.map.as_ptr().add(offset as usize).cast::<T>()) })
    }

    /// `len` bytes at `offset` (clamped to the mapping).
    pub fn bytes(&self, offset: u64, len: u64) -> Vec<u8> {
        let end = offset.saturating_add(len).min(self.map.len() as u64);
        if end <= offset {
            return Vec::new();
        }
        let mut bytes = vec![0u8; (end - offset) as usize];
        // SAFETY: in bounds; the source is another process's memory, copied as it is now.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.map.as_ptr().add(offset as usize),
                bytes.as_mut_ptr(),
                bytes.len(),
            )
        };
        bytes
    }

    /// Sets event `id`'s mode byte, which its probes read on their next call.
    pub fn set_mode(&self, id: u32, mode: u8) {
        if (id as u64) < layout::MAX_EVENTS {
            let at = (layout::MODES_OFFSET + id as u64) as usize;
            // SAFETY: inside the mode area, which the mapping always covers.
            unsafe { std::ptr::write_volatile(self.map.as_mut_ptr().add(at), mode) };
        }
    }
}

fn map(file: &File) -> Result<MmapRaw> {
    let len = file.metadata().context("cannot read the live segment's size")?.len();
    if len < layout::THREADS_OFFSET {
        bail!("the live segment is too short ({len} bytes): not an instrument segment");
    }
    MmapOptions::new().len(len as usize).map_raw(file).context("cannot map the live segment")
}

/// The `/proc/PID/fd` entry of the program's live segment.
fn find(pid: u32) -> Result<PathBuf> {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    if !proc.exists() {
        bail!("there is no process {pid}");
    }
    let fds = proc.join("fd");
    let entries = match std::fs::read_dir(&fds) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            bail!("cannot look into process {pid}: it belongs to another user")
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", fds.display())),
    };
    let wanted = format!("/memfd:{}", layout::MEMFD_NAME);
    for entry in entries.flatten() {
        if is_segment(&entry.path(), &wanted) {
            return Ok(entry.path());
        }
    }
    bail!(
        "process {pid} has no live segment: it is not an instrumented program, runs with \
         INSTRUMENT_LIVE=0, or closed its file descriptors"
    )
}

fn is_segment(fd: &Path, wanted: &str) -> bool {
    std::fs::read_link(fd).is_ok_and(|target| target.to_string_lossy().starts_with(wanted))
}
