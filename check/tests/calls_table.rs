//! The docs' lists of checked calls against the table of interposed
//! calls (`check/calls.txt`): every call the docs name as checked or
//! wrapped is in the table, and every row of the table that checks
//! something is named in the docs (pure text, no MPI).

#[path = "../build/calls.rs"]
mod calls;

use std::collections::BTreeSet;

fn read(path: &str) -> String {
    let p = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The text of a document's section, from its heading to the next.
fn section(doc: &str, heading: &str) -> String {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no section {heading}"));
    let rest = &doc[start + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The docs' sections that list what the checker interposes.
fn docs() -> String {
    let main = read("../docs/mpix-check.md");
    let p2p = read("../docs/mpix-check-p2p.md");
    section(&main, "## What it checks") + &section(&p2p, "## What is wrapped")
}

/// The backticked words of a text (`MPI_Bcast`, `_split`, `Ssend`).
fn code_words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for span in text.split('`').skip(1).step_by(2) {
        for w in span.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !w.is_empty() {
                out.insert(w.to_string());
            }
        }
    }
    out
}

fn table() -> calls::Table {
    calls::parse(&read("calls.txt")).unwrap_or_else(|e| panic!("{e}"))
}

/// Every form the table interposes, as `MPI_…` names.
fn interposed(t: &calls::Table) -> BTreeSet<String> {
    t.rows
        .iter()
        .filter(|r| r.shape != "edge")
        .flat_map(|r| r.expand())
        .map(|f| format!("MPI_{}", f.name))
        .collect()
}

#[test]
fn every_call_the_docs_name_is_interposed() {
    let t = table();
    let names = interposed(&t);
    let not_wrapped = ["MPI_Iprobe"]; // the docs say it needs nothing
    let named: Vec<String> = code_words(&docs())
        .into_iter()
        .filter(|w| w.starts_with("MPI_") && w.chars().any(|c| c.is_lowercase()))
        .filter(|w| w.len() > "MPI_I".len() && !w.ends_with('_'))
        .filter(|w| !not_wrapped.contains(&w.as_str()))
        .collect();
    let missing: Vec<&String> = named.iter().filter(|w| !names.contains(*w)).collect();
    assert!(
        missing.is_empty(),
        "named in the docs, not in calls.txt: {missing:?}"
    );
}

#[test]
fn every_checked_row_is_in_the_docs() {
    let t = table();
    let words = code_words(&docs());
    let documented = |name: &str| {
        words.iter().any(|w| {
            w == name
                || *w == format!("MPI_{name}")
                || (w.starts_with('_') && name.ends_with(w.as_str()))
        })
    };
    let missing: Vec<&str> = t
        .rows
        .iter()
        .filter(|r| r.shape != "edge" && r.keys.get("checks").map(String::as_str) != Some("none"))
        .map(|r| r.name.as_str())
        .filter(|n| !documented(n))
        .collect();
    assert!(
        missing.is_empty(),
        "rows of calls.txt the docs do not name: {missing:?}"
    );
}

#[test]
fn the_table_expands_as_the_standard_names_its_forms() {
    let t = table();
    let names = interposed(&t);
    for n in [
        "MPI_Ibcast",
        "MPI_Bcast_init_c",
        "MPI_Ineighbor_alltoallw_c",
        "MPI_Isendrecv_replace",
        "MPI_Imrecv_c",
        "MPI_Ssend_init",
        "MPI_Recv_init_c",
    ] {
        assert!(names.contains(n), "{n} is not generated");
    }
    for n in ["MPI_Barrier_c", "MPI_Mrecv_init", "MPI_Sendrecv_init"] {
        assert!(!names.contains(n), "{n} is generated but does not exist");
    }
    let ibcast = t
        .rows
        .iter()
        .find(|r| r.name == "Bcast")
        .unwrap()
        .i_form(true);
    let params: Vec<String> = ibcast
        .params
        .iter()
        .map(|p| format!("{} {}", p.c_type(), p.name))
        .collect();
    assert_eq!(
        params.join(", "),
        "void * buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request * request"
    );
}
