//! The source language of each instrumented routine, so that a profile of a program mixing
//! languages (Fortran calling C, a Rust crate with C dependencies in one LTO module) says which
//! routine is which. flang and rustc name themselves in `llvm.ident`; clang does not tell C
//! from C++ there, so the routine's own file extension decides, or else the module's main file.

use crate::ir;
use inkwell::module::Module;
pub use instrument_contract::Language;

/// The language of a module's routines when their own file does not tell.
pub fn of_module(module: &Module<'_>) -> Language {
    if ir::produced_by(module, "flang") {
        Language::Fortran
    } else if ir::produced_by(module, "rustc") {
        Language::Rust
    } else {
        by_extension(&module.get_source_file_name().to_string_lossy()).unwrap_or(Language::Unknown)
    }
}

/// The language of a routine defined in `file` (its debug-info file) in a module of language
/// `module`: headers and files without extension take the module's.
pub fn of_routine(file: &str, module: Language) -> Language {
    by_extension(file).unwrap_or(module)
}

fn by_extension(path: &str) -> Option<Language> {
    let extension = std::path::Path::new(path).extension()?.to_str()?;
    match extension {
        "c" => Some(Language::C),
        "C" | "cc" | "cp" | "cpp" | "cxx" | "c++" | "CPP" | "ixx" | "cppm" => Some(Language::Cxx),
        "rs" => Some(Language::Rust),
        _ if is_fortran(extension) => Some(Language::Fortran),
        _ => None,
    }
}

fn is_fortran(extension: &str) -> bool {
    matches!(
        extension.to_ascii_lowercase().as_str(),
        "f" | "for" | "ftn" | "fpp" | "f77" | "f90" | "f95" | "f03" | "f08" | "f18" | "cuf"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_decide_and_headers_take_the_module_language() {
        assert_eq!(of_routine("/src/a.c", Language::Unknown), Language::C);
        assert_eq!(of_routine("a.C", Language::C), Language::Cxx);
        assert_eq!(of_routine("x/ledger.cpp", Language::C), Language::Cxx);
        assert_eq!(of_routine("solver.F90", Language::C), Language::Fortran);
        assert_eq!(of_routine("/rustc/abc/library/core/src/fmt/mod.rs", Language::C), Language::Rust);
        assert_eq!(of_routine("include/matrix.h", Language::Cxx), Language::Cxx);
        assert_eq!(of_routine("", Language::C), Language::C);
    }
}
