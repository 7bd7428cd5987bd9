//! The inline count (`instrument_contract::inline_count`): at late placement on x86-64, a
//! routine's entry counts its call itself when the runtime has throttled the routine, and calls
//! the entry probe otherwise (or, where the routine has a probed copy, tail-calls the copy).
//! The runtime's tables it reads are external globals of the executable; the block structure
//! is built by the shim (`instrument_inline_count`, `instrument_dispatch`).

use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicValueEnum, FunctionValue, GlobalValue, PointerValue};
use inkwell::ThreadLocalMode;
use instrument_contract::inline_count as abi;

/// How the module's code reaches the thread-local block. Code bound for an executable (a
/// position-independent executable's module says `PIE Level`; a module without `PIC Level` is
/// not position independent at all) reaches it at a fixed offset from the thread pointer, the
/// runtime being linked into that executable: one load fewer on every probed call than through
/// the GOT, which GNU ld does not relax away because the runtime exports the block. Code that
/// may end up in a shared library keeps the initial-exec model.
fn tls_model(module: &Module<'_>) -> ThreadLocalMode {
    let executable = module.get_flag("PIE Level").is_some() || module.get_flag("PIC Level").is_none();
    if executable {
        ThreadLocalMode::LocalExecTLSModel
    } else {
        ThreadLocalMode::InitialExecTLSModel
    }
}

/// The runtime's globals the inline count reads, declared in one module.
#[derive(Clone, Copy)]
pub struct Globals<'ctx> {
    thread: GlobalValue<'ctx>,
    modes: GlobalValue<'ctx>,
    per_call: GlobalValue<'ctx>,
    /// The entry for a measured event (the probe set's `enter_measured`), declared as the entry
    /// probe.
    enter_measured: FunctionValue<'ctx>,
}

impl<'ctx> Globals<'ctx> {
    /// The declarations (the module's own when an earlier run of the pass made them).
    pub fn declare(module: &Module<'ctx>, enter: FunctionValue<'ctx>, enter_measured: &str) -> Self {
        let ctx = module.get_context();
        let external = |name: &str, ty: inkwell::types::BasicTypeEnum<'ctx>| {
            module.get_global(name).unwrap_or_else(|| {
                let global = module.add_global(ty, None, name);
                global.set_linkage(Linkage::External);
                global
            })
        };
        let thread = external(abi::THREAD, ctx.i64_type().array_type((abi::THREAD_BYTES / 8) as u32).into());
        thread.set_thread_local_mode(Some(tls_model(module)));
        let modes = external(abi::MODES, ctx.i8_type().into());
        let per_call = external(abi::PER_CALL, ctx.i64_type().into());
        let enter_measured = module.get_function(enter_measured).unwrap_or_else(|| {
            let declared = module.add_function(enter_measured, enter.get_type(), None);
            for attribute in enter.attributes(inkwell::attributes::AttributeLoc::Function) {
                declared.add_attribute(inkwell::attributes::AttributeLoc::Function, attribute);
            }
            declared.set_call_conventions(enter.get_call_conventions());
            declared
        });
        Globals { thread, modes, per_call, enter_measured }
    }

    /// Wraps the entry probe call `opened` (its result) in the inline count; returns the value
    /// the routine's exits branch on instead.
    pub fn wrap(&self, opened: BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx> {
        let numbers = Self::numbers();
        // SAFETY: `opened` is the result of a live call of the entry probe (its first argument
        // the id slot) in a function of the module these globals were declared in; the shim
        // reads `numbers` (fifteen words, the order it names) only during the call, and returns a
        // phi node of that function.
        unsafe {
            let phi = instrument_inline_count(
                opened.as_value_ref(),
                self.thread.as_value_ref(),
                self.modes.as_value_ref(),
                self.per_call.as_value_ref(),
                self.enter_measured.as_value_ref(),
                numbers.as_ptr(),
            );
            BasicValueEnum::new(phi)
        }
    }

    /// Puts the inline count at the entry of `routine`, which keeps its own code: counted and
    /// switched-off calls run on into it, every other call is a tail call of `probed`, its
    /// probed copy (`probed_copy`), whose entry probe has the id in `site`.
    pub fn dispatch(
        &self,
        routine: FunctionValue<'ctx>,
        probed: FunctionValue<'ctx>,
        site: PointerValue<'ctx>,
    ) {
        let numbers = Self::numbers();
        // SAFETY: `routine` is an unprobed function definition of the module these globals were
        // declared in, `probed` its copy there (the same type), `site` its id slot; the shim
        // reads `numbers` (fifteen words, the order it names) only during the call.
        unsafe {
            instrument_dispatch(
                routine.as_value_ref(),
                probed.as_value_ref(),
                site.as_value_ref(),
                self.thread.as_value_ref(),
                self.modes.as_value_ref(),
                self.per_call.as_value_ref(),
                numbers.as_ptr(),
            );
        }
    }

    /// The contract's numbers in the order the shim names them.
    fn numbers() -> [u64; 15] {
        [
            abi::RECORDS_AT,
            abi::PENDING_CALLS_AT,
            abi::PENDING_ESTIMATE_AT,
            u64::from(abi::RECORD_SHIFT),
            abi::COUNTED_AT,
            abi::UNTIMED_OWN_AT,
            u64::from(abi::MODE),
            u64::from(abi::OFF),
            abi::INLINE_END_AT,
            u64::from(abi::BARE),
            abi::WINDOW_LEFT_AT,
            abi::THREAD_CAP_AT,
            u64::from(abi::DOUBLE),
            u64::from(abi::DOUBLE_BIT),
            abi::SHADOW_SINK_AT,
        ]
    }
}

extern "C" {
    /// The shim: the inline count's blocks around the entry call; the phi of its result.
    fn instrument_inline_count(
        enter_call: LLVMValueRef,
        thread: LLVMValueRef,
        modes: LLVMValueRef,
        per_call: LLVMValueRef,
        enter_measured: LLVMValueRef,
        abi: *const u64,
    ) -> LLVMValueRef;
    /// The shim: the dispatch at a routine's entry to its own code or its probed copy.
    fn instrument_dispatch(
        routine: LLVMValueRef,
        probed: LLVMValueRef,
        slot: LLVMValueRef,
        thread: LLVMValueRef,
        modes: LLVMValueRef,
        per_call: LLVMValueRef,
        abi: *const u64,
    );
}
