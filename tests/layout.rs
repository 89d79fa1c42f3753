//! The crate's layout rules, checked on its source: the top-level modules
//! import one another without a cycle and only in the direction the data
//! flows, and only `src/mpi/` calls MPI or the C shim.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments (line comments and doc comments), and
/// without `#[cfg(test)]` modules, which may reach anywhere.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each top-level module's source files: `src/x.rs` or `src/x/**`.
fn modules() -> BTreeMap<String, Vec<(PathBuf, String)>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut modules: BTreeMap<String, Vec<(PathBuf, String)>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let name = first.trim_end_matches(".rs").to_string();
        let text = code(&std::fs::read_to_string(&f).unwrap());
        modules.entry(name).or_default().push((f, text));
    }
    modules
}

/// Which top-level modules each one names through `crate::`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let names: Vec<String> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (name, files) in &modules {
        let mut uses = BTreeSet::new();
        for (_, text) in files {
            for other in &names {
                if other != name && text.contains(&format!("crate::{other}")) {
                    uses.insert(other.clone());
                }
            }
        }
        graph.insert(name.clone(), uses);
    }
    graph
}

#[test]
fn modules_import_one_another_without_a_cycle() {
    let graph = imports();
    // Depth-first search; `on_path` holds the modules being visited.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        on_path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = on_path.iter().position(|p| p == m) {
            panic!("import cycle: {} -> {m}", on_path[i..].join(" -> "));
        }
        on_path.push(m.to_string());
        for next in graph.get(m).into_iter().flatten() {
            visit(next, graph, on_path, done);
        }
        on_path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn modules_import_only_downstream() {
    let graph = imports();
    // What each module may not name: the format knows no MPI and nothing
    // that uses it; the MPI edge knows only the codes and errors; nothing
    // but the crate root names the APIs.
    let forbidden: &[(&str, &[&str])] = &[
        (
            "format",
            &[
                "mpi",
                "marshal",
                "unmarshal",
                "compare",
                "exchange",
                "api",
                "capi",
            ],
        ),
        (
            "mpi",
            &[
                "format::tree",
                "marshal",
                "unmarshal",
                "signature",
                "compare",
                "exchange",
                "api",
                "capi",
            ],
        ),
        (
            "signature",
            &[
                "mpi",
                "marshal",
                "unmarshal",
                "compare",
                "exchange",
                "api",
                "capi",
            ],
        ),
        (
            "marshal",
            &["unmarshal", "compare", "exchange", "api", "capi"],
        ),
        ("unmarshal", &["compare", "exchange", "api", "capi"]),
        ("compare", &["exchange", "api", "capi"]),
        ("exchange", &["compare", "api", "capi"]),
        ("api", &["capi"]),
    ];
    let modules = modules();
    let mut wrong = Vec::new();
    for (m, banned) in forbidden {
        for (path, text) in &modules[*m] {
            for b in *banned {
                if text.contains(&format!("crate::{b}")) {
                    wrong.push(format!("{} names crate::{b}", path.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}\n(graph: {graph:#?})");
}

#[test]
fn only_the_mpi_edge_calls_mpi() {
    let mut wrong = Vec::new();
    for (m, files) in modules() {
        if m == "mpi" {
            continue;
        }
        for (path, text) in files {
            for call in [
                "mpi_sys::",
                "mpi::sys::",
                "ffi::MPI_",
                "shim::",
                "mpixm_",
                "PMPI_",
            ] {
                if text.contains(call) {
                    wrong.push(format!("{} uses {call}", path.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "MPI called outside src/mpi/: {wrong:#?}");
}
