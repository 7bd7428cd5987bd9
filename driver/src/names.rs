//! Readable routine names: Rust (legacy and v0) and C++ (Itanium) symbols are demangled; other
//! names are shown as linked.

pub fn readable(symbol: &str) -> String {
    if let Ok(demangled) = rustc_demangle::try_demangle(symbol) {
        return format!("{demangled:#}");
    }
    if symbol.starts_with("_Z") {
        if let Ok(parsed) = cpp_demangle::Symbol::new(symbol) {
            if let Ok(text) = parsed.demangle() {
                return text;
            }
        }
    }
    symbol.to_string()
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn demangles_cpp_rust_and_leaves_c_alone() {
        assert_eq!(readable("main"), "main");
        assert_eq!(readable("_Z3fooi"), "foo(int)");
        assert_eq!(readable("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
        assert_eq!(readable("_RNvCs1234_7mycrate5parse"), "mycrate::parse");
    }
}
