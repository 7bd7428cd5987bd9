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
                && v.into_metadata_value().get_string_value().is_some_and(|s| String::from_utf8_lossy(s).contains(producer))
        })
    })
}
