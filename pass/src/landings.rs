//! Landings: where control arrives from frames it skipped, so that the runtime closes their
//! shadow frames there (`__instrument_unwind`, rt/src/reconcile.rs). A landing pad is reached by
//! an exception or a panic the unwinder carried past exit probes; a call of setjmp returns a
//! second time, non-zero, when a longjmp comes back past the exit probes of every frame between.
//! Each landing's probe names the innermost event still running there (the planned loop that
//! holds it, else the routine) or, in a routine without events, none (a null slot): the runtime
//! then closes the frames deeper in the machine stack than the landing.
//!
//! Without these, a thrower's frame stayed open until the next exit of a frame below it: never
//! soon when the catcher is throttled (counted, no frame) or has no events (Lua's
//! `luaD_rawrunprotected`, a few instructions around its setjmp; a small C++ routine around its
//! try). Lua's `luaD_throw`, 2400 calls a run, then held 806 ms of an 857 ms run. A routine
//! without events gets its landings' probes too (routines too small for events, deselected or
//! excluded: not those the user marked, which the pass never touches); they run only after a
//! longjmp or in an exception's way.

use crate::callgraph::direct_callee;
use crate::ir;
use crate::probes::{finish_call, guard_before, Hooks};
use inkwell::basic_block::BasicBlock;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};
use inkwell::module::Module;
use inkwell::values::{BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue, PointerValue};
use inkwell::AddressSpace;

/// Whether `block` holds a landing: it is an exception-handling pad or calls setjmp.
pub fn is_landing(block: LLVMBasicBlockRef) -> bool {
    ir::is_eh_pad(block) || !setjmp_calls(block).is_empty()
}

/// Whether `f` has a landing anywhere (a routine without events then gets its landings' probes).
pub fn has_landings(f: FunctionValue<'_>) -> bool {
    f.get_basic_block_iter().any(|b| is_landing(b.as_mut_ptr()))
}

/// The calls of setjmp and its variants in `block` (`_setjmp`, `__sigsetjmp`...): `returns_twice`
/// callees named for it, whose integer result is zero on their first return only. Other
/// `returns_twice` functions (vfork, getcontext) return otherwise and are left alone, and so is
/// `__builtin_setjmp`'s intrinsic, whose second return the back end lays out itself.
fn setjmp_calls(block: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    let mut calls = Vec::new();
    // SAFETY: `block` is a live block; its instructions are read only.
    unsafe {
        let mut inst = LLVMGetFirstInstruction(block);
        while !inst.is_null() {
            if is_setjmp_call(inst) {
                calls.push(inst);
            }
            inst = LLVMGetNextInstruction(inst);
        }
    }
    calls
}

fn is_setjmp_call(inst: LLVMValueRef) -> bool {
    // SAFETY: `inst` is a live instruction; it is read only.
    unsafe {
        if LLVMIsACallInst(inst).is_null() {
            return false;
        }
        let Some(callee) = direct_callee(inst) else { return false };
        let integer =
            LLVMGetTypeKind(LLVMTypeOf(inst)) == inkwell::llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind;
        integer
            && LLVMGetIntrinsicID(callee) == 0
            && (ir::returns_twice(callee) || ir::call_returns_twice(inst))
            && ir::value_name(callee).ends_with("setjmp")
    }
}

/// Puts a landing probe at every landing of `f`: after every `landingpad`, and after every
/// setjmp call on its non-zero return. It names the planned loop from `in_loops` that holds the
/// landing's block, or else the routine (`routine`, None when the routine itself has no event:
/// the slot is then null, and the runtime closes the frames deeper than the landing).
pub fn insert<'ctx>(
    module: &Module<'ctx>,
    hooks: &Hooks<'ctx>,
    f: FunctionValue<'ctx>,
    routine: Option<PointerValue<'ctx>>,
    in_loops: &[(LLVMBasicBlockRef, PointerValue<'ctx>)],
) {
    let builder = module.get_context().create_builder();
    let null = module.get_context().ptr_type(AddressSpace::default()).const_null();
    let blocks: Vec<BasicBlock<'ctx>> = f.get_basic_block_iter().collect();
    for block in blocks {
        let in_loop = in_loops.iter().find(|(b, _)| *b == block.as_mut_ptr()).map(|(_, slot)| *slot);
        let slot = in_loop.or(routine).unwrap_or(null);
        if let Some(pad) = landing_pad(block) {
            match pad.get_next_instruction() {
                Some(next) => builder.position_before(&next),
                None => builder.position_at_end(block),
            }
            finish_call(builder.build_call(hooks.unwind, &[slot.into()], "").expect("builder is positioned"));
        }
        for call in setjmp_calls(block.as_mut_ptr()) {
            // SAFETY: `call` is a live call of `block` with an integer result (`setjmp_calls`),
            // and a call is never a block's last instruction, so the one after it is live.
            let (result, next) =
                unsafe { (BasicValueEnum::new(call), InstructionValue::new(LLVMGetNextInstruction(call))) };
            let then = guard_before(next, result);
            builder.position_before(&then);
            finish_call(builder.build_call(hooks.unwind, &[slot.into()], "").expect("builder is positioned"));
        }
    }
}

/// The block's `landingpad` instruction (the first after its phis), if it is a landing pad.
fn landing_pad(block: BasicBlock<'_>) -> Option<InstructionValue<'_>> {
    let mut inst = block.get_first_instruction();
    while let Some(i) = inst.filter(|i| i.get_opcode() == InstructionOpcode::Phi) {
        inst = i.get_next_instruction();
    }
    inst.filter(|i| i.get_opcode() == InstructionOpcode::LandingPad)
}
