//! The type signature's hash, computed while the type is decoded, for the
//! external header (spec/external.md §4): each level's value follows from
//! its fields, as they go into the stream, and its children's values, by
//! the same rules as `signature::fold` applies to a tree.

use super::{Contents, Seg};
use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Distribution, Predefined, PREDEFINED};
use crate::format::writer::Int;
use crate::signature::darray::Darray;
use crate::signature::fold::Factors;
use crate::signature::{BasicType, Default64, SignatureMonoid};
use std::os::raw::c_int;
use std::sync::OnceLock;

/// A predefined type's value, by the fold's own rule, computed once per
/// process for each (every marshal of a predefined type, and every
/// predefined leaf, needs one).
#[inline]
pub(super) fn named(p: Predefined) -> Result<Default64> {
    static VALUES: OnceLock<Vec<Option<Default64>>> = OnceLock::new();
    let values = VALUES.get_or_init(|| {
        let table_len = PREDEFINED.iter().map(|&(c, _)| usize::from(c) + 1).max();
        let mut v = vec![None; table_len.unwrap_or(0)];
        for &(code, _) in PREDEFINED {
            v[usize::from(code)] = crate::signature::fold::named_value(Predefined(code)).ok();
        }
        v
    });
    match values.get(usize::from(p.0)).copied().flatten() {
        Some(v) => Ok(v),
        // Not computed: the fold says why.
        None => crate::signature::fold::named_value(p),
    }
}

/// A level's fields in stream order: runs over get_contents' arrays.
pub(super) struct Fields<'a> {
    pub segs: &'a [Seg],
    pub c: &'a Contents,
}

impl Fields<'_> {
    /// The single value that is segment `i`.
    fn one(&self, i: usize) -> Result<i64> {
        match self.segs.get(i) {
            Some(Seg::One(v)) => Ok(*v),
            _ => Err(Error::unsupported("unexpected field layout")),
        }
    }

    /// Calls `f` with each value of segment `i`.
    fn each(&self, i: usize, mut f: impl FnMut(i64)) {
        match self.segs.get(i) {
            Some(&Seg::One(v)) => f(v),
            Some(&Seg::Ints(s, n)) => self.c.ints[s..s + n].iter().for_each(|&v| f(v as i64)),
            #[allow(clippy::unnecessary_cast)] // MPI_Aint is not i64 everywhere
            Some(&Seg::Addrs(s, n)) => self.c.addrs[s..s + n].iter().for_each(|&v| f(v as i64)),
            Some(&Seg::Counts(s, n)) => self.c.counts[s..s + n].iter().for_each(|&v| f(v)),
            None => {}
        }
    }

    /// The values of segments `from..`, flattened (for the few fields of
    /// SUBARRAY and DARRAY).
    fn flat(&self, from: usize) -> Vec<i64> {
        let mut v = Vec::new();
        for i in from..self.segs.len() {
            self.each(i, |x| v.push(x));
        }
        v
    }
}

fn count(v: i64) -> Result<u128> {
    u128::try_from(v).map_err(|_| Error::unsupported(format!("negative count {v} from MPI")))
}

/// The sum of segment `i`'s values, each a count.
fn sum(f: &Fields, i: usize) -> Result<u128> {
    let (total, negative) = match f.segs.get(i) {
        Some(&Seg::Ints(s, n)) => sum_ints(&f.c.ints[s..s + n]),
        Some(&Seg::Counts(s, n)) => sum_counts(&f.c.counts[s..s + n]),
        _ => {
            let (mut total, mut negative) = (0u128, false);
            f.each(i, |v| {
                negative |= v < 0;
                total += v as u64 as u128;
            });
            (total, negative)
        }
    };
    if negative {
        return Err(Error::unsupported("negative blocklength from MPI"));
    }
    Ok(total)
}

/// The sum of `v`, and whether any value is negative. The blocklengths of
/// an (h)indexed type run to millions: two plain loops that vectorise,
/// the values or-ed, then zero-extended (no sign extension, which SSE2
/// lacks) and summed in a u64, which fewer than 2^32 values cannot
/// overflow.
fn sum_ints(v: &[c_int]) -> (u128, bool) {
    #[cfg(target_arch = "x86_64")]
    if v.len() >= 64 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { sum_ints_avx2(v) };
    }
    sum_ints_in(v)
}

/// `sum_ints` compiled for AVX2: twice the lanes, and sign tests and
/// widening in one instruction each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_ints_avx2(v: &[c_int]) -> (u128, bool) {
    sum_ints_in(v)
}

#[inline(always)]
fn sum_ints_in(v: &[c_int]) -> (u128, bool) {
    if v.iter().fold(0, |acc, &x| acc | x) < 0 {
        return (0, true);
    }
    let total: u64 = v.iter().map(|&x| u64::from(x as u32)).sum();
    (u128::from(total), false)
}

/// `sum_ints` for 64-bit counts: a u64 sum when all are below 2^32.
fn sum_counts<T: Int>(v: &[T]) -> (u128, bool) {
    let any = v.iter().fold(0i64, |acc, &x| acc | x.to_i64());
    if any < 0 {
        (0, true)
    } else if any <= i64::from(u32::MAX) {
        let total: u64 = v.iter().map(|&x| x.to_i64() as u64).sum();
        (u128::from(total), false)
    } else {
        (v.iter().map(|&x| x.to_i64() as u128).sum(), false)
    }
}

/// The value of a level from its fields and its children's values
/// (`children` is left in an unspecified state).
pub(super) fn level<M: SignatureMonoid>(
    combiner: Combiner,
    f: &Fields,
    children: &mut [M],
) -> Result<M> {
    let repeat = |k: u128, children: &mut [M]| -> Result<M> {
        let child = children
            .first()
            .ok_or_else(|| Error::unsupported("a constructor without its old type"))?;
        Ok(if k == 1 {
            child.clone()
        } else {
            child.repeat(k)
        })
    };
    match combiner {
        Combiner::Named => unreachable!("predefined levels are leaves"),
        Combiner::F90Real => Ok(M::basic(BasicType::F90Real {
            p: f.one(0)?,
            r: f.one(1)?,
        })),
        Combiner::F90Complex => Ok(M::basic(BasicType::F90Complex {
            p: f.one(0)?,
            r: f.one(1)?,
        })),
        Combiner::F90Integer => Ok(M::basic(BasicType::F90Integer { r: f.one(0)? })),
        Combiner::Dup | Combiner::Resized => repeat(1, children),
        Combiner::Contiguous => repeat(count(f.one(0)?)?, children),
        Combiner::Vector | Combiner::Hvector | Combiner::HvectorInteger => {
            repeat(count(f.one(0)?)? * count(f.one(1)?)?, children)
        }
        Combiner::Indexed | Combiner::Hindexed | Combiner::HindexedInteger => {
            repeat(sum(f, 1)?, children)
        }
        Combiner::IndexedBlock | Combiner::HindexedBlock => {
            repeat(count(f.one(0)?)? * count(f.one(1)?)?, children)
        }
        Combiner::Struct | Combiner::StructInteger => {
            let mut acc = M::empty();
            let mut i = 0;
            let mut failed = None;
            f.each(1, |b| {
                match (count(b), children.get(i)) {
                    (Ok(0), _) => {}
                    (Ok(1), Some(child)) => acc = acc.concat(child),
                    (Ok(k), Some(child)) => acc = acc.concat(&child.repeat(k)),
                    (Err(e), _) => failed = Some(e),
                    (_, None) => {
                        failed = Some(Error::unsupported("a struct member without its type"))
                    }
                }
                i += 1;
            });
            match failed {
                Some(e) => Err(e),
                None => Ok(acc),
            }
        }
        Combiner::Subarray => {
            let v = f.flat(1);
            let n = v.len().saturating_sub(1) / 3;
            let mut acc = repeat(1, children)?;
            let mut apply = |k| acc = acc.repeat(k);
            let mut factors = Factors::new(&mut apply);
            for &s in &v[n..2 * n] {
                factors.push(count(s)?);
            }
            factors.finish();
            Ok(acc)
        }
        Combiner::Darray => {
            let v = f.flat(0);
            let n = usize::try_from(*v.get(2).unwrap_or(&0)).unwrap_or(0);
            if v.len() != 4 + 4 * n {
                return Err(Error::unsupported("unexpected DARRAY field layout"));
            }
            let distribs = v[3 + n..3 + 2 * n]
                .iter()
                .map(|&d| Distribution::from_code(d))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| Error::unsupported("unknown distribution"))?;
            let child = children
                .first()
                .ok_or_else(|| Error::unsupported("a constructor without its old type"))?;
            let mut acc = child.clone();
            Darray {
                size: v[0],
                rank: v[1],
                gsizes: &v[3..3 + n],
                distribs: &distribs,
                dargs: &v[3 + 2 * n..3 + 3 * n],
                psizes: &v[3 + 3 * n..3 + 4 * n],
            }
            .for_each_local_count(|k| acc = acc.repeat(k))?;
            Ok(acc)
        }
        Combiner::ValueIndex => Ok(children
            .iter()
            .fold(M::empty(), |acc, child| acc.concat(child))),
    }
}
