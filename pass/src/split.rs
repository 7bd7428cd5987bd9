//! Edge splitting, done by LLVM's own SplitEdge through the shim (it keeps PHI nodes, critical
//! edges and duplicate switch edges right, which the C API cannot express).

use inkwell::llvm_sys::prelude::LLVMBasicBlockRef;

extern "C" {
    fn instrument_split_edge(from: LLVMBasicBlockRef, to: LLVMBasicBlockRef) -> LLVMBasicBlockRef;
}

/// The new block on the edge `from -> to`, executed exactly when the edge is taken; None when
/// the edge cannot be split (exception-handling edges, indirectbr, callbr).
pub fn split_edge(from: LLVMBasicBlockRef, to: LLVMBasicBlockRef) -> Option<LLVMBasicBlockRef> {
    let block = unsafe { instrument_split_edge(from, to) };
    (!block.is_null()).then_some(block)
}
