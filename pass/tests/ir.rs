//! The pass on hand-written IR: where probes go, what is skipped, what the table looks like,
//! and that a second run changes nothing. IR snapshots are reviewed with `cargo insta review`.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use instrument_pass::{
    instrument_module, instrument_module_with, lower_guards, Guards, Options, Placement, Stats,
};

fn parse<'ctx>(context: &'ctx Context, ir: &str) -> Module<'ctx> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test");
    let module = context.create_module_from_ir(buffer).expect("test IR parses");
    module.verify().expect("test IR verifies");
    module
}

fn instrument(ir: &str, options: &Options) -> (String, Stats) {
    let context = Context::create();
    let module = parse(&context, ir);
    let stats = instrument_module(&module, options);
    module
        .verify()
        .unwrap_or_else(|e| panic!("instrumented IR does not verify: {e}\n{}", module.print_to_string()));
    (module.print_to_string().to_string(), stats)
}

const RETURNS: &str = r#"
declare void @abort() noreturn
declare i32 @callee(i32)

define i32 @two_returns(i32 %x) {
entry:
  %slot = alloca i32
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %pos, label %neg
pos:
  ret i32 1
neg:
  ret i32 0
}

define i32 @tail(i32 %x) {
  %r = musttail call i32 @callee(i32 %x)
  ret i32 %r
}

define void @dies() {
  call void @abort()
  unreachable
}
"#;

#[test]
fn probes_every_return_before_musttail_and_none_on_unreachable() {
    let (ir, stats) = instrument(RETURNS, &Options::default());
    assert_eq!(
        stats,
        Stats { functions_probed: 3, exit_probes: 3, loops: 0, callsites: 0, skipped: 0, probed_copies: 0 }
    );
    insta::assert_snapshot!(ir);
}

#[test]
fn deferred_exits_lower_to_the_guards_built_at_once() {
    let context = Context::create();
    let deferred = parse(&context, RETURNS);
    instrument_module_with(&deferred, &Options::default(), Guards::Deferred);
    let ir = deferred.print_to_string().to_string();
    assert_eq!(ir.matches("call void @__instrument_exit_if(").count(), 3, "one per exit, unguarded:\n{ir}");
    assert_eq!(ir.matches("call void @__instrument_exit(").count(), 0);
    assert_eq!(lower_guards(&deferred), 3);
    deferred.verify().expect("lowered IR verifies");
    let (at_once, _) = instrument(RETURNS, &Options::default());
    assert_eq!(deferred.print_to_string().to_string(), at_once);
    assert_eq!(lower_guards(&deferred), 0, "nothing left to lower");
}

#[test]
fn both_placements_call_the_register_preserving_probes_on_x86_64_only() {
    let ir = |triple: &str, placement: Placement| {
        let source = format!("target triple = \"{triple}\"\n{RETURNS}");
        let (ir, _) = instrument(&source, &Options { placement, ..Options::default() });
        ir
    };
    for placement in [Placement::Early, Placement::Late] {
        let ir = ir("x86_64-pc-linux-gnu", placement);
        assert_eq!(ir.matches("call preserve_mostcc i32 @__instrument_enter_pm(").count(), 3, "{ir}");
        assert_eq!(ir.matches("call preserve_mostcc void @__instrument_exit_pm(").count(), 3);
        assert!(ir.contains("declare void @__instrument_unwind("), "landing pads keep the C convention");
    }
    for placement in [Placement::Early, Placement::Late] {
        let ir = ir("aarch64-linux-gnu", placement);
        assert!(!ir.contains("preserve_mostcc") && !ir.contains("_pm("), "{ir}");
        assert_eq!(ir.matches("call i32 @__instrument_enter(").count(), 3);
    }
}

const SKIPPED: &str = r#"
@str = private constant [14 x i8] c"no_instrument\00"
@file = private constant [4 x i8] c"x.c\00"
@llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @annotated, ptr @str, ptr @file, i32 1, ptr null }], section "llvm.metadata"

declare void @declared()
define void @naked() naked { unreachable }
define available_externally void @external_copy() { ret void }
define void @annotated() { ret void }
define void @done() "instrument-probed" { ret void }
define void @__instrument_internal() { ret void }
define void @excluded() { ret void }
define void @measured() { ret void }
"#;

#[test]
fn skip_rules_leave_exactly_the_ineligible_functions_alone() {
    let options = Options { exclude: vec!["excluded".into()], ..Options::default() };
    let (ir, stats) = instrument(SKIPPED, &options);
    assert_eq!(stats.functions_probed, 1, "only @measured is eligible");
    assert_eq!(stats.skipped, 6, "every defined function but @measured (declarations are not counted)");
    assert_eq!(ir.matches("call i32 @__instrument_enter").count(), 1);
    assert!(ir.contains("c\"measured\\00\""));
}

#[test]
fn a_second_run_changes_nothing() {
    let context = Context::create();
    let module = parse(&context, RETURNS);
    instrument_module(&module, &Options::default());
    let once = module.print_to_string().to_string();
    let again = instrument_module(&module, &Options::default());
    assert_eq!(again.functions_probed, 0);
    assert_eq!(module.print_to_string().to_string(), once);
}

#[test]
fn existing_constructors_are_kept() {
    let ir = r#"
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @init, ptr null }]
define internal void @init() { ret void }
define i32 @main() { ret i32 0 }
"#;
    let (out, _) = instrument(ir, &Options::default());
    let ctors = out.lines().find(|l| l.starts_with("@llvm.global_ctors")).expect("ctors");
    assert!(ctors.contains("i32 65535, ptr @init"), "{ctors}");
    assert!(ctors.contains("i32 2, ptr @__instrument_module_ctor"), "{ctors}");
}

#[test]
fn debug_info_gives_file_and_line() {
    let ir = r#"
define void @f() !dbg !5 { ret void, !dbg !8 }
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "clang", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "src/f.c", directory: "/project")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 42, type: !6, scopeLine: 42, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !DILocation(line: 42, column: 1, scope: !5)
"#;
    let (out, _) = instrument(ir, &Options::default());
    assert!(out.contains("c\"/project/src/f.c\\00\""), "{out}");
    assert!(
        out.contains("i32 42, i32 280 }"),
        "line 42, flags: probed (8), placed late (16, the default), language C (1 << 8): {out}"
    );
}

/// Late placement probes functions whose attributes were inferred without probes: a `memory(none)
/// nosync` function that now calls probes must not stay pure, or later passes (LTO's among
/// them) could merge or drop its calls, and its probes with them.
#[test]
fn a_probed_function_loses_the_purity_inferred_before_its_probes() {
    const PURE: &str = "define i32 @pure(i32 %x) nosync speculatable memory(none) {\n  ret i32 %x\n}\n";
    let (ir, stats) = instrument(PURE, &Options::default());
    assert_eq!(stats.functions_probed, 1);
    let attributes: Vec<&str> = ir.lines().filter(|l| l.starts_with("attributes #")).collect();
    let pure = attributes
        .iter()
        .find(|l| l.contains("instrument-probed"))
        .expect("the probed function's attributes");
    assert!(!pure.contains("nosync") && !pure.contains("speculatable"), "{pure}");
    assert!(pure.contains("memory(read, argmem: none, inaccessiblemem: readwrite"), "{pure}");
}

const INLINE_COUNT: &str = r#"
target triple = "x86_64-pc-linux-gnu"

define i32 @leaf(i32 %x) {
entry:
  %slot = alloca i32
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %pos, label %neg
pos:
  ret i32 1
neg:
  ret i32 %x
}
"#;

/// Late placement on x86-64 counts a throttled routine's call in its entry code: the id against
/// the table, the mode byte, the state's thread-local pointer, the id against the record
/// capacity, the window's end, then four additions, and the routine's own code runs on (as it
/// does switched off); every other call is a tail call of the routine's probed copy, whose
/// exits branch on its entry probe's result.
#[test]
fn late_placement_on_x86_64_counts_throttled_calls_inline() {
    let options = Options { placement: Placement::Late, min_instructions: 0, ..Options::default() };
    let (ir, stats) = instrument(INLINE_COUNT, &options);
    assert_eq!((stats.functions_probed, stats.probed_copies), (1, 1));
    insta::assert_snapshot!(ir);
    let early = Options { placement: Placement::Early, ..Options::default() };
    let (ir, _) = instrument(INLINE_COUNT, &early);
    assert!(!ir.contains("__instrument_thread"), "early placement calls the probe: {ir}");
}

/// The thread-local block is reached at a fixed offset from the thread pointer in code bound for
/// an executable (no `PIC Level`, or a `PIE Level`), and through the GOT (initial exec) in code
/// that may go into a shared library, where the fixed offset would not link.
#[test]
fn the_thread_block_is_local_exec_only_in_code_bound_for_an_executable() {
    let options = Options { placement: Placement::Late, min_instructions: 0, ..Options::default() };
    let flags = |list: &str| {
        format!("{INLINE_COUNT}\n!llvm.module.flags = !{{{list}}}\n!0 = !{{i32 8, !\"PIC Level\", i32 2}}\n!1 = !{{i32 7, !\"PIE Level\", i32 2}}\n")
    };
    for (module, model) in [
        (INLINE_COUNT.to_string(), "localexec"),
        (flags("!0, !1"), "localexec"),
        (flags("!0"), "initialexec"),
    ] {
        let (ir, _) = instrument(&module, &options);
        let declared = format!("@__instrument_thread = external thread_local({model})");
        assert!(ir.contains(&declared), "{declared} in {ir}");
    }
}

const NO_PROBED_COPY: &str = r#"
target triple = "x86_64-pc-linux-gnu"

declare void @use(ptr)

define i32 @varargs(i32 %n, ...) {
  ret i32 %n
}

define void @by_value(ptr byval(i64) %p) {
  call void @use(ptr %p)
  ret void
}

define i32 @looping(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %next = add i32 %i, 1
  %again = icmp slt i32 %next, %n
  br i1 %again, label %loop, label %done
done:
  ret i32 %next
}

define i32 @plain(i32 %x) {
  ret i32 %x
}
"#;

/// A probed copy only where a tail call forwards the arguments as they came and the routine has
/// no other event: not for varargs or byval parameters, nor for a routine whose loop is probed;
/// those count inline before their probed body, as every routine does with
/// `INSTRUMENT_PROBED_COPIES=0`. The copy is never probed twice.
#[test]
fn probed_copies_only_where_a_tail_call_forwards_everything() {
    let mut options = Options { placement: Placement::Late, min_instructions: 0, ..Options::default() };
    options.events.loops = true;
    let (ir, stats) = instrument(NO_PROBED_COPY, &options);
    assert_eq!((stats.functions_probed, stats.loops, stats.probed_copies), (4, 1, 1), "{ir}");
    assert!(ir.contains("musttail call i32 @plain.instrument.probed(i32 %x)"), "{ir}");
    assert!(ir.contains("define internal i32 @plain.instrument.probed(i32 %x) #"), "{ir}");
    for routine in ["varargs", "by_value", "looping"] {
        assert!(!ir.contains(&format!("@{routine}.instrument.probed")), "{routine}: {ir}");
    }
    let single = Options { probed_copies: false, ..options.clone() };
    let (ir, stats) = instrument(NO_PROBED_COPY, &single);
    assert_eq!((stats.functions_probed, stats.probed_copies), (4, 0), "INSTRUMENT_PROBED_COPIES=0");
    assert!(!ir.contains(".instrument.probed") && ir.contains("instrument.count"), "{ir}");
    let context = Context::create();
    let module = parse(&context, NO_PROBED_COPY);
    instrument_module(&module, &options);
    let again = instrument_module(&module, &options);
    // Four routines, the copy and the module constructor, all marked probed.
    assert_eq!(
        again,
        Stats { skipped: 6, ..Stats::default() },
        "a second run probes nothing, copies included"
    );
}

const SETJMP: &str = r#"
declare i32 @_setjmp(ptr) returns_twice
declare i32 @vfork() returns_twice
declare void @run(ptr)

define i32 @catcher(ptr %env) {
  %r = call i32 @_setjmp(ptr %env) returns_twice
  %z = icmp eq i32 %r, 0
  br i1 %z, label %body, label %caught
body:
  call void @run(ptr %env)
  ret i32 0
caught:
  ret i32 1
}

define i32 @small(ptr %env) {
  %r = call i32 @_setjmp(ptr %env) returns_twice
  ret i32 %r
}

define i32 @forks() {
  %p = call i32 @vfork() returns_twice
  ret i32 %p
}

declare i32 @__gxx_personality_v0(...)

define i32 @small_try(ptr %env) personality ptr @__gxx_personality_v0 {
  invoke void @run(ptr %env) to label %ok unwind label %pad
ok:
  ret i32 0
pad:
  %lp = landingpad { ptr, i32 } catch ptr null
  ret i32 1
}
"#;

/// A setjmp's second return (non-zero) gets the landing probe, naming the routine's event, or
/// no event (a null slot) in a routine left without events (here: excluded), as a landing pad
/// there does; vfork, returns twice too, gets none. A second run adds nothing.
#[test]
fn setjmp_returning_again_is_a_landing_in_routines_with_and_without_events() {
    let options = Options { exclude: vec!["small".into(), "small_try".into()], ..Options::default() };
    let context = Context::create();
    let module = parse(&context, SETJMP);
    let stats = instrument_module(&module, &options);
    module.verify().expect("instrumented IR verifies");
    assert_eq!((stats.functions_probed, stats.skipped), (2, 2), "catcher and forks probed, two excluded");
    let ir = module.print_to_string().to_string();
    assert_eq!(ir.matches("call void @__instrument_unwind(ptr null)").count(), 2, "small's and small_try's");
    assert_eq!(ir.matches("call void @__instrument_unwind(").count(), 3, "and catcher's");
    instrument_module(&module, &options);
    assert_eq!(module.print_to_string().to_string(), ir, "a second run changes nothing");
    insta::assert_snapshot!(ir);
}

/// A module that an older pass instrumented in part (linked by LTO) declares the probes as that
/// pass did: an entry without a result and an exit that takes the id slot alone. The exits then
/// run unconditionally and are called as declared, so the module still verifies (`instrument`).
#[test]
fn probes_declared_by_an_older_pass_are_called_as_declared() {
    let older =
        format!("{RETURNS}\ndeclare void @__instrument_enter(ptr)\ndeclare void @__instrument_exit(ptr)\n");
    let (ir, stats) = instrument(&older, &Options::default());
    assert_eq!(stats.exit_probes, 3);
    assert_eq!(ir.matches("call void @__instrument_exit(ptr").count(), 3, "{ir}");
    assert!(!ir.contains("@__instrument_exit(ptr, i32"), "{ir}");
}
