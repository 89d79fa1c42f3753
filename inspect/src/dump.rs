//! `dump`: the constructor tree with every argument, name and attribute,
//! and per level what the local MPI reports (size, lb, extent, true lb and
//! true extent of the level rebuilt alone) and what the tree says (number
//! of basic elements, default signature hash). Text for people, `--json`
//! for tools.

use crate::input::{rep_name, Stream};
use crate::mpi::{self, Extents};
use mpix_marshal::describe::{self, Scalar, Value};
use mpix_marshal::{HashKind, Node, Representation};
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use std::fmt::Write;

/// What is known of one level.
struct Facts {
    extents: Result<Extents, String>,
    elements: Result<u128, String>,
    hash: Result<u64, String>,
}

/// Per-level facts, computed once for each distinct subtree (a struct of
/// a thousand MPI_INT members rebuilds MPI_INT once).
#[derive(Default)]
struct Levels {
    seen: HashMap<Vec<u8>, Result<Extents, String>>,
}

impl Levels {
    fn facts(&mut self, node: &Node) -> Facts {
        let key = mpix_marshal::write(Representation::External, node).unwrap_or_default();
        let extents = self
            .seen
            .entry(key)
            .or_insert_with(|| mpi::extents(node).map_err(|e| e.to_string()))
            .clone();
        Facts {
            extents,
            elements: mpix_marshal::tree_signature_count(node).map_err(|e| e.to_string()),
            hash: mpix_marshal::tree_signature_hash(node, HashKind::DEFAULT)
                .map_err(|e| e.to_string()),
        }
    }
}

/// The header lines: file, representation, version, length, hash.
fn header(s: &Stream) -> String {
    let mut out = String::new();
    let form = s.form.map(|f| format!(" ({f})")).unwrap_or_default();
    let _ = writeln!(out, "file            {}", s.path.display());
    let _ = writeln!(
        out,
        "representation  {}{form}, format version {}, {} bytes",
        rep_name(s.rep),
        s.version,
        s.bytes.len()
    );
    out
}

/// The text dump of a stream.
pub fn text(s: &Stream) -> String {
    let mut out = header(s);
    out.push('\n');
    let mut levels = Levels::default();
    node_text(&s.tree, "root", 0, &mut levels, &mut out);
    out
}

fn node_text(node: &Node, label: &str, depth: usize, levels: &mut Levels, out: &mut String) {
    let pad = "  ".repeat(depth);
    let _ = write!(out, "{pad}{label}: {}", describe::title(node));
    if let Some(n) = describe::name(node) {
        let _ = write!(out, " {n:?}");
    }
    if node.large {
        out.push_str(" (large-count constructor)");
    }
    if node.correction {
        out.push_str(" (extent correction added by unmarshal)");
    }
    out.push('\n');
    for (arg, value) in describe::arguments(&node.kind) {
        let _ = writeln!(out, "{pad}  {arg} {value}");
    }
    for a in &node.attrs {
        let _ = writeln!(
            out,
            "{pad}  attribute {:?}, {} bytes",
            String::from_utf8_lossy(&a.name),
            a.value.len()
        );
    }
    if let Some(b) = node.bounds {
        let _ = writeln!(
            out,
            "{pad}  recorded bounds: lb {}, extent {}",
            b.lb, b.extent
        );
    }
    let f = levels.facts(node);
    match f.extents {
        Ok(e) => {
            let _ = writeln!(
                out,
                "{pad}  size {}, lb {}, extent {}, true lb {}, true extent {}",
                e.size, e.lb, e.extent, e.true_lb, e.true_extent
            );
        }
        Err(e) => {
            let _ = writeln!(out, "{pad}  size and bounds unknown: {e}");
        }
    }
    let elements = f.elements.map_or_else(|e| e, |n| n.to_string());
    let hash = f.hash.map_or_else(|e| e, |h| format!("{h:#018x}"));
    let _ = writeln!(out, "{pad}  elements {elements}, signature hash {hash}");
    for (child, label) in node.children().iter().zip(describe::child_labels(node)) {
        node_text(child, &label, depth + 1, levels, out);
    }
}

/// The JSON dump of a stream: one object.
pub fn json(s: &Stream) -> Json {
    let mut levels = Levels::default();
    json!({
        "file": s.path.display().to_string(),
        "representation": rep_name(s.rep),
        "compressed_form": s.form,
        "format_version": s.version,
        "bytes": s.bytes.len(),
        "root": node_json(&s.tree, &mut levels),
    })
}

fn scalar_json(s: &Scalar) -> Json {
    match s {
        Scalar::Int(v) => json!(v),
        Scalar::Word(w) => json!(w),
    }
}

/// An element count: a number when it fits in 64 bits, else a string.
fn count_json(n: u128) -> Json {
    u64::try_from(n).map_or_else(|_| json!(n.to_string()), |v| json!(v))
}

fn node_json(node: &Node, levels: &mut Levels) -> Json {
    let mut o = Map::new();
    o.insert("combiner".into(), json!(node.combiner().mpi_name()));
    if let mpix_marshal::Kind::Named(p) = node.kind {
        o.insert("predefined".into(), json!(p.mpi_name()));
    }
    o.insert("name".into(), json!(describe::name(node)));
    o.insert("large".into(), json!(node.large));
    o.insert("correction".into(), json!(node.correction));
    let mut args = Map::new();
    for (arg, value) in describe::arguments(&node.kind) {
        let v = match value {
            Value::One(s) => scalar_json(&s),
            Value::Many(v) => Json::Array(v.iter().map(scalar_json).collect()),
        };
        // JSON keys without the text's unit note: "stride (bytes)" -> "stride".
        let key = arg.split(" (").next().unwrap_or(arg);
        args.insert(key.into(), v);
    }
    o.insert("arguments".into(), Json::Object(args));
    o.insert(
        "attributes".into(),
        Json::Array(
            node.attrs
                .iter()
                .map(|a| json!({"name": String::from_utf8_lossy(&a.name), "bytes": a.value.len()}))
                .collect(),
        ),
    );
    o.insert(
        "recorded_bounds".into(),
        node.bounds
            .map_or(Json::Null, |b| json!({"lb": b.lb, "extent": b.extent})),
    );
    let f = levels.facts(node);
    match f.extents {
        Ok(e) => {
            o.insert("size".into(), json!(e.size));
            o.insert("lb".into(), json!(e.lb));
            o.insert("extent".into(), json!(e.extent));
            o.insert("true_lb".into(), json!(e.true_lb));
            o.insert("true_extent".into(), json!(e.true_extent));
        }
        Err(e) => {
            o.insert("extents_error".into(), json!(e));
        }
    }
    o.insert(
        "elements".into(),
        f.elements
            .map_or_else(|e| json!({ "error": e }), count_json),
    );
    o.insert(
        "signature_hash".into(),
        f.hash
            .map_or_else(|e| json!({ "error": e }), |h| json!(format!("{h:#018x}"))),
    );
    let labels = describe::child_labels(node);
    o.insert(
        "children".into(),
        Json::Array(
            node.children()
                .iter()
                .zip(labels)
                .map(|(c, label)| {
                    let mut j = node_json(c, levels);
                    if let Json::Object(m) = &mut j {
                        m.insert("role".into(), json!(label));
                    }
                    j
                })
                .collect(),
        ),
    );
    Json::Object(o)
}
