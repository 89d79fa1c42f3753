//! Type-signature hashing: the papers' quality study and hash speed.
//!
//! 1. Quality. Panels of type signatures are generated from the patterns of
//!    Gropp (2000) §3.2 over the 13 basic datatypes of the MPI-1 C binding:
//!    (4) n:α_i, count n of a basic type; (5) m:(1:α_i, (n-1):α_j), count
//!    m of a struct of n members; (6) 1:α_i, m:(1:α_i, (n-1):α_j), a struct
//!    holding count m of one. Panel G approximates Gropp's 4625 signatures, panel L Langou et al.'s
//!    6994 ("following Gropp's method", 13 basic types; their exact list is
//!    in software no longer online). Every signature is distinct (checked
//!    exactly). Tables: Gropp's Table 1 (his operator variants, evaluated
//!    element by element as he defines them) and Langou's Table 1 (the
//!    library's families, 16-bit rows as the low half of the 32-bit ones).
//! 2. The default 64-bit hash: candidates that compose in O(1), their
//!    collisions on a large panel (full width and truncated, against a
//!    random mapping's expectation) and their speed.
//! 3. Speed per family for a unidatatype of 10^9 elements and for the
//!    HDF5-derived type, beside a naive typemap expansion of the same types
//!    in the same run.
//!
//! It prints figures and asserts nothing about them.
//! `cargo bench --bench signature [-- --quick]`

use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::signature::{
    fold, signature_count, signature_hash, BasicType, Crc32, Default64, Gfd, Gropp, HashKind,
    MmmBs1, Signature, SignatureHash, SignatureMonoid, XorBs1,
};
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::type_tree;
use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../tests/common/mod.rs"]
mod common;

// ---------------------------------------------------------------------------
// Panels.

/// The 13 basic datatypes of the MPI-1 C binding (Gropp §3.2).
const C13: [(u16, &str); 13] = [
    (0x243, "MPI_CHAR"),
    (0x208, "MPI_SHORT"),
    (0x209, "MPI_INT"),
    (0x20a, "MPI_LONG"),
    (0x245, "MPI_UNSIGNED_CHAR"),
    (0x20c, "MPI_UNSIGNED_SHORT"),
    (0x20d, "MPI_UNSIGNED"),
    (0x20e, "MPI_UNSIGNED_LONG"),
    (0x210, "MPI_FLOAT"),
    (0x214, "MPI_DOUBLE"),
    (0x220, "MPI_LONG_DOUBLE"),
    (0x247, "MPI_BYTE"),
    (0x207, "MPI_PACKED"),
];

fn named(code: u16) -> Node {
    Node::named(Predefined(code))
}
fn contiguous(n: i64, old: Node) -> Node {
    Node {
        large: n > i32::MAX as i64,
        ..Node::new(Kind::Contiguous {
            count: n,
            old: Box::new(old),
        })
    }
}
fn structure(members: Vec<(i64, Node)>) -> Node {
    let n = members.len() as i64;
    Node::new(Kind::Struct {
        blocklengths: members.iter().map(|m| m.0).collect(),
        displacements: (0..n).map(|i| 64 * i).collect(),
        types: members.into_iter().map(|m| m.1).collect(),
        legacy: false,
    })
}

/// One panel entry: the tree and the indexes (into the panel's type list)
/// of its expanded signature.
struct Entry {
    tree: Node,
    seq: Vec<u8>,
}

/// Patterns (4)-(6) over `types`: (4) for n in `n4`, (5) and (6) for every
/// ordered pair i != j, n in `n56`, m in `m56`.
fn panel(
    types: &[u16],
    n4: impl Iterator<Item = i64> + Clone,
    n56: impl Iterator<Item = i64> + Clone,
    m56: impl Iterator<Item = i64> + Clone,
) -> Vec<Entry> {
    let mut out = Vec::new();
    let t = types.len();
    for (i, &ti) in types.iter().enumerate() {
        for n in n4.clone() {
            out.push(Entry {
                tree: contiguous(n, named(ti)),
                seq: vec![i as u8; n as usize],
            });
        }
    }
    for i in 0..t {
        for j in (0..t).filter(|&j| j != i) {
            for n in n56.clone() {
                for m in m56.clone() {
                    let member = || structure(vec![(1, named(types[i])), (n - 1, named(types[j]))]);
                    let mut one = vec![i as u8];
                    one.extend(std::iter::repeat(j as u8).take(n as usize - 1));
                    // (5)
                    out.push(Entry {
                        tree: contiguous(m, member()),
                        seq: one.repeat(m as usize),
                    });
                    // (6)
                    let mut seq = vec![i as u8];
                    seq.extend(one.repeat(m as usize));
                    out.push(Entry {
                        tree: structure(vec![(1, named(types[i])), (m, member())]),
                        seq,
                    });
                }
            }
        }
    }
    // Every signature distinct, and each tree's signature the sequence.
    let mut seen = HashSet::new();
    out.retain(|e| seen.insert(e.seq.clone()));
    out
}

// ---------------------------------------------------------------------------
// Collision statistics.

#[derive(Clone, Copy)]
struct Stats {
    n: usize,
    distinct: usize,
    /// Signatures whose value another signature shares (Gropp's collisions).
    shared: usize,
    /// Values held by more than one signature.
    duplicated: usize,
}

impl Stats {
    fn of(values: &[u64]) -> Stats {
        let mut v = values.to_vec();
        v.sort_unstable();
        let (mut distinct, mut shared, mut duplicated) = (0, 0, 0);
        let mut i = 0;
        while i < v.len() {
            let mut j = i + 1;
            while j < v.len() && v[j] == v[i] {
                j += 1;
            }
            distinct += 1;
            if j - i > 1 {
                shared += j - i;
                duplicated += 1;
            }
            i = j;
        }
        Stats {
            n: v.len(),
            distinct,
            shared,
            duplicated,
        }
    }
    /// Langou's collisions: signatures whose value was already taken.
    fn langou(&self) -> f64 {
        100.0 * (self.n - self.distinct) as f64 / self.n as f64
    }
    fn gropp(&self) -> f64 {
        100.0 * self.shared as f64 / self.n as f64
    }
    fn duplicates(&self) -> f64 {
        100.0 * self.duplicated as f64 / self.distinct as f64
    }
}

/// Langou's collisions expected of a random mapping of n items to 2^bits.
fn random_collisions(n: usize, bits: u32) -> f64 {
    let buckets = 2f64.powi(bits as i32);
    let distinct = buckets * (1.0 - (1.0 - 1.0 / buckets).powf(n as f64));
    100.0 * (n as f64 - distinct) / n as f64
}

fn family_values<H: SignatureMonoid>(panel: &[Entry], value: impl Fn(&H) -> u64) -> Vec<u64> {
    panel
        .iter()
        .map(|e| value(&fold::<H>(&e.tree).unwrap()))
        .collect()
}

// ---------------------------------------------------------------------------
// Gropp's Table 1: his operator variants, element by element.

fn gropp_variant(panel: &[Entry], add: bool, rot: u32, operands: &[u32]) -> Vec<u64> {
    panel
        .iter()
        .map(|e| {
            let mut h = 0u32;
            for (i, &t) in e.seq.iter().enumerate() {
                let term = operands[t as usize].rotate_left((rot as usize * i % 32) as u32);
                h = if add { h.wrapping_add(term) } else { h ^ term };
            }
            h as u64
        })
        .collect()
}

fn gropp_table(panel: &[Entry]) {
    let small: Vec<u32> = (1..=13).collect();
    let medium: Vec<u32> = (0..13u64)
        .map(|i| (mpix_marshal::testing::signature::basic::splitmix64(i) % 65535 + 1) as u32)
        .collect();
    println!(
        "\nGropp 2000, Table 1: panel G, {} signatures (his: 4625). Collisions: % of signatures\n\
         sharing their value with another; duplicates: % of values held by several.\n\
         Small operands 1..13, medium: fixed pseudo-random values below 2^16.",
        panel.len()
    );
    println!(
        "  {:<42} {:>8} {:>8}   {:>8} {:>8}",
        "variant", "paper", "", "here", ""
    );
    println!(
        "  {:<42} {:>8} {:>8}   {:>8} {:>8}",
        "", "coll.%", "dup.%", "coll.%", "dup.%"
    );
    // (name, add, rotation, operands, paper collisions, paper duplicates)
    type Row<'a> = (&'a str, bool, u32, &'a [u32], f64, f64);
    let rows: [Row; 6] = [
        ("xor, rotate 1, small", false, 1, &small, 57.4, 13.4),
        ("xor, rotate 3, small", false, 3, &small, 48.9, 10.5),
        ("+, rotate 1, small", true, 1, &small, 24.9, 11.5),
        ("+, rotate 3, small", true, 3, &small, 29.4, 10.3),
        ("xor, rotate 1, medium", false, 1, &medium, 45.6, 9.8),
        ("+, rotate 1, medium", true, 1, &medium, 1.2, 0.58),
    ];
    for (name, add, rot, ops, pc, pd) in rows {
        let s = Stats::of(&gropp_variant(panel, add, rot, ops));
        println!(
            "  {:<42} {:>8.1} {:>8.2}   {:>8.1} {:>8.2}",
            name,
            pc,
            pd,
            s.gropp(),
            s.duplicates()
        );
    }
    let odd: Vec<u32> = C13
        .iter()
        .map(|e| 2 * BasicType::Predefined(Predefined(e.0)).key() as u32 + 1)
        .collect();
    let s = Stats::of(&gropp_variant(panel, false, 1, &odd));
    println!(
        "  {:<42} {:>8} {:>8}   {:>8.1} {:>8.2}",
        "xor, rotate 1, consecutive odd (MPE)",
        "-",
        "-",
        s.gropp(),
        s.duplicates()
    );
    let s = Stats::of(&family_values::<Gropp>(panel, |h| h.value()));
    println!(
        "  {:<42} {:>8} {:>8}   {:>8.1} {:>8.2}",
        "library gropp (xor, rot. 1, medium odd)",
        "-",
        "-",
        s.gropp(),
        s.duplicates()
    );
}

// ---------------------------------------------------------------------------
// Langou's Table 1: the library's families.

/// CRC-16/CCITT-FALSE (poly 0x1021, init 0xffff) of the same 4-byte records
/// the CRC-32 family hashes, bitwise (a panel is small).
fn crc16_ccitt(panel: &[Entry], types: &[u16]) -> Vec<u64> {
    panel
        .iter()
        .map(|e| {
            let mut c: u16 = 0xffff;
            for &t in &e.seq {
                let rec = mpix_marshal::testing::signature::crc::record(BasicType::Predefined(
                    Predefined(types[t as usize]),
                ));
                for b in rec {
                    c ^= (b as u16) << 8;
                    for _ in 0..8 {
                        c = if c & 0x8000 != 0 {
                            (c << 1) ^ 0x1021
                        } else {
                            c << 1
                        };
                    }
                }
            }
            c as u64
        })
        .collect()
}

/// gfd(w, m) element by element with the ordinals themselves as values
/// (the alternative to the library's generator powers).
fn gfd_ordinal_operands(panel: &[Entry], types: &[u16], w: u32, m: u32) -> Vec<u64> {
    let gf = mpix_marshal::testing::signature::gf::Field::for_width(w);
    panel
        .iter()
        .map(|e| {
            (1..=m).fold(0u64, |out, j| {
                let f = e.seq.iter().fold(0u16, |f, &t| {
                    let v = BasicType::Predefined(Predefined(types[t as usize])).key() as u16;
                    gf.mul(f, 1 << j) ^ v
                });
                out | (f as u64) << (w * (j - 1))
            })
        })
        .collect()
}

fn langou_table(panel: &[Entry], types: &[u16]) {
    println!(
        "\nLangou et al. 2005, Table 1: panel L, {} signatures (theirs: 6994). Collisions: % of\n\
         signatures whose value another took first; duplicates: % of values held by several.\n\
         A random mapping gives {:.2} % collisions at 16 bits, {:.4} % at 32 bits.",
        panel.len(),
        random_collisions(panel.len(), 16),
        random_collisions(panel.len(), 32)
    );
    println!(
        "  {:<28} {:>8} {:>8}   {:>8} {:>8}",
        "16-bit", "paper", "", "here", ""
    );
    let low16 = |v: Vec<u64>| v.into_iter().map(|x| x & 0xffff).collect::<Vec<u64>>();
    let xor16_2 = family_values::<XorBs1<16, 2>>(panel, |h| h.packed());
    let mmm16_2 = family_values::<MmmBs1<16, 2>>(panel, |h| h.packed());
    let gfd16_2 = family_values::<Gfd<16, 2>>(panel, |h| h.packed());
    let xor8_4 = family_values::<XorBs1<8, 4>>(panel, |h| h.packed());
    let mmm8_4 = family_values::<MmmBs1<8, 4>>(panel, |h| h.packed());
    let gfd8_4 = family_values::<Gfd<8, 4>>(panel, |h| h.packed());
    let crc32 = family_values::<Crc32>(panel, |h| h.value());
    let rows16: Vec<(&str, Vec<u64>, f64, f64)> = vec![
        ("CRC-16/CCITT", crc16_ccitt(panel, types), 4.76, 4.88),
        ("xor-bs1(w=16,m=1)", low16(xor16_2.clone()), 61.10, 26.75),
        ("mmm-bs1(w=16,m=1)", low16(mmm16_2.clone()), 52.03, 19.67),
        ("gfd(w=16,m=1)", low16(gfd16_2.clone()), 12.65, 8.48),
        ("xor-bs1(w=8,m=2)", low16(xor8_4.clone()), 64.40, 23.04),
        ("mmm-bs1(w=8,m=2)", low16(mmm8_4.clone()), 51.44, 27.47),
        ("gfd(w=8,m=2)", low16(gfd8_4.clone()), 3.73, 3.77),
    ];
    let row = |name: &str, v: &[u64], pc: f64, pd: f64| {
        let s = Stats::of(v);
        let paper = |x: f64| {
            if x.is_nan() {
                "-".to_string()
            } else {
                format!("{x:.2}%")
            }
        };
        println!(
            "  {:<28} {:>8} {:>8}   {:>7.2}% {:>7.2}%",
            name,
            paper(pc),
            paper(pd),
            s.langou(),
            s.duplicates()
        );
    };
    for (name, v, pc, pd) in &rows16 {
        row(name, v, *pc, *pd);
    }
    println!("  {:<28}", "32-bit");
    let rows32: Vec<(&str, Vec<u64>, f64, f64)> = vec![
        ("CRC-04C11DB7 [crc32]", crc32, 0.0, 0.0),
        ("xor-bs1(w=16,m=2) [xor-bs1]", xor16_2, 37.32, 15.76),
        ("mmm-bs1(w=16,m=2) [mmm-bs1]", mmm16_2, 23.29, 11.48),
        ("gfd(w=16,m=2) [gfd16]", gfd16_2, 0.0, 0.0),
        ("xor-bs1(w=8,m=4)", xor8_4, 60.71, 13.65),
        ("mmm-bs1(w=8,m=4)", mmm8_4, 30.08, 14.91),
        ("gfd(w=8,m=4) [gfd8]", gfd8_4, 0.0, 0.0),
    ];
    for (name, v, pc, pd) in &rows32 {
        row(name, v, *pc, *pd);
    }
    println!("  {:<28}", "operand choice");
    for (w, m, name) in [
        (16, 1, "gfd(16,1), ordinal values"),
        (8, 2, "gfd(8,2), ordinal values"),
        (16, 2, "gfd(16,2), ordinal values"),
        (8, 4, "gfd(8,4), ordinal values"),
    ] {
        let v = gfd_ordinal_operands(panel, types, w, m);
        let v: Vec<u64> = v.into_iter().map(|x| x & ((1u64 << (w * m)) - 1)).collect();
        row(name, &v, f64::NAN, f64::NAN);
    }
    row(
        "gropp [gropp]",
        &family_values::<Gropp>(panel, |h| h.value()),
        f64::NAN,
        f64::NAN,
    );
    row(
        "default64, low 32 bits",
        &family_values::<Default64>(panel, |h| h.value() & 0xffff_ffff),
        f64::NAN,
        f64::NAN,
    );
    row(
        "default64 [default64]",
        &family_values::<Default64>(panel, |h| h.value()),
        f64::NAN,
        f64::NAN,
    );
}

// ---------------------------------------------------------------------------
// Candidates for the default 64-bit hash (all compose in O(1)).

/// Polynomial hash over GF(2^64) = GF(2)[x]/(x^64 + x^4 + x^3 + x + 1).
#[derive(Clone, Copy)]
struct Gf64 {
    h: u64,
    power: u64,
}

fn clmul(a: u64, b: u64) -> u128 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: the feature is present.
            return unsafe { clmul_x86(a, b) };
        }
    }
    let mut r = 0u128;
    for i in 0..64 {
        if b >> i & 1 == 1 {
            r ^= (a as u128) << i;
        }
    }
    r
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq", enable = "sse2")]
unsafe fn clmul_x86(a: u64, b: u64) -> u128 {
    use std::arch::x86_64::*;
    let p = _mm_clmulepi64_si128(_mm_set_epi64x(0, a as i64), _mm_set_epi64x(0, b as i64), 0);
    let lo = _mm_cvtsi128_si64(p) as u64;
    let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(p, p)) as u64;
    (hi as u128) << 64 | lo as u128
}

fn gf64_mul(a: u64, b: u64) -> u64 {
    let p = clmul(a, b);
    let (hi, lo) = ((p >> 64) as u64, p as u64);
    // x^64 = x^4 + x^3 + x + 1: fold the high half twice.
    let fold = |h: u64| h ^ h << 1 ^ h << 3 ^ h << 4;
    let carry = hi >> 63 ^ hi >> 61 ^ hi >> 60;
    lo ^ fold(hi) ^ fold(carry)
}

const GF64_BASE: u64 = 0x9e37_79b9_7f4a_7c15;

impl SignatureMonoid for Gf64 {
    fn empty() -> Self {
        Gf64 { h: 0, power: 1 }
    }
    fn basic(b: BasicType) -> Self {
        Gf64 {
            h: Default64::basic_value(b) | 1 << 62,
            power: GF64_BASE,
        }
    }
    fn concat(&self, next: &Self) -> Self {
        Gf64 {
            h: gf64_mul(self.h, next.power) ^ next.h,
            power: gf64_mul(self.power, next.power),
        }
    }
}

/// Polynomial hash modulo 2^64 with an odd base (a ring, not a field).
#[derive(Clone, Copy)]
struct Ring64 {
    h: u64,
    power: u64,
}

impl SignatureMonoid for Ring64 {
    fn empty() -> Self {
        Ring64 { h: 0, power: 1 }
    }
    fn basic(b: BasicType) -> Self {
        Ring64 {
            h: Default64::basic_value(b),
            power: GF64_BASE,
        }
    }
    fn concat(&self, next: &Self) -> Self {
        Ring64 {
            h: self.h.wrapping_mul(next.power).wrapping_add(next.h),
            power: self.power.wrapping_mul(next.power),
        }
    }
}

struct Candidate {
    name: &'static str,
    value: fn(&Node) -> u64,
    concat_ns: fn(u64) -> f64,
    repeat_ns: fn(u64) -> f64,
    alias: fn() -> Option<&'static str>,
}

/// The smallest k of a list of suspects for which 1 + k copies of MPI_INT
/// hash like one copy (a count period of the candidate), if any.
fn count_alias<M: SignatureMonoid>(value: fn(&M) -> u64) -> Option<&'static str> {
    let one = M::basic(BasicType::Predefined(Predefined(0x209)));
    let suspects: [(u128, &str); 6] = [
        (65535, "2^16-1"),
        ((1 << 32) - 1, "2^32-1"),
        ((1 << 61) - 2, "2^61-2"),
        (1 << 62, "2^62"),
        (u64::MAX as u128, "2^64-1"),
        (1 << 64, "2^64"),
    ];
    suspects
        .iter()
        .find(|(k, _)| value(&one.repeat(1 + k)) == value(&one))
        .map(|s| s.1)
}

/// ns per concatenation in a dependent chain.
fn chain_ns<M: SignatureMonoid>(iters: u64) -> f64 {
    let a = M::basic(BasicType::Predefined(Predefined(0x209)));
    let b = M::basic(BasicType::Predefined(Predefined(0x214)));
    let start = Instant::now();
    let mut x = a.clone();
    for _ in 0..iters {
        x = black_box(x.concat(&b));
    }
    black_box(x);
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// ns per repeat(10^9 + i).
fn repeat_ns<M: SignatureMonoid>(iters: u64) -> f64 {
    let a = M::basic(BasicType::Predefined(Predefined(0x209)));
    let start = Instant::now();
    for i in 0..iters {
        black_box(black_box(&a).repeat(1_000_000_000 + i as u128));
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

fn candidates() -> Vec<Candidate> {
    vec![
        Candidate {
            name: "poly mod 2^61-1 (chosen)",
            value: |t| fold::<Default64>(t).unwrap().h,
            concat_ns: chain_ns::<Default64>,
            repeat_ns: repeat_ns::<Default64>,
            alias: || count_alias::<Default64>(|h| h.h),
        },
        Candidate {
            name: "poly over GF(2^64)",
            value: |t| fold::<Gf64>(t).unwrap().h,
            concat_ns: chain_ns::<Gf64>,
            repeat_ns: repeat_ns::<Gf64>,
            alias: || count_alias::<Gf64>(|h| h.h),
        },
        Candidate {
            name: "gfd(w=16,m=4) (64-bit gfd)",
            value: |t| fold::<Gfd<16, 4>>(t).unwrap().packed(),
            concat_ns: chain_ns::<Gfd<16, 4>>,
            repeat_ns: repeat_ns::<Gfd<16, 4>>,
            alias: || count_alias::<Gfd<16, 4>>(|h| h.packed()),
        },
        Candidate {
            name: "poly mod 2^64, odd base",
            value: |t| fold::<Ring64>(t).unwrap().h,
            concat_ns: chain_ns::<Ring64>,
            repeat_ns: repeat_ns::<Ring64>,
            alias: || count_alias::<Ring64>(|h| h.h),
        },
    ]
}

/// A large panel: patterns (4)-(6) over all 61 basic types with wider n
/// and m, plus three-type structs m:(a:α_i, b:α_j, c:α_k) over the first
/// 24, deduplicated exactly by run-length encoding.
fn big_panel(quick: bool) -> Vec<Node> {
    let basics: Vec<u16> = mpix_marshal::testing::signature::basic::BASIC_ORDINALS
        .iter()
        .map(|e| e.0)
        .collect();
    let mut trees = Vec::new();
    let (n4, n56, m56) = if quick { (200, 5, 4) } else { (1000, 8, 8) };
    for &t in &basics {
        for n in 1..=n4 {
            trees.push(contiguous(n, named(t)));
        }
    }
    for &i in &basics {
        for &j in basics.iter().filter(|&&j| j != i) {
            for n in 2..=n56 {
                for m in 1..=m56 {
                    let member = || structure(vec![(1, named(i)), (n - 1, named(j))]);
                    trees.push(contiguous(m, member()));
                    trees.push(structure(vec![(1, named(i)), (m, member())]));
                }
            }
        }
    }
    let few = &basics[..if quick { 10 } else { 24 }];
    for &i in few {
        for &j in few.iter().filter(|&&j| j != i) {
            for &k in few.iter().filter(|&&k| k != j) {
                for (a, b, c) in [(1, 1, 1), (1, 2, 1), (2, 1, 3), (1, 3, 2)] {
                    for m in 1..=3 {
                        trees.push(contiguous(
                            m,
                            structure(vec![(a, named(i)), (b, named(j)), (c, named(k))]),
                        ));
                    }
                }
            }
        }
    }
    let mut seen = HashSet::new();
    trees.retain(|t| {
        let rle: Vec<(BasicType, u128)> = Signature::new(t).unwrap().runs().collect();
        seen.insert(rle)
    });
    trees
}

fn default_study(panel_l: &[Entry], quick: bool) {
    let big = big_panel(quick);
    println!(
        "\nDefault 64-bit hash: candidates that compose in O(1) (state = value and the weight\n\
         of the signature's length). Collisions (Langou's definition) on panel L ({}) and on a\n\
         large panel of {} distinct signatures (patterns (4)-(6) over all 61 basic types, n up\n\
         to {}, plus three-type structs), at full width and truncated to 32 bits (a random\n\
         mapping: {:.4} % at 32 bits). Speed: ns per concatenation (dependent chain), ns per\n\
         repeat(10^9). Count alias: the smallest k tried (2^16-1, 2^32-1, 2^61-2, 2^62,\n\
         2^64-1, 2^64) for which 1 + k copies of MPI_INT hash like one copy.",
        panel_l.len(),
        big.len(),
        if quick { 200 } else { 1000 },
        random_collisions(big.len(), 32)
    );
    println!(
        "  {:<28} {:>9} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "candidate",
        "L full",
        "L low32",
        "big full",
        "big low32",
        "big hi32",
        "concat",
        "repeat",
        "alias"
    );
    let iters = if quick { 200_000 } else { 2_000_000 };
    for c in candidates() {
        let l: Vec<u64> = panel_l.iter().map(|e| (c.value)(&e.tree)).collect();
        let b: Vec<u64> = big.iter().map(|t| (c.value)(t)).collect();
        let low = |v: &[u64]| v.iter().map(|x| x & 0xffff_ffff).collect::<Vec<u64>>();
        let high = |v: &[u64]| v.iter().map(|x| x >> 32).collect::<Vec<u64>>();
        println!(
            "  {:<28} {:>8.4}% {:>8.4}% {:>9.4}% {:>9.4}% {:>9.4}% {:>7.1}ns {:>7.1}ns {:>8}",
            c.name,
            Stats::of(&l).langou(),
            Stats::of(&low(&l)).langou(),
            Stats::of(&b).langou(),
            Stats::of(&low(&b)).langou(),
            Stats::of(&high(&b)).langou(),
            (c.concat_ns)(iters),
            (c.repeat_ns)(iters / 10),
            (c.alias)().unwrap_or("none"),
        );
    }
    println!(
        "  (the 2^61-1 hash's high 32 bits hold only 29 bits of value: its hi32 column is\n\
         expected at the 29-bit random rate, {:.4} %)",
        random_collisions(big.len(), 29)
    );
}

// ---------------------------------------------------------------------------
// Speed: the fold beside a naive typemap expansion.

/// Lower bound and extent of each node, for the naive walk (the rules for
/// the constructors the benchmarked types use; MPI_LB/MPI_UB markers in a
/// struct set its bounds).
struct Layout {
    extents: HashMap<*const Node, (i64, i64)>,
    sizes: HashMap<u16, i64>,
}

impl Layout {
    fn new(root: &Node) -> Layout {
        let mut l = Layout {
            extents: HashMap::new(),
            sizes: HashMap::new(),
        };
        l.visit(root);
        l
    }

    fn size(&mut self, p: Predefined) -> i64 {
        *self.sizes.entry(p.0).or_insert_with(|| {
            mpix_marshal::testing::mpi::local()
                .datatype(p)
                .map_or(0, |t| mpix_marshal::testing::mpi::geometry(t).unwrap().size)
        })
    }

    fn visit(&mut self, node: &Node) -> (i64, i64) {
        for c in node.children() {
            self.visit(c);
        }
        let ext = |l: &Layout, n: &Node| l.extents[&(n as *const Node)];
        let r = match &node.kind {
            Kind::Named(p) => (0, self.size(*p)),
            Kind::Dup(old) => ext(self, old),
            Kind::Resized { lb, extent, .. } => (*lb, *extent),
            Kind::Contiguous { count, old } => {
                let (lb, e) = ext(self, old);
                (lb, count * e)
            }
            Kind::Vector {
                count,
                blocklength,
                stride,
                old,
            } => {
                let (lb, e) = ext(self, old);
                (lb, ((count - 1) * stride + blocklength) * e)
            }
            Kind::Struct {
                blocklengths,
                displacements,
                types,
                ..
            } => {
                let (mut lo, mut hi) = (i64::MAX, i64::MIN);
                let (mut mlo, mut mhi) = (None, None);
                for ((b, d), t) in blocklengths.iter().zip(displacements).zip(types) {
                    match t.kind {
                        Kind::Named(p) if p == Predefined::LB => mlo = Some(*d),
                        Kind::Named(p) if p == Predefined::UB => mhi = Some(*d),
                        _ => {
                            let (tl, te) = ext(self, t);
                            lo = lo.min(d + tl);
                            hi = hi.max(d + tl + b * te);
                        }
                    }
                }
                let (lo, hi) = (mlo.unwrap_or(lo), mhi.unwrap_or(hi));
                (lo, hi - lo)
            }
            other => panic!("the naive walk does not handle {:?}", other.combiner()),
        };
        self.extents.insert(node as *const Node, r);
        r
    }

    /// Calls `f(basic, displacement)` for each element of the typemap in
    /// order, until `budget` elements are done; returns false when stopped.
    fn walk(
        &self,
        node: &Node,
        base: i64,
        budget: &mut u64,
        f: &mut impl FnMut(BasicType, i64),
    ) -> bool {
        let ext = |n: &Node| self.extents[&(n as *const Node)].1;
        match &node.kind {
            Kind::Named(p) => {
                if p.is_marker() {
                    return true;
                }
                if *budget == 0 {
                    return false;
                }
                *budget -= 1;
                f(BasicType::Predefined(*p), base);
                true
            }
            Kind::Dup(old) | Kind::Resized { old, .. } => self.walk(old, base, budget, f),
            Kind::Contiguous { count, old } => {
                let e = ext(old);
                (0..*count).all(|i| self.walk(old, base + i * e, budget, f))
            }
            Kind::Vector {
                count,
                blocklength,
                stride,
                old,
            } => {
                let e = ext(old);
                (0..*count).all(|i| {
                    (0..*blocklength)
                        .all(|b| self.walk(old, base + (i * stride + b) * e, budget, f))
                })
            }
            Kind::Struct {
                blocklengths,
                displacements,
                types,
                ..
            } => blocklengths
                .iter()
                .zip(displacements)
                .zip(types)
                .all(|((b, d), t)| {
                    let e = ext(t);
                    (0..*b).all(|k| self.walk(t, base + d + k * e, budget, f))
                }),
            other => panic!("the naive walk does not handle {:?}", other.combiner()),
        }
    }
}

/// Hashes the first `budget` elements of the typemap one at a time: the
/// family's concatenation with the element's (cached) value, or for
/// CRC-32 the byte-table update over the element's 4-byte record.
/// Returns (elements walked, time, value).
fn naive<H: SignatureHash>(tree: &Node, layout: &Layout, budget: u64) -> (u64, Duration, u64) {
    if H::KIND == HashKind::Crc32 {
        return naive_crc(tree, layout, budget);
    }
    let mut left = budget;
    let mut state = H::empty();
    let mut last: Option<(BasicType, H)> = None;
    let mut disp_sum = 0i64;
    let start = Instant::now();
    layout.walk(tree, 0, &mut left, &mut |b, d| {
        disp_sum = disp_sum.wrapping_add(d);
        let one = match &last {
            Some((lb, h)) if *lb == b => h.clone(),
            _ => {
                let h = H::basic(b);
                last = Some((b, h.clone()));
                h
            }
        };
        state = state.concat(&one);
    });
    let took = start.elapsed();
    black_box(disp_sum);
    (budget - left, took, state.value())
}

fn naive_crc(tree: &Node, layout: &Layout, budget: u64) -> (u64, Duration, u64) {
    use mpix_marshal::testing::signature::crc::{crc32_update, record};
    let mut left = budget;
    let mut crc = 0u32;
    let mut last: Option<(BasicType, [u8; 4])> = None;
    let mut disp_sum = 0i64;
    let start = Instant::now();
    layout.walk(tree, 0, &mut left, &mut |b, d| {
        disp_sum = disp_sum.wrapping_add(d);
        let rec = match last {
            Some((lb, r)) if lb == b => r,
            _ => {
                let r = record(b);
                last = Some((b, r));
                r
            }
        };
        crc = crc32_update(crc, &rec);
    });
    let took = start.elapsed();
    black_box(disp_sum);
    (budget - left, took, crc as u64)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median time of `f` over enough calls to fill ~`target`.
fn time(target: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(20));
    let per_batch = ((Duration::from_millis(2).as_nanos() / once.as_nanos()).max(1)) as u32;
    let batches =
        ((target.as_nanos() / (once.as_nanos() * per_batch as u128)).clamp(5, 200)) as usize;
    let mut samples = Vec::with_capacity(batches);
    for _ in 0..batches {
        let s = Instant::now();
        for _ in 0..per_batch {
            f();
        }
        samples.push(s.elapsed() / per_batch);
    }
    median(samples)
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn speed_row<H: SignatureHash>(
    name: &str,
    tree: &Node,
    layout: &Layout,
    total: u64,
    budget: u64,
    target: Duration,
) {
    let kind = H::KIND;
    let folded = time(target, || {
        black_box(signature_hash(black_box(tree), kind).unwrap());
    });
    let (walked, took, value) = naive::<H>(tree, layout, budget);
    let naive_full = if walked == total {
        assert_eq!(value, signature_hash(tree, kind).unwrap(), "{name}");
        // Small enough to repeat: the median, warm, like the fold's.
        time(target, || {
            black_box(naive::<H>(tree, layout, budget));
        })
    } else {
        took.mul_f64(total as f64 / walked as f64)
    };
    println!(
        "  {:<10} {:>12} {:>14}{} {:>12.0}×",
        name,
        fmt(folded),
        fmt(naive_full),
        if walked == total { " " } else { "*" },
        naive_full.as_secs_f64() / folded.as_secs_f64()
    );
}

fn speed_table(title: &str, tree: &Node, budget: u64, target: Duration) {
    let layout = Layout::new(tree);
    let total = signature_count(tree).unwrap() as u64;
    println!("\n{title}: {total} elements");
    println!(
        "  {:<10} {:>12} {:>15} {:>13}",
        "family", "tree fold", "naive walk", "fold speedup"
    );
    speed_row::<Gropp>("gropp", tree, &layout, total, budget, target);
    speed_row::<XorBs1<16, 2>>("xor-bs1", tree, &layout, total, budget, target);
    speed_row::<MmmBs1<16, 2>>("mmm-bs1", tree, &layout, total, budget, target);
    speed_row::<Gfd<8, 4>>("gfd8", tree, &layout, total, budget, target);
    speed_row::<Gfd<16, 2>>("gfd16", tree, &layout, total, budget, target);
    speed_row::<Crc32>("crc32", tree, &layout, total, budget, target);
    speed_row::<Default64>("default64", tree, &layout, total, budget, target);
    let count = time(target, || {
        black_box(signature_count(black_box(tree)).unwrap());
    });
    let exact = time(target, || {
        black_box(Signature::new(black_box(tree)).unwrap());
    });
    println!(
        "  signature_count {}, exact Signature::new {}",
        fmt(count),
        fmt(exact)
    );
    if budget < total {
        println!(
            "  * the naive walk was run over the first {budget} elements (typemap expansion with\n    \
             displacements, one family update per element) and scaled to {total}."
        );
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let c13: Vec<u16> = C13.iter().map(|e| e.0).collect();

    // 1. Quality.
    let panel_g = panel(&c13, 1..=64, 2..=5, 1..=3);
    let panel_l = panel(&c13, 1..=58, 2..=6, 1..=4);
    for e in panel_g.iter().chain(&panel_l).step_by(97) {
        let want: Vec<BasicType> = e
            .seq
            .iter()
            .map(|&t| BasicType::Predefined(Predefined(c13[t as usize])))
            .collect();
        let got: Vec<BasicType> = Signature::new(&e.tree)
            .unwrap()
            .runs()
            .flat_map(|(b, n)| std::iter::repeat(b).take(n as usize))
            .collect();
        assert_eq!(got, want, "panel tree and sequence disagree");
    }
    println!(
        "Panels over the 13 MPI-1 C basic types ({}).\n\
         G: (4) n = 1..64; (5), (6) n = 2..5, m = 1..3, i != j.\n\
         L: (4) n = 1..58; (5), (6) n = 2..6, m = 1..4, i != j.",
        C13.iter().map(|e| e.1).collect::<Vec<_>>().join(", ")
    );
    gropp_table(&panel_g);
    langou_table(&panel_l, &c13);

    // 2. The default.
    default_study(&panel_l, quick);

    // 3. Speed.
    common::init();
    let target = Duration::from_millis(if quick { 50 } else { 300 });
    let uni = common::contiguous(1_000_000_000, common::named("MPI_INT"));
    let decode = time(target, || {
        black_box(type_tree(uni).unwrap());
    });
    let uni_tree = type_tree(uni).unwrap();
    println!(
        "\nHash speed (median per call; the tree fold starts from the decoded tree: decoding the\n\
         MPI handle with type_tree costs {} for the unidatatype).",
        fmt(decode)
    );
    let budget = if quick { 2_000_000 } else { 20_000_000 };
    speed_table("contiguous(10^9, MPI_INT)", &uni_tree, budget, target);
    let hdf5 = common::hdf5_complex(false);
    let hdf5_tree = type_tree(hdf5).unwrap();
    let decode = time(target, || {
        black_box(type_tree(hdf5).unwrap());
    });
    speed_table(
        &format!(
            "HDF5-derived type, resized form (type_tree {})",
            fmt(decode)
        ),
        &hdf5_tree,
        u64::MAX,
        target,
    );
    if common::try_named("MPI_LB").is_some() {
        let markers = common::hdf5_complex(true);
        let tree = type_tree(markers).unwrap();
        speed_table("HDF5-derived type, LB/UB form", &tree, u64::MAX, target);
        common::free(markers);
    }
    common::free(hdf5);
    common::free(uni);
}
