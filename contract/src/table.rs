//! The module-table ABI: each instrumented module's constructor hands the runtime
//!
//! ```text
//! struct ModuleTable { u32 version, functions, loops, sites; u32 *ids;
//!                      FunctionEntry *functions; LoopEntry *loops; SiteEntry *sites; const char *module; }
//! struct FunctionEntry { const char *name, *file; u32 line, flags; }
//! struct LoopEntry { const char *file; u32 line, function, parent, reserved; }
//! struct SiteEntry { const char *callee, *file; u32 line, function, loop, reserved; }
//! ```
//!
//! (written by pass/src/table.rs, read by rt/src/registry.rs).

/// `ModuleTable::version`: bumped on any change of the layout above, and of what instrumented
/// code reads of the runtime (`inline_count`): a runtime registers only its own version's
/// modules, whose id slots then stay unregistered, which the inline count never counts (3: the
/// thread-local block's record capacity; 4: the modes `DETOUR` and `DOUBLE`).
pub const ABI_VERSION: u32 = 4;
/// An id slot's value before its module is registered; probes seeing it count the event as
/// unregistered.
pub const UNREGISTERED: u32 = u32::MAX;
/// "None" in an entry's index fields (a loop without a parent, a site outside every loop).
pub const NONE: u32 = u32::MAX;

/// `FunctionEntry::flags`: local to its module (`static` in C).
pub const FLAG_LOCAL: u32 = 1;
/// `FunctionEntry::flags`: compiled by flang (external procedures are named `name_`); kept
/// beside the language bits for readers older than them.
pub const FLAG_FORTRAN: u32 = 2;
/// `FunctionEntry::flags`: part of a recursive cycle of the module's static call graph.
pub const FLAG_RECURSIVE: u32 = 4;
/// `FunctionEntry::flags`: the routine itself carries entry and exit probes.
pub const FLAG_PROBED: u32 = 8;
/// `FunctionEntry::flags`: the module was instrumented after optimisation (late placement), so
/// routines the optimiser inlined have no events of their own.
pub const FLAG_LATE: u32 = 16;
/// `FunctionEntry::flags` bits 16 to 31: the module's small-routine threshold
/// (`INSTRUMENT_MIN_INSTRUCTIONS` as the pass applied it, at most `SMALL_MASK`): its routines
/// with fewer instructions, no loop and no recursion have no events (0: every routine has them, as in
/// tables of passes older than the field).
pub const SMALL_SHIFT: u32 = 16;
/// The threshold's bits, once shifted down.
pub const SMALL_MASK: u32 = 0xFFFF;
/// `FunctionEntry::flags` bits 8 to 11: the source language's code (`Language`).
pub const LANGUAGE_SHIFT: u32 = 8;
/// The language bits, once shifted down.
pub const LANGUAGE_MASK: u32 = 0xF;
