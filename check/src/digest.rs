//! The fast path's digest: what one rank contributes to the single
//! reduction that checks a correct call (pure functions, no MPI).
//!
//! A correct program pays for one small allreduce per checked call. Each
//! rank reduces a fixed vector of words; every rank gets the same result
//! and so reaches the same verdict. Only when the verdict is "not
//! consistent" do the ranks exchange their full records (the slow path,
//! `check`), which finds and reports the first difference exactly.
//!
//! * **Equality words** go in as the pair (x, !x) under bitwise AND: the
//!   result holds AND(x) and AND(!x) = !OR(x), and the ranks agree on x
//!   exactly when AND(x) == OR(x). A rank that does not take part in a word
//!   (a side it does not have) contributes all ones twice, which AND
//!   ignores.
//! * **The flag word** ("take the slow path") is read as OR: a rank sets it
//!   when its own arguments need the exact rules (`MPI_PACKED`, a type the
//!   library could not read, or its two sides differing).
//! * **The pair sum** checks the "v"/"w" calls, where each pair of ranks
//!   must agree: every sender adds a hash of (sender, receiver, signature)
//!   for each pair it sends, and every receiver subtracts the same hash of
//!   what it expects. The sum over all ranks is zero when every pair
//!   matches (and otherwise zero with probability about 2^-64).

use crate::record::{Record, Sig, GROUP_HIGH, PACKED, UNKNOWN};

/// Equality words, in order.
const CALL: usize = 0;
const SEQ: usize = 1;
const ROOT: usize = 2;
const OP: usize = 3;
const COMMUTE: usize = 4;
const IN_PLACE: usize = 5;
const EXTRA: usize = 6;
const SIG_HASH: usize = 7;
const SIG_COUNT: usize = 8;
/// The flag word (read as OR).
const SLOW: usize = 9;
/// The `extra` word of an intercommunicator's high group (EXTRA holds the
/// low group's): such arguments must agree within each group only.
const EXTRA_HIGH: usize = 10;
/// The call's place in the order across communicators (`crate::order`).
const ORDER: usize = 11;
const EQ: usize = 12;

/// The words of the bitwise-AND part: (x, !x) for each equality word.
pub const AND_WORDS: usize = 2 * EQ;
/// All words: the AND part, then the pair sum.
pub const WORDS: usize = AND_WORDS + 1;

pub type Digest = [u64; WORDS];

/// Builds one rank's digest.
pub struct Builder {
    d: Digest,
    /// This rank's uniform signature, once it has one.
    sig: Option<(u64, u64)>,
}

impl Builder {
    /// The scalar fields of a record. Fields a call does not have hold the
    /// same placeholder on every rank (`Call::record`), so they agree.
    pub fn new(rec: &Record) -> Builder {
        let mut b = Builder {
            d: [0; WORDS],
            sig: None,
        };
        b.eq(CALL, rec.call);
        b.eq(SEQ, rec.seq);
        b.eq(ROOT, rec.root as u64);
        b.eq(OP, rec.op);
        b.eq(COMMUTE, rec.commute);
        b.eq(IN_PLACE, rec.in_place);
        b.eq(ORDER, rec.order);
        if rec.group == GROUP_HIGH {
            b.absent(EXTRA);
            b.eq(EXTRA_HIGH, rec.extra);
        } else {
            b.eq(EXTRA, rec.extra);
            b.absent(EXTRA_HIGH);
        }
        b.eq(SLOW, 0);
        for s in [rec.a, rec.b] {
            b.uniform(s);
        }
        if b.sig.is_none() {
            b.absent(SIG_HASH);
            b.absent(SIG_COUNT);
        }
        b
    }

    fn eq(&mut self, i: usize, x: u64) {
        set_eq(&mut self.d, i, x);
    }

    fn absent(&mut self, i: usize) {
        self.d[2 * i] = u64::MAX;
        self.d[2 * i + 1] = u64::MAX;
    }

    /// An intercommunicator's root word: the root's rank in the merged
    /// communicator as this rank names it (None: MPI_PROC_NULL, no claim).
    /// Two MPI_ROOTs, or a group naming another rank, disagree here.
    pub fn root_claim(&mut self, claim: Option<u64>) {
        match claim {
            Some(r) => self.eq(ROOT, r),
            None => self.absent(ROOT),
        }
    }

    /// The op takes no part on this rank (an intercommunicator's
    /// MPI_PROC_NULL ranks of a reduction).
    pub fn no_op(&mut self) {
        self.absent(OP);
        self.absent(COMMUTE);
    }

    fn slow(&mut self) {
        self.eq(SLOW, 1);
    }

    /// A side of a uniform call: every defined side of every rank must
    /// have the same signature.
    fn uniform(&mut self, s: Sig) {
        if !s.defined() {
            return;
        }
        if s.flags & (PACKED | UNKNOWN) != 0 {
            self.slow();
        }
        match self.sig {
            None => {
                self.sig = Some((s.hash, s.count));
                self.eq(SIG_HASH, s.hash);
                self.eq(SIG_COUNT, s.count);
            }
            Some(mine) if mine != (s.hash, s.count) => self.slow(),
            Some(_) => {}
        }
    }

    /// One pair of a "v"/"w" or neighborhood call: what rank `from` sends
    /// to rank `to` (added by the sender) or expects from it (subtracted by
    /// the receiver); `nth` numbers repeated edges between the same two
    /// ranks (a neighborhood's multigraph), 0 otherwise.
    pub fn pair(&mut self, from: usize, to: usize, nth: usize, s: Sig, sending: bool) {
        if !s.defined() {
            return;
        }
        if s.flags & (PACKED | UNKNOWN) != 0 {
            self.slow();
        }
        let h = pair_hash(from as u64, to as u64 | (nth as u64) << 40, s.hash, s.count);
        let sum = &mut self.d[AND_WORDS];
        *sum = if sending {
            sum.wrapping_add(h)
        } else {
            sum.wrapping_sub(h)
        };
    }

    pub fn finish(self) -> Digest {
        self.d
    }
}

/// Equality word `i` of `d`: x.
fn set_eq(d: &mut Digest, i: usize, x: u64) {
    d[2 * i] = x;
    d[2 * i + 1] = !x;
}

/// `d`, the digest of a call, made the digest of the same call numbered
/// `seq` at place `order` (a repeated call's, without building it again).
pub fn renumber(d: &mut Digest, seq: u64, order: u64) {
    set_eq(d, SEQ, seq);
    set_eq(d, ORDER, order);
}

/// A 64-bit mix (the finalizer of SplitMix64): a bijection that spreads
/// every input bit over every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn pair_hash(from: u64, to: u64, hash: u64, count: u64) -> u64 {
    let h = mix(hash ^ 0x9e37_79b9_7f4a_7c15);
    let h = mix(h ^ count.wrapping_mul(0xd6e8_feb8_6659_fd93));
    mix(h ^ from.wrapping_mul(0xa076_1d64_78bd_642f) ^ to.rotate_left(32))
}

/// Folds `input` into `acc` (the reduction's operation; commutative and
/// associative, so MPI may apply it in any order).
pub fn combine(input: &Digest, acc: &mut Digest) {
    combine_all(input, acc);
}

/// `combine` of each digest of a batch (words of whole digests) into the
/// same digest of `acc`.
pub fn combine_all(input: &[u64], acc: &mut [u64]) {
    for (x, a) in input.chunks_exact(WORDS).zip(acc.chunks_exact_mut(WORDS)) {
        for i in 0..AND_WORDS {
            a[i] &= x[i];
        }
        a[AND_WORDS] = a[AND_WORDS].wrapping_add(x[AND_WORDS]);
    }
}

/// Folds a rank's own equality words into a result it was handed (the
/// last step of the doubling on a folded rank), digest by digest: a no-op
/// on a true reduction, which already holds them; it makes the verdict
/// "not consistent" when the result came from a rank whose check is of the
/// other kind (see `mpi::post_digest_shape`) and differs from this one.
pub fn and_in_all(own: &[u64], acc: &mut [u64]) {
    for (x, a) in own.chunks_exact(WORDS).zip(acc.chunks_exact_mut(WORDS)) {
        for i in 0..AND_WORDS {
            a[i] &= x[i];
        }
    }
}

/// The summary of a batch, reduced first (`batch::verify`): one
/// digest-shaped vector whose call word holds a hash of the batch's
/// equality words, whose flag word says whether any of its digests asks
/// for the exact rules, and whose pair sum is the weighted sum of
/// theirs. When the ranks' summaries agree, every rank made the same
/// calls word for word and the batch is consistent; when they differ (a
/// mismatch, or ranks whose digests differ only where the full reduction
/// would accept it: a side one rank has and another lacks), the batch's
/// digests are reduced in full (`batch`). Sound: agreement here implies
/// agreement there.
#[derive(Clone, Copy)]
pub struct Summary {
    hash: u64,
    slow: bool,
    /// The pair sums of the "v" calls, each times an odd weight of its
    /// slot: zero over the ranks when every call's is, and two calls'
    /// residues do not cancel.
    pairs: u64,
    calls: u64,
}

/// Odd multipliers for the summary's per-word lanes (from SplitMix64
/// and wyhash constants): independent multiplies, so that one digest's
/// hash costs about as much as one `mix`.
const LANES: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
    0xa076_1d64_78bd_642f,
];

impl Summary {
    pub const EMPTY: Summary = Summary {
        hash: 0x243f_6a88_85a3_08d3,
        slow: false,
        pairs: 0,
        calls: 0,
    };

    /// Adds the next call's digest (an intracommunicator's: its high
    /// group's word is absent on every rank).
    pub fn add(&mut self, d: &Digest) {
        let mut lane = 0u64;
        for i in 0..EQ {
            lane = lane.wrapping_add(d[2 * i].wrapping_mul(LANES[i % 4]).rotate_left(i as u32));
        }
        self.slow |= d[2 * SLOW] != 0;
        self.hash = mix(self.hash ^ lane);
        let weight = mix(self.calls) | 1;
        self.pairs = self.pairs.wrapping_add(d[AND_WORDS].wrapping_mul(weight));
        self.calls += 1;
    }

    /// The digest-shaped vector the ranks reduce; `consistent` on the
    /// reduction is the verdict.
    pub fn to_digest(self) -> Digest {
        let mut d = [u64::MAX; WORDS];
        d[2 * CALL] = self.hash;
        d[2 * CALL + 1] = !self.hash;
        d[2 * SLOW] = u64::from(self.slow);
        d[2 * SLOW + 1] = !u64::from(self.slow);
        d[AND_WORDS] = self.pairs;
        d
    }
}

/// A batch of `slots` digests, as one rank reduces it: its calls'
/// digests in order, then for each slot it has no call for, the digest of
/// "no call" (call 0; no other word). A rank that made fewer calls than
/// another before the batch was verified disagrees with it in the first
/// slot it lacks; ranks that all lack a slot agree on it.
pub fn batch(digests: &[Digest], slots: usize) -> Vec<u64> {
    let mut none = [u64::MAX; WORDS];
    none[2 * CALL] = 0;
    none[AND_WORDS] = 0;
    let mut out = Vec::with_capacity(slots * WORDS);
    for d in digests.iter().chain(std::iter::repeat(&none)).take(slots) {
        out.extend_from_slice(d);
    }
    out
}

/// The slots of a reduced batch whose calls are not consistent, in order.
pub fn inconsistent_slots(reduced: &[u64]) -> Vec<usize> {
    reduced
        .chunks_exact(WORDS)
        .enumerate()
        .filter(|(_, d)| <&Digest>::try_from(*d).is_ok_and(|r| !consistent(r)))
        .map(|(i, _)| i)
        .collect()
}

/// The verdict on the reduced digest: true when every rank's call is
/// consistent with every other's (no further exchange needed).
pub fn consistent(r: &Digest) -> bool {
    let agree = |i: usize| {
        let (and, and_not) = (r[2 * i], r[2 * i + 1]);
        // AND(x) == OR(x), or no rank took part (all ones twice).
        and == !and_not || (and == u64::MAX && and_not == u64::MAX)
    };
    let slow = !r[2 * SLOW + 1] != 0;
    (0..EQ).filter(|&i| i != SLOW).all(agree) && !slow && r[AND_WORDS] == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Coll, DEFINED, IN_PLACE_NA};

    fn sig(hash: u64, count: u64) -> Sig {
        Sig {
            hash,
            count,
            bytes: 4 * count,
            flags: DEFINED,
        }
    }

    fn rec(a: Sig, b: Sig) -> Record {
        Record {
            call: Coll::Gather as u64,
            seq: 3,
            root: 0,
            op: 0,
            commute: 0,
            in_place: IN_PLACE_NA,
            a,
            b,
            extra: 0,
            size: 4,
            group: 0,
            grank: 0,
            order: 0,
        }
    }

    fn reduce(ds: &[Digest]) -> Digest {
        let mut acc = ds[0];
        for d in &ds[1..] {
            combine(d, &mut acc);
        }
        acc
    }

    fn verdict(recs: &[Record]) -> bool {
        let ds: Vec<Digest> = recs.iter().map(|r| Builder::new(r).finish()).collect();
        consistent(&reduce(&ds))
    }

    #[test]
    fn equal_records_are_consistent() {
        let r = rec(sig(7, 1), Sig::NONE);
        assert!(verdict(&[r, r, r, r]));
    }

    #[test]
    fn any_differing_scalar_is_seen() {
        let r = rec(sig(7, 1), Sig::NONE);
        for field in 0..5 {
            let mut other = r;
            match field {
                0 => other.call += 1,
                1 => other.seq += 1,
                2 => other.root = 1,
                3 => other.op = 5,
                _ => other.extra = 9,
            }
            assert!(!verdict(&[r, r, other, r]), "field {field}");
        }
    }

    #[test]
    fn signatures_agree_only_among_the_ranks_that_have_them() {
        // Gather: the root receives (B) what every other rank sends (A).
        let root = rec(sig(7, 1), sig(7, 1));
        let leaf = rec(sig(7, 1), Sig::NONE);
        assert!(verdict(&[root, leaf, leaf]));
        let bad = rec(sig(8, 1), Sig::NONE);
        assert!(!verdict(&[root, leaf, bad]));
        let longer = rec(sig(7, 2), Sig::NONE);
        assert!(!verdict(&[root, longer]));
        // A rank whose own two sides differ takes the slow path.
        assert!(!verdict(&[rec(sig(7, 1), sig(8, 1)), leaf]));
        // No rank with a signature (Barrier): consistent.
        let none = rec(Sig::NONE, Sig::NONE);
        assert!(verdict(&[none, none]));
    }

    #[test]
    fn intercommunicator_words_agree_within_each_group() {
        use crate::record::GROUP_LOW;
        let side = |group, extra| Record {
            group,
            extra,
            ..rec(Sig::NONE, Sig::NONE)
        };
        let (l0, h1) = (side(GROUP_LOW, 0), side(GROUP_HIGH, 1));
        assert!(verdict(&[l0, l0, h1, h1]));
        assert!(!verdict(&[l0, side(GROUP_LOW, 1), h1, h1]));
        // Roots: one claim from the MPI_ROOT rank and the other group, none
        // from MPI_PROC_NULL ranks; a second MPI_ROOT claims itself.
        let claim = |c: Option<u64>| {
            let mut b = Builder::new(&l0);
            b.root_claim(c);
            b.finish()
        };
        let good = [claim(Some(1)), claim(None), claim(Some(1)), claim(Some(1))];
        assert!(consistent(&reduce(&good)));
        let two = [
            claim(Some(1)),
            claim(Some(0)),
            claim(Some(1)),
            claim(Some(1)),
        ];
        assert!(!consistent(&reduce(&two)));
    }

    #[test]
    fn packed_and_unknown_take_the_slow_path() {
        let mut p = sig(7, 1);
        p.flags |= PACKED;
        assert!(!verdict(&[rec(p, Sig::NONE), rec(p, Sig::NONE)]));
        let mut u = sig(7, 1);
        u.flags |= UNKNOWN;
        assert!(!verdict(&[rec(u, Sig::NONE), rec(u, Sig::NONE)]));
    }

    #[test]
    fn a_batch_finds_each_differing_call_and_each_missing_one() {
        let a = Builder::new(&rec(sig(7, 1), sig(7, 1))).finish();
        let b = Builder::new(&rec(sig(8, 1), sig(8, 1))).finish();
        let reduce = |xs: &[Vec<u64>]| {
            let mut acc = xs[0].clone();
            xs[1..].iter().for_each(|x| combine_all(x, &mut acc));
            acc
        };
        // The same calls, padded alike: consistent.
        let same = reduce(&[batch(&[a, b], 4), batch(&[a, b], 4)]);
        assert!(inconsistent_slots(&same).is_empty());
        // The second call differs.
        let differ = reduce(&[batch(&[a, b], 4), batch(&[a, a], 4)]);
        assert_eq!(inconsistent_slots(&differ), vec![1]);
        // One rank made one call fewer: its first missing slot differs.
        let fewer = reduce(&[batch(&[a, b, a], 4), batch(&[a, b], 4)]);
        assert_eq!(inconsistent_slots(&fewer), vec![2]);
        // A batch reduced by the doubling's last step (and_in_all) keeps
        // its verdict.
        let mut again = same.clone();
        and_in_all(&batch(&[a, b], 4), &mut again);
        assert!(inconsistent_slots(&again).is_empty());
    }

    #[test]
    fn the_pair_sum_is_zero_exactly_when_every_pair_matches() {
        let n = 4;
        let sent = |i: usize, j: usize| sig((i * 10 + j) as u64, (i + j) as u64);
        let build = |expect: &dyn Fn(usize, usize) -> Sig| -> Vec<Digest> {
            (0..n)
                .map(|me| {
                    let mut b = Builder::new(&rec(Sig::NONE, Sig::NONE));
                    for j in 0..n {
                        b.pair(me, j, 0, sent(me, j), true);
                        b.pair(j, me, 0, expect(j, me), false);
                    }
                    b.finish()
                })
                .collect()
        };
        assert!(consistent(&reduce(&build(&sent))));
        let one_off = |i: usize, j: usize| {
            if (i, j) == (2, 1) {
                sig(99, 3)
            } else {
                sent(i, j)
            }
        };
        assert!(!consistent(&reduce(&build(&one_off))));
        // Swapping two pairs' signatures is not a match either.
        let swapped = |i: usize, j: usize| match (i, j) {
            (0, 1) => sent(1, 0),
            (1, 0) => sent(0, 1),
            _ => sent(i, j),
        };
        assert!(!consistent(&reduce(&build(&swapped))));
    }

    #[test]
    fn a_renumbered_digest_is_the_digest_of_the_renumbered_call() {
        let r = with_seq(5, sig(7, 2));
        let mut d = Builder::new(&r).finish();
        renumber(&mut d, 6, 3);
        let again = Record {
            order: 3,
            ..with_seq(6, sig(7, 2))
        };
        assert_eq!(d, Builder::new(&again).finish());
        assert_ne!(d, Builder::new(&r).finish());
    }

    /// One rank's batch summary of the records `recs`, in order.
    fn summary(recs: &[Record]) -> Digest {
        let mut s = Summary::EMPTY;
        for r in recs {
            s.add(&Builder::new(r).finish());
        }
        s.to_digest()
    }

    fn with_seq(seq: u64, a: Sig) -> Record {
        Record { seq, ..rec(a, a) }
    }

    #[test]
    fn summaries_of_the_same_calls_agree() {
        let calls = [with_seq(1, sig(7, 2)), with_seq(2, sig(9, 1))];
        assert!(consistent(&reduce(&[summary(&calls), summary(&calls)])));
    }

    #[test]
    fn summaries_differ_on_any_word_order_or_length() {
        let calls = [with_seq(1, sig(7, 2)), with_seq(2, sig(9, 1))];
        let count = [with_seq(1, sig(7, 2)), with_seq(2, sig(9, 2))];
        let root = [
            with_seq(1, sig(7, 2)),
            Record {
                root: 1,
                ..with_seq(2, sig(9, 1))
            },
        ];
        let swapped = [with_seq(1, sig(9, 1)), with_seq(2, sig(7, 2))];
        for other in [&count[..], &root[..], &swapped[..], &calls[..1]] {
            assert!(!consistent(&reduce(&[summary(&calls), summary(other)])));
        }
    }

    #[test]
    fn a_summary_asking_for_the_exact_rules_is_never_consistent() {
        // Two sides that differ on one rank: the full comparison's slow
        // flag, kept by the summary even when every rank has it.
        let slow = [rec(sig(7, 2), sig(8, 2))];
        assert!(!verdict(&slow));
        assert!(!consistent(&reduce(&[summary(&slow), summary(&slow)])));
    }

    #[test]
    fn summaries_agree_only_where_the_full_comparison_does() {
        // Where the summaries agree, so does every slot of the batch.
        let calls = [with_seq(1, sig(7, 2)), with_seq(2, sig(9, 1))];
        assert!(consistent(&reduce(&[summary(&calls), summary(&calls)])));
        let full = |r: &[Record]| {
            batch(
                &r.iter()
                    .map(|r| Builder::new(r).finish())
                    .collect::<Vec<_>>(),
                4,
            )
        };
        let (a, b) = (full(&calls), full(&calls));
        let mut acc = a.clone();
        combine_all(&b, &mut acc);
        assert!(inconsistent_slots(&acc).is_empty());
    }

    /// One rank's summary of "v" calls: per call, (what rank 0 sends to
    /// rank 1, what rank 1 expects from rank 0), from rank `me`'s side.
    fn v_summary(me: usize, calls: &[(Sig, Sig)]) -> Digest {
        let mut s = Summary::EMPTY;
        for (k, &(sent, expected)) in calls.iter().enumerate() {
            let r = Record {
                call: Coll::Alltoallv as u64,
                ..with_seq(k as u64 + 1, Sig::NONE)
            };
            let mut b = Builder::new(&r);
            if me == 0 {
                b.pair(0, 1, 0, sent, true);
            } else {
                b.pair(0, 1, 0, expected, false);
            }
            s.add(&b.finish());
        }
        s.to_digest()
    }

    #[test]
    fn summaries_of_v_calls_check_their_pairs() {
        let (x, y) = (sig(7, 2), sig(7, 3));
        let agree =
            |calls: &[(Sig, Sig)]| consistent(&reduce(&[v_summary(0, calls), v_summary(1, calls)]));
        assert!(agree(&[(x, x), (y, y)]));
        assert!(!agree(&[(x, y)]));
        // Two differences whose residues are opposite do not cancel.
        assert!(!agree(&[(x, y), (y, x)]));
    }
}
