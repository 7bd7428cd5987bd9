//! Loop probes. Each execution of a loop is one event: an entry probe on every edge into the
//! header from outside the loop, an exit probe on every edge leaving the loop (inner loops closed
//! before outer ones when one edge leaves several). Iterations are counted in a local counter
//! (zeroed on entry, incremented in the header, promoted to a register by SROA when probes are
//! placed early) and handed to the exit probe, so counting costs no call and no shared memory.
//!
//! An iteration is an execution of the header that does not leave the loop right away: a `for`
//! loop whose body runs n times runs its header (the condition) n+1 times and leaves from it, a
//! `do`-`while` loop runs its header n times and leaves from the latch; both report n.

use crate::cfg::Cfg;
use crate::ir;
use crate::plan::PlannedLoop;
use crate::probes::{finish_call, Hooks};
use crate::split::split_edge;
use inkwell::builder::Builder;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMBasicBlockRef;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue, InstructionValue, PointerValue};
use std::collections::BTreeMap;

/// Probes on one edge: loops it leaves (innermost first) and the loop it enters.
#[derive(Default)]
struct EdgeProbes {
    exits: Vec<(usize, usize, bool)>, // (depth, planned loop, leaves from the loop's header)
    entry: Option<usize>,
}

/// The probes on one split edge, at the builder's position: the exits of the loops it leaves,
/// innermost first (each handing over its iterations), then the entry of the loop it enters.
fn emit_edge_probes<'ctx>(
    builder: &Builder<'ctx>,
    hooks: &Hooks<'ctx>,
    (counters, slots): (&[PointerValue<'ctx>], &[PointerValue<'ctx>]),
    mut probes: EdgeProbes,
) {
    let i64t = builder.get_insert_block().expect("positioned").get_context().i64_type();
    probes.exits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    probes.exits.dedup();
    for (_, i, from_header) in probes.exits {
        let mut n = builder.build_load(i64t, counters[i], "iterations").expect("positioned").into_int_value();
        if from_header {
            n = builder.build_int_sub(n, i64t.const_int(1, false), "iterations").expect("positioned");
        }
        finish_call(
            builder.build_call(hooks.loop_exit, &[slots[i].into(), n.into()], "").expect("positioned"),
        );
    }
    if let Some(i) = probes.entry {
        builder.build_store(counters[i], i64t.const_zero()).expect("positioned");
        finish_call(builder.build_call(hooks.enter, &[slots[i].into()], "").expect("positioned"));
    }
}

/// One more iteration of the loop whose header is `header`, counted in `counter`.
fn count_iteration<'ctx>(builder: &Builder<'ctx>, header: LLVMBasicBlockRef, counter: PointerValue<'ctx>) {
    position_after_phis(builder, header);
    let i64t = builder.get_insert_block().expect("positioned").get_context().i64_type();
    let n = builder.build_load(i64t, counter, "iteration").expect("positioned").into_int_value();
    let next = builder.build_int_add(n, i64t.const_int(1, false), "iteration.next").expect("positioned");
    builder.build_store(counter, next).expect("positioned");
}

/// Inserts the loop probes of `f`. Returns, for every landing inside a probed loop (a landing pad
/// or a setjmp call: `landings`), the id slot of the innermost such loop: an exception caught
/// there, or a longjmp come back there, leaves that loop running.
pub fn insert<'ctx>(
    module: &Module<'ctx>,
    hooks: &Hooks<'ctx>,
    f: FunctionValue<'ctx>,
    planned: &[PlannedLoop],
    slots: &[PointerValue<'ctx>],
) -> Vec<(LLVMBasicBlockRef, PointerValue<'ctx>)> {
    if planned.is_empty() {
        return Vec::new();
    }
    let ctx = module.get_context();
    let builder = ctx.create_builder();
    let cfg = Cfg::new(f.as_value_ref());
    let loops = cfg.loops();
    let counters = allocate_counters(&builder, f, planned.len());
    let depth = |i: usize| crate::cfg::nesting_depth(i, |l| planned[l].parent);
    let mut edges: BTreeMap<(usize, usize), EdgeProbes> = BTreeMap::new();
    let mut pads: BTreeMap<usize, usize> = BTreeMap::new(); // landing block -> innermost planned loop
    for (i, plan) in planned.iter().enumerate() {
        let Some(l) = loops.iter().find(|l| cfg.blocks[l.header] == plan.header) else { continue };
        for b in
            (0..cfg.blocks.len()).filter(|&b| l.contains(b) && crate::landings::is_landing(cfg.blocks[b]))
        {
            let innermost = pads.entry(b).or_insert(i);
            if depth(i) > depth(*innermost) {
                *innermost = i;
            }
        }
        for b in 0..cfg.blocks.len() {
            for s in cfg.successors(b) {
                if !l.contains(b) && s == l.header {
                    edges.entry((b, s)).or_default().entry = Some(i);
                } else if l.contains(b) && !l.contains(s) && !ir::is_eh_pad(cfg.blocks[s]) {
                    edges.entry((b, s)).or_default().exits.push((depth(i), i, b == l.header));
                }
            }
        }
    }
    for ((from, to), probes) in edges {
        if !ir::can_split_from(cfg.blocks[from]) {
            continue;
        }
        let Some(block) = split_edge(cfg.blocks[from], cfg.blocks[to]) else { continue };
        position_before_terminator(&builder, block);
        emit_edge_probes(&builder, hooks, (&counters, slots), probes);
    }
    for (i, plan) in planned.iter().enumerate() {
        count_iteration(&builder, plan.header, counters[i]);
    }
    pads.into_iter().map(|(b, i)| (cfg.blocks[b], slots[i])).collect()
}

fn allocate_counters<'ctx>(
    builder: &Builder<'ctx>,
    f: FunctionValue<'ctx>,
    n: usize,
) -> Vec<PointerValue<'ctx>> {
    let entry = f.get_first_basic_block().expect("defined function");
    match entry.get_first_instruction() {
        Some(first) => builder.position_before(&first),
        None => builder.position_at_end(entry),
    }
    let i64t = f.get_type().get_context().i64_type();
    (0..n).map(|_| builder.build_alloca(i64t, "loop.iterations").expect("positioned")).collect()
}

fn position_before_terminator(builder: &Builder<'_>, block: LLVMBasicBlockRef) {
    let terminator = unsafe { LLVMGetBasicBlockTerminator(block) };
    builder.position_before(&unsafe { InstructionValue::new(terminator) });
}

fn position_after_phis(builder: &Builder<'_>, block: LLVMBasicBlockRef) {
    unsafe {
        let mut inst = LLVMGetFirstInstruction(block);
        while LLVMGetInstructionOpcode(inst) == LLVMOpcode::LLVMPHI {
            inst = LLVMGetNextInstruction(inst);
        }
        builder.position_before(&InstructionValue::new(inst));
    }
}
