//! MPI 4.1 and 5.0 features, where the local MPI has them (MPICH 5):
//! `MPI_Type_get_value_index` types, and the format's answer for a
//! VALUE_INDEX node on every MPI; `MPI_LOGICAL16` (a predefined type the
//! MPI-5.0 ABI table lists). The large-count (`_c`) constructors are in
//! the corpus of every test on MPIs that have them (tests/common), and in
//! the cross-reading matrix (tests/cross.rs).

mod common;
use common::*;
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::mpi;
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::{marshal, type_tree, unmarshal, Error, Representation};

const PAIRS: [(&str, &str, &str); 6] = [
    ("MPI_FLOAT", "MPI_INT", "MPI_FLOAT_INT"),
    ("MPI_DOUBLE", "MPI_INT", "MPI_DOUBLE_INT"),
    ("MPI_LONG", "MPI_INT", "MPI_LONG_INT"),
    ("MPI_INT", "MPI_INT", "MPI_2INT"),
    ("MPI_SHORT", "MPI_INT", "MPI_SHORT_INT"),
    ("MPI_LONG_DOUBLE", "MPI_INT", "MPI_LONG_DOUBLE_INT"),
];

fn code(name: &str) -> Predefined {
    let c = mpix_marshal::testing::codes::PREDEFINED
        .iter()
        .find(|e| e.1 == name)
        .unwrap()
        .0;
    Predefined(c)
}

/// A hand-written VALUE_INDEX stream of (value, index).
fn value_index_stream(value: &str, index: &str) -> Vec<u8> {
    let tree = Node::new(Kind::ValueIndex {
        pair: Box::new([Node::named(code(value)), Node::named(code(index))]),
    });
    let mut out = Vec::new();
    mpix_marshal::testing::external::write(&tree, &mut out).unwrap();
    out
}

fn bits(t: mpi::Datatype) -> u64 {
    mpi::handle_bits(t)
}

#[test]
fn value_index_types_marshal_and_rebuild() {
    init();
    let local = mpi::local();
    if local.constants.have_value_index == 0 {
        // MPI before 4.1: a VALUE_INDEX stream is refused, by name.
        let e = unmarshal(
            Representation::External,
            &value_index_stream("MPI_FLOAT", "MPI_INT"),
        )
        .unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported(m) if m.contains("MPI 4.1")),
            "{e}"
        );
        println!("no MPI_Type_get_value_index here: VALUE_INDEX streams are refused (UNSUPPORTED)");
        return;
    }
    for (value, index, pair) in PAIRS {
        // MPICH 5 hands back the predefined pair type itself (its envelope
        // says NAMED), so MPI_COMBINER_VALUE_INDEX never appears there: a
        // value-index type marshals as its pair type and comes back as
        // that very handle.
        let mut t = null();
        // SAFETY: predefined handles and a valid out pointer.
        let rc =
            unsafe { mpi::shim::mpixm_type_get_value_index(named(value), named(index), &mut t) };
        assert_eq!(rc, 0);
        assert_eq!(bits(t), bits(named(pair)), "{value}, {index}");
        let tree = type_tree(t).unwrap();
        assert_eq!(tree.kind, Kind::Named(code(pair)));
        let bytes = marshal(Representation::External, t).unwrap();
        // 12-byte header, one 4-byte NAMED node, the 4-byte checksum.
        assert_eq!(bytes.len(), 20, "{pair}: one NAMED node");
        let back = unmarshal(Representation::External, &bytes).unwrap();
        assert_eq!(bits(back), bits(t));
        // A VALUE_INDEX stream (another MPI's, one whose envelope says
        // VALUE_INDEX) rebuilds through MPI_Type_get_value_index into the
        // same predefined handle.
        let back = unmarshal(Representation::External, &value_index_stream(value, index))
            .unwrap_or_else(|e| panic!("{value}, {index}: {e}"));
        assert_eq!(bits(back), bits(named(pair)), "{value}, {index}");
    }
    // A pair the MPI has no type for: MPI_DATATYPE_NULL from MPI, so the
    // stream is refused as a construct this MPI cannot build.
    let mut t = null();
    // SAFETY: as above.
    let rc = unsafe {
        mpi::shim::mpixm_type_get_value_index(named("MPI_DOUBLE"), named("MPI_LONG"), &mut t)
    };
    assert_eq!(rc, 0);
    if bits(t) == bits(null()) {
        let e = unmarshal(
            Representation::External,
            &value_index_stream("MPI_DOUBLE", "MPI_LONG"),
        )
        .unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported(m) if m.contains("MPI_DATATYPE_NULL")),
            "{e}"
        );
        println!("value_index(double, long) is MPI_DATATYPE_NULL here: its stream is refused (UNSUPPORTED)");
    } else {
        // An MPI that builds it: the round trip keeps its tree.
        let bytes = marshal(Representation::External, t).unwrap();
        let back = unmarshal(Representation::External, &bytes).unwrap();
        assert_eq!(type_tree(back).unwrap(), type_tree(t).unwrap());
    }
}

#[test]
fn logical16_round_trips_where_defined() {
    init();
    let Some(t) = try_named("MPI_LOGICAL16") else {
        println!("MPI_LOGICAL16 is not defined by this MPI");
        return;
    };
    assert_eq!(type_tree(t).unwrap().kind, Kind::Named(Predefined(0x2e0)));
    let bytes = marshal(Representation::External, t).unwrap();
    assert_eq!(
        u32::from_be_bytes(bytes[12..16].try_into().unwrap()) >> 16,
        0x2e0
    );
    let back = unmarshal(Representation::External, &bytes).unwrap();
    assert_eq!(bits(back), bits(t));
}
