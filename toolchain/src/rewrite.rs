//! `instrument rewrite`: the bitcode-rewriter front door. The pass lives in the plugin library;
//! the driver loads it with dlopen and calls its C entry point, so the driver itself does not
//! depend on LLVM and can report a missing LLVM 22 in plain words.

use crate::layout;
use crate::{Result, ToolchainError};
use std::ffi::{c_char, c_int, CString};
use std::path::Path;

type RewriteFn = unsafe extern "C" fn(*const c_char, *const c_char, c_int, *mut c_char, usize) -> c_int;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    Bitcode,
    Object,
}

impl Emit {
    /// `.o` means an object file; anything else is bitcode.
    pub fn from_output(path: &Path) -> Emit {
        match path.extension().and_then(|e| e.to_str()) {
            Some("o") => Emit::Object,
            _ => Emit::Bitcode,
        }
    }
}

pub fn rewrite(input: &Path, output: &Path, emit: Emit) -> Result<()> {
    if !input.is_file() {
        return Err(ToolchainError::MissingInput { path: input.to_path_buf() });
    }
    let plugin = layout::plugin()?;
    let library = unsafe { libloading::Library::new(&plugin) }.map_err(|source| {
        if source.to_string().contains("libLLVM") {
            ToolchainError::LlvmMissing(source)
        } else {
            ToolchainError::PluginLoad { path: plugin.clone(), source }
        }
    })?;
    let entry: libloading::Symbol<RewriteFn> = unsafe { library.get(b"instrument_rewrite_bitcode\0") }
        .map_err(|source| ToolchainError::NotAPlugin { path: plugin.clone(), source })?;
    let c_input = CString::new(input.as_os_str().as_encoded_bytes())?;
    let c_output = CString::new(output.as_os_str().as_encoded_bytes())?;
    let mut error = vec![0u8; 4096];
    let status = unsafe {
        entry(
            c_input.as_ptr(),
            c_output.as_ptr(),
            c_int::from(emit == Emit::Object),
            error.as_mut_ptr().cast(),
            error.len(),
        )
    };
    if status != 0 {
        let end = error.iter().position(|&b| b == 0).unwrap_or(error.len());
        return Err(ToolchainError::RewriteFailed {
            message: String::from_utf8_lossy(&error[..end]).into_owned(),
        });
    }
    Ok(())
}
