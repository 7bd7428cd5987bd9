//! Deferred exit guards. A routine's (or call statement's) exit runs only when its entry probe
//! opened something, which takes a branch around the exit call. Under early placement that
//! branch would be in the code the optimiser works on: at every return it splits the block,
//! which moves the `ret` away from the code that computes its value and changes what the SLP
//! vectoriser and the block-level passes see (NPB IS's `randlc` lost its vectorised form and ran
//! differently from the plain build). So early placement emits one `exit_if(id_slot, opened)`
//! call at each exit (`instrument_contract::probes::ProbeSet`), and this module turns each into
//! the branch and the exit call once the optimiser is done (the plugin's last extension points).
//! A call no pass lowers still works: the runtime implements `exit_if`.

use crate::callgraph::direct_callee;
use crate::probes::{exit_call, guard_before, Hooks};
use inkwell::llvm_sys::core::{LLVMGetFirstUse, LLVMInstructionEraseFromParent};
use inkwell::llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use inkwell::module::Module;
use inkwell::values::{AsValueRef, BasicValueEnum, InstructionOpcode, InstructionValue, Operand};
use instrument_contract::probes::{self, ProbeSet};

/// Lowers every deferred exit call of `module` (of either probe set) to a guarded exit call and
/// drops the deferred declarations. Returns the number lowered.
pub fn lower(module: &Module<'_>) -> usize {
    probes::SETS.into_iter().map(|set| lower_set(module, set)).sum()
}

fn lower_set(module: &Module<'_>, set: ProbeSet) -> usize {
    let Some(exit_if) = module.get_function(set.exit_if) else { return 0 };
    let calls: Vec<InstructionValue<'_>> = module
        .get_functions()
        .flat_map(|f| f.get_basic_block_iter())
        .flat_map(|block| block.get_instructions())
        .filter(|i| i.get_opcode() == InstructionOpcode::Call)
        .filter(|i| direct_callee(i.as_value_ref()) == Some(exit_if.as_value_ref()))
        .collect();
    let hooks = Hooks::declare(module, set, false);
    let builder = module.get_context().create_builder();
    for call in &calls {
        lower_one(&builder, &hooks, *call);
    }
    // SAFETY: `exit_if` is a live function of the module.
    if unsafe { LLVMGetFirstUse(exit_if.as_value_ref()) }.is_null() {
        // SAFETY: a declaration without uses.
        unsafe { exit_if.delete() };
    }
    calls.len()
}

/// `exit_if(site, opened)` becomes `if (opened) exit(site)`: nothing when `opened` is a known
/// zero, an unguarded exit when it is a known non-zero.
fn lower_one<'ctx>(
    builder: &inkwell::builder::Builder<'ctx>,
    hooks: &Hooks<'ctx>,
    call: InstructionValue<'ctx>,
) {
    let operand = |i| match call.get_operand(i) {
        Some(Operand::Value(value)) => value,
        _ => unreachable!("exit_if takes two values"),
    };
    let (site, opened): (BasicValueEnum<'ctx>, BasicValueEnum<'ctx>) = (operand(0), operand(1));
    let known = opened.into_int_value().get_zero_extended_constant();
    if known != Some(0) {
        let at = match known {
            Some(_) => call,
            None => guard_before(call, opened),
        };
        builder.position_before(&at);
        let exit = exit_call(builder, hooks.exit, site, Some(opened));
        // SAFETY: both are live instructions; the exit takes the deferred call's source location.
        unsafe {
            LLVMInstructionSetDebugLoc(exit.as_value_ref(), LLVMInstructionGetDebugLoc(call.as_value_ref()))
        };
    }
    // SAFETY: the deferred call has no uses (it returns void) and is replaced above.
    unsafe { LLVMInstructionEraseFromParent(call.as_value_ref()) };
}
