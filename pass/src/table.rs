//! The per-module program graph and the constructor that registers it with the runtime.
//!
//! Layout and flags: `instrument_contract::table`, which `rt/src/registry.rs` reads by.
//! `function` indexes this module's functions; `parent` and `loop` index its loops (NONE when
//! there is none). `ids` holds one writable slot per event (functions, then loops, then sites):
//! every slot starts at UNREGISTERED and the runtime writes the process-wide id when the
//! constructor registers the table. Probes pass the address of their slot, so ids are never
//! chosen at compile time, and a probe that fires before registration degrades to a counted
//! event instead of corrupting another event's record.

use crate::language::{self, Language};
use crate::plan::FunctionPlan;
use crate::{options::Options, Placement, PROBED_ATTRIBUTE};
use inkwell::attributes::AttributeLoc;
use inkwell::llvm_sys::core::*;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::{AsValueRef, BasicValueEnum, FunctionValue, GlobalValue, PointerValue, StructValue};
use inkwell::AddressSpace;
use instrument_contract::table::{self, FLAG_LATE, FLAG_LOCAL, FLAG_PROBED, FLAG_RECURSIVE};
use std::collections::HashMap;

// The table's ABI: written once, in the contract crate, for the pass and the runtime alike.
const ABI_VERSION: u64 = table::ABI_VERSION as u64;
const UNREGISTERED: u64 = table::UNREGISTERED as u64;
const NONE: u64 = table::NONE as u64;
/// Constructor priority: before ordinary constructors (65535) so that C++ static initialisers
/// are measured, as SanitizerCoverage does with its module constructors.
const CTOR_PRIORITY: u64 = 2;

pub struct Table<'ctx> {
    ids: GlobalValue<'ctx>,
    total: u32,
}

impl<'ctx> Table<'ctx> {
    /// The address of the id slot `index` (functions, then loops, then sites).
    pub fn slot(&self, module: &Module<'ctx>, index: usize) -> PointerValue<'ctx> {
        let i32t = module.get_context().i32_type();
        let array = i32t.array_type(self.total);
        let indices = [i32t.const_zero(), i32t.const_int(index as u64, false)];
        unsafe {
            let mut raw: Vec<_> = indices.iter().map(|v| v.as_value_ref()).collect();
            let gep = LLVMConstInBoundsGEP2(
                inkwell::types::AsTypeRef::as_type_ref(&array),
                self.ids.as_value_ref(),
                raw.as_mut_ptr(),
                raw.len() as u32,
            );
            PointerValue::new(gep)
        }
    }
}

/// Where each event's slot is: `functions[i]`, `loops[f][j]`, `sites[f][k]`.
pub struct Slots<'ctx> {
    pub functions: Vec<PointerValue<'ctx>>,
    pub loops: Vec<Vec<PointerValue<'ctx>>>,
    pub sites: Vec<Vec<PointerValue<'ctx>>>,
}

struct Strings<'a, 'ctx> {
    module: &'a Module<'ctx>,
    cache: HashMap<Vec<u8>, PointerValue<'ctx>>,
}

impl<'ctx> Strings<'_, 'ctx> {
    fn get(&mut self, text: &[u8]) -> PointerValue<'ctx> {
        if let Some(&p) = self.cache.get(text) {
            return p;
        }
        let value = self.module.get_context().const_string(text, true);
        let global = constant_global(self.module, "__instrument.str", &value.into());
        global.set_unnamed_addr(true);
        let p = global.as_pointer_value();
        self.cache.insert(text.to_vec(), p);
        p
    }
}

pub fn emit<'ctx>(
    module: &Module<'ctx>,
    plans: &[FunctionPlan<'ctx>],
    language: Language,
    options: &Options,
) -> Slots<'ctx> {
    let i32t = module.get_context().i32_type();
    let counts =
        [plans.len(), plans.iter().map(|p| p.loops.len()).sum(), plans.iter().map(|p| p.sites.len()).sum()];
    let total = counts.iter().sum::<usize>() as u32;
    let unregistered = vec![i32t.const_int(UNREGISTERED, false); total as usize];
    let ids = module.add_global(i32t.array_type(total), None, "__instrument.ids");
    ids.set_initializer(&i32t.const_array(&unregistered));
    ids.set_linkage(Linkage::Private);
    let table = Table { ids, total };
    let mut strings = Strings { module, cache: HashMap::new() };
    let types = EntryTypes::new(module);
    let mut entries = Entries::default();
    let mut slots = Slots { functions: Vec::new(), loops: Vec::new(), sites: Vec::new() };
    for (fi, plan) in plans.iter().enumerate() {
        let flags = routine_flags(plan, language, options.placement, options.min_instructions);
        entries.add(&types, &mut strings, &table, &mut slots, (fi, plan, flags), counts);
    }
    let arrays = [
        array_global(module, "__instrument.functions", types.function, &entries.functions),
        array_global(module, "__instrument.loops", types.loop_, &entries.loops),
        array_global(module, "__instrument.sites", types.site, &entries.sites),
    ];
    let module_name = strings.get(module.get_source_file_name().to_bytes());
    let table_global = module_table(module, counts, ids, arrays, module_name);
    emit_constructor(module, table_global);
    slots
}

/// A routine's flags: its language, linkage, recursion, whether its own probes are placed, the
/// placement and the small-routine threshold `small` (`skip::too_small`).
fn routine_flags(plan: &FunctionPlan<'_>, language: Language, placement: Placement, small: usize) -> u32 {
    let mut flags = language::of_routine(&plan.location.file, language).flags();
    flags |= if is_local(plan.function) { FLAG_LOCAL } else { 0 };
    flags |= if plan.recursive { FLAG_RECURSIVE } else { 0 };
    flags |= if plan.probe_routine { FLAG_PROBED } else { 0 };
    flags |= if placement == Placement::Late { FLAG_LATE } else { 0 };
    flags | (small.min(table::SMALL_MASK as usize) as u32) << table::SMALL_SHIFT
}

/// The LLVM types of the routine, loop and call-statement entries (the contract's layout).
struct EntryTypes<'ctx> {
    function: StructType<'ctx>,
    loop_: StructType<'ctx>,
    site: StructType<'ctx>,
}

impl<'ctx> EntryTypes<'ctx> {
    fn new(module: &Module<'ctx>) -> Self {
        let ctx = module.get_context();
        let (i32t, ptr) = (ctx.i32_type().into(), ctx.ptr_type(AddressSpace::default()).into());
        EntryTypes {
            function: ctx.struct_type(&[ptr, ptr, i32t, i32t], false),
            loop_: ctx.struct_type(&[ptr, i32t, i32t, i32t, i32t], false),
            site: ctx.struct_type(&[ptr, ptr, i32t, i32t, i32t, i32t], false),
        }
    }
}

/// The module's entries so far.
#[derive(Default)]
struct Entries<'ctx> {
    functions: Vec<StructValue<'ctx>>,
    loops: Vec<StructValue<'ctx>>,
    sites: Vec<StructValue<'ctx>>,
}

impl<'ctx> Entries<'ctx> {
    /// Adds routine `fi`'s entry (with `flags`), its loops' and its call statements', and
    /// their id slots; `counts` are the module's routines, loops and call statements.
    fn add(
        &mut self,
        types: &EntryTypes<'ctx>,
        strings: &mut Strings<'_, 'ctx>,
        table: &Table<'ctx>,
        slots: &mut Slots<'ctx>,
        (fi, plan, flags): (usize, &FunctionPlan<'ctx>, u32),
        counts: [usize; 3],
    ) {
        let module = strings.module;
        let i32t = module.get_context().i32_type();
        let u32c = |v: u64| BasicValueEnum::from(i32t.const_int(v, false));
        self.functions.push(types.function.const_named_struct(&[
            strings.get(plan.function.get_name().to_bytes()).into(),
            strings.get(plan.location.file.as_bytes()).into(),
            u32c(u64::from(plan.location.line)),
            u32c(u64::from(flags)),
        ]));
        slots.functions.push(table.slot(module, fi));
        let loop_base = self.loops.len();
        slots.loops.push(Vec::new());
        for l in &plan.loops {
            slots.loops[fi].push(table.slot(module, counts[0] + self.loops.len()));
            let parent = l.parent.map_or(NONE, |p| (loop_base + p) as u64);
            let file = strings.get(l.location.file.as_bytes()).into();
            let fields = [file, u32c(u64::from(l.location.line)), u32c(fi as u64), u32c(parent), u32c(0)];
            self.loops.push(types.loop_.const_named_struct(&fields));
        }
        slots.sites.push(Vec::new());
        for site in &plan.sites {
            slots.sites[fi].push(table.slot(module, counts[0] + counts[1] + self.sites.len()));
            self.sites.push(types.site.const_named_struct(&[
                strings.get(site.callee.as_bytes()).into(),
                strings.get(site.location.file.as_bytes()).into(),
                u32c(u64::from(site.location.line)),
                u32c(fi as u64),
                u32c(site.in_loop.map_or(NONE, |l| (loop_base + l) as u64)),
                u32c(0),
            ]));
        }
    }
}

/// The module table (the contract's `ModuleTable`): ABI version, counts, the id slots and the
/// three entry arrays, and the module's name.
fn module_table<'ctx>(
    module: &Module<'ctx>,
    counts: [usize; 3],
    ids: GlobalValue<'ctx>,
    arrays: [PointerValue<'ctx>; 3],
    module_name: PointerValue<'ctx>,
) -> GlobalValue<'ctx> {
    let ctx = module.get_context();
    let (i32t, ptr) = (ctx.i32_type(), ctx.ptr_type(AddressSpace::default()));
    let u32c = |v: u64| BasicValueEnum::from(i32t.const_int(v, false));
    let (int, pointer): (BasicTypeEnum, BasicTypeEnum) = (i32t.into(), ptr.into());
    let fields = [int, int, int, int, pointer, pointer, pointer, pointer, pointer];
    let table_ty = ctx.struct_type(&fields, false);
    let [functions, loops, sites] = arrays;
    let value = table_ty.const_named_struct(&[
        u32c(ABI_VERSION),
        u32c(counts[0] as u64),
        u32c(counts[1] as u64),
        u32c(counts[2] as u64),
        ids.as_pointer_value().into(),
        functions.into(),
        loops.into(),
        sites.into(),
        module_name.into(),
    ]);
    constant_global(module, "__instrument.table", &value.into())
}

fn array_global<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    ty: StructType<'ctx>,
    items: &[StructValue<'ctx>],
) -> PointerValue<'ctx> {
    constant_global(module, name, &ty.const_array(items).into()).as_pointer_value()
}

fn is_local(f: FunctionValue<'_>) -> bool {
    matches!(f.get_linkage(), Linkage::Internal | Linkage::Private)
}

fn constant_global<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    value: &BasicValueEnum<'ctx>,
) -> GlobalValue<'ctx> {
    let global = module.add_global(value.get_type(), None, name);
    global.set_initializer(value);
    global.set_constant(true);
    global.set_linkage(Linkage::Private);
    global
}

/// `internal void __instrument_module_ctor() { __instrument_register_module(&table); }`,
/// appended to `llvm.global_ctors`.
fn emit_constructor<'ctx>(module: &Module<'ctx>, table: GlobalValue<'ctx>) {
    let ctx = module.get_context();
    let ptr = ctx.ptr_type(AddressSpace::default());
    let void_fn = ctx.void_type().fn_type(&[], false);
    let register = module.get_function("__instrument_register_module").unwrap_or_else(|| {
        module.add_function(
            "__instrument_register_module",
            ctx.void_type().fn_type(&[ptr.into()], false),
            None,
        )
    });
    let ctor = module.add_function("__instrument_module_ctor", void_fn, Some(Linkage::Internal));
    ctor.add_attribute(AttributeLoc::Function, ctx.create_string_attribute(PROBED_ATTRIBUTE, ""));
    let builder = ctx.create_builder();
    builder.position_at_end(ctx.append_basic_block(ctor, "entry"));
    builder.build_call(register, &[table.as_pointer_value().into()], "").expect("call in new block");
    builder.build_return(None).expect("return in new block");
    append_global_ctor(module, ctor, CTOR_PRIORITY);
}

fn append_global_ctor<'ctx>(module: &Module<'ctx>, ctor: FunctionValue<'ctx>, priority: u64) {
    let ctx = module.get_context();
    let ptr = ctx.ptr_type(AddressSpace::default());
    let entry_ty = ctx.struct_type(&[ctx.i32_type().into(), ptr.into(), ptr.into()], false);
    let mut entries = Vec::new();
    if let Some(old) = module.get_global("llvm.global_ctors") {
        unsafe {
            let init = LLVMGetInitializer(old.as_value_ref());
            if !init.is_null() {
                for i in 0..LLVMGetNumOperands(init).max(0) as u32 {
                    entries.push(StructValue::new(LLVMGetOperand(init, i)));
                }
            }
            LLVMDeleteGlobal(old.as_value_ref());
        }
    }
    entries.push(entry_ty.const_named_struct(&[
        ctx.i32_type().const_int(priority, false).into(),
        ctor.as_global_value().as_pointer_value().into(),
        ptr.const_null().into(),
    ]));
    let array = entry_ty.const_array(&entries);
    let global = module.add_global(array.get_type(), None, "llvm.global_ctors");
    global.set_initializer(&array);
    global.set_linkage(Linkage::Appending);
}
