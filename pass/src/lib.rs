//! The instrumentation pass, written once and reached through two front doors: the LLVM pass
//! plugin (`plugin`, loaded by clang/flang/lld/opt) and the bitcode rewriter (`rewrite`, used by
//! `instrument rewrite` and the tests). Both call [`instrument_module`].
//!
//! For every defined function that survives the skip rules (`skip`), the pass plans its events
//! on the unmodified IR (`plan`: the routine, its natural loops from `cfg`, its call statements
//! outside recursive cycles of `callgraph`), emits the module's program graph with a constructor
//! that registers it with the runtime (`table`), then inserts the probes: routine entry and exits
//! (`probes`, with the exits' guards left to the end of the pipeline under early placement:
//! `guards`), loops (`loops`, on edges split by `split`) and call statements (`callsites`), and
//! the probes of landing pads and setjmp calls (`landings`), in routines without events too.

mod callgraph;
mod callsites;
mod cfg;
mod debug_info;
mod demangle;
mod guards;
mod inline_count;
mod ir;
mod landings;
mod language;
mod loops;
mod options;
mod plan;
mod plugin;
mod probed_copy;
mod probes;
mod rewrite;
mod skip;
mod split;
mod table;

pub use guards::lower as lower_guards;
pub use options::{Events, Options, Placement};
pub use rewrite::{rewrite_file, OutputKind};

use inkwell::attributes::AttributeLoc;
use inkwell::module::Module;
use inkwell::values::{FunctionValue, PointerValue};

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
    pub loops: usize,
    pub callsites: usize,
    pub skipped: usize,
    /// Routines whose probes went into a copy (`probed_copy`).
    pub probed_copies: usize,
}

/// Instruments every eligible function of `module` (routine, loop and call-site events as the
/// options ask) and registers them in a module table. A module with nothing to probe is left
/// untouched.
pub fn instrument_module(module: &Module<'_>, options: &Options) -> Stats {
    instrument_module_with(module, options, Guards::Now)
}

/// Whether the exits' guards are built at once or left for `guards::lower` at the end of the
/// optimisation pipeline (early placement in the plugin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guards {
    Now,
    Deferred,
}

/// [`instrument_module`], with the exits' guards as `guards` says.
pub fn instrument_module_with(module: &Module<'_>, options: &Options, guards: Guards) -> Stats {
    let mut stats = Stats::default();
    let graph = callgraph::CallGraph::new(module);
    let mut plans = Vec::new();
    let mut eventless = Vec::new();
    for function in module.get_functions() {
        let location = debug_info::location_of(module, function);
        if let Some(reason) = skip::reason(module, function, &location, options, &graph) {
            stats.skipped += usize::from(function.count_basic_blocks() > 0);
            if reason.keeps_landings() && landings::has_landings(function) {
                eventless.push(function);
            }
            continue;
        }
        let name = function.get_name().to_string_lossy();
        let wanted = plan::Wanted {
            routine: options.events.functions,
            loops: options.events.loops
                || options.selection.as_ref().is_some_and(|s| s.wants_loops(&name, &location.file)),
            callsites: options.events.callsites,
        };
        plans.push(plan::function(function, location, wanted, &graph));
    }
    if options.clang_marks {
        strip_clang_marks(module);
    }
    if plans.is_empty() && eventless.is_empty() {
        return stats;
    }
    let slots =
        (!plans.is_empty()).then(|| table::emit(module, &plans, language::of_module(module), options));
    let triple = module.get_triple().as_str().to_string_lossy().into_owned();
    let set = instrument_contract::probes::set_for(&triple);
    let mut hooks = probes::Hooks::declare(module, set, guards == Guards::Deferred);
    for function in eventless {
        landings::insert(module, &hooks, function, None, &[]);
        mark_probed(function);
    }
    let Some(slots) = slots else { return stats };
    let inline =
        options.placement == Placement::Late && instrument_contract::inline_count::supported(&triple);
    hooks.inline_count =
        inline.then(|| inline_count::Globals::declare(module, hooks.enter, set.enter_measured));
    for (i, plan) in plans.iter().enumerate() {
        match probed_copy::for_routine(options, &hooks, plan) {
            Some((counting, copy)) => {
                probe_copy(module, &hooks, copy, slots.functions[i], &mut stats);
                counting.dispatch(plan.function, copy, slots.functions[i]);
                // Counted calls run the routine's own code: a longjmp or an exception may land
                // there too (its event has no frame then: the runtime closes the deeper ones).
                landings::insert(module, &hooks, plan.function, Some(slots.functions[i]), &[]);
            }
            None => probe_in_place(module, &hooks, plan, &slots, i, &mut stats),
        }
        mark_probed(plan.function);
    }
    stats
}

/// Probes `plan` (the `i`th) in its own function: the routine, its loops, its call statements.
fn probe_in_place<'ctx>(
    module: &Module<'ctx>,
    hooks: &probes::Hooks<'ctx>,
    plan: &plan::FunctionPlan<'ctx>,
    slots: &table::Slots<'ctx>,
    i: usize,
    stats: &mut Stats,
) {
    if plan.probe_routine {
        stats.exit_probes += probes::insert(module, hooks, plan.function, slots.functions[i]);
        stats.functions_probed += 1;
    }
    // Loops before call statements: a call statement's exit splits its block (see
    // `probes::exit_probe`), which would move a loop header's exiting branch out of the
    // header and miscount its iterations.
    let pads_in_loops = loops::insert(module, hooks, plan.function, &plan.loops, &slots.loops[i]);
    callsites::insert(module, hooks, &plan.sites, &slots.sites[i]);
    let routine = plan.probe_routine.then(|| slots.functions[i]);
    landings::insert(module, hooks, plan.function, routine, &pads_in_loops);
    stats.loops += plan.loops.len();
    stats.callsites += plan.sites.len();
}

/// Probes a routine's probed copy (`probed_copy`, a routine without loop or call-statement
/// events): its entry calls the probe, which its own entry's inline count has not done.
fn probe_copy<'ctx>(
    module: &Module<'ctx>,
    hooks: &probes::Hooks<'ctx>,
    copy: FunctionValue<'ctx>,
    site: PointerValue<'ctx>,
    stats: &mut Stats,
) {
    let plain = probes::Hooks { inline_count: None, ..*hooks };
    stats.exit_probes += probes::insert(module, &plain, copy, site);
    landings::insert(module, &plain, copy, Some(site), &[]);
    stats.functions_probed += 1;
    stats.probed_copies += 1;
    mark_probed(copy);
}

/// A probed function's attributes: its memory effects widened by the probes', and the mark that
/// keeps a later run of the pass off it.
fn mark_probed(function: FunctionValue<'_>) {
    probes::note_probed(function);
    let ctx = function.get_type().get_context();
    function.add_attribute(AttributeLoc::Function, ctx.create_string_attribute(PROBED_ATTRIBUTE, ""));
}

/// Removes the `-finstrument-functions-after-inlining` tags once read, so that LLVM's
/// EntryExitInstrumenter inserts no `__cyg_profile_func_*` calls of its own.
fn strip_clang_marks(module: &Module<'_>) {
    for function in module.get_functions() {
        for mark in [CLANG_MARK, CLANG_EXIT_MARK] {
            function.remove_string_attribute(AttributeLoc::Function, mark);
        }
    }
}
