//! The external stream meets the size goals (Table 1 of the paper plus at
//! most 8 bytes of header).

mod common;
use common::*;
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::{marshal, type_tree, unmarshal, Error, Representation};

fn size_of(t: mpix_marshal::testing::mpi::Datatype) -> usize {
    marshal(Representation::External, t).unwrap().len()
}

#[test]
fn named_is_at_most_20_bytes() {
    init();
    // 16 bytes, and the checksum's 4 (spec/external.md §4.1).
    for (_, name) in mpix_marshal::testing::codes::PREDEFINED {
        if let Some(t) = try_named(name) {
            assert_eq!(size_of(t), 20, "{name}");
        }
    }
}

#[test]
fn paper_indexed_is_at_most_52_bytes() {
    init();
    // 48 bytes, and the checksum's 4.
    let t = paper_indexed();
    assert!(size_of(t) <= 52, "{} bytes", size_of(t));
    free(t);
}

#[test]
fn hdf5_complex_is_at_most_832_bytes() {
    init();
    let t = hdf5_complex(false);
    let n = size_of(t);
    println!("HDF5 complex, resized form: {n} bytes");
    assert!(n <= 832, "{n} bytes");
    free(t);
    if try_named("MPI_LB").is_some() {
        let t = hdf5_complex(true);
        let n = size_of(t);
        println!("HDF5 complex, LB/UB form: {n} bytes");
        assert!(n <= 832, "{n} bytes");
        let g = mpix_marshal::testing::mpi::geometry(t).unwrap();
        assert_eq!(
            (g.size, g.lb, g.extent),
            (5000, 0, 200000),
            "REFERENCE.md's expected geometry"
        );
        free(t);
    }
}

/// On an MPI-4 library a `_c` constructor is recorded as large and a
/// classic one is not. On an MPI-3 library (Open MPI 4.1) the shim has no
/// `_c` constructors, a large node whose arguments fit a C int is rebuilt
/// with the classic one, and one whose counts do not is refused by name.
#[test]
fn large_count_constructors_are_recorded() {
    init();
    let int = named("MPI_INT");
    let mut o = null();
    let rc = unsafe { mpix_marshal::testing::mpi::shim::mpixm_type_contiguous_c(7, int, &mut o) };
    if !mpix_marshal::testing::mpi::local().has_large_count() {
        assert_ne!(rc, 0, "an MPI-3 shim built a _c constructor");
        let large = |count: i64| {
            let mut n = Node::new(Kind::Contiguous {
                count,
                old: Box::new(Node::named(Predefined(0x209))),
            });
            n.large = true;
            unmarshal(Representation::External, &stream_of(&n))
        };
        let small = large(7).expect("a large node that fits a C int rebuilds");
        assert_eq!(
            mpix_marshal::testing::mpi::geometry(small).unwrap().size,
            28
        );
        free(small);
        match large(1 << 31) {
            Err(Error::Unsupported(msg)) => assert!(msg.contains("large-count"), "{msg}"),
            other => panic!("2^31 ints on MPI-3: {other:?}"),
        }
        return;
    }
    ok(rc, "contiguous_c");
    assert!(
        type_tree(o).unwrap().large,
        "a _c constructor is recorded as large"
    );
    let c = contiguous(7, int);
    assert!(!type_tree(c).unwrap().large, "a classic constructor is not");
    free(o);
    free(c);
}
