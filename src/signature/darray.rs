//! How many elements of the old type a DARRAY gives one process, per
//! dimension, as the MPI standard defines `MPI_Type_create_darray`
//! (MPI-4.1 §5.1.4): the process grid is row-major whatever the array
//! order, and each dimension is distributed on its own.

use crate::error::{Error, Result};
use crate::format::codes::{Distribution, DFLT_DARG};

/// The arguments of one DARRAY node, borrowed from the tree.
pub(crate) struct Darray<'a> {
    pub size: i64,
    pub rank: i64,
    pub gsizes: &'a [i64],
    pub distribs: &'a [Distribution],
    pub dargs: &'a [i64],
    pub psizes: &'a [i64],
}

impl Darray<'_> {
    /// Calls `f` with the number of elements this rank owns in each
    /// dimension; the product of those is the number of old-type elements
    /// in the darray type.
    pub fn for_each_local_count(&self, mut f: impl FnMut(u128)) -> Result<()> {
        let n = self.gsizes.len();
        if n == 0 || self.distribs.len() != n || self.dargs.len() != n || self.psizes.len() != n {
            return Err(Error::invalid(
                "MPI_COMBINER_DARRAY: gsizes, distribs, dargs and psizes need the same length >= 1",
            ));
        }
        if self.size < 1 || self.rank < 0 || self.rank >= self.size {
            return Err(Error::invalid(format!(
                "MPI_COMBINER_DARRAY: rank {} is not in 0..{}",
                self.rank, self.size
            )));
        }
        let mut product: i64 = 1;
        for &p in self.psizes {
            if p < 1 {
                return Err(Error::invalid(format!(
                    "MPI_COMBINER_DARRAY: psize {p} must be >= 1"
                )));
            }
            product = product.saturating_mul(p);
        }
        if product != self.size {
            return Err(Error::invalid(format!(
                "MPI_COMBINER_DARRAY: the psizes multiply to {product}, not size {}",
                self.size
            )));
        }
        // Row-major coordinates of the rank in the process grid.
        let mut left = self.size;
        let mut rest = self.rank;
        for i in 0..n {
            left /= self.psizes[i];
            let coord = rest / left;
            rest %= left;
            f(local_count(
                i,
                self.gsizes[i],
                self.distribs[i],
                self.dargs[i],
                self.psizes[i],
                coord,
            )? as u128);
        }
        Ok(())
    }
}

/// Elements of one dimension that process coordinate `coord` of `psize`
/// owns.
fn local_count(
    dim: usize,
    gsize: i64,
    distrib: Distribution,
    darg: i64,
    psize: i64,
    coord: i64,
) -> Result<i64> {
    let fail = |what: String| {
        Err(Error::invalid(format!(
            "MPI_COMBINER_DARRAY: dimension {dim}: {what}"
        )))
    };
    if gsize < 1 {
        return fail(format!("gsize {gsize} must be >= 1"));
    }
    if darg != DFLT_DARG && darg < 1 {
        return fail(format!(
            "darg {darg} must be positive or MPI_DISTRIBUTE_DFLT_DARG"
        ));
    }
    match distrib {
        Distribution::None => {
            if psize != 1 {
                return fail(format!("MPI_DISTRIBUTE_NONE needs psize 1, has {psize}"));
            }
            Ok(gsize)
        }
        Distribution::Block => {
            // Default: ceil(gsize / psize). A given darg must cover gsize.
            let block = if darg == DFLT_DARG {
                gsize / psize + i64::from(gsize % psize != 0)
            } else {
                darg
            };
            if (block as i128) * (psize as i128) < gsize as i128 {
                return fail(format!(
                    "block size {block} times {psize} processes does not cover gsize {gsize}"
                ));
            }
            let start = (block as i128) * (coord as i128);
            Ok((gsize as i128 - start).clamp(0, block as i128) as i64)
        }
        Distribution::Cyclic => {
            // Blocks of `block` elements dealt round-robin; only the last
            // block of the dimension may be short.
            let block = if darg == DFLT_DARG { 1 } else { darg };
            let blocks = gsize / block + i64::from(gsize % block != 0);
            if coord >= blocks {
                return Ok(0);
            }
            let mine = (blocks - 1 - coord) / psize + 1;
            let last_is_mine = (blocks - 1) % psize == coord;
            let short = if last_is_mine {
                blocks * block - gsize
            } else {
                0
            };
            Ok(mine * block - short)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts by dealing every element to its owner, as the standard's
    /// definition does.
    fn dealt(gsize: i64, d: Distribution, darg: i64, psize: i64, coord: i64) -> i64 {
        (0..gsize)
            .filter(|&g| {
                let owner = match d {
                    Distribution::None => 0,
                    Distribution::Block => {
                        let b = if darg == DFLT_DARG {
                            (gsize + psize - 1) / psize
                        } else {
                            darg
                        };
                        g / b
                    }
                    Distribution::Cyclic => {
                        let b = if darg == DFLT_DARG { 1 } else { darg };
                        (g / b) % psize
                    }
                };
                owner == coord
            })
            .count() as i64
    }

    #[test]
    fn local_counts_match_dealing_elements_out() {
        for gsize in 1..40 {
            for psize in 1..7 {
                for darg in [DFLT_DARG, 1, 2, 3, 5, 8, 13, 40] {
                    for d in [
                        Distribution::Block,
                        Distribution::Cyclic,
                        Distribution::None,
                    ] {
                        if d == Distribution::None && psize != 1 {
                            continue;
                        }
                        if d == Distribution::Block && darg != DFLT_DARG && darg * psize < gsize {
                            assert!(local_count(0, gsize, d, darg, psize, 0).is_err());
                            continue;
                        }
                        let mut total = 0;
                        for coord in 0..psize {
                            let n = local_count(0, gsize, d, darg, psize, coord).unwrap();
                            assert_eq!(
                                n,
                                dealt(gsize, d, darg, psize, coord),
                                "gsize {gsize} psize {psize} darg {darg} {d:?} coord {coord}"
                            );
                            total += n;
                        }
                        assert_eq!(total, gsize);
                    }
                }
            }
        }
    }

    #[test]
    fn process_grid_is_row_major() {
        let d = Darray {
            size: 6,
            rank: 4,
            gsizes: &[6, 6],
            distribs: &[Distribution::Block, Distribution::Block],
            dargs: &[4, 2],
            psizes: &[2, 3],
        };
        // rank 4 = coordinates (1, 1): rows 4..6, columns 2..4.
        let mut counts = vec![];
        d.for_each_local_count(|n| counts.push(n)).unwrap();
        assert_eq!(counts, vec![2, 2]);
    }
}
