//! The bitcode-rewriter front door: read bitcode from disk, run the same pass, verify, and write
//! bitcode or a native object atomically. Exported with a C ABI so that the `instrument` driver can
//! load it with dlopen and need not link LLVM itself.

use crate::{instrument_module, Options, Stats};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;
use std::ffi::{c_char, c_int, CStr};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    Bitcode,
    Object,
}

/// Instruments the bitcode file `input` and writes `output` (bitcode or a native object).
/// Nothing is written unless the whole rewrite succeeds.
pub fn rewrite_file(
    input: &Path,
    output: &Path,
    kind: OutputKind,
    options: &Options,
) -> Result<Stats, String> {
    let context = Context::create();
    let module = Module::parse_bitcode_from_path(input, &context)
        .map_err(|e| format!("cannot read bitcode {}: {}", input.display(), e.to_string().trim()))?;
    module.verify().map_err(|e| {
        format!("{} does not verify before instrumentation: {}", input.display(), e.to_string().trim())
    })?;
    let stats = instrument_module(&module, options);
    module.verify().map_err(|e| {
        format!("internal error: instrumented module does not verify: {}", e.to_string().trim())
    })?;
    let temporary = temporary_path(output);
    let written = match kind {
        OutputKind::Bitcode => module
            .write_bitcode_to_path(&temporary)
            .then_some(())
            .ok_or_else(|| format!("cannot write {}", temporary.display())),
        OutputKind::Object => write_object(&module, &temporary),
    };
    let renamed = written.and_then(|()| {
        std::fs::rename(&temporary, output).map_err(|e| format!("cannot write {}: {e}", output.display()))
    });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    renamed.map(|()| stats)
}

fn temporary_path(output: &Path) -> PathBuf {
    let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    output.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

fn write_object(module: &Module<'_>, path: &Path) -> Result<(), String> {
    Target::initialize_x86(&InitializationConfig::default());
    let triple = match module.get_triple().as_str().to_str() {
        Ok("") | Err(_) => TargetMachine::get_default_triple(),
        Ok(_) => module.get_triple(),
    };
    let target = Target::from_triple(&triple).map_err(|e| format!("unsupported target {triple}: {e}"))?;
    let machine = target
        .create_target_machine(
            &triple,
            "generic",
            "",
            OptimizationLevel::Default,
            RelocMode::PIC,
            CodeModel::Default,
        )
        .ok_or_else(|| format!("cannot create a target machine for {triple}"))?;
    machine
        .write_to_file(module, FileType::Object, path)
        .map_err(|e| format!("cannot write object {}: {}", path.display(), e.to_string().trim()))
}

/// C ABI for the driver: returns 0 on success; otherwise writes a NUL-terminated message into
/// `error` (at most `error_len` bytes) and returns 1. `object` selects a native object output.
///
/// # Safety
/// `input` and `output` are NUL-terminated paths; `error` points to `error_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn instrument_rewrite_bitcode(
    input: *const c_char,
    output: *const c_char,
    object: c_int,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    let input = Path::new(CStr::from_ptr(input).to_str().unwrap_or_default());
    let output = Path::new(CStr::from_ptr(output).to_str().unwrap_or_default());
    let kind = if object != 0 { OutputKind::Object } else { OutputKind::Bitcode };
    let result = Options::from_env().and_then(|o| rewrite_file(input, output, kind, &o));
    match result {
        Ok(_) => 0,
        Err(message) => {
            let bytes = message.as_bytes();
            let n = bytes.len().min(error_len.saturating_sub(1));
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), error.cast::<u8>(), n);
            *error.add(n) = 0;
            1
        }
    }
}
