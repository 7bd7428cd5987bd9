//! Readable routine names, as LLVM's own tools read them. C++ names (and D names, and any
//! other name the shared rules leave mangled) go to LLVM's demangler in the pass plugin, loaded
//! on first need: cpp_demangle, which the shared rules (`instrument_select::names`) use where
//! LLVM is not at hand, cannot parse C++20's constrained templates and drops parameters of some
//! libstdc++ constructors. D names LLVM cannot read go to binutils' D demangler. Rust names
//! keep rustc-demangle's reading (without the hash), flang's names the shared rule; without the
//! plugin every name reads as the shared rules say.

use instrument_profile::{Function, Language};
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Mutex, OnceLock};

type DemangleFn = unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> usize;

/// The name reports give routine `f`: its readable name, or for a parallel region the compiler
/// outlined (clang's `ROUTINE.omp_outlined…`, flang's `ROUTINE..omp_par…`) `parallel region at
/// FILE:LINE in ROUTINE`, from the outlined function's debug location. Selections and
/// suggested filters keep matching the symbol's readable name.
pub fn function_name(f: &Function) -> String {
    match openmp_region_host(&f.name) {
        Some("") => format!("parallel region at {}", location(&f.file, f.line)),
        Some(host) => {
            format!("parallel region at {} in {}", location(&f.file, f.line), readable_in(host, f.language))
        }
        None => readable_in(&f.name, f.language),
    }
}

/// The routine whose parallel region `symbol` is, when it is an outlined OpenMP region.
fn openmp_region_host(symbol: &str) -> Option<&str> {
    [".omp_outlined", "..omp_par"].iter().find_map(|marker| symbol.find(marker).map(|at| &symbol[..at]))
}

/// `cg.c:412`: a source location as reports show it (the file's base name).
pub fn location(file: &str, line: u32) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    if line == 0 {
        base.to_string()
    } else {
        format!("{base}:{line}")
    }
}

/// `symbol` readable, knowing its routine's language (see `instrument_select::names`).
pub fn readable_in(symbol: &str, language: Language) -> String {
    fallback(symbol, instrument_select::names::readable_in(symbol, language))
}

/// `symbol` readable.
pub fn readable(symbol: &str) -> String {
    fallback(symbol, instrument_select::names::readable(symbol))
}

fn fallback(symbol: &str, shared: String) -> String {
    let cxx = (symbol.starts_with("_Z") || symbol.starts_with("__Z"))
        && rustc_demangle::try_demangle(symbol).is_err();
    let unread = shared == symbol && ["_R", "_D"].iter().any(|p| symbol.starts_with(p));
    if cxx || unread {
        if let Some(text) = llvm(symbol) {
            return text;
        }
    }
    shared
}

/// LLVM's reading of `symbol`, remembered; None when the plugin cannot be loaded or LLVM
/// cannot read it either.
fn llvm(symbol: &str) -> Option<String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(known) = cache.lock().ok()?.get(symbol) {
        return known.clone();
    }
    let readable = demangle(symbol)
        .filter(|text| text != symbol)
        .or_else(|| symbol.starts_with("_D").then(|| binutils_dlang(symbol)).flatten());
    cache.lock().ok()?.insert(symbol.to_string(), readable.clone());
    readable
}

fn demangle(symbol: &str) -> Option<String> {
    static PLUGIN: OnceLock<Option<libloading::Library>> = OnceLock::new();
    let plugin = PLUGIN
        .get_or_init(|| {
            let path = instrument_toolchain::layout::plugin().ok()?;
            // SAFETY: the pass plugin has no initialisers beyond LLVM's own.
            unsafe { libloading::Library::new(path) }.ok()
        })
        .as_ref()?;
    // SAFETY: `instrument_demangle` has this signature (pass/src/demangle.rs).
    let entry: libloading::Symbol<DemangleFn> = unsafe { plugin.get(b"instrument_demangle\0") }.ok()?;
    let input = CString::new(symbol).ok()?;
    let mut out = vec![0u8; 1024];
    loop {
        // SAFETY: `input` is NUL-terminated and `out` has `out.len()` bytes.
        let needed = unsafe { entry(input.as_ptr(), out.as_mut_ptr().cast(), out.len()) };
        if needed < out.len() {
            out.truncate(needed);
            return String::from_utf8(out).ok();
        }
        out.resize(needed + 1, 0);
    }
}

/// binutils' reading of the D symbol `symbol` (`c++filt -s dlang`, there wherever a D program
/// was linked): LLVM's D demangler reads only `_Dmain` and names without a type, which D's
/// functions always carry.
fn binutils_dlang(symbol: &str) -> Option<String> {
    let output = std::process::Command::new("c++filt").args(["-s", "dlang", symbol]).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim_end_matches('\n');
    (output.status.success() && text != symbol && !text.contains('\n')).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routine(name: &str, file: &str, line: u32, language: &str) -> Function {
        serde_json::from_value(serde_json::json!({
            "name": name, "file": file, "line": line, "language": language,
            "calls": 1, "child_calls": 0, "exclusive_ns": 0, "inclusive_ns": 0,
        }))
        .expect("a routine")
    }

    #[test]
    fn d_names_read_as_d_writes_them() {
        assert_eq!(readable("_D3app3fibFiZi"), "app.fib(int)");
        assert_eq!(
            readable("_D3std5stdio4File17LockingTextWriter__T3putTaZQhMFNfaZv"),
            "std.stdio.File.LockingTextWriter.put!(char).put(char)"
        );
        assert_eq!(readable("_D3app"), "_D3app", "not a D symbol: left as it is");
    }

    #[test]
    fn outlined_parallel_regions_are_named_for_their_place() {
        let clang = routine("conj_grad.omp_outlined_debug__.45", "/src/cg.c", 412, "c");
        assert_eq!(function_name(&clang), "parallel region at cg.c:412 in conj_grad");
        let top = routine(".omp_outlined.", "/src/a.c", 7, "c");
        assert_eq!(function_name(&top), "parallel region at a.c:7");
        let flang = routine("_QPsolve..omp_par.2", "/src/s.f90", 0, "fortran");
        assert_eq!(function_name(&flang), "parallel region at s.f90 in solve");
        let plain = routine("compute_omp_outlined_total", "/src/b.c", 3, "c");
        assert_eq!(function_name(&plain), "compute_omp_outlined_total", "no marker: the name as it is");
    }
}
