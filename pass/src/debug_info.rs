//! Where a function is in the source, from its DISubprogram when the module has debug info, else
//! the module's source file with line 0.

use inkwell::llvm_sys::core::LLVMGetSourceFileName;
use inkwell::llvm_sys::debuginfo::*;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue};

#[derive(Debug, Clone, Default)]
pub struct SourceLocation {
    pub file: String,
    pub line: u32,
}

pub fn location_of(module: &Module<'_>, f: FunctionValue<'_>) -> SourceLocation {
    unsafe {
        let sp = LLVMGetSubprogram(f.as_value_ref());
        if !sp.is_null() {
            let file = LLVMDIScopeGetFile(sp);
            if !file.is_null() {
                return SourceLocation {
                    file: join(file_part(file, true), file_part(file, false)),
                    line: LLVMDISubprogramGetLine(sp),
                };
            }
        }
        let mut len = 0usize;
        let name = LLVMGetSourceFileName(module.as_mut_ptr(), &mut len);
        let file = bytes_to_string(name.cast(), len);
        SourceLocation { file, line: 0 }
    }
}

unsafe fn file_part(file: LLVMMetadataRef, directory: bool) -> String {
    let mut len = 0u32;
    let ptr = if directory {
        LLVMDIFileGetDirectory(file, &mut len)
    } else {
        LLVMDIFileGetFilename(file, &mut len)
    };
    bytes_to_string(ptr.cast(), len as usize)
}

unsafe fn bytes_to_string(ptr: *const u8, len: usize) -> String {
    if ptr.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(ptr, len)).into_owned()
}

fn join(directory: String, name: String) -> String {
    if directory.is_empty() || name.starts_with('/') {
        name
    } else {
        format!("{}/{}", directory.trim_end_matches('/'), name)
    }
}

use inkwell::llvm_sys::prelude::LLVMMetadataRef;

/// The source location of an instruction, when it has one with a line.
pub fn instruction_location(inst: inkwell::llvm_sys::prelude::LLVMValueRef) -> Option<SourceLocation> {
    use inkwell::llvm_sys::core::{LLVMGetDebugLocDirectory, LLVMGetDebugLocFilename, LLVMGetDebugLocLine};
    unsafe {
        let line = LLVMGetDebugLocLine(inst);
        if line == 0 {
            return None;
        }
        let mut len = 0u32;
        let name = LLVMGetDebugLocFilename(inst, &mut len);
        let name = bytes_to_string(name.cast(), len as usize);
        let mut len = 0u32;
        let dir = LLVMGetDebugLocDirectory(inst, &mut len);
        let dir = bytes_to_string(dir.cast(), len as usize);
        Some(SourceLocation { file: join(dir, name), line })
    }
}
