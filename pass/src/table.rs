//! The per-module function table and the constructor that registers it with the runtime.
//!
//! Layout (ABI version 1, mirrored by `rt/src/registry.rs`):
//! ```text
//! struct ModuleTable { u32 abi; u32 count; u32 *ids; FunctionEntry *functions; const char *module; }
//! struct FunctionEntry { const char *name; const char *file; u32 line; u32 flags; }
//! ```
//! `ids` is writable: every slot starts at `UNREGISTERED` and the runtime writes the process-wide
//! id when the constructor registers the table. Probes pass the address of their slot, so ids are
//! never chosen at compile time and a probe that fires before registration degrades to a counted
//! overflow instead of corrupting another function's record.

use crate::{debug_info, PROBED_ATTRIBUTE};
use inkwell::attributes::AttributeLoc;
use inkwell::llvm_sys::core::*;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicValueEnum, FunctionValue, GlobalValue, PointerValue};
use inkwell::AddressSpace;

pub const ABI_VERSION: u64 = 1;
pub const UNREGISTERED: u64 = 0xFFFF_FFFF;
/// `FunctionEntry::flags` bit: the symbol is local to its module (`static` in C).
pub const FLAG_LOCAL: u64 = 1;
/// `FunctionEntry::flags` bit: the module came from flang (external procedures are named
/// `name_`, which only reads back as written when the language is known).
pub const FLAG_FORTRAN: u64 = 2;
/// Constructor priority: before ordinary constructors (65535) so that C++ static initialisers
/// are measured, as SanitizerCoverage does with its module constructors.
const CTOR_PRIORITY: u64 = 2;

pub struct Table<'ctx> {
    ids: GlobalValue<'ctx>,
    count: u32,
}

impl<'ctx> Table<'ctx> {
    /// The address of the id slot of the `index`-th probed function.
    pub fn id_slot(&self, module: &Module<'ctx>, index: usize) -> PointerValue<'ctx> {
        let i32t = module.get_context().i32_type();
        let array = i32t.array_type(self.count);
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

pub fn emit<'ctx>(module: &Module<'ctx>, functions: &[FunctionValue<'ctx>]) -> Table<'ctx> {
    let ctx = module.get_context();
    let (i32t, ptr) = (ctx.i32_type(), ctx.ptr_type(AddressSpace::default()));
    let count = functions.len() as u32;

    let unregistered = vec![i32t.const_int(UNREGISTERED, false); functions.len()];
    let ids = module.add_global(i32t.array_type(count), None, "__instrument.ids");
    ids.set_initializer(&i32t.const_array(&unregistered));
    ids.set_linkage(Linkage::Private);

    let language_flags = if crate::ir::produced_by(module, "flang") { FLAG_FORTRAN } else { 0 };
    let entry_ty = ctx.struct_type(&[ptr.into(), ptr.into(), i32t.into(), i32t.into()], false);
    let entries: Vec<_> = functions
        .iter()
        .map(|f| {
            let loc = debug_info::location_of(module, *f);
            let name = string_global(module, f.get_name().to_bytes(), "__instrument.name");
            let file = string_global(module, loc.file.as_bytes(), "__instrument.file");
            let flags = language_flags | if is_local(*f) { FLAG_LOCAL } else { 0 };
            entry_ty.const_named_struct(&[
                name.into(),
                file.into(),
                i32t.const_int(u64::from(loc.line), false).into(),
                i32t.const_int(flags, false).into(),
            ])
        })
        .collect();
    let functions_global =
        constant_global(module, "__instrument.functions", &entry_ty.const_array(&entries).into());

    let module_name = string_global(module, module.get_source_file_name().to_bytes(), "__instrument.module");
    let table_ty = ctx.struct_type(&[i32t.into(), i32t.into(), ptr.into(), ptr.into(), ptr.into()], false);
    let table = table_ty.const_named_struct(&[
        i32t.const_int(ABI_VERSION, false).into(),
        i32t.const_int(u64::from(count), false).into(),
        ids.as_pointer_value().into(),
        functions_global.as_pointer_value().into(),
        module_name.into(),
    ]);
    let table_global = constant_global(module, "__instrument.table", &table.into());
    emit_constructor(module, table_global);
    Table { ids, count }
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

fn string_global<'ctx>(module: &Module<'ctx>, text: &[u8], name: &str) -> PointerValue<'ctx> {
    let value = module.get_context().const_string(text, true);
    let global = constant_global(module, name, &value.into());
    global.set_unnamed_addr(true);
    global.as_pointer_value()
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
                    entries.push(inkwell::values::StructValue::new(LLVMGetOperand(init, i)));
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
