//! Entry and exit probes. The entry probe goes after the entry block's allocas; an exit probe goes
//! before every `ret`, or before the `musttail` call that must stay immediately in front of its
//! `ret`, and before every `resume` (the routine is left by an exception or a panic that its
//! cleanup code passes on). Landing pads and setjmp calls get their probes in `landings`.
//! Blocks that end in `unreachable` (calls to noreturn functions) get none: the runtime closes
//! such frames at the next landing, the next exit of an enclosing frame or at process exit.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::llvm_sys::LLVMTailCallKind;
use inkwell::module::Module;
use inkwell::values::{
    AsValueRef, BasicMetadataValueEnum, BasicValueEnum, CallSiteValue, FunctionValue, InstructionOpcode,
    InstructionValue, PointerValue,
};
use inkwell::AddressSpace;
use instrument_contract::probes::{self, ProbeSet};

/// The runtime's probe entry points, of one set of `instrument_contract::probes`: `u32 enter(u32
/// *id_slot)` (non-zero when the exit has something to close: a routine's exits are branched
/// around when it is zero, so a counted or switched-off routine makes one probe call),
/// `void exit(u32 *id_slot, u32 opened)` (handed the entry's result), its deferred form
/// `exit_if(id_slot, opened)` (see `guards`),
/// `void loop_exit(u32 *id_slot, u64 iterations)` and `void __instrument_unwind(u32 *id_slot)`
/// (at a landing of the routine in `id_slot`, or of a routine without events: `landings`).
pub struct Hooks<'ctx> {
    pub enter: FunctionValue<'ctx>,
    pub exit: FunctionValue<'ctx>,
    /// Declared when the exits' guards are deferred: exits are then emitted as `exit_if` calls,
    /// lowered to guarded exits at the end of the pipeline (early placement).
    pub exit_if: Option<FunctionValue<'ctx>>,
    pub loop_exit: FunctionValue<'ctx>,
    pub unwind: FunctionValue<'ctx>,
    /// Set when routine entries count throttled calls inline (`inline_count`).
    pub inline_count: Option<crate::inline_count::Globals<'ctx>>,
}

impl<'ctx> Hooks<'ctx> {
    /// The probes of `set` (see `instrument_contract::probes`), with `exit_if` when the exits'
    /// guards are deferred.
    pub fn declare(module: &Module<'ctx>, set: ProbeSet, defer_guards: bool) -> Self {
        let cc = set.convention;
        Hooks {
            enter: declare(module, set.enter, Returns::Opened, cc),
            exit: declare(module, set.exit, Returns::NothingOpened, cc),
            exit_if: defer_guards.then(|| declare(module, set.exit_if, Returns::NothingOpened, cc)),
            loop_exit: declare(module, set.loop_exit, Returns::NothingWithCount, cc),
            unwind: declare(module, probes::UNWIND, Returns::Nothing, probes::C_CONVENTION),
            inline_count: None,
        }
    }
}

/// A probe's signature beyond its id slot.
enum Returns {
    /// `u32 (u32 *id_slot)`: whether the exit has anything to close.
    Opened,
    /// `void (u32 *id_slot)`.
    Nothing,
    /// `void (u32 *id_slot, u32 opened)`.
    NothingOpened,
    /// `void (u32 *id_slot, u64 iterations)`.
    NothingWithCount,
}

/// The probe `name`'s declaration: the module's own if it has one (an earlier run of the pass,
/// or a module linked by LTO), whose calling convention the calls then take (`finish_call`).
fn declare<'ctx>(module: &Module<'ctx>, name: &str, returns: Returns, cc: u32) -> FunctionValue<'ctx> {
    if let Some(existing) = module.get_function(name) {
        return existing;
    }
    let ctx = module.get_context();
    let ptr = ctx.ptr_type(AddressSpace::default()).into();
    let ty = match returns {
        Returns::Opened => ctx.i32_type().fn_type(&[ptr], false),
        Returns::Nothing => ctx.void_type().fn_type(&[ptr], false),
        Returns::NothingOpened => ctx.void_type().fn_type(&[ptr, ctx.i32_type().into()], false),
        Returns::NothingWithCount => ctx.void_type().fn_type(&[ptr, ctx.i64_type().into()], false),
    };
    let f = module.add_function(name, ty, None);
    f.set_call_conventions(cc);
    for attr in ["nounwind", "willreturn"] {
        let kind = Attribute::get_named_enum_kind_id(attr);
        f.add_attribute(AttributeLoc::Function, ctx.create_enum_attribute(kind, 0));
    }
    // A probe call costs the inliner nothing (InlineCost's `call-inline-cost`, read from the
    // callee when the call site has none), so that under early placement a routine is inlined
    // where the plain build inlines it, its probes coming along, instead of being kept out of
    // line because its probes made it look bigger.
    f.add_attribute(AttributeLoc::Function, ctx.create_string_attribute("call-inline-cost", "0"));
    // SAFETY: `f` is a function declaration of this module.
    unsafe { instrument_mark_probe(f.as_value_ref()) };
    f
}

/// Puts routine probes into `f`: each exit probe in a block of its own, entered only when the
/// entry probe returned non-zero. Returns the number of exit probes inserted.
pub fn insert<'ctx>(
    module: &Module<'ctx>,
    hooks: &Hooks<'ctx>,
    f: FunctionValue<'ctx>,
    site: PointerValue<'ctx>,
) -> usize {
    let ctx = module.get_context();
    let builder = ctx.create_builder();
    let entry = f.get_first_basic_block().expect("skip rules exclude declarations");
    match first_non_alloca(entry.get_first_instruction()) {
        Some(at) => builder.position_before(&at),
        None => builder.position_at_end(entry),
    }
    let mut opened = enter_probe(&builder, hooks, site);
    if let (Some(globals), Some(result)) = (hooks.inline_count, opened) {
        opened = Some(globals.wrap(result));
    }

    let exits: Vec<_> = f
        .get_basic_block_iter()
        .filter_map(|bb| bb.get_terminator())
        .filter(|t| matches!(t.get_opcode(), InstructionOpcode::Return | InstructionOpcode::Resume))
        .map(exit_point)
        .collect();
    for at in &exits {
        exit_probe(&builder, hooks, site, opened, *at);
    }
    exits.len()
}

/// An entry probe at the builder's position; its result, the `Opened` its exits branch on.
/// A module that an older version of the pass instrumented in part (linked by LTO) may declare
/// the entry probe without a result: its exits then run unconditionally.
pub fn enter_probe<'ctx>(
    builder: &Builder<'ctx>,
    hooks: &Hooks<'ctx>,
    site: PointerValue<'ctx>,
) -> Option<BasicValueEnum<'ctx>> {
    let enter = builder.build_call(hooks.enter, &[site.into()], "instrument.entry").expect("positioned");
    finish_call(enter);
    enter.try_as_basic_value().basic()
}

/// An exit probe before `at`, in a block of its own that runs only when the entry probe's
/// `opened` (which must dominate `at`) is non-zero; with deferred guards, an `exit_if` call
/// before `at` that `guards::lower` turns into that block at the end of the pipeline.
pub fn exit_probe<'ctx>(
    builder: &Builder<'ctx>,
    hooks: &Hooks<'ctx>,
    site: PointerValue<'ctx>,
    opened: Option<BasicValueEnum<'ctx>>,
    at: InstructionValue<'ctx>,
) {
    match (opened, hooks.exit_if) {
        (Some(opened), Some(exit_if)) => {
            builder.position_before(&at);
            let call = builder.build_call(exit_if, &[site.into(), opened.into()], "");
            finish_call(call.expect("builder is positioned"));
            return;
        }
        (Some(opened), None) => builder.position_before(&guard_before(at, opened)),
        (None, _) => builder.position_before(&at),
    }
    exit_call(builder, hooks.exit, site.into(), opened);
}

/// The exit call at the builder's position, handed the entry's result `opened` (or
/// `UNKNOWN_OPENED` without one). An exit declared by an older pass (a module linked by LTO)
/// takes the id slot alone.
pub fn exit_call<'ctx>(
    builder: &Builder<'ctx>,
    exit: FunctionValue<'ctx>,
    site: BasicValueEnum<'ctx>,
    opened: Option<BasicValueEnum<'ctx>>,
) -> CallSiteValue<'ctx> {
    let opened = opened.unwrap_or_else(|| {
        let i32_type = exit.get_type().get_context().i32_type();
        i32_type.const_int(u64::from(probes::UNKNOWN_OPENED), false).into()
    });
    let args: &[BasicMetadataValueEnum<'ctx>] = &[site.into(), opened.into()];
    let call = builder.build_call(exit, &args[..exit.count_params() as usize], "");
    let call = call.expect("builder is positioned");
    finish_call(call);
    call
}

/// Splits `at`'s block before it with a branch on `opened != 0` (which must dominate `at`) to a
/// new block; returns that block's terminator.
pub fn guard_before<'ctx>(
    at: InstructionValue<'ctx>,
    opened: BasicValueEnum<'ctx>,
) -> InstructionValue<'ctx> {
    // SAFETY: `at` is an instruction in a function and `opened` a value that dominates it (the
    // caller's contract); the shim returns the terminator of the block it made, a live
    // instruction.
    unsafe { InstructionValue::new(instrument_guard_before(at.as_value_ref(), opened.as_value_ref())) }
}

/// Makes the attributes of `f`, which now calls probes, say what they do (see the shim).
pub fn note_probed(f: FunctionValue<'_>) {
    // SAFETY: `f` is a function definition of the module being instrumented.
    unsafe { instrument_note_probed(f.as_value_ref()) }
}

extern "C" {
    /// The shim: `memory(argmem: read, inaccessiblemem: readwrite)` on a probe declaration.
    fn instrument_mark_probe(probe: LLVMValueRef);
    /// The shim: a probed function's memory effects widened by the probes', nosync and
    /// speculatable removed.
    fn instrument_note_probed(probed: LLVMValueRef);
    /// The shim's LLVM SplitBlockAndInsertIfThen on `opened != 0` before `at`: the terminator of
    /// the new block that runs only then.
    fn instrument_guard_before(at: LLVMValueRef, opened: LLVMValueRef) -> LLVMValueRef;
}

/// A probe call's call-site properties. It takes its callee's calling convention (a call whose
/// convention differs from its callee's is undefined, and LLVM deletes it as unreachable). It
/// must never become a tail call: the runtime identifies a routine's machine frame by the stack
/// pointer at its probe calls, which a tail call after the epilogue would change.
pub fn finish_call(call: CallSiteValue<'_>) {
    if let Some(callee) = call.get_called_fn_value() {
        call.set_call_convention(callee.get_call_conventions());
    }
    // SAFETY: `call` is a live call instruction.
    unsafe { LLVMSetTailCallKind(call.as_value_ref(), LLVMTailCallKind::LLVMTailCallKindNoTail) }
}

fn first_non_alloca(mut inst: Option<InstructionValue<'_>>) -> Option<InstructionValue<'_>> {
    while let Some(i) = inst {
        if i.get_opcode() != InstructionOpcode::Alloca {
            return Some(i);
        }
        inst = i.get_next_instruction();
    }
    None
}

/// Where the exit probe of the block ending in `ret` goes: before a `musttail` call (possibly
/// followed by a bitcast) that precedes the `ret`, otherwise before the `ret` itself.
fn exit_point(ret: InstructionValue<'_>) -> InstructionValue<'_> {
    let mut prev = ret.get_previous_instruction();
    while let Some(p) = prev {
        match p.get_opcode() {
            InstructionOpcode::BitCast => prev = p.get_previous_instruction(),
            InstructionOpcode::Call if is_musttail(p) => return p,
            _ => break,
        }
    }
    ret
}

fn is_musttail(call: InstructionValue<'_>) -> bool {
    unsafe { LLVMGetTailCallKind(call.as_value_ref()) == LLVMTailCallKind::LLVMTailCallKindMustTail }
}
