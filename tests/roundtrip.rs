//! Every corpus type survives marshal → unmarshal unchanged by every
//! observable, on the MPI the tests are built against.

mod common;
use common::*;
use mpix_marshal::{marshal, marshal_size, unmarshal, Representation};

#[test]
fn corpus_round_trips_through_external() {
    init();
    let corpus = corpus();
    assert!(corpus.len() >= 40, "the corpus has {} types", corpus.len());
    println!("round-tripping {} corpus types", corpus.len());
    for c in &corpus {
        let bytes = marshal(Representation::External, c.datatype)
            .unwrap_or_else(|e| panic!("{}: marshal: {e}", c.name));
        assert_eq!(
            marshal_size(Representation::External, c.datatype).unwrap(),
            bytes.len(),
            "{}",
            c.name
        );
        let back = unmarshal(Representation::External, &bytes)
            .unwrap_or_else(|e| panic!("{}: unmarshal: {e}", c.name));
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
            let again = unmarshal(Representation::External, &bytes).unwrap();
            assert_eq!(
                marshal(Representation::External, again).unwrap(),
                bytes,
                "{}: bytes differ after a round trip",
                c.name
            );
            free(again);
        }
    }
}
