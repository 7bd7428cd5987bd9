//! The instrumentation pass, written once and reached through two front doors: the LLVM pass
//! plugin (`plugin`, loaded by clang/flang/lld/opt) and the bitcode rewriter (`rewrite`, used by
//! `instrument rewrite` and the tests). Both call [`instrument_module`].
//!
//! For every defined function that survives the skip rules (`skip`), the pass inserts an entry
//! probe and an exit probe on every return path (`probes`), then emits a per-module table of the
//! probed functions with a constructor that registers it with the runtime (`table`).

mod debug_info;
mod ir;
mod options;
mod plugin;
mod probes;
mod rewrite;
mod skip;
mod table;

pub use options::{Options, Placement};
pub use rewrite::{rewrite_file, OutputKind};

use inkwell::module::Module;

/// The string attribute that marks a function as already probed, so that running the pass twice
/// (compile step, then LTO) never instruments twice.
pub const PROBED_ATTRIBUTE: &str = "instrument-probed";

/// The attribute clang puts on every function not marked `no_instrument_function` when given
/// `-finstrument-functions-after-inlining`; the wrapper uses it to learn the user's marks.
pub const CLANG_MARK: &str = "instrument-function-entry-inlined";
const CLANG_EXIT_MARK: &str = "instrument-function-exit-inlined";

/// What one run of the pass did to a module.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    pub functions_probed: usize,
    pub exit_probes: usize,
    pub skipped: usize,
}

/// Instruments every eligible function of `module` and registers them in a module table.
/// Returns what was done; a module with nothing to probe is left untouched.
pub fn instrument_module(module: &Module<'_>, options: &Options) -> Stats {
    let mut stats = Stats::default();
    let mut chosen = Vec::new();
    for function in module.get_functions() {
        match skip::reason(module, function, options) {
            Some(_) => stats.skipped += usize::from(function.count_basic_blocks() > 0),
            None => chosen.push(function),
        }
    }
    if options.clang_marks {
        strip_clang_marks(module);
    }
    if chosen.is_empty() {
        return stats;
    }
    let table = table::emit(module, &chosen);
    let hooks = probes::Hooks::declare(module);
    for (index, function) in chosen.iter().enumerate() {
        let site = table.id_slot(module, index);
        stats.exit_probes += probes::insert(module, &hooks, *function, site);
        stats.functions_probed += 1;
    }
    stats
}

/// Removes the `-finstrument-functions-after-inlining` tags once read, so that LLVM's
/// EntryExitInstrumenter inserts no `__cyg_profile_func_*` calls of its own.
fn strip_clang_marks(module: &Module<'_>) {
    use inkwell::attributes::AttributeLoc;
    for function in module.get_functions() {
        for mark in [CLANG_MARK, CLANG_EXIT_MARK] {
            function.remove_string_attribute(AttributeLoc::Function, mark);
        }
    }
}
