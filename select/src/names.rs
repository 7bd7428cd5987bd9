//! Readable routine names: Rust (legacy and v0), C++ (Itanium) and flang's Fortran symbols are
//! demangled; other names are shown as linked.

use instrument_contract::Language;

/// `readable`, knowing the routine's language: flang renames external procedures to the
/// Fortran 77 convention (`conj_grad_`), which reads back as written only for Fortran.
pub fn readable_in(symbol: &str, language: Language) -> String {
    let fortran = language == Language::Fortran;
    match symbol.strip_suffix('_') {
        Some(name) if fortran && !symbol.starts_with("_Q") && !name.is_empty() => name.to_string(),
        _ => readable(symbol),
    }
}

pub fn readable(symbol: &str) -> String {
    if let Some(fortran) = flang(symbol) {
        return fortran;
    }
    if let Ok(demangled) = rustc_demangle::try_demangle(symbol) {
        return format!("{demangled:#}");
    }
    if symbol.starts_with("_Z") {
        if let Ok(parsed) = cpp_demangle::Symbol::new(symbol) {
            if let Ok(text) = parsed.demangle() {
                return closing_angles(text);
            }
        }
    }
    symbol.to_string()
}

/// `a<b<c> >` as LLVM's demangler (and C++11) writes it: `a<b<c>>`, so that names read the
/// same here, in llvm-cxxfilt and in reports that fall back to LLVM's demangler.
fn closing_angles(mut text: String) -> String {
    while text.contains("> >") {
        text = text.replace("> >", ">>");
    }
    text
}

/// flang's mangling (`_Q` then upper-case tags, each followed by a lower-case name): `M` module,
/// `S` submodule, `F` host procedure, `P` procedure; `_QQmain` is the main program.
/// `_QMsolverPconj_grad` reads `solver::conj_grad`, `_QFouterPinner` reads `outer::inner`.
fn flang(symbol: &str) -> Option<String> {
    let rest = symbol.strip_prefix("_Q")?;
    if rest == "Qmain" {
        return Some("main program".into());
    }
    let mut parts = Vec::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((start, tag)) = chars.next() {
        if !matches!(tag, 'M' | 'S' | 'F' | 'P') {
            return None;
        }
        let mut end = rest.len();
        while let Some(&(i, c)) = chars.peek() {
            if c.is_ascii_uppercase() {
                end = i;
                break;
            }
            chars.next();
        }
        let name = &rest[start + 1..end];
        if name.is_empty() {
            return None;
        }
        parts.push(name);
    }
    (!parts.is_empty()).then(|| parts.join("::"))
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn demangles_cpp_rust_and_leaves_c_alone() {
        assert_eq!(readable("main"), "main");
        assert_eq!(readable("_Z3fooi"), "foo(int)");
        assert_eq!(
            readable("_Z6sum_ofIiEiRKSt6vectorIT_SaIS1_EE"),
            "int sum_of<int>(std::vector<int, std::allocator<int>> const&)"
        );
        assert_eq!(readable("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
        assert_eq!(readable("_RNvCs1234_7mycrate5parse"), "mycrate::parse");
        assert_eq!(readable("_QPconj_grad"), "conj_grad");
        assert_eq!(readable("_QMsolverPconj_grad"), "solver::conj_grad");
        assert_eq!(readable("_QFouterPinner"), "outer::inner");
        assert_eq!(readable("_QQmain"), "main program");
        assert_eq!(readable("_QQclX1234"), "_QQclX1234", "flang's internal constants stay as they are");
        assert_eq!(super::readable_in("conj_grad_", super::Language::Fortran), "conj_grad");
        assert_eq!(super::readable_in("conj_grad_", super::Language::Unknown), "conj_grad_");
        assert_eq!(super::readable_in("_QMsolverPstep", super::Language::Fortran), "solver::step");
    }
}
