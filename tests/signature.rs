//! Type signatures of real MPI datatypes: counts against `MPI_Type_size`
//! (DARRAY for many ranks and distributions, every corpus type), and equal
//! hashes for equal signatures however MPI built them. Adapts to an MPI
//! without `MPI_LB`/`MPI_UB` or large counts (Open MPI 4.1).

mod common;
use common::*;
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::mpi::f90::F90;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{self, shim, Datatype, MPI_Count};
use mpix_marshal::testing::signature::{
    first_difference, fold, signature_count, signature_hash, signature_summary, BasicType,
    HashKind, Signature, SignatureMonoid, Verdict,
};
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::{tree_signature_prefix_hash, type_tree};
use std::collections::BTreeMap;
use std::os::raw::c_int;

fn size_of(t: Datatype) -> i64 {
    mpi::geometry(t).unwrap().size
}

/// How many of each basic type a signature holds.
#[derive(Clone, Default)]
struct Histogram(BTreeMap<BasicType, u128>);

impl SignatureMonoid for Histogram {
    fn empty() -> Self {
        Histogram::default()
    }
    fn basic(b: BasicType) -> Self {
        Histogram(BTreeMap::from([(b, 1)]))
    }
    fn concat(&self, next: &Self) -> Self {
        let mut m = self.0.clone();
        for (b, n) in &next.0 {
            *m.entry(*b).or_default() += n;
        }
        Histogram(m)
    }
    fn repeat(&self, k: u128) -> Self {
        Histogram(
            self.0
                .iter()
                .filter(|_| k > 0)
                .map(|(b, n)| (*b, n * k))
                .collect(),
        )
    }
}

/// The size in bytes of one basic type on this MPI, if it can say.
fn basic_size(b: BasicType) -> Option<i64> {
    // Portable -1 is the local MPI_UNDEFINED.
    let arg = |v: i64| {
        if v == mpix_marshal::testing::codes::UNDEFINED {
            ffi::MPI_UNDEFINED as c_int
        } else {
            v as c_int
        }
    };
    let f90 = |kind: F90, p: i64, r: i64| {
        let undefined = ffi::MPI_UNDEFINED as c_int;
        mpi::f90::create(kind, arg(p), arg(r), undefined)
            .ok()
            .map(size_of)
    };
    match b {
        BasicType::Predefined(p) => mpi::local().datatype(p).map(size_of),
        BasicType::F90Real { p, r } => f90(F90::Real, p, r),
        BasicType::F90Complex { p, r } => f90(F90::Complex, p, r),
        BasicType::F90Integer { r } => f90(F90::Integer, -1, r),
    }
}

/// Σ count(b) · size(b), when every basic type's size is known.
fn signature_bytes(t: Datatype) -> Option<i128> {
    let tree = type_tree(t).unwrap();
    let h = fold::<Histogram>(&tree).unwrap();
    let total: u128 = h.0.values().sum();
    assert_eq!(total, signature_count(&tree).unwrap());
    let mut bytes = 0i128;
    for (b, n) in h.0 {
        bytes += basic_size(b)? as i128 * n as i128;
    }
    Some(bytes)
}

fn hashes(t: Datatype) -> Vec<u64> {
    let tree = type_tree(t).unwrap();
    HashKind::ALL
        .iter()
        .map(|&k| signature_hash(&tree, k).unwrap())
        .collect()
}

#[test]
fn f90_kinds_reach_their_own_constructor() {
    // basic_size relies on F90::Real, ::Complex and ::Integer reaching
    // MPI_Type_create_f90_real, _complex and _integer: their sizes differ
    // for these pairs on every MPI of the matrix (4, 8 and 1 bytes).
    init();
    assert_eq!(basic_size(BasicType::F90Real { p: 6, r: 30 }), Some(4));
    assert_eq!(basic_size(BasicType::F90Complex { p: 6, r: 30 }), Some(8));
    assert_eq!(basic_size(BasicType::F90Integer { r: 2 }), Some(1));
}

#[test]
fn corpus_counts_times_sizes_are_mpi_type_size() {
    init();
    let mut checked = 0;
    for c in corpus() {
        let Some(bytes) = signature_bytes(c.datatype) else {
            println!("{}: a basic type's size is unknown here", c.name);
            continue;
        };
        assert_eq!(bytes, size_of(c.datatype) as i128, "{}", c.name);
        // The exact form agrees with the count.
        let tree = type_tree(c.datatype).unwrap();
        let exact = Signature::new(&tree).unwrap();
        assert_eq!(exact.len(), signature_count(&tree).unwrap(), "{}", c.name);
        assert_eq!(
            exact.runs().map(|r| r.1).sum::<u128>(),
            exact.len(),
            "{}",
            c.name
        );
        checked += 1;
    }
    println!("{checked} corpus types: count × size = MPI_Type_size");
    assert!(checked >= 40);
}

/// A DARRAY configuration: (gsizes, distribs, dargs (0 = default), psizes).
type DarrayConfig = (Vec<i32>, &'static str, Vec<i32>, Vec<i32>);

fn darray_configs() -> Vec<DarrayConfig> {
    let mut v = vec![
        (vec![16, 10], "bc", vec![0, 2], vec![2, 2]),
        (vec![12, 5, 4], "bnc", vec![5, 0, 0], vec![3, 1, 1]),
        (vec![7], "b", vec![0], vec![3]),
        (vec![7], "c", vec![0], vec![3]),
        (vec![7], "c", vec![3], vec![2]),
        (vec![10, 7], "bc", vec![0, 2], vec![2, 3]),
        (vec![9, 9], "cc", vec![2, 4], vec![2, 2]),
        (vec![5, 6, 7], "cbc", vec![1, 0, 3], vec![2, 1, 3]),
        (vec![3], "b", vec![0], vec![5]),
        (vec![100, 3], "bn", vec![40, 0], vec![3, 1]),
    ];
    // A deterministic sweep of 1-d and 2-d cases.
    let mut x: u32 = 12345;
    let mut next = |n: u32| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x % n
    };
    for _ in 0..60 {
        let ndims = 1 + next(2) as usize;
        let mut g = vec![];
        let mut d = String::new();
        let mut a = vec![];
        let mut p = vec![];
        for _ in 0..ndims {
            let gs = 1 + next(23) as i32;
            let ps = 1 + next(4) as i32;
            match next(3) {
                0 => {
                    d.push('n');
                    p.push(1);
                    a.push(0);
                }
                1 => {
                    d.push('b');
                    p.push(ps);
                    // A darg that covers the dimension, or the default.
                    let min = (gs + ps - 1) / ps;
                    a.push(if next(2) == 0 {
                        0
                    } else {
                        min + next(3) as i32
                    });
                }
                _ => {
                    d.push('c');
                    p.push(ps);
                    a.push(next(5) as i32);
                }
            }
            g.push(gs);
        }
        v.push((g, Box::leak(d.into_boxed_str()), a, p));
    }
    v
}

#[test]
fn darray_counts_match_mpi_type_size_for_every_rank() {
    init();
    let int = named("MPI_INT");
    let pair = structure(&[1, 1], &[0, 8], &[int, named("MPI_DOUBLE")]);
    let mut checked = 0;
    for (gsizes, distribs, dargs, psizes) in darray_configs() {
        let size: i32 = psizes.iter().product();
        for fortran in [false, true] {
            let mut total = 0u128;
            for rank in 0..size {
                for (old, per) in [(int, 1u128), (pair, 2)] {
                    let t = darray(size, rank, &gsizes, distribs, &dargs, &psizes, fortran, old);
                    let tree = type_tree(t).unwrap();
                    let count = signature_count(&tree).unwrap();
                    let mpi_size = size_of(t) as u128;
                    let old_size = size_of(old) as u128;
                    assert_eq!(
                        count / per * old_size,
                        mpi_size,
                        "darray size {size} rank {rank} gsizes {gsizes:?} {distribs} dargs {dargs:?} psizes {psizes:?}"
                    );
                    assert_eq!(count % per, 0);
                    if per == 1 {
                        total += count;
                        // The same signature as `count` contiguous ints.
                        let c = contiguous(count as i32, int);
                        assert_eq!(hashes(t), hashes(c));
                        free(c);
                    }
                    free(t);
                    checked += 1;
                }
            }
            let global: u128 = gsizes.iter().map(|&g| g as u128).product();
            assert_eq!(total, global, "the ranks' pieces cover the array");
        }
    }
    free(pair);
    println!("{checked} darray types checked against MPI_Type_size");
}

#[test]
fn equal_signatures_built_differently_hash_equal_in_every_family() {
    init();
    let int = named("MPI_INT");
    let dbl = named("MPI_DOUBLE");
    let id = structure(&[1, 1], &[0, 8], &[int, dbl]);
    let forms = vec![
        ("contiguous(2, struct{int,double})", contiguous(2, id)),
        (
            "struct{int,double,int,double}",
            structure(&[1, 1, 1, 1], &[0, 8, 16, 24], &[int, dbl, int, dbl]),
        ),
        ("indexed([1,1], struct)", indexed(&[1, 1], &[3, 0], id)),
        ("vector(2,1,5, struct)", vector(2, 1, 5, id)),
        ("hindexed([2], struct)", hindexed(&[2], &[-64], id)),
        ("indexed_block(1, 2 blocks)", indexed_block(1, &[4, 1], id)),
        (
            "subarray 2x3 taking 1x2 of struct",
            subarray(&[2, 3], &[1, 2], &[1, 0], false, id),
        ),
        (
            "struct{int, struct{double,int}, double}",
            structure(
                &[1, 1, 1],
                &[0, 8, 40],
                &[int, structure(&[1, 1], &[0, 8], &[dbl, int]), dbl],
            ),
        ),
        (
            "resized(dup(...))",
            resized(dup(contiguous(2, id)), 0, 1000),
        ),
    ];
    let want = hashes(forms[0].1);
    let first = type_tree(forms[0].1).unwrap();
    for (name, t) in &forms {
        assert_eq!(hashes(*t), want, "{name}");
        let tree = type_tree(*t).unwrap();
        assert_eq!(first_difference(&first, &tree).unwrap(), None, "{name}");
        assert_eq!(signature_count(&tree).unwrap(), 4);
    }
    // A different order differs in every family, at element 0.
    let swapped = contiguous(2, structure(&[1, 1], &[0, 8], &[dbl, int]));
    let other = hashes(swapped);
    for (k, (a, b)) in HashKind::ALL.iter().zip(want.iter().zip(&other)) {
        assert_ne!(a, b, "{}", k.name());
    }
    let d = first_difference(&first, &type_tree(swapped).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(d.index, 0);
    println!("{d:?}");
    // A pair type and its spelled-out struct.
    let fi = contiguous(3, named("MPI_FLOAT_INT"));
    let spelled = contiguous(3, structure(&[1, 1], &[0, 4], &[named("MPI_FLOAT"), int]));
    assert_eq!(hashes(fi), hashes(spelled));
    for t in [swapped, fi, spelled] {
        free(t);
    }
    for (_, t) in forms {
        free(t);
    }
    free(id);
}

#[test]
fn hdf5_type_is_5000_bytes_in_either_form() {
    init();
    let portable = hdf5_complex(false);
    let tree = type_tree(portable).unwrap();
    assert_eq!(signature_count(&tree).unwrap(), 5000);
    assert_eq!(signature_bytes(portable), Some(5000));
    let byte = contiguous(5000, named("MPI_BYTE"));
    assert_eq!(hashes(portable), hashes(byte));
    if try_named("MPI_LB").is_some() {
        let markers = hdf5_complex(true);
        assert_eq!(hashes(markers), hashes(portable), "LB/UB add nothing");
        assert_eq!(
            first_difference(&type_tree(markers).unwrap(), &tree).unwrap(),
            None
        );
        free(markers);
    } else {
        println!("this MPI has no MPI_LB/MPI_UB: the marker form is skipped");
    }
    let s = signature_summary(&tree, HashKind::DEFAULT).unwrap();
    assert!(s.byte);
    let ints = signature_summary(
        &type_tree(contiguous(1250, named("MPI_INT"))).unwrap(),
        HashKind::DEFAULT,
    )
    .unwrap();
    assert_eq!(s.check(&ints).unwrap(), Verdict::Unchecked);
    free(portable);
    free(byte);
}

#[test]
fn aliases_hash_as_their_canonical_type() {
    init();
    for (alias, canonical) in [
        ("MPI_LONG_LONG_INT", "MPI_LONG_LONG"),
        ("MPI_C_COMPLEX", "MPI_C_FLOAT_COMPLEX"),
        ("MPI_CXX_COMPLEX", "MPI_CXX_FLOAT_COMPLEX"),
    ] {
        if let (Some(a), Some(c)) = (try_named(alias), try_named(canonical)) {
            assert_eq!(hashes(a), hashes(c), "{alias}");
        }
    }
    // Types the standard keeps apart stay apart.
    assert_ne!(hashes(named("MPI_INT")), hashes(named("MPI_INT32_T")));
    assert_ne!(hashes(named("MPI_BYTE")), hashes(named("MPI_CHAR")));
}

#[test]
fn large_counts_are_exact() {
    init();
    if !mpi::local().has_large_count() {
        println!("this MPI has no large-count constructors: skipped");
        return;
    }
    let int = named("MPI_INT");
    let big: MPI_Count = 1 << 40;
    let mut t = null();
    ok(
        unsafe { shim::mpixm_type_contiguous_c(big, int, &mut t) },
        "contiguous_c",
    );
    let tree = type_tree(t).unwrap();
    assert_eq!(signature_count(&tree).unwrap(), 1 << 40);
    assert_eq!(size_of(t), 4 << 40);
    // 2^62 copies of 2^3 ints: 2^65 elements, beyond any 64-bit count.
    let mut inner = null();
    ok(
        unsafe { shim::mpixm_type_contiguous_c(8, int, &mut inner) },
        "contiguous_c",
    );
    let mut huge = null();
    ok(
        unsafe { shim::mpixm_type_contiguous_c(1 << 62, inner, &mut huge) },
        "contiguous_c",
    );
    let tree_huge = type_tree(huge).unwrap();
    assert_eq!(signature_count(&tree_huge).unwrap(), 1 << 65);
    // Its hashes equal those of 2^25 copies of the 2^40 type (same
    // signature, 2^65 ints), built another way.
    let mut other = null();
    ok(
        unsafe { shim::mpixm_type_contiguous_c(1 << 25, t, &mut other) },
        "contiguous_c",
    );
    assert_eq!(hashes(huge), hashes(other));
    assert_eq!(
        first_difference(&tree_huge, &type_tree(other).unwrap()).unwrap(),
        None
    );
    for x in [t, inner, huge, other] {
        free(x);
    }
}

#[test]
fn every_predefined_type_this_mpi_has_hashes() {
    init();
    let mut seen = BTreeMap::new();
    for &(code, name) in mpix_marshal::testing::codes::PREDEFINED {
        let Some(t) = try_named(name) else { continue };
        let tree = type_tree(t).unwrap();
        let n = signature_count(&tree).unwrap();
        let expect = mpix_marshal::testing::signature::basic_types(Predefined(code))
            .unwrap()
            .as_slice()
            .len() as u128;
        assert_eq!(n, expect, "{name}");
        if n == 1 {
            seen.entry(hashes(t)).or_insert_with(Vec::new).push(name);
        }
    }
    // One basic type per hash vector, but for the aliases (and for names
    // this MPI gives one handle).
    for (_, names) in seen {
        if names.len() > 1 {
            println!("same basic type: {names:?}");
            assert!(names.len() == 2, "{names:?}");
        }
    }
}

/// The hash in family `kind` of the first `n` elements of `count` copies
/// of an exact signature, from its runs (no tree descent involved).
fn prefix_hash_of_runs(kind: HashKind, exact: &Signature, count: u128, n: u128) -> u64 {
    let empty = Node::new(Kind::Contiguous {
        count: 0,
        old: Box::new(Node::named(Predefined(0x209))),
    });
    let mut acc = (signature_hash(&empty, kind).unwrap(), 0u128);
    let mut left = n;
    for _ in 0..count {
        for (b, k) in exact.runs() {
            let take = k.min(left);
            if take == 0 {
                return acc.0;
            }
            let run = (kind.repeat((kind.basic(b), 1), take), take);
            acc = (kind.concat(acc, run), acc.1 + take);
            left -= take;
        }
    }
    acc.0
}

#[test]
fn prefix_hashes_of_corpus_types_are_those_of_their_exact_prefixes() {
    init();
    let count = 3u128;
    let mut checked = 0;
    for c in corpus() {
        let tree = type_tree(c.datatype).unwrap();
        let exact = Signature::new(&tree).unwrap();
        let len = exact.len();
        let total = len * count;
        let mut ns = vec![0, 1, len.saturating_sub(1), len, len + 1];
        ns.extend([total / 2, total.saturating_sub(1), total]);
        ns.retain(|&n| n <= total);
        ns.sort();
        ns.dedup();
        for kind in HashKind::ALL {
            for &n in &ns {
                let want = prefix_hash_of_runs(kind, &exact, count, n);
                let what = format!("{}, {}: n = {n} of {count} × {len}", c.name, kind.name());
                let got = mpix_marshal::signature_prefix_hash(c.datatype, count, n, kind);
                assert_eq!(got.unwrap(), want, "{what}");
                let got = tree_signature_prefix_hash(&tree, count, n, kind);
                assert_eq!(got.unwrap(), want, "{what} (tree)");
                let s = mpix_marshal::signature_prefix_summary(c.datatype, count, n, kind).unwrap();
                assert_eq!((s.count, s.hash), (n, want), "{what} (summary)");
            }
            let too_long = mpix_marshal::signature_prefix_hash(c.datatype, count, total + 1, kind);
            assert!(
                matches!(too_long, Err(mpix_marshal::Error::InvalidArgument(_))),
                "{}: {too_long:?}",
                c.name
            );
        }
        checked += 1;
    }
    println!("{checked} corpus types: prefix hashes agree with their exact prefixes");
    assert!(checked >= 40);
}

#[test]
fn prefix_of_a_billion_element_type_by_descent() {
    init();
    // struct {3 int, 2 double} × 2·10^8: 10^9 elements.
    let (int, dbl) = (named("MPI_INT"), named("MPI_DOUBLE"));
    let inner = structure(&[3, 2], &[0, 16], &[int, dbl]);
    let big = contiguous(200_000_000, inner);
    // Its first 5k + 4 elements are k copies, 3 ints and a double.
    let k = 123_456_789;
    let head = contiguous(k, inner);
    let same = structure(&[1, 3, 1], &[0, 8, 40], &[head, int, dbl]);
    for kind in HashKind::ALL {
        let start = std::time::Instant::now();
        let got = mpix_marshal::signature_prefix_hash(big, 1, 5 * k as u128 + 4, kind).unwrap();
        println!("{}: {:?}", kind.name(), start.elapsed());
        assert_eq!(
            got,
            mpix_marshal::signature_hash(same, kind).unwrap(),
            "{}",
            kind.name()
        );
    }
    for t in [same, head, big, inner] {
        free(t);
    }
}

#[test]
fn receive_checks_of_real_types() {
    init();
    let (int, byte) = (named("MPI_INT"), named("MPI_BYTE"));
    // The receive: 2 × struct {2 int, 1 byte}.
    let recv = structure(&[2, 1], &[0, 8], &[int, byte]);
    let recv_tree = type_tree(recv).unwrap();
    let sent = |n: i32| {
        let t = contiguous(n, int);
        let s = mpix_marshal::tree_signature_summary(&type_tree(t).unwrap(), HashKind::DEFAULT);
        free(t);
        s.unwrap()
    };
    let check = |n: i32| sent(n).check_receive(&recv_tree, 2).unwrap();
    // Two ints fill the first two elements: the byte is not received.
    assert_eq!(check(2), Verdict::Match);
    assert_eq!(check(3), Verdict::Unchecked);
    assert_eq!(check(7), Verdict::Truncated);
    let prefix = mpix_marshal::signature_prefix_summary(recv, 2, 2, HashKind::DEFAULT).unwrap();
    assert_eq!(sent(2).check(&prefix).unwrap(), Verdict::Match);
    assert!(!prefix.byte);
    free(recv);
}

#[test]
fn predefined_codes_round_trip_through_the_public_api() {
    // Every predefined type this MPI has: its code names the same handle
    // back (an alias, such as MPI_C_COMPLEX for MPI_C_FLOAT_COMPLEX, may
    // give the other name's code: the same handle); derived types and the
    // null handle have no code.
    init();
    let mut seen = 0;
    for &(_, name) in mpix_marshal::testing::codes::PREDEFINED {
        let Some(t) = try_named(name) else { continue };
        let code = mpix_marshal::predefined_code(t).unwrap_or_else(|| panic!("{name}: no code"));
        let back =
            mpix_marshal::predefined_datatype(code).unwrap_or_else(|| panic!("{name}: no handle"));
        assert_eq!(mpi::handle_bits(back), mpi::handle_bits(t), "{name}");
        seen += 1;
    }
    assert!(seen > 40, "only {seen} predefined types");
    let mut v = null();
    ok(
        unsafe { ffi::MPI_Type_contiguous(2, named("MPI_INT"), &mut v) },
        "contiguous",
    );
    assert_eq!(mpix_marshal::predefined_code(v), None);
    assert_eq!(mpix_marshal::predefined_code(null()), None);
    ok(unsafe { ffi::MPI_Type_free(&mut v) }, "free");
}
