//! The module's static call graph (direct calls between defined functions) and its strongly
//! connected components. As in Li and Zhang's program graph, a call statement between two
//! routines of one recursive cycle gets no record of its own: its time already belongs to the
//! cycle's external call statements, and counting it again would count time twice.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::Module;
use inkwell::values::AsValueRef;
use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use std::collections::HashMap;

pub struct CallGraph {
    component: HashMap<LLVMValueRef, usize>,
    recursive: Vec<bool>,
}

impl CallGraph {
    pub fn new(module: &Module<'_>) -> CallGraph {
        let mut graph: DiGraphMap<usize, ()> = DiGraphMap::new();
        let functions: Vec<LLVMValueRef> = module.get_functions().map(|f| f.as_value_ref()).collect();
        let index: HashMap<LLVMValueRef, usize> =
            functions.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        for (caller, &f) in functions.iter().enumerate() {
            graph.add_node(caller);
            for call in calls_in(f) {
                if let Some(&callee) = direct_callee(call).and_then(|c| index.get(&c)) {
                    graph.add_edge(caller, callee, ());
                }
            }
        }
        let mut component = HashMap::new();
        let mut recursive = Vec::new();
        for (c, members) in tarjan_scc(&graph).into_iter().enumerate() {
            let cyclic = members.len() > 1 || graph.contains_edge(members[0], members[0]);
            recursive.push(cyclic);
            for m in members {
                component.insert(functions[m], c);
            }
        }
        CallGraph { component, recursive }
    }

    /// Whether `caller` calling `callee` stays inside one recursive cycle.
    pub fn within_cycle(&self, caller: LLVMValueRef, callee: LLVMValueRef) -> bool {
        match (self.component.get(&caller), self.component.get(&callee)) {
            (Some(a), Some(b)) => a == b && self.recursive[*a],
            _ => false,
        }
    }

    /// Whether `function` belongs to a recursive cycle (including calling itself).
    pub fn is_recursive(&self, function: LLVMValueRef) -> bool {
        self.component.get(&function).is_some_and(|&c| self.recursive[c])
    }
}

/// Every call and invoke instruction of `function`, in block order.
pub fn calls_in(function: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut calls = Vec::new();
    unsafe {
        let mut bb = LLVMGetFirstBasicBlock(function);
        while !bb.is_null() {
            let mut inst = LLVMGetFirstInstruction(bb);
            while !inst.is_null() {
                if !LLVMIsACallInst(inst).is_null() || !LLVMIsAInvokeInst(inst).is_null() {
                    calls.push(inst);
                }
                inst = LLVMGetNextInstruction(inst);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
    }
    calls
}

/// The function a call instruction calls directly, if any.
pub fn direct_callee(call: LLVMValueRef) -> Option<LLVMValueRef> {
    unsafe {
        let called = LLVMGetCalledValue(call);
        (!called.is_null() && !LLVMIsAFunction(called).is_null()).then_some(called)
    }
}
