//! The pass-plugin front door. LLVM looks up `llvmGetPassPluginInfo` in the loaded library; a Rust
//! cdylib exports only Rust `#[no_mangle]` items, so it is defined here and points at the C++
//! shim's registration function, which calls back into [`instrument_run_on_module`].

use crate::{guards, instrument_module_with, Guards, Options, Placement};
use inkwell::llvm_sys::prelude::LLVMModuleRef;
use inkwell::module::Module;
use std::ffi::{c_char, c_int, c_void};
use std::mem::ManuallyDrop;
use std::sync::OnceLock;

/// `llvm::PassPluginLibraryInfo` (llvm/Plugins/PassPlugin.h, API version 2).
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_callbacks: unsafe extern "C" fn(*mut c_void),
    pre_codegen_callback: *const c_void,
}

const LLVM_PLUGIN_API_VERSION: u32 = 2;

extern "C" {
    /// Defined in shim/plugin_shim.cpp; takes an `llvm::PassBuilder &`.
    fn instrument_register_callbacks(pass_builder: *mut c_void);
}

#[no_mangle]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    PassPluginLibraryInfo {
        api_version: LLVM_PLUGIN_API_VERSION,
        plugin_name: c"instrument".as_ptr(),
        plugin_version: concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast(),
        register_callbacks: instrument_register_callbacks,
        pre_codegen_callback: std::ptr::null(),
    }
}

/// Extension points, as numbered by the shim.
const PIPELINE_START: c_int = 0;
const OPTIMIZER_LAST: c_int = 1;
const EXPLICIT: c_int = 2;
const FULL_LTO_LAST: c_int = 3;
/// `llvm::ThinOrFullLTOPhase` values the late placement acts in (no LTO, ThinLTO backend).
const PHASE_NONE: c_int = 0;
const PHASE_THIN_LTO_POST_LINK: c_int = 2;

fn options() -> &'static Options {
    static OPTIONS: OnceLock<Options> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        Options::from_env().unwrap_or_else(|message| {
            eprintln!("instrument: {message}");
            std::process::exit(1)
        })
    })
}

/// What the pass does at an extension point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Nothing,
    /// Instrument the module; `Guards::Deferred` at the start of an optimisation pipeline.
    Instrument(Guards),
    /// Lower the exits early placement deferred (`guards`): the optimiser is done.
    LowerGuards,
}

/// The end of the last optimisation pipeline a module goes through: the compile step without
/// LTO, the ThinLTO backend, or the full-LTO link.
fn pipeline_ends(extension_point: c_int, lto_phase: c_int) -> bool {
    match extension_point {
        OPTIMIZER_LAST => matches!(lto_phase, PHASE_NONE | PHASE_THIN_LTO_POST_LINK),
        FULL_LTO_LAST => true,
        _ => false,
    }
}

fn action(placement: Placement, extension_point: c_int, lto_phase: c_int) -> Action {
    match (placement, extension_point) {
        (_, EXPLICIT) => Action::Instrument(Guards::Now),
        (Placement::Early, PIPELINE_START) => Action::Instrument(Guards::Deferred),
        (Placement::Early, _) if pipeline_ends(extension_point, lto_phase) => Action::LowerGuards,
        (Placement::Late, _) if pipeline_ends(extension_point, lto_phase) => Action::Instrument(Guards::Now),
        _ => Action::Nothing,
    }
}

/// Called by the shim's module pass. Returns true when the module changed.
#[no_mangle]
pub extern "C" fn instrument_run_on_module(
    module: LLVMModuleRef,
    extension_point: c_int,
    lto_phase: c_int,
) -> bool {
    let options = options();
    let action = action(options.placement, extension_point, lto_phase);
    if action == Action::Nothing {
        return false;
    }
    // The module belongs to the host compiler: never let inkwell dispose of it.
    let module = ManuallyDrop::new(unsafe { Module::new(module) });
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match action {
        Action::Instrument(guards) => instrument_module_with(&module, options, guards).functions_probed > 0,
        Action::LowerGuards => guards::lower(&module) > 0,
        Action::Nothing => false,
    }));
    match result {
        Ok(changed) => changed,
        Err(_) => {
            eprintln!("instrument: internal error in the instrumentation pass; please report it");
            std::process::abort()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_placement_lowers_its_guards_where_the_last_pipeline_ends() {
        use Action::*;
        let early = |point, phase| action(Placement::Early, point, phase);
        assert_eq!(early(PIPELINE_START, PHASE_NONE), Instrument(Guards::Deferred));
        assert_eq!(early(OPTIMIZER_LAST, PHASE_NONE), LowerGuards);
        assert_eq!(early(OPTIMIZER_LAST, PHASE_THIN_LTO_POST_LINK), LowerGuards);
        assert_eq!(early(OPTIMIZER_LAST, 1), Nothing, "a pre-link compile: LTO optimises again");
        assert_eq!(early(FULL_LTO_LAST, PHASE_NONE), LowerGuards);
        assert_eq!(early(EXPLICIT, PHASE_NONE), Instrument(Guards::Now));
        let late = |point, phase| action(Placement::Late, point, phase);
        assert_eq!(late(PIPELINE_START, PHASE_NONE), Nothing);
        assert_eq!(late(OPTIMIZER_LAST, PHASE_NONE), Instrument(Guards::Now));
        assert_eq!(late(OPTIMIZER_LAST, 1), Nothing);
        assert_eq!(late(FULL_LTO_LAST, PHASE_NONE), Instrument(Guards::Now));
    }
}
