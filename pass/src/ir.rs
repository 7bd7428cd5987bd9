//! Small IR queries that inkwell does not offer, written against the LLVM C API.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue};

/// The strings attached to `f` with `__attribute__((annotate("...")))`, read from
/// `llvm.global.annotations` (an array of `{ ptr function, ptr string, ptr file, i32 line, ptr }`).
pub fn annotations_of(module: &Module<'_>, f: FunctionValue<'_>) -> Vec<String> {
    let Some(global) = module.get_global("llvm.global.annotations") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    unsafe {
        let array = LLVMGetInitializer(global.as_value_ref());
        if array.is_null() {
            return found;
        }
        for i in 0..LLVMGetNumOperands(array).max(0) as u32 {
            let entry = LLVMGetOperand(array, i);
            if LLVMGetNumOperands(entry) < 2 {
                continue;
            }
            if strip_casts(LLVMGetOperand(entry, 0)) != f.as_value_ref() {
                continue;
            }
            if let Some(text) = global_string(strip_casts(LLVMGetOperand(entry, 1))) {
                found.push(text);
            }
        }
    }
    found
}

unsafe fn strip_casts(mut value: LLVMValueRef) -> LLVMValueRef {
    while !value.is_null() && !LLVMIsAConstantExpr(value).is_null() && LLVMGetNumOperands(value) > 0 {
        value = LLVMGetOperand(value, 0);
    }
    value
}

unsafe fn global_string(global: LLVMValueRef) -> Option<String> {
    if global.is_null() || LLVMIsAGlobalVariable(global).is_null() {
        return None;
    }
    let init = LLVMGetInitializer(global);
    if init.is_null() || LLVMIsConstantString(init) == 0 {
        return None;
    }
    let mut len = 0usize;
    let ptr = LLVMGetAsString(init, &mut len);
    let bytes = std::slice::from_raw_parts(ptr as *const u8, len);
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// Whether the module's `llvm.ident` names `producer` (e.g. "flang").
pub fn produced_by(module: &Module<'_>, producer: &str) -> bool {
    module.get_global_metadata("llvm.ident").iter().any(|node| {
        node.get_node_values().into_iter().flatten().any(|v| {
            v.is_metadata_value()
                && v.into_metadata_value()
                    .get_string_value()
                    .is_some_and(|s| String::from_utf8_lossy(s).contains(producer))
        })
    })
}

/// The name of a global value.
pub fn value_name(value: LLVMValueRef) -> String {
    unsafe {
        let mut len = 0usize;
        let ptr = LLVMGetValueName2(value, &mut len);
        if ptr.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(ptr.cast(), len)).into_owned()
    }
}

/// Whether a block begins with an exception-handling pad (landingpad, catchpad, cleanuppad,
/// catchswitch): such blocks cannot receive a split edge.
pub fn is_eh_pad(block: inkwell::llvm_sys::prelude::LLVMBasicBlockRef) -> bool {
    use inkwell::llvm_sys::LLVMOpcode::*;
    unsafe {
        let mut inst = LLVMGetFirstInstruction(block);
        while !inst.is_null() && LLVMGetInstructionOpcode(inst) == LLVMPHI {
            inst = LLVMGetNextInstruction(inst);
        }
        !inst.is_null()
            && matches!(
                LLVMGetInstructionOpcode(inst),
                LLVMLandingPad | LLVMCatchPad | LLVMCleanupPad | LLVMCatchSwitch
            )
    }
}

/// Whether edges leaving `block` can be split (its terminator is an ordinary branch, switch or
/// invoke, not indirectbr, callbr or an exception-handling terminator).
pub fn can_split_from(block: inkwell::llvm_sys::prelude::LLVMBasicBlockRef) -> bool {
    use inkwell::llvm_sys::LLVMOpcode::*;
    unsafe {
        let terminator = LLVMGetBasicBlockTerminator(block);
        !terminator.is_null()
            && matches!(LLVMGetInstructionOpcode(terminator), LLVMBr | LLVMSwitch | LLVMInvoke)
    }
}

fn has_enum_attribute_at(value: LLVMValueRef, name: &str, call: bool) -> bool {
    let kind = unsafe { LLVMGetEnumAttributeKindForName(name.as_ptr().cast(), name.len()) };
    if kind == 0 {
        return false;
    }
    let index = inkwell::llvm_sys::LLVMAttributeFunctionIndex;
    unsafe {
        if call {
            !LLVMGetCallSiteEnumAttribute(value, index, kind).is_null()
        } else {
            !LLVMGetEnumAttributeAtIndex(value, index, kind).is_null()
        }
    }
}

/// Whether a function is `returns_twice` (setjmp and friends).
pub fn returns_twice(function: LLVMValueRef) -> bool {
    has_enum_attribute_at(function, "returns_twice", false)
}

/// Whether a call site is marked `returns_twice`.
pub fn call_returns_twice(call: LLVMValueRef) -> bool {
    has_enum_attribute_at(call, "returns_twice", true)
}
