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
