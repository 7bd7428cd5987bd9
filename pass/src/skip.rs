//! The skip rules, as one early-return list (the shape of SanitizerCoverage's per-function
//! routine): a function is instrumented unless one of these says why not.

use crate::callgraph::CallGraph;
use crate::debug_info::SourceLocation;
use crate::{ir, options::Options, PROBED_ATTRIBUTE};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, FunctionValue};

/// The annotation users put on a function to keep it uninstrumented:
/// `__attribute__((annotate("no_instrument")))` (see `c-fixtures/include/instrument.h`).
pub const NO_INSTRUMENT_ANNOTATION: &str = "no_instrument";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Declaration,
    AlreadyProbed,
    RuntimeSymbol,
    Naked,
    AvailableExternally,
    UserMarked,
    Excluded,
    Deselected,
    TooSmall,
}

impl Reason {
    /// Whether a function skipped for this reason still gets the probes of its landings
    /// (`landings`): it is the program's code, only without events of its own (too small,
    /// deselected, excluded). Not code the user marked, the runtime's, or code already probed.
    pub fn keeps_landings(self) -> bool {
        matches!(self, Reason::TooSmall | Reason::Deselected | Reason::Excluded)
    }
}

/// rustc's allocator shims (`__rustc::__rust_alloc` and friends, legacy or v0 mangled): glue
/// generated into every Rust program, not the user's code.
fn is_rust_allocator_shim(name: &[u8]) -> bool {
    name.starts_with(b"__rustc::")
        || (name.starts_with(b"_R")
            && std::str::from_utf8(name)
                .is_ok_and(|n| instrument_select::names::readable(n).starts_with("__rustc::")))
}

pub fn reason(
    module: &Module<'_>,
    f: FunctionValue<'_>,
    at: &SourceLocation,
    options: &Options,
    graph: &CallGraph,
) -> Option<Reason> {
    let name = f.get_name().to_bytes();
    if f.count_basic_blocks() == 0 {
        return Some(Reason::Declaration);
    }
    if f.get_string_attribute(AttributeLoc::Function, PROBED_ATTRIBUTE).is_some() {
        return Some(Reason::AlreadyProbed);
    }
    if name.starts_with(b"__instrument_") || is_rust_allocator_shim(name) {
        return Some(Reason::RuntimeSymbol);
    }
    if has_enum_attribute(f, "naked") {
        return Some(Reason::Naked);
    }
    if f.get_linkage() == Linkage::AvailableExternally {
        return Some(Reason::AvailableExternally);
    }
    if has_enum_attribute(f, "disable_sanitizer_instrumentation")
        || ir::annotations_of(module, f).iter().any(|a| a == NO_INSTRUMENT_ANNOTATION)
    {
        return Some(Reason::UserMarked);
    }
    if options.clang_marks && f.get_string_attribute(AttributeLoc::Function, crate::CLANG_MARK).is_none() {
        return Some(Reason::UserMarked);
    }
    if options.exclude.iter().any(|e| e.as_bytes() == name) {
        return Some(Reason::Excluded);
    }
    if let Some(selection) = &options.selection {
        if !selection.includes(&String::from_utf8_lossy(name), &at.file) {
            return Some(Reason::Deselected);
        }
    }
    if too_small(f, options.min_instructions, graph) {
        return Some(Reason::TooSmall);
    }
    None
}

/// XRay's rule: a routine with fewer than `min` instructions, no loop and no recursion runs
/// its own code for a bounded, short time, to which even a counted probe would add a large
/// share. Left without events, it is to the profile what an inlined routine is: its time is
/// its caller's, including what it calls that has no events of its own (a library, the
/// system, MPI), and the routines it calls keep theirs. `main`, every profile's root, and
/// routines with loops or recursion, which may run for any time, are always kept.
fn too_small(f: FunctionValue<'_>, min: usize, graph: &CallGraph) -> bool {
    min > 0
        && f.get_name().to_bytes() != b"main"
        && instruction_count(f) < min
        && !graph.is_recursive(f.as_value_ref())
        && !crate::cfg::Cfg::new(f.as_value_ref()).has_cycle()
}

fn has_enum_attribute(f: FunctionValue<'_>, attribute: &str) -> bool {
    let kind = Attribute::get_named_enum_kind_id(attribute);
    kind != 0 && f.get_enum_attribute(AttributeLoc::Function, kind).is_some()
}

fn instruction_count(f: FunctionValue<'_>) -> usize {
    f.get_basic_block_iter().map(|bb| bb.get_instructions().count()).sum()
}
