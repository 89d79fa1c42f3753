//! The checker's layout as a test: each module's imports (`crate::…`,
//! `super::…` in its source) run only to its own layer or below, and form
//! no cycle. The layers, top to bottom, are those of `src/lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layer of each module, 0 at the top.
const LAYERS: &[(usize, &[&str])] = &[
    (
        0,
        &[
            "entry",
            "entry::completion",
            "entry::own",
            "entry::p2p_shape",
            "entry::shape",
            "entry::type_shape",
        ],
    ),
    (
        1,
        &[
            "arrays",
            "batch",
            "check",
            "datatypes",
            "io",
            "p2p",
            "p2p::batches",
            "p2p::channels",
            "p2p::companions",
            "p2p::completion",
            "p2p::counts",
            "p2p::lifecycle",
            "p2p::lost",
            "p2p::matching",
            "p2p::persistent",
            "p2p::verdict",
            "rma",
        ],
    ),
    (2, &["polled", "watchdog"]),
    (3, &["hang", "inside", "sig"]),
    (
        4,
        &["mpi", "mpi::channel", "mpi::doubling", "mpi::errhandler"],
    ),
    (
        5,
        &[
            "digest",
            "forwarded",
            "internal",
            "names",
            "order",
            "record",
            "report",
            "site",
            "slots",
            "threads",
            "types",
            "waiting",
            "wire",
        ],
    ),
];

fn layer_of(m: &str) -> Option<usize> {
    LAYERS
        .iter()
        .find(|(_, ms)| ms.contains(&m))
        .map(|(l, _)| *l)
}

/// Every module of src/ by its path (`p2p::lost`), with its source.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(&src).unwrap().with_extension("");
                let name = rel.to_string_lossy().replace("/mod", "").replace('/', "::");
                if name != "lib" {
                    out.insert(name, std::fs::read_to_string(&p).unwrap());
                }
            }
        }
    }
    out
}

/// The modules `m`'s code names (comments and unit tests left out).
fn imports(m: &str, text: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let parent = m.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = BTreeSet::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent.to_string())] {
        for (i, _) in code.match_indices(prefix) {
            let rest = &code[i + prefix.len()..];
            let words: Vec<&str> = rest
                .split("::")
                .take(2)
                .map(|w| {
                    w.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap()
                })
                .collect();
            let join = |ws: &[&str]| {
                let tail = ws.join("::");
                if base.is_empty() {
                    tail
                } else {
                    format!("{base}::{tail}")
                }
            };
            let two = join(&words);
            let one = join(&words[..1]);
            if all.contains_key(&two) {
                out.insert(two);
            } else if all.contains_key(&one) {
                out.insert(one);
            } else if prefix == "super::" && all.contains_key(parent) {
                out.insert(parent.to_string());
            }
        }
    }
    out.remove(m);
    out
}

#[test]
fn every_module_has_a_layer() {
    for m in modules().keys() {
        assert!(
            layer_of(m).is_some(),
            "{m} is in no layer of tests/layers.rs"
        );
    }
}

#[test]
fn imports_run_down_and_form_no_cycle() {
    let all = modules();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &all {
        let to = imports(m, text, &all);
        for t in &to {
            let (from_l, to_l) = (layer_of(m).unwrap_or(0), layer_of(t).unwrap_or(0));
            assert!(
                to_l >= from_l,
                "{m} (layer {from_l}) imports {t} (layer {to_l}), above it"
            );
        }
        edges.insert(m.clone(), to);
    }
    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) {
        state.insert(m.into(), 1);
        path.push(m.into());
        for t in edges.get(m).into_iter().flatten() {
            match state.get(t.as_str()) {
                Some(1) => panic!("an import cycle: {} -> {t}", path.join(" -> ")),
                Some(_) => {}
                None => visit(t, edges, state, path),
            }
        }
        path.pop();
        state.insert(m.into(), 2);
    }
    let mut state = BTreeMap::new();
    for m in edges.keys() {
        if !state.contains_key(m.as_str()) {
            visit(m, &edges, &mut state, &mut vec![]);
        }
    }
}
