//! The crates' modules import each other one way only (issue 27): a module that needs another's
//! items must not be needed by it, or by anything it needs. References are read from the
//! sources (`crate::a`, `crate::a::b` when `a/b.rs` is a module, `super::x`), tests excluded.
//! The runtime is left out: its modules share the probes' global state on purpose.

use instrument_tests::repo_root;
use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The module path of a source file (`live::rows`), and the path its `super::` names start from.
fn module_of(src: &Path, file: &Path) -> (String, Vec<String>) {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let parent_of_children = matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main"));
    if parent_of_children {
        parts.pop();
    }
    let base =
        if parent_of_children { parts.clone() } else { parts[..parts.len().saturating_sub(1)].to_vec() };
    (parts.join("::"), base)
}

/// The identifier `text` starts with (empty if none).
fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// What follows each `prefix` in `text`.
fn after<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> {
    text.match_indices(prefix).map(move |(i, _)| &text[i + prefix.len()..])
}

/// Each module of the crate whose sources are in `src`, with the modules it refers to.
fn references(src: &Path) -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files.iter().filter(|f| !f.starts_with(src.join("bin"))) {
        let (module, base) = module_of(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let mut refers = Vec::new();
        for rest in after(text, "crate::") {
            let first = ident(rest);
            let second = rest[first.len()..].strip_prefix("::").map(ident).unwrap_or_default();
            let nested = !second.is_empty()
                && (src.join(first).join(format!("{second}.rs")).is_file()
                    || src.join(first).join(second).join("mod.rs").is_file());
            refers.push(if nested { format!("{first}::{second}") } else { first.to_string() });
        }
        for name in after(text, "super::").map(ident).filter(|n| !n.is_empty()) {
            refers.push(base.iter().map(String::as_str).chain([name]).collect::<Vec<_>>().join("::"));
        }
        modules.insert(module, refers);
    }
    modules
}

fn cycles(crate_dir: &str) -> Vec<Vec<String>> {
    let modules = references(&repo_root().join(crate_dir).join("src"));
    let mut graph = DiGraphMap::<&str, ()>::new();
    for (module, refers) in &modules {
        graph.add_node(module);
        for other in refers.iter().filter(|o| *o != module && modules.contains_key(*o)) {
            graph.add_edge(module, other, ());
        }
    }
    let mut found: Vec<Vec<String>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(String::from).collect())
        .collect();
    found.sort();
    found
}

#[test]
fn no_crate_but_the_runtime_has_an_import_cycle() {
    for crate_dir in
        ["toolchain", "report", "driver", "live", "profile", "select", "pass", "contract", "cargo-subcommand"]
    {
        assert_eq!(
            cycles(crate_dir),
            Vec::<Vec<String>>::new(),
            "modules of {crate_dir}/ that import each other"
        );
    }
}

#[test]
fn the_check_sees_a_cycle_where_there_is_one() {
    let found = cycles("rt");
    assert!(
        found.iter().any(|c| c.contains(&"output".to_string()) && c.contains(&"reserve".to_string())),
        "{found:?}"
    );
}
