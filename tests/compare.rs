//! Datatype equivalence at every level, over pairs of types: equal
//! typemaps built different ways, the paper's Listing 1, signature and
//! typemap differences with the element and path reported, names, and
//! types of more than 2^31 elements.

mod common;
use common::*;
use mpix_marshal::testing::mpi::{Datatype, MPI_Aint};
use mpix_marshal::{compare, Level};

/// Equal at `equal_up_to` and every weaker level, different at the next.
fn assert_levels(what: &str, a: Datatype, b: Datatype, equal_up_to: Option<Level>) {
    for level in Level::ALL {
        let c = compare(a, b, level).unwrap();
        let expect_equal = equal_up_to.is_some_and(|e| level <= e);
        assert_eq!(
            c.is_equal(),
            expect_equal,
            "{what} at {level:?}: {}",
            c.explanation
        );
        if !expect_equal {
            let first = Level::ALL
                .into_iter()
                .find(|l| Some(*l) > equal_up_to)
                .unwrap();
            assert_eq!(c.differs_at, Some(first), "{what}: {}", c.explanation);
            assert!(!c.explanation.is_empty());
        }
        // MPI agrees: types with one typemap pack the same bytes, for
        // counts 1 to 3 (which also exercises the extent).
        if level == Level::Typemap && c.is_equal() {
            for count in 1..=3 {
                assert_eq!(
                    pack(a, count),
                    pack(b, count),
                    "{what}: MPI_Pack, count {count}"
                );
            }
        }
        // The comparison is symmetric in its verdict.
        assert_eq!(
            compare(b, a, level).unwrap().differs_at,
            c.differs_at,
            "{what}"
        );
    }
}

#[test]
fn a_type_equals_itself_its_rebuild_and_up_to_the_typemap_its_dup() {
    init();
    for c in corpus() {
        let t = c.datatype;
        let c2 = compare(t, t, Level::Attributes).unwrap();
        assert!(c2.is_equal(), "{}: {}", c.name, c2.explanation);
        // A rebuild has the same tree: equal at every level.
        let bytes = mpix_marshal::marshal(mpix_marshal::Representation::External, t).unwrap();
        let back = mpix_marshal::unmarshal(mpix_marshal::Representation::External, &bytes).unwrap();
        assert_levels(
            &format!("{} rebuilt", c.name),
            t,
            back,
            Some(Level::Attributes),
        );
        free(back);
        // MPI_Type_dup adds a DUP constructor: the same typemap, another
        // constructor tree (a predefined type's dup is a DUP of it too).
        let d = dup(t);
        assert_levels(&format!("{} dup", c.name), t, d, Some(Level::Typemap));
        free(d);
    }
}

#[test]
fn same_bytes_built_four_ways_share_a_typemap_not_a_constructor() {
    init();
    let int = named("MPI_INT");
    // Three blocks of two ints, 5 ints apart: rows 0..3, columns 0..2 of a
    // 3 x 5 array of ints.
    let v = vector(3, 2, 5, int);
    let i = indexed(&[2, 2, 2], &[0, 5, 10], int);
    let s = structure(&[2, 2, 2], &[0, 20, 40], &[int, int, int]);
    let h = hindexed_block(2, &[0, 20, 40], int);
    let sub = subarray(&[3, 5], &[3, 2], &[0, 0], false, int);
    // The vector's extent is 12 ints, the subarray's 15: resize the others
    // to match for the typemap comparison.
    let ext = extent_of(sub);
    let types = [
        ("vector", resized(v, 0, ext)),
        ("indexed", resized(i, 0, ext)),
        ("struct", resized(s, 0, ext)),
        ("hindexed_block", resized(h, 0, ext)),
    ];
    for (name, t) in &types {
        assert_levels(
            name,
            *t,
            types[0].1,
            if *name == "vector" {
                Some(Level::Attributes)
            } else {
                Some(Level::Typemap)
            },
        );
        // A subarray has explicit bounds, like a resized type.
        assert_levels(
            &format!("{name} vs subarray"),
            *t,
            sub,
            Some(Level::Typemap),
        );
    }
    let c = compare(types[1].1, types[0].1, Level::Constructor).unwrap();
    assert!(
        c.explanation.contains("root.0") && c.explanation.contains("MPI_COMBINER_INDEXED"),
        "{}",
        c.explanation
    );
    for (_, t) in types {
        free(t);
    }
    for t in [v, i, s, h, sub] {
        free(t);
    }
}

#[test]
fn listing_1_shares_a_typemap_but_not_an_extent() {
    init();
    let a = vector(2, 1, 2, named("MPI_BYTE"));
    let b = resized(a, 0, extent_of(a) + 1);
    assert_levels("Listing 1", a, b, Some(Level::Signature));
    let c = compare(a, b, Level::Typemap).unwrap();
    assert!(c.explanation.contains("extent 3 vs"), "{}", c.explanation);
    free(b);
    free(a);
}

#[test]
fn a_signature_difference_names_the_element_and_the_path() {
    init();
    let (i, d, f) = (named("MPI_INT"), named("MPI_DOUBLE"), named("MPI_FLOAT"));
    let inner_a = structure(&[1, 1], &[0, 8], &[i, d]);
    let inner_b = structure(&[1, 1], &[0, 8], &[i, f]);
    let a = contiguous(3, inner_a);
    let b = contiguous(3, inner_b);
    assert_levels("int,double vs int,float", a, b, None);
    let c = compare(a, b, Level::Signature).unwrap();
    assert!(
        c.explanation.contains("element 1")
            && c.explanation.contains("MPI_DOUBLE")
            && c.explanation.contains("MPI_FLOAT")
            && c.explanation.contains("MPI_COMBINER_STRUCT member 1"),
        "{}",
        c.explanation
    );
    // The same difference, structured, for tools that word it themselves.
    let sd = mpix_marshal::signature_difference(a, b).unwrap().unwrap();
    assert_eq!(sd.index, 1);
    assert_eq!(
        (sd.first.as_str(), sd.second.as_str()),
        ("MPI_DOUBLE", "MPI_FLOAT")
    );
    assert_eq!(
        sd.first_path,
        "root MPI_COMBINER_CONTIGUOUS copy 0 > MPI_COMBINER_STRUCT member 1, copy 0 > MPI_DOUBLE"
    );
    assert!(
        sd.second_path.ends_with("member 1, copy 0 > MPI_FLOAT"),
        "{}",
        sd.second_path
    );
    assert_eq!(mpix_marshal::signature_difference(a, a).unwrap(), None);
    // A shorter signature ends where the longer goes on.
    let short = contiguous(2, inner_a);
    let sd = mpix_marshal::signature_difference(short, a)
        .unwrap()
        .unwrap();
    assert_eq!(
        (sd.index, sd.first.as_str()),
        (4, "the end of the signature")
    );
    free(short);
    // Equal signatures built differently: equal at the signature level only.
    let flat = structure(&[1, 1, 1, 1], &[0, 8, 16, 24], &[i, d, i, d]);
    let two = contiguous(2, inner_a);
    let c = compare(two, flat, Level::Attributes).unwrap();
    assert_eq!(c.differs_at, Some(Level::Constructor), "{}", c.explanation);
    let packed = structure(&[1, 1, 1, 1], &[0, 4, 12, 16], &[i, d, i, d]);
    let packed32 = resized(packed, 0, 32);
    let c = compare(two, packed32, Level::Typemap).unwrap();
    assert_eq!(c.differs_at, Some(Level::Typemap), "{}", c.explanation);
    assert!(c.explanation.contains("markers"), "{}", c.explanation);
    for t in [inner_a, inner_b, a, b, flat, two, packed, packed32] {
        free(t);
    }
}

#[test]
fn a_typemap_difference_names_the_element_and_both_displacements() {
    init();
    let int = named("MPI_INT");
    let a = resized(structure(&[1, 1, 1], &[0, 4, 8], &[int, int, int]), 0, 16);
    let b = resized(structure(&[1, 1, 1], &[0, 4, 12], &[int, int, int]), 0, 16);
    assert_levels("ints at 0,4,8 vs 0,4,12", a, b, Some(Level::Signature));
    let c = compare(a, b, Level::Typemap).unwrap();
    assert!(
        c.explanation.contains("element 2")
            && c.explanation.contains("byte 8")
            && c.explanation.contains("byte 12"),
        "{}",
        c.explanation
    );
    free(a);
    free(b);
}

#[test]
fn names_decide_the_names_level() {
    init();
    let v = vector(2, 1, 3, named("MPI_DOUBLE"));
    let a = set_name(dup(v), "halo");
    let b = dup(v);
    assert_levels("named vs unnamed dup", a, b, Some(Level::Constructor));
    let c = compare(a, b, Level::Names).unwrap();
    assert!(c.explanation.contains("\"halo\""), "{}", c.explanation);
    let b = set_name(b, "halo");
    assert_levels("both named halo", a, b, Some(Level::Attributes));
    for t in [v, a, b] {
        free(t);
    }
}

#[test]
fn more_than_2_31_elements_compare_without_expansion() {
    init();
    let int = named("MPI_INT");
    let m = contiguous(1 << 20, int);
    let a = contiguous(1 << 20, m);
    let b = vector(1 << 20, 1 << 20, 1 << 20, int);
    // 2^40 ints either way: same typemap (decided structurally: an
    // expansion would take hours), other constructors.
    let t0 = std::time::Instant::now();
    assert_levels("2^40 ints", a, b, Some(Level::Typemap));
    assert!(t0.elapsed().as_secs() < 60, "took {:?}", t0.elapsed());
    // 2^32 ints, the second half moved by 4 bytes: the difference is found
    // at element 2^31 without visiting the elements before it.
    let e: MPI_Aint = (1 << 34) + 8;
    let c = resized(contiguous(1 << 22, contiguous(1 << 10, int)), 0, e);
    let h = hindexed(
        &[1 << 30, 1 << 30, 1 << 30, 1 << 30],
        &[0, 1 << 32, (1 << 33) + 4, (3 << 32) + 4],
        int,
    );
    let d = resized(h, 0, e);
    let r = compare(c, d, Level::Typemap).unwrap();
    assert_eq!(r.differs_at, Some(Level::Typemap), "{}", r.explanation);
    assert!(
        r.explanation.contains("element 2147483648")
            && r.explanation.contains("byte 8589934592")
            && r.explanation.contains("byte 8589934596"),
        "{}",
        r.explanation
    );
    for t in [m, a, b, c, h, d] {
        free(t);
    }
}

#[test]
fn darray_blocks_equal_the_matching_subarrays() {
    init();
    let d = named("MPI_DOUBLE");
    // A 6 x 8 array on a 2 x 2 grid, block-distributed: each rank owns a
    // 3 x 4 subarray.
    for rank in 0..4 {
        let da = darray(4, rank, &[6, 8], "bb", &[0, 0], &[2, 2], false, d);
        let (r, c) = (rank / 2, rank % 2);
        let sub = subarray(&[6, 8], &[3, 4], &[3 * r, 4 * c], false, d);
        assert_levels(
            &format!("darray rank {rank}"),
            da,
            sub,
            Some(Level::Typemap),
        );
        free(da);
        free(sub);
    }
    // Cyclic(2) over 3 processes in a 1-D array of 11: rank 1 owns 2, 3,
    // 8, 9; rank 2 owns 4, 5 and the short last block, 10.
    for (rank, blocks, starts) in [(1, [2, 2], [2, 8]), (2, [2, 1], [4, 10])] {
        let da = darray(3, rank, &[11], "c", &[2], &[3], false, d);
        let idx = resized(indexed(&blocks, &starts, d), 0, 11 * 8);
        assert_levels(
            &format!("cyclic rank {rank}"),
            da,
            idx,
            Some(Level::Typemap),
        );
        free(da);
        free(idx);
    }
    // 2-D, Fortran order, cyclic rows and block columns, against an
    // explicit list of the owned elements.
    let (g0, g1) = (7, 4);
    let da = darray(2, 1, &[g0, g1], "cb", &[1, 0], &[2, 1], true, d);
    let mut disps = vec![];
    for j in 0..g1 {
        for i in (1..g0).step_by(2) {
            disps.push(i + j * g0);
        }
    }
    let list = resized(indexed_block(1, &disps, d), 0, (g0 * g1 * 8) as MPI_Aint);
    assert_levels("2-D Fortran darray", da, list, Some(Level::Typemap));
    free(da);
    free(list);
}
