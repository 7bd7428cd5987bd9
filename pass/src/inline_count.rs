//! The inline count (`instrument_contract::inline_count`): at late placement on x86-64, a
//! routine's entry counts its call itself when the runtime has throttled the routine, and calls
//! the entry probe otherwise. The runtime's tables it reads are external globals of the
//! executable; the block structure is built by the shim (`instrument_inline_count`).

use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicValueEnum, FunctionValue, GlobalValue};
use inkwell::{AddressSpace, ThreadLocalMode};
use instrument_contract::inline_count as abi;

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
        let thread = external(abi::THREAD, ctx.ptr_type(AddressSpace::default()).into());
        thread.set_thread_local_mode(Some(ThreadLocalMode::InitialExecTLSModel));
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
    /// the routine's exits branch on instead. With `clean` (the routine's clean clone), counted
    /// and switched-off entries tail-call it.
    pub fn wrap(
        &self,
        opened: BasicValueEnum<'ctx>,
        clean: Option<FunctionValue<'ctx>>,
    ) -> BasicValueEnum<'ctx> {
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
            u64::from(abi::OFF),
            abi::INLINE_END_AT,
        ];
        // SAFETY: `opened` is the result of a live call of the entry probe (its first argument
        // the id slot) in a function of the module these globals were declared in; the shim
        // reads `numbers` (eleven words, the order it names) only during the call, and returns a
        // phi node of that function; `clean`, when given, is a function of the same module with
        // the routine's type (`clean_clone::make`).
        unsafe {
            let phi = instrument_inline_count(
                opened.as_value_ref(),
                self.thread.as_value_ref(),
                self.modes.as_value_ref(),
                self.per_call.as_value_ref(),
                self.enter_measured.as_value_ref(),
                clean.map_or(std::ptr::null_mut(), |f| f.as_value_ref()),
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
        enter_measured: LLVMValueRef,
        clean: LLVMValueRef,
        abi: *const u64,
    ) -> LLVMValueRef;
}
