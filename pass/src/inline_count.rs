//! The inline count (`instrument_contract::inline_count`): at late placement on x86-64, a
//! routine's entry counts its call itself when the runtime has throttled the routine, and calls
//! the entry probe otherwise. The runtime's tables it reads are external globals of the
//! executable; the block structure is built by the shim (`instrument_inline_count`).

use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicValueEnum, GlobalValue};
use inkwell::{AddressSpace, ThreadLocalMode};
use instrument_contract::inline_count as abi;

/// The runtime's globals the inline count reads, declared in one module.
#[derive(Clone, Copy)]
pub struct Globals<'ctx> {
    thread: GlobalValue<'ctx>,
    modes: GlobalValue<'ctx>,
    per_call: GlobalValue<'ctx>,
}

impl<'ctx> Globals<'ctx> {
    /// The declarations (the module's own when an earlier run of the pass made them).
    pub fn declare(module: &Module<'ctx>) -> Self {
        let ctx = module.get_context();
        let external = |name: &str, ty: inkwell::types::BasicTypeEnum<'ctx>| {
            module.get_global(name).unwrap_or_else(|| {
                let global = module.add_global(ty, None, name);
                global.set_linkage(Linkage::External);
                global
            })
        };
        let thread = external(abi::THREAD, ctx.ptr_type(AddressSpace::default()).into());
        thread.set_thread_local_mode(Some(ThreadLocalMode::InitialExecTLSModel));
        let modes = external(abi::MODES, ctx.i8_type().into());
        let per_call = external(abi::PER_CALL, ctx.i64_type().into());
        Globals { thread, modes, per_call }
    }

    /// Wraps the entry probe call `opened` (its result) in the inline count; returns the value
    /// the routine's exits branch on instead.
    pub fn wrap(&self, opened: BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx> {
        let numbers = [
            abi::RECORDS_AT,
            abi::RECORD_CAP_AT,
            abi::PENDING_CALLS_AT,
            abi::PENDING_ESTIMATE_AT,
            u64::from(abi::RECORD_SHIFT),
            abi::COUNTED_AT,
            abi::UNTIMED_OWN_AT,
            abi::TABLE_LEN,
            u64::from(abi::MODE),
        ];
        // SAFETY: `opened` is the result of a live call of the entry probe (its first argument
        // the id slot) in a function of the module these globals were declared in; the shim
        // reads `numbers` (nine words, the order it names) only during the call, and returns a
        // phi node of that function.
        unsafe {
            let phi = instrument_inline_count(
                opened.as_value_ref(),
                self.thread.as_value_ref(),
                self.modes.as_value_ref(),
                self.per_call.as_value_ref(),
                numbers.as_ptr(),
            );
            BasicValueEnum::new(phi)
        }
    }
}

extern "C" {
    /// The shim: the inline count's blocks around the entry call; the phi of its result.
    fn instrument_inline_count(
        enter_call: LLVMValueRef,
        thread: LLVMValueRef,
        modes: LLVMValueRef,
        per_call: LLVMValueRef,
        abi: *const u64,
    ) -> LLVMValueRef;
}
