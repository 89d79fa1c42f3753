//! The direct unmarshal (`src/unmarshal/direct.rs`) against the tree path it
//! stands in for (`read` + `encode`, src/unmarshal/mod.rs): it must cover
//! the common types, build exactly what the tree path builds, and never
//! accept a stream the tree path refuses.

mod common;
use common::*;
use mpix_marshal::testing::api::unmarshal_direct;
use mpix_marshal::testing::codes::Combiner;
use mpix_marshal::testing::external::int_fields;
use mpix_marshal::testing::mpi::{self, Datatype};
use mpix_marshal::testing::tree::{validate, Kind, Node};
use mpix_marshal::testing::unmarshal::build;
use mpix_marshal::{marshal, read, type_tree, unmarshal, Representation};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

/// What the tree path builds from `bytes`.
fn tree_path(rep: Representation, bytes: &[u8]) -> mpix_marshal::Result<Datatype> {
    build(&read(rep, bytes)?, rep.c_name())
}

fn has_markers() -> bool {
    try_named("MPI_LB").is_some()
}

/// The benchmark's types take the direct path in every representation and
/// come back equal to the original by every observable.
#[test]
fn covers_the_benchmark_types() {
    init();
    let mut types = vec![
        ("paper indexed", paper_indexed()),
        ("HDF5 resized", hdf5_complex(false)),
        ("struct of 1000", struct_1000()),
        ("indexed 100k", indexed_100k()),
        (
            "named levels",
            set_name(
                vector(3, 2, -5, set_name(contiguous(2, named("MPI_INT")), "inner")),
                "outer",
            ),
        ),
    ];
    if has_markers() {
        types.push(("HDF5 LB/UB", hdf5_complex(true)));
    }
    for (name, t) in types {
        for rep in REPS {
            let bytes = marshal(rep, t).unwrap();
            let what = format!("{name} {rep:?}");
            let back = unmarshal_direct(rep, &bytes)
                .unwrap_or_else(|| panic!("{what}: not taken by the direct path"))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_same(&what, t, back, true);
            release(back);
        }
        release(t);
    }
    // A predefined type comes back as itself.
    let int = named("MPI_INT");
    let bytes = marshal(Representation::External, int).unwrap();
    let back = unmarshal_direct(Representation::External, &bytes).unwrap();
    assert!(back.unwrap() == int);
}

/// Over the corpus: where the direct path builds a type, the tree path
/// builds one equal to it by every observable; the common combiners are
/// covered, the others left to the tree path.
#[test]
fn agrees_with_the_tree_path_on_the_corpus() {
    init();
    let (mut covered, mut left) = (0, Vec::new());
    for c in corpus() {
        for rep in REPS {
            let bytes = marshal(rep, c.datatype).unwrap();
            let what = format!("{} {rep:?}", c.name);
            let Some(direct) = unmarshal_direct(rep, &bytes) else {
                left.push(what);
                continue;
            };
            covered += 1;
            let direct = direct.unwrap_or_else(|e| panic!("{what}: {e}"));
            let tree = tree_path(rep, &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_same(&what, tree, direct, true);
            assert_same(&what, c.datatype, direct, true);
            free(direct);
            free(tree);
        }
        free(c.datatype);
    }
    println!("direct path: {covered} streams; tree path: {left:?}");
    assert!(
        covered >= 3 * 30,
        "only {covered} corpus streams take the direct path"
    );
}

/// Whether the direct path is meant to build `node`
/// (src/unmarshal/direct.rs): no large-count or attributed node, only the
/// common combiners, every field within 32 bits (no WIDE node), every
/// predefined type defined here.
fn covered(node: &Node) -> bool {
    let own = match node.kind {
        Kind::Named(p) => mpi::local().datatype(p).is_some(),
        _ => matches!(
            node.combiner(),
            Combiner::Dup
                | Combiner::Contiguous
                | Combiner::Vector
                | Combiner::Hvector
                | Combiner::Indexed
                | Combiner::Hindexed
                | Combiner::IndexedBlock
                | Combiner::HindexedBlock
                | Combiner::Struct
                | Combiner::Resized
        ),
    };
    let narrow = int_fields(node).iter().all(|&v| i32::try_from(v).is_ok());
    own && narrow
        && !node.large
        && !node.correction
        && node.attrs.is_empty()
        && node.children().iter().all(covered)
}

/// The direct path takes exactly the streams it is meant to cover.
#[test]
fn takes_exactly_what_it_covers() {
    init();
    for c in corpus() {
        for rep in REPS {
            let bytes = marshal(rep, c.datatype).unwrap();
            let expected = covered(&read(rep, &bytes).unwrap());
            let built = unmarshal_direct(rep, &bytes);
            assert_eq!(built.is_some(), expected, "{} {rep:?}", c.name);
            if let Some(t) = built {
                free(t.unwrap());
            }
        }
        free(c.datatype);
    }
}

/// Every strict prefix and many single-byte changes of covered streams:
/// the direct path accepts only what the tree path accepts, and then
/// builds the same type; what it refuses, unmarshal reports as read does.
#[test]
fn never_laxer_than_the_tree_path() {
    init();
    let types = [
        paper_indexed(),
        hdf5_complex(false),
        set_name(
            resized(
                hvector(2, 1, 24, set_name(dup(named("MPI_DOUBLE")), "d")),
                -8,
                64,
            ),
            "top",
        ),
        structure(
            &[1, 0, 3],
            &[0, 8, 16],
            &[
                named("MPI_INT"),
                named("MPI_CHAR"),
                indexed_block(2, &[0, 3, -1], named("MPI_SHORT")),
            ],
        ),
        hindexed(&[1, 2], &[16, -8], contiguous(3, named("MPI_FLOAT"))),
    ];
    let (mut tried, mut accepted) = (0, 0);
    for &t in &types {
        for rep in [Representation::External, Representation::Internal] {
            let good = marshal(rep, t).unwrap();
            let mut variants: Vec<Vec<u8>> = (0..good.len()).map(|n| good[..n].to_vec()).collect();
            for i in 0..good.len() {
                for change in [|b: u8| b ^ 0x01, |b: u8| b ^ 0x80, |_| 0xff, |_| 0x00] {
                    let mut v = good.clone();
                    v[i] = change(v[i]);
                    if v != good {
                        variants.push(v);
                    }
                }
            }
            for v in &variants {
                tried += 1;
                let direct = unmarshal_direct(rep, v);
                let tree = read(rep, v);
                match direct {
                    None => {
                        // unmarshal then reports what read and validate do.
                        let expected = tree.and_then(|t| validate(&t).map(|()| t));
                        if let Err(e) = expected {
                            assert_eq!(unmarshal(rep, v).err(), Some(e), "{rep:?} {v:02x?}");
                        }
                    }
                    Some(built) => {
                        accepted += 1;
                        let built = built.unwrap_or_else(|e| panic!("{rep:?} {v:02x?}: {e}"));
                        let tree = tree.unwrap_or_else(|e| {
                            panic!("{rep:?} {v:02x?}: direct accepts, read refuses: {e}")
                        });
                        validate(&tree).unwrap_or_else(|e| {
                            panic!("{rep:?} {v:02x?}: direct accepts an invalid tree: {e}")
                        });
                        let rebuilt = tree_path(rep, v).unwrap();
                        assert_eq!(
                            type_tree(built).unwrap(),
                            type_tree(rebuilt).unwrap(),
                            "{rep:?} {v:02x?}: the paths build different types"
                        );
                        release(built);
                        release(rebuilt);
                    }
                }
            }
        }
    }
    println!("{tried} altered streams, {accepted} accepted by the direct path");
    // A one-byte change to a displacement or a name keeps a stream valid
    // (the signature hash covers neither): some are accepted.
    assert!(accepted > 100, "only {accepted} altered streams accepted");
    for t in types {
        release(t);
    }
}

/// A stream whose header hash is not its tree's is left to the tree
/// path, which names the mismatch.
#[test]
fn hash_mismatch_is_left_to_the_tree_path() {
    init();
    let t = paper_indexed();
    let mut bytes = marshal(Representation::External, t).unwrap();
    bytes[11] ^= 1; // the low bit of the signature hash
    mpix_marshal::testing::external::reseal(&mut bytes); // past the checksum
    assert!(unmarshal_direct(Representation::External, &bytes).is_none());
    let e = unmarshal(Representation::External, &bytes).unwrap_err();
    assert!(e.to_string().contains("signature hash"), "{e}");
    release(t);
}
