//! The control-flow graph of one function and its natural loops: dominators (petgraph), back
//! edges (an edge whose target dominates its source), and the loop bodies they close, merged per
//! header and nested by containment.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};
use petgraph::algo::dominators::{simple_fast, Dominators};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

pub struct Cfg {
    pub blocks: Vec<LLVMBasicBlockRef>,
    index: HashMap<LLVMBasicBlockRef, usize>,
    graph: DiGraph<(), ()>,
}

/// A natural loop: its header, the blocks of its body, and the innermost loop containing it.
#[derive(Debug, Clone)]
pub struct Loop {
    pub header: usize,
    pub body: Vec<bool>,
    pub parent: Option<usize>,
}

impl Loop {
    pub fn contains(&self, block: usize) -> bool {
        self.body[block]
    }
}

impl Cfg {
    pub fn new(function: LLVMValueRef) -> Cfg {
        let mut blocks = Vec::new();
        unsafe {
            let mut bb = LLVMGetFirstBasicBlock(function);
            while !bb.is_null() {
                blocks.push(bb);
                bb = LLVMGetNextBasicBlock(bb);
            }
        }
        let index: HashMap<_, _> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut graph = DiGraph::with_capacity(blocks.len(), blocks.len() * 2);
        for _ in &blocks {
            graph.add_node(());
        }
        for (i, &bb) in blocks.iter().enumerate() {
            for succ in successors(bb) {
                graph.add_edge(NodeIndex::new(i), NodeIndex::new(index[&succ]), ());
            }
        }
        Cfg { blocks, index, graph }
    }

    /// Whether control can come back to a block: a loop, natural or not.
    pub fn has_cycle(&self) -> bool {
        petgraph::algo::is_cyclic_directed(&self.graph)
    }

    pub fn index_of(&self, block: LLVMBasicBlockRef) -> Option<usize> {
        self.index.get(&block).copied()
    }

    pub fn successors(&self, block: usize) -> impl Iterator<Item = usize> + '_ {
        self.graph.neighbors(NodeIndex::new(block)).map(|n| n.index())
    }

    fn predecessors(&self, block: usize) -> impl Iterator<Item = usize> + '_ {
        self.graph.neighbors_directed(NodeIndex::new(block), petgraph::Direction::Incoming).map(|n| n.index())
    }

    /// Natural loops, outer loops before the loops they contain.
    pub fn loops(&self) -> Vec<Loop> {
        if self.blocks.is_empty() {
            return Vec::new();
        }
        let dominators = simple_fast(&self.graph, NodeIndex::new(0));
        let mut by_header: HashMap<usize, Vec<bool>> = HashMap::new();
        for edge in self.graph.raw_edges() {
            let (latch, header) = (edge.source().index(), edge.target().index());
            if dominates(&dominators, header, latch) {
                let body = by_header.entry(header).or_insert_with(|| vec![false; self.blocks.len()]);
                self.collect_body(header, latch, body, &dominators);
            }
        }
        let mut loops: Vec<Loop> =
            by_header.into_iter().map(|(header, body)| Loop { header, body, parent: None }).collect();
        // Outer loops have larger bodies; ties cannot nest. Sort for a stable, outer-first order.
        loops.sort_by_key(|l| (std::cmp::Reverse(l.body.iter().filter(|&&b| b).count()), l.header));
        for i in 0..loops.len() {
            loops[i].parent = (0..i).rev().find(|&j| loops[j].contains(loops[i].header));
        }
        loops
    }

    /// Adds to `body` the reachable blocks that reach `latch` without passing through `header`.
    fn collect_body(
        &self,
        header: usize,
        latch: usize,
        body: &mut [bool],
        dominators: &Dominators<NodeIndex>,
    ) {
        body[header] = true;
        let mut work = vec![latch];
        while let Some(b) = work.pop() {
            let reachable = b == 0 || dominators.immediate_dominator(NodeIndex::new(b)).is_some();
            if !body[b] && reachable {
                body[b] = true;
                work.extend(self.predecessors(b));
            }
        }
    }
}

/// How many loops enclose loop `i`, given each loop's parent.
pub fn nesting_depth(mut i: usize, parent: impl Fn(usize) -> Option<usize>) -> usize {
    let mut depth = 0;
    while let Some(p) = parent(i) {
        depth += 1;
        i = p;
    }
    depth
}

fn dominates(dominators: &Dominators<NodeIndex>, a: usize, b: usize) -> bool {
    dominators.dominators(NodeIndex::new(b)).is_some_and(|mut chain| chain.any(|d| d.index() == a))
}

pub fn successors(block: LLVMBasicBlockRef) -> Vec<LLVMBasicBlockRef> {
    unsafe {
        let terminator = LLVMGetBasicBlockTerminator(block);
        if terminator.is_null() {
            return Vec::new();
        }
        (0..LLVMGetNumSuccessors(terminator)).map(|i| LLVMGetSuccessor(terminator, i)).collect()
    }
}
