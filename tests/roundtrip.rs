//! Every corpus type survives marshal → unmarshal unchanged by every
//! observable, on the MPI the tests are built against.

mod common;
use common::*;
use mpix_marshal::{marshal, marshal_size, unmarshal, Representation};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

#[test]
fn corpus_round_trips_through_external() {
    round_trip(Representation::External);
}

#[test]
fn corpus_round_trips_through_internal() {
    round_trip(Representation::Internal);
}

#[test]
fn corpus_round_trips_through_compressed() {
    round_trip(Representation::Compressed);
}

/// Size rules: internal is no larger than external, compressed at most 8
/// bytes larger.
#[test]
fn representation_sizes() {
    init();
    for c in &corpus() {
        let [ext, int, zip] = REPS.map(|r| marshal(r, c.datatype).unwrap().len());
        assert!(
            int <= ext,
            "{}: internal {int} B > external {ext} B",
            c.name
        );
        assert!(
            zip <= ext + 8,
            "{}: compressed {zip} B > external {ext} + 8 B",
            c.name
        );
    }
}

fn round_trip(rep: Representation) {
    init();
    let corpus = corpus();
    assert!(corpus.len() >= 40, "the corpus has {} types", corpus.len());
    println!(
        "round-tripping {} corpus types through {rep:?}",
        corpus.len()
    );
    for c in &corpus {
        let bytes = marshal(rep, c.datatype).unwrap_or_else(|e| panic!("{}: marshal: {e}", c.name));
        let bound = marshal_size(rep, c.datatype).unwrap();
        assert!(
            bound >= bytes.len(),
            "{}: size bound {bound} < {}",
            c.name,
            bytes.len()
        );
        let back = unmarshal(rep, &bytes).unwrap_or_else(|e| panic!("{}: unmarshal: {e}", c.name));
        assert_same(&c.name, c.datatype, back, true);
        let predefined = mpix_marshal::type_tree(c.datatype).unwrap().is_predefined();
        if predefined {
            assert_eq!(
                back, c.datatype,
                "{}: a named type comes back as the same handle",
                c.name
            );
        } else {
            assert_ne!(back, c.datatype);
            free(back);
        }
        // Marshalling the rebuilt type gives the same bytes.
        if !predefined {
            let again = unmarshal(rep, &bytes).unwrap();
            assert_eq!(
                marshal(rep, again).unwrap(),
                bytes,
                "{}: bytes differ after a round trip",
                c.name
            );
            free(again);
        }
    }
}

/// Open MPI names every type of size 0 "Dup MPI_EMPTY" (a zero count, at
/// any level, or a type built from one); MPICH names them nothing. It is
/// not a user's name: no stream carries it, so the same type gives the
/// same bytes on every MPI. A name the user sets is kept.
#[test]
fn zero_size_types_carry_no_automatic_name() {
    init();
    let int = named("MPI_INT");
    let empty = contiguous(0, int);
    let cases = [
        ("contiguous(0)", contiguous(0, int)),
        ("vector(0)", vector(0, 1, 1, int)),
        ("indexed(0)", indexed(&[], &[], int)),
        ("struct(0)", structure(&[], &[], &[])),
        ("contiguous(2, empty)", contiguous(2, empty)),
        (
            "struct{int, empty}",
            structure(&[1, 1], &[0, 8], &[int, empty]),
        ),
    ];
    fn names(n: &mpix_marshal::testing::tree::Node, out: &mut Vec<String>) {
        if let Some(name) = &n.name {
            out.push(String::from_utf8_lossy(name).into_owned());
        }
        n.children().iter().for_each(|c| names(c, out));
    }
    for (what, t) in cases {
        let tree = mpix_marshal::type_tree(t).unwrap();
        let mut found = Vec::new();
        names(&tree, &mut found);
        assert!(found.is_empty(), "{what}: names {found:?} in {tree:?}");
        free(t);
    }
    let mine = set_name(contiguous(0, int), "Dup MPI_EMPTY, really");
    let tree = mpix_marshal::type_tree(mine).unwrap();
    assert_eq!(tree.name.as_deref(), Some(&b"Dup MPI_EMPTY, really"[..]));
    free(mine);
    free(empty);
}
