//! Unit tests of the signature module. No MPI: trees are built directly.
//! Every family is checked against an element-by-element reference written
//! from its paper's definition (independent of the fold's algebra), on
//! random trees and on the worked examples of `spec/signature.md`.

use super::basic::{BASIC_ORDINALS, PAIRS};
use super::crc::{mul_mod_p, x8n_mod_p, Gf2Matrix, POLY};
use super::default64::{pow_mod, BASE, FACTORS_OF_P_MINUS_1, P};
use super::*;
use crate::format::codes::{Distribution, Order, Predefined, DFLT_DARG, UNDEFINED};
use crate::format::tree::{Kind, Node, MAX_DEPTH};
use std::time::Instant;

// ---------------------------------------------------------------------------
// Trees.

const INT: u16 = 0x209;
const DOUBLE: u16 = 0x214;
const CHAR: u16 = 0x243;
const FLOAT: u16 = 0x210;
const SHORT: u16 = 0x208;
const BYTE: u16 = 0x247;
const PACKED: u16 = 0x207;

fn named(code: u16) -> Node {
    Node::named(Predefined(code))
}
fn contiguous(count: i64, old: Node) -> Node {
    Node::new(Kind::Contiguous {
        count,
        old: Box::new(old),
    })
}
fn vector(count: i64, blocklength: i64, stride: i64, old: Node) -> Node {
    Node::new(Kind::Vector {
        count,
        blocklength,
        stride,
        old: Box::new(old),
    })
}
fn indexed(blocklengths: &[i64], old: Node) -> Node {
    Node::new(Kind::Indexed {
        blocklengths: blocklengths.to_vec(),
        displacements: (0..blocklengths.len() as i64)
            .map(|i| 100 - 7 * i)
            .collect(),
        old: Box::new(old),
    })
}
fn structure(members: &[(i64, Node)]) -> Node {
    Node::new(Kind::Struct {
        blocklengths: members.iter().map(|m| m.0).collect(),
        displacements: (0..members.len() as i64).map(|i| 16 * i).collect(),
        types: members.iter().map(|m| m.1.clone()).collect(),
        legacy: false,
    })
}
fn resized(old: Node) -> Node {
    Node::new(Kind::Resized {
        lb: -8,
        extent: 1000,
        old: Box::new(old),
    })
}
fn subarray(subsizes: &[i64], old: Node) -> Node {
    Node::new(Kind::Subarray {
        sizes: subsizes.iter().map(|s| s.saturating_add(3)).collect(),
        subsizes: subsizes.to_vec(),
        starts: vec![1; subsizes.len()],
        order: Order::Fortran,
        old: Box::new(old),
    })
}

// ---------------------------------------------------------------------------
// The signature, expanded element by element (the definition).

fn expand(node: &Node, out: &mut Vec<BasicType>) {
    let repeat = |k: u128, out: &mut Vec<BasicType>| {
        let mut one = Vec::new();
        expand(&node.children()[0], &mut one);
        for _ in 0..k {
            out.extend_from_slice(&one);
        }
    };
    match &node.kind {
        Kind::Named(p) => out.extend_from_slice(basic_types(*p).unwrap().as_slice()),
        Kind::F90Real { p, r } => out.push(BasicType::F90Real { p: *p, r: *r }),
        Kind::F90Complex { p, r } => out.push(BasicType::F90Complex { p: *p, r: *r }),
        Kind::F90Integer { r } => out.push(BasicType::F90Integer { r: *r }),
        Kind::Dup(_) | Kind::Resized { .. } => repeat(1, out),
        Kind::Contiguous { count, .. } => repeat(*count as u128, out),
        Kind::Vector {
            count, blocklength, ..
        }
        | Kind::Hvector {
            count, blocklength, ..
        } => repeat((*count * *blocklength) as u128, out),
        Kind::Indexed { blocklengths, .. } | Kind::Hindexed { blocklengths, .. } => {
            repeat(blocklengths.iter().sum::<i64>() as u128, out)
        }
        Kind::IndexedBlock {
            blocklength,
            displacements,
            ..
        }
        | Kind::HindexedBlock {
            blocklength,
            displacements,
            ..
        } => repeat((*blocklength * displacements.len() as i64) as u128, out),
        Kind::Subarray { subsizes, .. } => repeat(subsizes.iter().product::<i64>() as u128, out),
        Kind::Darray { .. } => {
            let mut n = 1u128;
            fold::for_each_repetition(node, &mut |k| n *= k).unwrap();
            repeat(n, out)
        }
        Kind::Struct {
            blocklengths,
            types,
            ..
        } => {
            for (b, t) in blocklengths.iter().zip(types) {
                for _ in 0..*b {
                    expand(t, out);
                }
            }
        }
        Kind::ValueIndex { pair } => {
            expand(&pair[0], out);
            expand(&pair[1], out);
        }
    }
}

fn expanded(node: &Node) -> Vec<BasicType> {
    let mut v = Vec::new();
    expand(node, &mut v);
    v
}

// ---------------------------------------------------------------------------
// Each family element by element, from its paper's definition.

/// Product in GF(2^w) by shift-and-add (no tables).
fn gf_mul_slow(mut a: u32, mut b: u32, w: u32, poly: u32) -> u32 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        b >>= 1;
        a <<= 1;
        if a >> w != 0 {
            a ^= poly;
        }
    }
    p
}

/// Bitwise CRC-32 (no tables).
fn crc32_slow(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn reference(kind: HashKind, seq: &[BasicType]) -> u64 {
    let n = seq.len();
    match kind {
        HashKind::Gropp => {
            // (α, n) ⊕ (β, m) = (α xor rotl(β, n), n + m), left to right.
            let mut alpha = 0u32;
            for (i, b) in seq.iter().enumerate() {
                let v = (2 * ((b.small_value((1 << 15) - 1) * 0x5bd1) % 32768) + 1) as u32;
                alpha ^= v.rotate_left((i % 32) as u32);
            }
            alpha as u64
        }
        HashKind::XorBs1 => {
            let mut out = 0u64;
            for j in 1..=2u32 {
                let mut f = 0u16;
                for (i, b) in seq.iter().enumerate() {
                    let v = b.small_value(65535) as u16;
                    f ^= v.rotate_left(j * (n - 1 - i) as u32 % 16);
                }
                out |= (f as u64) << (16 * (j - 1));
            }
            out
        }
        HashKind::MmmBs1 => {
            // Σ v_i · 2^(j(n-1-i)) mod 2^16 - 1, with modular powers.
            let q = 65535u64;
            let mut out = 0u64;
            for j in 1..=2u64 {
                let mut f = 0u64;
                for (i, b) in seq.iter().enumerate() {
                    let v = b.small_value(65534);
                    let mut pw = 1u64;
                    for _ in 0..j * (n - 1 - i) as u64 {
                        pw = pw * 2 % q;
                    }
                    f = (f + v * pw) % q;
                }
                out |= f << (16 * (j - 1));
            }
            out
        }
        HashKind::Gfd8 | HashKind::Gfd16 => {
            let (w, m, poly) = if kind == HashKind::Gfd8 {
                (8, 4, 0x11d)
            } else {
                (16, 2, 0x1100b)
            };
            // v = x^(97·s mod q), by repeated multiplication by x.
            let q = (1u64 << w) - 1;
            let value = |b: &BasicType| {
                let e = 97 * b.small_value(q) % q;
                (0..e).fold(1u32, |v, _| gf_mul_slow(v, 2, w, poly))
            };
            let mut out = 0u64;
            for j in 1..=m {
                let alpha = 1u32 << j;
                let mut f = 0u32;
                for b in seq {
                    // Horner: f = f ⊗ α_j ⊕ v.
                    f = gf_mul_slow(f, alpha, w, poly) ^ value(b);
                }
                out |= (f as u64) << (w * (j - 1));
            }
            out
        }
        HashKind::Crc32 => {
            let bytes: Vec<u8> = seq
                .iter()
                .flat_map(|b| (b.small_value(u32::MAX as u64) as u32).to_be_bytes())
                .collect();
            crc32_slow(&bytes) as u64
        }
        HashKind::Default64 => {
            let p = P as u128;
            let mut h = 0u128;
            for b in seq {
                h = (h * BASE as u128 + Default64::basic_value(*b) as u128) % p;
            }
            h as u64
        }
    }
}

// ---------------------------------------------------------------------------
// Random trees.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const POOL: [u16; 9] = [INT, DOUBLE, CHAR, FLOAT, SHORT, BYTE, 0x22b, 0x228, 0x380];

fn random_tree(rng: &mut Rng, depth: u32) -> Node {
    if depth == 0 || rng.below(4) == 0 {
        return match rng.below(12) {
            0 => Node::new(Kind::F90Real {
                p: rng.below(20) as i64,
                r: UNDEFINED,
            }),
            _ => named(POOL[rng.below(POOL.len() as u64) as usize]),
        };
    }
    let child = |rng: &mut Rng| random_tree(rng, depth - 1);
    match rng.below(7) {
        0 => contiguous(rng.below(4) as i64, child(rng)),
        1 => vector(rng.below(3) as i64, rng.below(3) as i64, 5, child(rng)),
        2 => {
            let b: Vec<i64> = (0..rng.below(4)).map(|_| rng.below(3) as i64).collect();
            indexed(&b, child(rng))
        }
        3 => {
            let members: Vec<(i64, Node)> = (0..1 + rng.below(3))
                .map(|_| (rng.below(3) as i64, child(rng)))
                .collect();
            structure(&members)
        }
        4 => resized(child(rng)),
        5 => subarray(
            &[1 + rng.below(2) as i64, 1 + rng.below(2) as i64],
            child(rng),
        ),
        _ => Node::new(Kind::ValueIndex {
            pair: Box::new([child(rng), named(INT)]),
        }),
    }
}

// ---------------------------------------------------------------------------
// The tests.

#[test]
fn every_family_matches_its_element_by_element_definition() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..400 {
        let t = random_tree(&mut rng, 4);
        let seq = expanded(&t);
        assert_eq!(signature_count(&t).unwrap(), seq.len() as u128);
        for kind in HashKind::ALL {
            assert_eq!(
                signature_hash(&t, kind).unwrap(),
                reference(kind, &seq),
                "round {round}, {}: {t:?}",
                kind.name()
            );
        }
    }
}

#[test]
fn concatenation_law_holds_for_every_family() {
    let mut rng = Rng(12345);
    for _ in 0..200 {
        let x = random_tree(&mut rng, 3);
        let y = random_tree(&mut rng, 3);
        let xy = structure(&[(1, x.clone()), (1, y.clone())]);
        let (nx, ny) = (signature_count(&x).unwrap(), signature_count(&y).unwrap());
        for kind in HashKind::ALL {
            let hx = signature_hash(&x, kind).unwrap();
            let hy = signature_hash(&y, kind).unwrap();
            let hxy = signature_hash(&xy, kind).unwrap();
            assert_eq!(kind.concat((hx, nx), (hy, ny)), hxy, "{}", kind.name());
        }
    }
}

/// k-fold concatenation, one copy at a time.
fn concat_k<M: SignatureMonoid>(x: &M, k: u128) -> M {
    (0..k).fold(M::empty(), |acc, _| acc.concat(x))
}

fn check_repeat<M: SignatureHash + PartialEq + std::fmt::Debug>(x: &M) {
    for k in 0..140u128 {
        let closed = x.repeat(k);
        assert_eq!(closed, concat_k(x, k), "{} k={k}", M::KIND.name());
        assert_eq!(closed, repeat_by_doubling(x, k), "{} k={k}", M::KIND.name());
    }
    for k in [1u128 << 40, 1_000_000_000_007, (1 << 64) + 3, u128::MAX] {
        assert_eq!(
            x.repeat(k),
            repeat_by_doubling(x, k),
            "{} k={k}",
            M::KIND.name()
        );
    }
}

#[test]
fn count_k_equals_doubling_and_k_fold_concatenation() {
    let mut rng = Rng(777);
    for _ in 0..40 {
        let t = random_tree(&mut rng, 3);
        check_repeat(&fold::<Gropp>(&t).unwrap());
        check_repeat(&fold::<XorBs1<16, 2>>(&t).unwrap());
        check_repeat(&fold::<MmmBs1<16, 2>>(&t).unwrap());
        check_repeat(&fold::<Gfd<8, 4>>(&t).unwrap());
        check_repeat(&fold::<Gfd<16, 2>>(&t).unwrap());
        check_repeat(&fold::<Crc32>(&t).unwrap());
        check_repeat(&fold::<Default64>(&t).unwrap());
    }
    // The w = 8 variants the benchmark uses.
    let t = structure(&[(2, named(INT)), (1, named(DOUBLE))]);
    for k in 0..70u128 {
        let x = fold::<XorBs1<8, 4>>(&t).unwrap();
        assert_eq!(x.repeat(k), concat_k(&x, k));
        let x = fold::<MmmBs1<8, 4>>(&t).unwrap();
        assert_eq!(x.repeat(k), concat_k(&x, k));
    }
}

/// Default64 looks up small repetitions of one basic type: the table must
/// agree with concatenation on both sides of its end.
#[test]
fn default64_basic_repeats_equal_k_fold_concatenation() {
    for code in [INT, DOUBLE] {
        let x = fold::<Default64>(&named(code)).unwrap();
        assert_eq!(x.power, BASE, "one basic type");
        let mut by_concat = Default64::empty();
        for k in 0..600u128 {
            assert_eq!(x.repeat(k), by_concat, "k={k}");
            assert_eq!(x.repeat(k), repeat_by_doubling(&x, k), "k={k}");
            by_concat = by_concat.concat(&x);
        }
    }
}

#[test]
fn repeat_from_parts_matches_the_fold() {
    let t = structure(&[(1, named(INT)), (3, named(DOUBLE))]);
    let n = signature_count(&t).unwrap();
    for kind in HashKind::ALL {
        let h = signature_hash(&t, kind).unwrap();
        for k in [0u128, 1, 2, 17, 1 << 33] {
            let c = contiguous(1, t.clone());
            let big = if k <= i64::MAX as u128 {
                Node::new(Kind::Contiguous {
                    count: k as i64,
                    old: Box::new(c),
                })
            } else {
                unreachable!()
            };
            assert_eq!(
                kind.repeat((h, n), k),
                signature_hash(&big, kind).unwrap(),
                "{}",
                kind.name()
            );
        }
    }
}

#[test]
fn equal_signatures_hash_equal_whatever_the_structure() {
    let int_double = || structure(&[(1, named(INT)), (1, named(DOUBLE))]);
    let forms = [
        contiguous(2, int_double()),
        structure(&[
            (1, named(INT)),
            (1, named(DOUBLE)),
            (1, named(INT)),
            (1, named(DOUBLE)),
        ]),
        indexed(&[1, 0, 1], int_double()),
        vector(2, 1, 3, resized(int_double())),
        structure(&[(2, int_double()), (0, named(CHAR)), (1, named(0x380))]),
        subarray(&[1, 2], int_double()),
        structure(&[
            (1, named(INT)),
            (1, structure(&[(1, named(DOUBLE)), (1, named(INT))])),
            (1, named(DOUBLE)),
        ]),
    ];
    for kind in HashKind::ALL {
        let h0 = signature_hash(&forms[0], kind).unwrap();
        for (i, f) in forms.iter().enumerate() {
            assert_eq!(
                signature_hash(f, kind).unwrap(),
                h0,
                "form {i}, {}",
                kind.name()
            );
        }
    }
    for f in &forms {
        assert_eq!(first_difference(&forms[0], f).unwrap(), None);
        assert_eq!(signature_count(f).unwrap(), 4);
    }
    // A pair type is its two basic types.
    let pair = contiguous(3, named(0x228));
    let spelled = contiguous(3, structure(&[(1, named(FLOAT)), (1, named(INT))]));
    for kind in HashKind::ALL {
        assert_eq!(
            signature_hash(&pair, kind).unwrap(),
            signature_hash(&spelled, kind).unwrap()
        );
    }
}

#[test]
fn each_basic_type_has_a_distinct_value_in_every_family() {
    let mut basics: Vec<BasicType> = BASIC_ORDINALS
        .iter()
        .map(|e| BasicType::Predefined(Predefined(e.0)))
        .collect();
    for (p, r) in [(6, 30), (15, 307), (6, UNDEFINED), (UNDEFINED, 30)] {
        basics.push(BasicType::F90Real { p, r });
        basics.push(BasicType::F90Complex { p, r });
    }
    for r in [2, 4, 9, 18] {
        basics.push(BasicType::F90Integer { r });
    }
    for kind in HashKind::ALL {
        let mut values: Vec<u64> = basics.iter().map(|&b| kind.basic(b)).collect();
        assert!(values.iter().all(|&v| v != 0), "{}", kind.name());
        values.sort();
        values.dedup();
        assert_eq!(values.len(), basics.len(), "{}", kind.name());
    }
    // MPI_BYTE and MPI_PACKED have values of their own.
    for kind in HashKind::ALL {
        let byte = signature_hash(&named(BYTE), kind).unwrap();
        let packed = signature_hash(&named(PACKED), kind).unwrap();
        let chr = signature_hash(&named(CHAR), kind).unwrap();
        assert!(byte != packed && byte != chr && packed != chr);
    }
}

#[test]
fn markers_pairs_zero_counts_and_empty_signatures() {
    let empty_forms = [
        named(0x380),
        named(0x381),
        contiguous(0, named(INT)),
        structure(&[(0, named(INT)), (3, named(0x381))]),
        indexed(&[], named(DOUBLE)),
        vector(5, 0, 2, named(INT)),
    ];
    for f in &empty_forms {
        assert_eq!(signature_count(f).unwrap(), 0);
        for kind in HashKind::ALL {
            let empty = signature_hash(&empty_forms[0], kind).unwrap();
            assert_eq!(signature_hash(f, kind).unwrap(), empty);
        }
        assert!(Signature::new(f).unwrap().is_empty());
    }
    assert_eq!(signature_count(&named(0x22d)).unwrap(), 2);
    assert_eq!(signature_count(&named(0x383)).unwrap(), 2);
    let vi = Node::new(Kind::ValueIndex {
        pair: Box::new([named(DOUBLE), named(INT)]),
    });
    assert_eq!(
        first_difference(&vi, &named(0x229)).unwrap(),
        None,
        "value_index(double, int) is MPI_DOUBLE_INT's signature"
    );
}

#[test]
fn counts_beyond_64_bits_are_exact_and_overflow_is_an_error() {
    let big = |n: Node| {
        let mut t = n;
        t = Node {
            large: true,
            ..contiguous(i64::MAX, t)
        };
        t
    };
    let t = big(named(INT));
    assert_eq!(signature_count(&t).unwrap(), i64::MAX as u128);
    let t2 = big(big(named(0x22b)));
    assert_eq!(
        signature_count(&t2).unwrap(),
        2 * (i64::MAX as u128) * (i64::MAX as u128)
    );
    let t3 = big(big(big(named(INT))));
    assert!(signature_count(&t3).is_err());
    // Hashes need only the count modulo each family's period: still defined.
    for kind in HashKind::ALL {
        signature_hash(&t3, kind).unwrap();
    }
    assert!(Signature::new(&t3).is_err());
    let sub = subarray(&[i64::MAX; 3], named(INT));
    assert!(signature_count(&sub).is_err());
    signature_hash(&sub, HashKind::DEFAULT).unwrap();
}

#[test]
fn invalid_arguments_are_errors_with_a_path() {
    let bad = structure(&[(1, named(INT)), (1, contiguous(-1, named(INT)))]);
    let e = signature_count(&bad).unwrap_err().to_string();
    assert!(e.contains("root.1") && e.contains("negative"), "{e}");
    assert!(signature_hash(&named(0x204), HashKind::Gropp).is_err());
    let darray = Node::new(Kind::Darray {
        size: 4,
        rank: 4,
        gsizes: vec![8],
        distribs: vec![Distribution::Block],
        dargs: vec![DFLT_DARG],
        psizes: vec![4],
        order: Order::C,
        old: Box::new(named(INT)),
    });
    assert!(signature_count(&darray).is_err());
}

#[test]
fn depth_is_bounded() {
    let mut t = named(INT);
    for _ in 0..MAX_DEPTH - 1 {
        t = contiguous(1, t);
    }
    assert_eq!(signature_count(&t).unwrap(), 1);
    Signature::new(&t).unwrap();
    // The walks keep their stacks on the heap: a small thread stack does.
    let other = structure(&[(1, named(INT))]);
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(128 << 10)
            .spawn_scoped(scope, || {
                for kind in HashKind::ALL {
                    signature_hash(&t, kind).unwrap();
                }
                assert_eq!(first_difference(&t, &other).unwrap(), None);
            })
            .unwrap()
            .join()
            .unwrap();
    });
    let deeper = contiguous(1, t);
    assert!(signature_count(&deeper).is_err());
    assert!(Signature::new(&deeper).is_err());
    // Drop a deep tree without overflowing the test thread's stack.
    let mut t = deeper;
    while let Kind::Contiguous { old, .. } = t.kind {
        t = *old;
    }
}

#[test]
fn darray_counts_follow_the_standard() {
    // 10 × 7 array, block (default) × cyclic(2) over a 2 × 3 grid.
    let counts: Vec<u128> = (0..6)
        .map(|rank| {
            let t = Node::new(Kind::Darray {
                size: 6,
                rank,
                gsizes: vec![10, 7],
                distribs: vec![Distribution::Block, Distribution::Cyclic],
                dargs: vec![DFLT_DARG, 2],
                psizes: vec![2, 3],
                order: Order::C,
                old: Box::new(named(0x22b)),
            });
            signature_count(&t).unwrap()
        })
        .collect();
    // Rows: 5 + 5. Columns in blocks of 2 dealt to 3: {0,1,6}, {2,3}, {4,5}.
    assert_eq!(counts, vec![30, 20, 20, 30, 20, 20]);
    assert_eq!(counts.iter().sum::<u128>(), 2 * 70);
}

#[test]
fn unidatatype_of_a_trillion_hashes_in_microseconds() {
    let t = Node {
        large: true,
        ..contiguous(1_000_000_000_000, named(INT))
    };
    for kind in HashKind::ALL {
        let start = Instant::now();
        let reps = 100;
        for _ in 0..reps {
            std::hint::black_box(signature_hash(std::hint::black_box(&t), kind).unwrap());
        }
        let each = start.elapsed() / reps;
        println!("contiguous(10^12, MPI_INT), {}: {each:?}", kind.name());
        // Not a speed goal (benches/signature measures that): a guard that
        // the 10^12 elements were not expanded, which would take hours.
        assert!(each.as_secs() < 10, "{}: {each:?}", kind.name());
    }
    let start = Instant::now();
    assert_eq!(signature_count(&t).unwrap(), 1_000_000_000_000);
    let s = Signature::new(&t).unwrap();
    assert_eq!(s.runs().collect::<Vec<_>>().len(), 1);
    assert!(
        start.elapsed().as_secs() < 10,
        "expanded? {:?}",
        start.elapsed()
    );
}

#[test]
fn summaries_apply_gropps_rule_for_byte_and_packed() {
    let ints = contiguous(4, named(INT));
    let bytes = contiguous(16, named(BYTE));
    let packed = contiguous(16, named(PACKED));
    let doubles = contiguous(4, named(DOUBLE));
    let k = HashKind::DEFAULT;
    let s = |t: &Node| signature_summary(t, k).unwrap();
    assert_eq!(s(&ints).check(&s(&ints)).unwrap(), Verdict::Match);
    assert_eq!(s(&ints).check(&s(&doubles)).unwrap(), Verdict::Mismatch);
    assert_eq!(s(&ints).check(&s(&bytes)).unwrap(), Verdict::Unchecked);
    assert_eq!(s(&packed).check(&s(&ints)).unwrap(), Verdict::Unchecked);
    let sum = s(&structure(&[(1, ints.clone()), (1, bytes.clone())]));
    assert!(sum.byte && !sum.packed && sum.count == 20);
    assert_eq!(
        sum.hash,
        signature_hash(&structure(&[(1, ints), (1, bytes)]), k).unwrap()
    );
    assert!(s(&doubles)
        .check(&signature_summary(&doubles, HashKind::Gropp).unwrap())
        .is_err());
}

#[test]
fn hash_kind_codes_are_stable() {
    let codes: Vec<(u32, &str)> = HashKind::ALL.iter().map(|k| (k.code(), k.name())).collect();
    assert_eq!(
        codes,
        vec![
            (1, "gropp"),
            (2, "xor-bs1"),
            (3, "mmm-bs1"),
            (4, "gfd8"),
            (5, "gfd16"),
            (6, "crc32"),
            (7, "default64")
        ]
    );
    for k in HashKind::ALL {
        assert_eq!(HashKind::from_code(k.code()), Some(k));
    }
    assert_eq!(HashKind::from_code(0), None);
    assert_eq!(HashKind::from_code(8), None);
}

// ---------------------------------------------------------------------------
// Building blocks.

#[test]
fn crc32_is_the_standard_crc_and_combines_by_matrix_powers() {
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(crc32_slow(b"123456789"), 0xcbf4_3926);
    assert_eq!(x8n_mod_p(4), POLY, "x^32 mod P");
    let a = b"the first part of a message, ";
    let b = b"and the second part";
    let whole = [&a[..], &b[..]].concat();
    assert_eq!(
        crc32_combine(crc32(a), crc32(b), b.len() as u128),
        crc32(&whole)
    );
    for n in [0u128, 1, 2, 3, 7, 100, 12345, 1 << 40, u128::MAX] {
        let m = Gf2Matrix::zero_bytes(n);
        let compact = x8n_mod_p(n);
        for v in [1u32, 0x8000_0000, 0xdead_beef, 0x1234_5678] {
            assert_eq!(m.apply(v), mul_mod_p(compact, v), "n={n}");
        }
    }
}

#[test]
fn gf_tables_agree_with_shift_and_add() {
    let mut rng = Rng(99);
    for (w, poly) in [(8u32, 0x11du32), (16, 0x1100b)] {
        let f = gf::Field::for_width(w);
        for _ in 0..5000 {
            let a = rng.below(1 << w) as u32;
            let b = rng.below(1 << w) as u32;
            assert_eq!(f.mul(a as u16, b as u16) as u32, gf_mul_slow(a, b, w, poly));
            if b != 0 {
                assert_eq!(f.mul(f.div(a as u16, b as u16), b as u16), a as u16);
            }
        }
    }
}

#[test]
fn default64_base_is_a_primitive_root() {
    assert_eq!(FACTORS_OF_P_MINUS_1.iter().product::<u64>() * 3 * 5, P - 1);
    for q in FACTORS_OF_P_MINUS_1 {
        assert_ne!(pow_mod(BASE, ((P - 1) / q) as u128), 1, "B^((p-1)/{q}) = 1");
    }
    assert_eq!(pow_mod(BASE, (P - 1) as u128), 1);
}

// ---------------------------------------------------------------------------
// The exact signature.

#[test]
fn runs_are_maximal_and_expand_to_the_signature() {
    let mut rng = Rng(4242);
    for _ in 0..300 {
        let t = random_tree(&mut rng, 4);
        let seq = expanded(&t);
        let s = Signature::new(&t).unwrap();
        assert_eq!(s.len(), seq.len() as u128);
        let runs: Vec<(BasicType, u128)> = s.runs().collect();
        assert!(runs.windows(2).all(|w| w[0].0 != w[1].0));
        let flat: Vec<BasicType> = runs
            .iter()
            .flat_map(|&(b, n)| std::iter::repeat(b).take(n as usize))
            .collect();
        assert_eq!(flat, seq);
        for (i, b) in seq.iter().enumerate() {
            assert_eq!(s.get(i as u128), Some(*b));
        }
        assert_eq!(s.get(seq.len() as u128), None);
    }
}

#[test]
fn first_difference_is_exact_on_random_pairs() {
    let mut rng = Rng(31337);
    let mut equal = 0;
    for round in 0..3000 {
        let a = random_tree(&mut rng, 4);
        // Half the time, a variant of a with the same or a close signature.
        let b = if round % 2 == 0 {
            random_tree(&mut rng, 4)
        } else {
            match rng.below(3) {
                0 => contiguous(
                    1,
                    structure(&[(1, a.clone()), (rng.below(2) as i64, named(INT))]),
                ),
                1 => Node::new(Kind::Struct {
                    blocklengths: vec![1],
                    displacements: vec![0],
                    types: vec![resized(a.clone())],
                    legacy: false,
                }),
                _ => structure(&[(1, named(INT)), (1, a.clone())]),
            }
        };
        let (sa, sb) = (expanded(&a), expanded(&b));
        let want = sa
            .iter()
            .zip(&sb)
            .position(|(x, y)| x != y)
            .or_else(|| (sa.len() != sb.len()).then_some(sa.len().min(sb.len())));
        let got = first_difference(&a, &b).unwrap();
        assert_eq!(got.map(|d| d.index as usize), want, "{a:?}\n{b:?}");
        if let Some(d) = got {
            assert_eq!(d.left, sa.get(d.index as usize).copied());
            assert_eq!(d.right, sb.get(d.index as usize).copied());
        } else {
            equal += 1;
        }
        let via = Signature::new(&a)
            .unwrap()
            .first_difference(&Signature::new(&b).unwrap())
            .unwrap();
        assert_eq!(via, got);
    }
    assert!(equal > 300, "{equal} equal pairs");
}

#[test]
fn first_difference_skips_long_repeats() {
    let big = |n: i64, t: Node| Node {
        large: true,
        ..contiguous(n, t)
    };
    let id = || structure(&[(1, named(INT)), (1, named(DOUBLE))]);
    let t = 1_000_000_000_000i64;
    // (int, double)^(2·10^12) built three ways, then with a change at the end.
    let a = big(2 * t, id());
    let b = big(t, structure(&[(2, id())]));
    let c = structure(&[
        (1, big(2 * t - 1, id())),
        (1, named(INT)),
        (1, named(DOUBLE)),
    ]);
    let d = structure(&[
        (1, named(INT)),
        (
            1,
            big(2 * t - 1, structure(&[(1, named(DOUBLE)), (1, named(INT))])),
        ),
        (1, named(DOUBLE)),
    ]);
    let changed = structure(&[
        (1, big(2 * t - 1, id())),
        (1, named(INT)),
        (1, named(FLOAT)),
    ]);
    let start = Instant::now();
    for x in [&b, &c, &d] {
        assert_eq!(first_difference(&a, x).unwrap(), None);
    }
    let diff = first_difference(&a, &changed).unwrap().unwrap();
    assert_eq!(diff.index, 4 * t as u128 - 1);
    assert_eq!(diff.left, Some(BasicType::Predefined(Predefined(DOUBLE))));
    assert_eq!(diff.right, Some(BasicType::Predefined(Predefined(FLOAT))));
    let longer = structure(&[(1, a.clone()), (1, named(CHAR))]);
    let diff = first_difference(&a, &longer).unwrap().unwrap();
    assert_eq!((diff.index, diff.left), (4 * t as u128, None));
    // Periods 2 and 3 over 6·10^12 ints: one int every 10^12... all equal.
    let p2 = big(3 * t, contiguous(2, named(INT)));
    let p3 = big(2 * t, contiguous(3, named(INT)));
    assert_eq!(first_difference(&p2, &p3).unwrap(), None);
    // Co-prime periods with different content: found in the first window.
    let q2 = big(3 * t, structure(&[(1, named(INT)), (1, named(CHAR))]));
    let q3 = big(
        2 * t,
        structure(&[(1, named(INT)), (1, named(CHAR)), (1, named(INT))]),
    );
    assert_eq!(first_difference(&q2, &q3).unwrap().unwrap().index, 3);
    // A guard against expansion (6·10^12 elements), not a speed goal.
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    println!("{:?}", first_difference(&a, &changed).unwrap().unwrap());
}

// ---------------------------------------------------------------------------
// The worked examples of spec/signature.md.

fn spec_examples() -> Vec<(&'static str, Node)> {
    vec![
        ("E1", named(INT)),
        ("E2", structure(&[(1, named(INT)), (1, named(DOUBLE))])),
        ("E3", contiguous(3, named(0x228))),
        ("E4", named(0x380)),
        ("E5", Node::new(Kind::F90Real { p: 6, r: 30 })),
        (
            "E6",
            Node {
                large: true,
                ..contiguous(1_000_000_000_000, named(INT))
            },
        ),
    ]
}

#[test]
fn spec_examples_have_the_values_the_spec_gives() {
    let spec = include_str!("../../spec/signature.md");
    let mut checked = 0;
    for (name, node) in spec_examples() {
        let prefix = format!("| {name} |");
        let row = spec
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("spec/signature.md has no row {name}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | name | signature | count | gropp | xor-bs1 | mmm-bs1 | gfd8 | gfd16 | crc32 | default64 |
        assert_eq!(cells.len(), 12, "{row}");
        let count: u128 = cells[3].replace('_', "").parse().unwrap();
        assert_eq!(signature_count(&node).unwrap(), count, "{name}");
        for (i, kind) in HashKind::ALL.iter().enumerate() {
            let want = u64::from_str_radix(
                cells[4 + i]
                    .trim_start_matches("0x")
                    .replace('_', "")
                    .as_str(),
                16,
            )
            .unwrap_or_else(|e| panic!("{name} {}: {e}", kind.name()));
            let got = signature_hash(&node, *kind).unwrap();
            assert_eq!(got, want, "{name} {}: {got:#x}", kind.name());
            if count < 100 {
                assert_eq!(reference(*kind, &expanded(&node)), want);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 6 * 7);
}

#[test]
fn spec_lists_the_ordinal_table() {
    let spec = include_str!("../../spec/signature.md");
    for &(code, ord) in BASIC_ORDINALS {
        let name = Predefined(code).mpi_name();
        let row = format!("| {ord} | `{code:#05x}` | `{name}` |");
        assert!(spec.contains(&row), "spec/signature.md lacks {row}");
    }
    for &(code, a, b) in PAIRS {
        let row = format!(
            "| `{code:#05x}` | `{}` | `{}`, `{}` |",
            Predefined(code).mpi_name(),
            Predefined(a).mpi_name(),
            Predefined(b).mpi_name()
        );
        assert!(spec.contains(&row), "spec/signature.md lacks {row}");
    }
}

/// Prints the spec's example rows (run with --nocapture when the spec
/// needs them).
#[test]
fn print_spec_example_rows() {
    for (name, node) in spec_examples() {
        let mut row = format!("| {name} | … | {} |", signature_count(&node).unwrap());
        for kind in HashKind::ALL {
            let w = if kind == HashKind::Default64 { 16 } else { 8 };
            row.push_str(&format!(
                " 0x{:0w$x} |",
                signature_hash(&node, kind).unwrap()
            ));
        }
        println!("{row}");
    }
}

// ---------------------------------------------------------------------------
// Prefixes.

#[test]
fn prefix_hashes_are_the_hashes_of_the_expanded_prefixes() {
    let mut rng = Rng(0x5eed_0f9e);
    let mut checked = 0;
    while checked < 150 {
        let t = random_tree(&mut rng, 4);
        let count = rng.below(4) as u128;
        let one = expanded(&t);
        // The reference is O(n²) for some families: small signatures only.
        if one.len() as u128 * count > 120 {
            continue;
        }
        checked += 1;
        let seq: Vec<BasicType> = (0..count).flat_map(|_| one.iter().copied()).collect();
        let whole = contiguous(count as i64, t.clone());
        for kind in HashKind::ALL {
            for n in 0..=seq.len() {
                let got = signature_prefix_hash(&t, count, n as u128, kind).unwrap();
                assert_eq!(
                    got,
                    reference(kind, &seq[..n]),
                    "{}: n = {n} of {count} × {t:?}",
                    kind.name()
                );
                let s = signature_prefix_summary(&t, count, n as u128, kind).unwrap();
                let has = |c: u16| seq[..n].contains(&BasicType::Predefined(Predefined(c)));
                assert_eq!(
                    (s.count, s.hash, s.byte, s.packed),
                    (n as u128, got, has(BYTE), has(PACKED)),
                    "{}: n = {n} of {count} × {t:?}",
                    kind.name()
                );
            }
            // The whole prefix is the contiguous type's signature.
            assert_eq!(
                signature_prefix_hash(&t, count, seq.len() as u128, kind).unwrap(),
                signature_hash(&whole, kind).unwrap()
            );
            assert!(signature_prefix_hash(&t, count, seq.len() as u128 + 1, kind).is_err());
        }
    }
}

#[test]
fn prefix_of_a_billion_elements_descends_without_expanding() {
    // struct {3 int, 2 double}: 5 elements; 2·10^8 copies: 10^9.
    let inner = structure(&[(3, named(INT)), (2, named(DOUBLE))]);
    let big = contiguous(200_000_000, inner.clone());
    assert_eq!(signature_count(&big).unwrap(), 1_000_000_000);
    // Its prefix of 5k + 4 elements: k copies, then 3 ints and 1 double.
    let k = 123_456_789i64;
    let same = structure(&[
        (1, contiguous(k, inner.clone())),
        (3, named(INT)),
        (1, named(DOUBLE)),
    ]);
    // Two copies of it, all of the first and 7 elements of the second.
    let two = structure(&[
        (1, big.clone()),
        (1, contiguous(1, inner.clone())),
        (2, named(INT)),
    ]);
    for kind in HashKind::ALL {
        let start = Instant::now();
        let got = signature_prefix_hash(&big, 1, 5 * k as u128 + 4, kind).unwrap();
        println!(
            "prefix of contiguous(2·10^8, struct), {}: {:?}",
            kind.name(),
            start.elapsed()
        );
        assert_eq!(got, signature_hash(&same, kind).unwrap(), "{}", kind.name());
        assert_eq!(
            signature_prefix_hash(&big, 2, 1_000_000_007, kind).unwrap(),
            signature_hash(&two, kind).unwrap(),
            "{}",
            kind.name()
        );
        assert_eq!(
            signature_prefix_hash(&big, 3, 3_000_000_000, kind).unwrap(),
            signature_hash(&contiguous(3, big.clone()), kind).unwrap()
        );
    }
}

#[test]
fn prefix_of_a_signature_beyond_u128_elements() {
    // 2^62 · 2^62 · 2^62 ints: 2^186 elements, more than a u128 counts.
    let huge = contiguous(
        1 << 62,
        contiguous(1 << 62, contiguous(1 << 62, named(INT))),
    );
    assert!(signature_count(&huge).is_err());
    // Its first 2^100 + 1 elements: 2^38 copies of the 2^62 block, one int.
    let same = structure(&[
        (1, contiguous(1 << 38, contiguous(1 << 62, named(INT)))),
        (1, named(INT)),
    ]);
    for kind in HashKind::ALL {
        assert_eq!(
            signature_prefix_hash(&huge, 5, (1 << 100) + 1, kind).unwrap(),
            signature_hash(&same, kind).unwrap(),
            "{}",
            kind.name()
        );
        assert!(signature_prefix_hash(&huge, 1, u128::MAX, kind).is_ok());
    }
}

#[test]
fn prefix_lengths_beyond_the_signature_are_errors() {
    let t = structure(&[(2, named(0x22b)), (0, named(DOUBLE)), (1, named(0x207))]);
    assert_eq!(signature_count(&t).unwrap(), 5);
    let k = HashKind::DEFAULT;
    let empty = signature_hash(&contiguous(0, named(INT)), k).unwrap();
    assert_eq!(signature_prefix_hash(&t, 0, 0, k).unwrap(), empty);
    assert_eq!(signature_prefix_hash(&t, 3, 0, k).unwrap(), empty);
    assert_eq!(
        signature_prefix_hash(&named(Predefined::LB.0), 9, 0, k).unwrap(),
        empty
    );
    for (count, n) in [(0, 1), (1, 6), (3, 16), (u128::MAX / 5 - 1, u128::MAX)] {
        match signature_prefix_hash(&t, count, n, k) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("longer"), "{m}"),
            other => panic!("{count} copies, n = {n}: {other:?}"),
        }
        assert!(signature_prefix_summary(&t, count, n, k).is_err());
    }
    // Half of a pair type: its first basic type.
    assert_eq!(
        signature_prefix_hash(&named(0x228), 1, 1, k).unwrap(),
        signature_hash(&named(FLOAT), k).unwrap()
    );
    // A tree the fold refuses is refused here too, with its path.
    let bad = structure(&[(1, named(INT)), (1, contiguous(-1, named(INT)))]);
    match signature_prefix_hash(&bad, 1, 1, k) {
        Err(Error::InvalidArgument(m)) => assert!(m.starts_with("root.1"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn receive_checks_compare_the_prefix_the_message_fills() {
    let k = HashKind::DEFAULT;
    let s = |t: &Node| signature_summary(t, k).unwrap();
    // The receive: 2 × {2 int, 1 byte}.
    let recv = structure(&[(2, named(INT)), (1, named(BYTE))]);
    let ints = |n: i64| s(&contiguous(n, named(INT)));
    assert_eq!(ints(2).check_receive(&recv, 2).unwrap(), Verdict::Match);
    assert_eq!(ints(0).check_receive(&recv, 2).unwrap(), Verdict::Match);
    assert_eq!(ints(3).check_receive(&recv, 2).unwrap(), Verdict::Unchecked);
    assert_eq!(ints(7).check_receive(&recv, 2).unwrap(), Verdict::Truncated);
    let doubles = s(&contiguous(2, named(DOUBLE)));
    assert_eq!(doubles.check_receive(&recv, 2).unwrap(), Verdict::Mismatch);
    assert!(signature_summary(&named(INT), HashKind::Gropp)
        .unwrap()
        .check_receive(&recv, 1)
        .is_ok());
}
