//! The external stream meets the size goals (Table 1 of the paper plus at
//! most 8 bytes of header).

mod common;
use common::*;
use mpix_marshal::{marshal, type_tree, Representation};

fn size_of(t: mpix_marshal::mpi::Datatype) -> usize {
    marshal(Representation::External, t).unwrap().len()
}

#[test]
fn named_is_at_most_16_bytes() {
    init();
    for (_, name) in mpix_marshal::codes::PREDEFINED {
        if let Some(t) = try_named(name) {
            assert_eq!(size_of(t), 16, "{name}");
        }
    }
}

#[test]
fn paper_indexed_is_at_most_48_bytes() {
    init();
    let t = paper_indexed();
    assert!(size_of(t) <= 48, "{} bytes", size_of(t));
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
        let g = mpix_marshal::mpi::geometry(t).unwrap();
        assert_eq!(
            (g.size, g.lb, g.extent),
            (5000, 0, 200000),
            "REFERENCE.md's expected geometry"
        );
        free(t);
    }
}

#[test]
fn large_count_constructors_are_recorded() {
    init();
    if !mpix_marshal::mpi::local().has_large_count() {
        return;
    }
    let mut o = null();
    ok(
        unsafe { mpix_marshal::mpi::shim::mpixm_type_contiguous_c(7, named("MPI_INT"), &mut o) },
        "contiguous_c",
    );
    assert!(
        type_tree(o).unwrap().large,
        "a _c constructor is recorded as large"
    );
    let c = contiguous(7, named("MPI_INT"));
    assert!(!type_tree(c).unwrap().large, "a classic constructor is not");
    free(o);
    free(c);
}
