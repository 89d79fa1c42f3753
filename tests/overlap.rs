//! `overlapping_entries`: two typemap entries that share a byte (receiving
//! into such a type is erroneous, MPI-4.1 §5.1). Checked against MPI
//! itself: `MPI_Unpack` into a type writes `size` bytes, each once, exactly
//! when no two entries overlap, so the bytes it writes (found by unpacking
//! over two different fills) number fewer than `size` exactly when some do.
//! Except for the x87 `long double` types, whose 16 bytes hold 10 of
//! value: MPICH's unpacking of some types that hold them writes only those
//! 10 (of a single `MPI_LONG_DOUBLE`, all 16), so types holding one are
//! not asked of MPI this way.

mod common;
use common::*;
use mpix_marshal::testing::codes::{Predefined, PREDEFINED};
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{self, Datatype};
use mpix_marshal::{overlapping_entries, type_tree};
use std::os::raw::c_void;

/// Whether MPI writes some byte twice when it unpacks one `t`; None when
/// the type is too large to try.
fn unpack_overlaps(t: Datatype) -> Option<bool> {
    let g = mpi::geometry(t).unwrap();
    if g.size == 0 {
        return Some(false);
    }
    if g.true_extent > 16 << 20 || g.size > 16 << 20 {
        return None;
    }
    let mut committed = dup(t);
    ok(unsafe { ffi::MPI_Type_commit(&mut committed) }, "commit");
    let data: Vec<u8> = (0..g.size).map(|i| (i % 251) as u8).collect();
    let written = |fill: u8| {
        let mut buf = vec![fill; g.true_extent as usize];
        let base = buf.as_mut_ptr().wrapping_offset(-g.true_lb as isize) as *mut c_void;
        let mut pos = 0;
        ok(
            unsafe {
                ffi::MPI_Unpack(
                    data.as_ptr() as *const c_void,
                    g.size as i32,
                    &mut pos,
                    base,
                    1,
                    committed,
                    ffi::RSMPI_COMM_SELF,
                )
            },
            "unpack",
        );
        buf
    };
    let (a, b) = (written(0x00), written(0xff));
    mpi::free(committed).unwrap();
    let touched = a.iter().zip(&b).filter(|(x, y)| x == y).count() as i64;
    Some(touched < g.size)
}

/// The tree's text for each `long double` type (see above).
fn partly_written() -> Vec<String> {
    PREDEFINED
        .iter()
        .filter(|e| e.1.contains("LONG_DOUBLE"))
        .map(|e| format!("{:?}", Predefined(e.0)))
        .collect()
}

/// The corpus: never an overlap MPI does not see, and every one it sees.
#[test]
fn the_corpus_agrees_with_mpi() {
    init();
    let partial = partly_written();
    let mut checked = 0;
    for c in corpus() {
        let tree = format!("{:?}", type_tree(c.datatype).unwrap());
        if partial.iter().any(|p| tree.contains(p.as_str())) {
            continue;
        }
        let ours = overlapping_entries(1, c.datatype).unwrap();
        let Some(theirs) = unpack_overlaps(c.datatype) else {
            continue;
        };
        assert_eq!(ours.is_some(), theirs, "{}: {ours:?}", c.name);
        checked += 1;
    }
    assert!(checked > 50, "only {checked} corpus types checked");
}

/// Overlaps made on purpose, each found with the right pair of entries.
#[test]
fn each_constructor_overlap_is_named() {
    init();
    let int = named("MPI_INT");
    let dbl = named("MPI_DOUBLE");
    let cases: Vec<(&str, Datatype, i128, [u128; 2])> = vec![
        // Blocks of 2 ints 1 int apart: block 1 starts on block 0's second.
        ("vector(2, 2, 1)", vector(2, 2, 1, int), 4, [1, 2]),
        ("hvector stride 0", hvector(3, 1, 0, int), 0, [0, 1]),
        (
            "struct double, int at 4",
            structure(&[1, 1], &[0, 4], &[dbl, int]),
            4,
            [0, 1],
        ),
        (
            "indexed {0, 3, 1}",
            indexed(&[1, 1, 1], &[0, 3, 0], int),
            0,
            [0, 2],
        ),
        (
            "contiguous(2) of 2 ints resized to 4",
            contiguous(2, resized(contiguous(2, int), 0, 4)),
            4,
            [1, 2],
        ),
        (
            "hindexed_block shifted by 2",
            hindexed_block(2, &[0, 6], int),
            6,
            [1, 2],
        ),
    ];
    for (what, t, byte, [i, j]) in cases {
        assert_eq!(unpack_overlaps(t), Some(true), "{what}: MPI sees none");
        let o = overlapping_entries(1, t)
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: none found"));
        assert_eq!(o.byte, byte, "{what}");
        let [a, b] = o.entries.unwrap();
        assert_eq!([a.index, b.index], [i, j], "{what}: {a:?} {b:?}");
        assert!(a.path.starts_with("root"), "{what}: {}", a.path);
    }
    let o = overlapping_entries(1, structure(&[1, 1], &[0, 4], &[dbl, int]))
        .unwrap()
        .unwrap();
    let [a, b] = o.entries.unwrap();
    assert_eq!((a.basic.as_str(), a.displacement), ("MPI_DOUBLE", 0));
    assert_eq!((b.basic.as_str(), b.displacement), ("MPI_INT", 4));
    assert!(b.path.contains("member 1"), "{}", b.path);
}

/// Types with holes that others fill, and types too large to expand, are
/// decided without a false report.
#[test]
fn interleaved_and_huge_types_are_not_reported() {
    init();
    let int = named("MPI_INT");
    // Ints at 0 and 8, extent 4: copies fill each other's holes.
    let every_other = resized(vector(2, 1, 2, int), 0, 4);
    let interleaved = contiguous(2, every_other);
    assert_eq!(unpack_overlaps(interleaved), Some(false));
    assert_eq!(overlapping_entries(1, interleaved).unwrap(), None);
    // Three copies: the third lands on the first's second int.
    let three = contiguous(3, every_other);
    assert_eq!(unpack_overlaps(three), Some(true));
    assert_eq!(overlapping_entries(1, three).unwrap().unwrap().byte, 8);
    // 2^40 ints: decided on the structure.
    let huge = contiguous(1 << 20, contiguous(1 << 20, int));
    assert_eq!(overlapping_entries(1, huge).unwrap(), None);
    let huge_overlap = hvector(1 << 20, 1 << 20, 4, int);
    let o = overlapping_entries(1, huge_overlap).unwrap().unwrap();
    assert_eq!(o.byte, 4);
    let [a, b] = o.entries.unwrap();
    assert_eq!([a.index, b.index], [1, 1 << 20]);
}

/// A count of copies overlaps where one copy does not: a type resized
/// below its data.
#[test]
fn copies_of_a_buffer_overlap_when_the_extent_is_short() {
    init();
    let int = named("MPI_INT");
    let two = resized(contiguous(2, int), 0, 4);
    assert_eq!(overlapping_entries(1, two).unwrap(), None);
    let o = overlapping_entries(3, two).unwrap().unwrap();
    assert_eq!(o.byte, 4);
    let [a, b] = o.entries.unwrap();
    assert_eq!((a.index, a.copy, b.index, b.copy), (1, 0, 2, 1));
    assert!(b.path.ends_with("MPI_INT"), "{}", b.path);
    assert_eq!(overlapping_entries(0, two).unwrap(), None);
    // Contiguous copies of a dense type never overlap, however many.
    assert_eq!(overlapping_entries(1 << 40, int).unwrap(), None);
}
