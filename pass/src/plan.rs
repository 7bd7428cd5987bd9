//! What will be probed in one function, decided on the unmodified IR so that the module table can
//! be emitted before any probe is inserted: the routine itself, its natural loops (with nesting
//! and source lines) and its call statements (with their enclosing loop and callee).

use crate::callgraph::{calls_in, direct_callee, CallGraph};
use crate::cfg::{Cfg, Loop};
use crate::debug_info::{self, SourceLocation};
use crate::ir;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};
use inkwell::llvm_sys::{LLVMOpcode, LLVMTailCallKind};
use inkwell::values::{AsValueRef, FunctionValue};

pub struct FunctionPlan<'ctx> {
    pub function: FunctionValue<'ctx>,
    pub location: SourceLocation,
    pub probe_routine: bool,
    pub recursive: bool,
    /// Outer loops first; `parent` indexes this list.
    pub loops: Vec<PlannedLoop>,
    pub sites: Vec<PlannedSite>,
}

pub struct PlannedLoop {
    pub header: LLVMBasicBlockRef,
    pub parent: Option<usize>,
    pub location: SourceLocation,
}

pub struct PlannedSite {
    pub call: LLVMValueRef,
    /// The directly called function's symbol, or empty for an indirect call.
    pub callee: String,
    pub in_loop: Option<usize>,
    pub location: SourceLocation,
}

pub struct Wanted {
    pub routine: bool,
    pub loops: bool,
    pub callsites: bool,
}

pub fn function<'ctx>(
    f: FunctionValue<'ctx>,
    location: SourceLocation,
    wanted: Wanted,
    graph: &CallGraph,
) -> FunctionPlan<'ctx> {
    let cfg = Cfg::new(f.as_value_ref());
    let all_loops = if wanted.loops || wanted.callsites { cfg.loops() } else { Vec::new() };
    let kept: Vec<usize> = if wanted.loops { supported_loops(&cfg, &all_loops) } else { Vec::new() };
    let loops = kept
        .iter()
        .map(|&i| PlannedLoop {
            header: cfg.blocks[all_loops[i].header],
            parent: nearest_kept_ancestor(&all_loops, &kept, all_loops[i].parent),
            location: block_location(cfg.blocks[all_loops[i].header]).unwrap_or_else(|| location.clone()),
        })
        .collect();
    let sites =
        if wanted.callsites { plan_sites(f, &cfg, &all_loops, &kept, graph, &location) } else { Vec::new() };
    FunctionPlan {
        function: f,
        location,
        probe_routine: wanted.routine,
        recursive: graph.is_recursive(f.as_value_ref()),
        loops,
        sites,
    }
}

/// Loops whose every entry edge can carry a probe (not from indirectbr/callbr or EH terminators,
/// and not into an exception-handling pad).
fn supported_loops(cfg: &Cfg, loops: &[Loop]) -> Vec<usize> {
    (0..loops.len())
        .filter(|&i| {
            let l = &loops[i];
            !ir::is_eh_pad(cfg.blocks[l.header])
                && (0..cfg.blocks.len())
                    .filter(|&p| !l.contains(p) && cfg.successors(p).any(|s| s == l.header))
                    .all(|p| ir::can_split_from(cfg.blocks[p]))
        })
        .collect()
}

fn nearest_kept_ancestor(loops: &[Loop], kept: &[usize], mut parent: Option<usize>) -> Option<usize> {
    while let Some(p) = parent {
        if let Some(position) = kept.iter().position(|&k| k == p) {
            return Some(position);
        }
        parent = loops[p].parent;
    }
    None
}

fn block_location(block: LLVMBasicBlockRef) -> Option<SourceLocation> {
    unsafe {
        let mut inst = LLVMGetFirstInstruction(block);
        while !inst.is_null() {
            if let Some(location) = debug_info::instruction_location(inst) {
                return Some(location);
            }
            inst = LLVMGetNextInstruction(inst);
        }
    }
    None
}

fn plan_sites(
    f: FunctionValue<'_>,
    cfg: &Cfg,
    loops: &[Loop],
    kept: &[usize],
    graph: &CallGraph,
    fallback: &SourceLocation,
) -> Vec<PlannedSite> {
    calls_in(f.as_value_ref())
        .into_iter()
        .filter(|&call| is_call_statement(call) && !within_cycle(f, call, graph))
        .map(|call| {
            let block = cfg.index_of(unsafe { LLVMGetInstructionParent(call) });
            let innermost = block.and_then(|b| innermost_kept_loop(loops, kept, b));
            PlannedSite {
                call,
                callee: direct_callee(call).map(ir::value_name).unwrap_or_default(),
                in_loop: innermost,
                location: debug_info::instruction_location(call).unwrap_or_else(|| fallback.clone()),
            }
        })
        .collect()
}

/// Calls that are statements of the program: not intrinsics, inline assembly, the runtime's
/// probes, musttail calls (nothing may follow them) or returns_twice calls such as setjmp.
fn is_call_statement(call: LLVMValueRef) -> bool {
    unsafe {
        let called = LLVMGetCalledValue(call);
        if called.is_null() || !LLVMIsAInlineAsm(called).is_null() {
            return false;
        }
        if LLVMGetInstructionOpcode(call) == LLVMOpcode::LLVMCall
            && LLVMGetTailCallKind(call) == LLVMTailCallKind::LLVMTailCallKindMustTail
        {
            return false;
        }
        if let Some(callee) = direct_callee(call) {
            let name = ir::value_name(callee);
            if LLVMGetIntrinsicID(callee) != 0
                || name.starts_with("__instrument_")
                || ir::returns_twice(callee)
            {
                return false;
            }
        }
        !ir::call_returns_twice(call)
    }
}

fn within_cycle(f: FunctionValue<'_>, call: LLVMValueRef, graph: &CallGraph) -> bool {
    direct_callee(call).is_some_and(|callee| graph.within_cycle(f.as_value_ref(), callee))
}

fn innermost_kept_loop(loops: &[Loop], kept: &[usize], block: usize) -> Option<usize> {
    let depth = |i: usize| crate::cfg::nesting_depth(i, |l| loops[l].parent);
    kept.iter()
        .enumerate()
        .filter(|(_, &l)| loops[l].contains(block))
        .max_by_key(|(_, &l)| depth(l))
        .map(|(k, _)| k)
}
