//! Where a function is in the source, from its DISubprogram when the module has debug info, else
//! the module's source file with line 0.

use inkwell::llvm_sys::core::LLVMGetSourceFileName;
use inkwell::llvm_sys::debuginfo::*;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue};

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
