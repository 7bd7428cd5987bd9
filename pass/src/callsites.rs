//! Call-statement probes: an entry probe before the call and an exit probe after it returns
//! normally (for an invoke, on its normal edge), run only when the entry opened a frame. A call
//! that does not return (followed by `unreachable`) or unwinds leaves its frame open; the
//! runtime closes it at the next exit of an enclosing frame, or at process exit.

use crate::plan::PlannedSite;
use crate::probes::{enter_probe, exit_probe, Hooks};
use crate::split::split_edge;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;
use inkwell::values::{InstructionValue, PointerValue};

pub fn insert<'ctx>(
    module: &Module<'ctx>,
    hooks: &Hooks<'ctx>,
    sites: &[PlannedSite],
    slots: &[PointerValue<'ctx>],
) {
    let builder = module.get_context().create_builder();
    for (site, slot) in sites.iter().zip(slots) {
        let call = unsafe { InstructionValue::new(site.call) };
        builder.position_before(&call);
        let opened = enter_probe(&builder, hooks, *slot);
        let after = unsafe {
            if LLVMGetInstructionOpcode(site.call) == LLVMOpcode::LLVMInvoke {
                let normal = split_edge(LLVMGetInstructionParent(site.call), LLVMGetNormalDest(site.call));
                normal.map(|block| LLVMGetFirstInstruction(block))
            } else {
                let next = LLVMGetNextInstruction(site.call);
                (LLVMGetInstructionOpcode(next) != LLVMOpcode::LLVMUnreachable).then_some(next)
            }
        };
        if let Some(next) = after {
            // SAFETY: `next` is a live instruction: the one after the call, or the first of the
            // block on its normal edge (both dominated by the entry probe before the call).
            exit_probe(&builder, hooks, *slot, opened, unsafe { InstructionValue::new(next) });
        }
    }
}
