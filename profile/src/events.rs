//! The measured events: routines, loops and call statements. Each carries the same statistics
//! block (`Stats`), written inline next to what identifies the event, as per-thread and callpath
//! records carry it; the three differ only in where the event sits in the program.

use crate::kinds::language;
use instrument_contract::Language;
use serde::{Deserialize, Serialize};

/// What was measured for one event (merged over threads, or on one thread, or for one
/// callpath). Written inline, next to the event's id or the path.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Calls (routines, call statements) or executions (loops). Versions before 3 named a
    /// loop's and a call statement's `count`.
    #[serde(alias = "count")]
    pub calls: u64,
    /// Calls counted without timing (included in `calls`; the times cover only the others):
    /// after the event was throttled, in the counted windows of its in-place estimation, and
    /// while it waited counted for another event's (rt/src/inplace/).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub untimed_calls: u64,
    /// Calls this event made to instrumented events.
    pub child_calls: u64,
    pub exclusive_ns: u64,
    /// Inclusive time, counted once for recursive activations.
    pub inclusive_ns: u64,
    /// Loop iterations (header executions); 0 for other events.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub iterations: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensated: Option<Compensated>,
    /// The times with the calls counted without timing estimated (rt/src/untimed.rs): a
    /// throttled event's own untimed calls at the mean of its timed ones, taken out of the
    /// callers whose exclusive time held them. Compensated when compensation is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated: Option<Estimated>,
}

/// Compensated times of one event; negative when the probe cost removed exceeds what was
/// measured (see `negative`).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Compensated {
    pub inclusive_ns: i64,
    pub exclusive_ns: i64,
    /// Activations whose compensated inclusive time was negative.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub negative: u64,
}

/// An event's times with its untimed calls, and its callers' untimed calls, estimated.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimated {
    pub inclusive_ns: i64,
    pub exclusive_ns: i64,
}

/// One routine.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Function {
    /// The event id that loops and call sites refer to (unique within one profile).
    #[serde(default)]
    pub id: u32,
    /// The symbol name as linked (mangled for C++ and Rust).
    pub name: String,
    /// Source file, when the module had debug info or a source file name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub line: u32,
    /// The source language (written `c`, `c++`, `fortran` or `rust`; absent when the compiler
    /// did not tell).
    #[serde(default, skip_serializing_if = "language::is_unknown", with = "language")]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = language::arbitrary))]
    pub language: Language,
    /// Part of a recursive cycle of its module's static call graph.
    #[serde(default, skip_serializing_if = "is_false")]
    pub recursive: bool,
    /// Throttled while the program ran (TAU's rule): only counted from then on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub throttled: bool,
    /// Switched off from outside while the program ran (`instrument top --off`), perhaps back
    /// on since: its counts and times cover only the calls made while it was on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub switched_off: bool,
    #[serde(flatten)]
    pub stats: Stats,
}

/// One loop: each execution (entry to exit) is counted once; iterations are header executions.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    pub id: u32,
    /// The id of the routine the loop is in.
    pub function: u32,
    /// The id of the enclosing loop, if nested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub line: u32,
    /// Iterations per execution: fewest, most and sum of squares (absent in older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_stats: Option<IterationStats>,
    /// Throttled while the program ran (TAU's rule): only counted from then on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub throttled: bool,
    /// Switched off from outside while the program ran (`instrument top --off`), perhaps back
    /// on since: its counts and times cover only the calls made while it was on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub switched_off: bool,
    #[serde(flatten)]
    pub stats: Stats,
}

#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IterationStats {
    pub min: u64,
    pub max: u64,
    pub sum_of_squares: f64,
}

/// One call statement: the time and count of the calls made through it (Li and Zhang's PROC
/// record keyed by the calling line), also when the callee is not instrumented.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallSite {
    pub id: u32,
    pub function: u32,
    /// The id of the innermost enclosing loop, if any.
    #[serde(rename = "loop", default, skip_serializing_if = "Option::is_none")]
    pub in_loop: Option<u32>,
    /// The called symbol, or empty for an indirect call.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub callee: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub line: u32,
    /// Throttled while the program ran (TAU's rule): only counted from then on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub throttled: bool,
    /// Switched off from outside while the program ran (`instrument top --off`), perhaps back
    /// on since: its counts and times cover only the calls made while it was on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub switched_off: bool,
    #[serde(flatten)]
    pub stats: Stats,
}

pub(crate) fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero32(v: &u32) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}
