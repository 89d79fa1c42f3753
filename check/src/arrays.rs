//! A collective call's arrays (`MPI_Gatherv`'s counts, `MPI_Alltoallw`'s
//! counts and datatypes, the neighborhood calls'): the user's, read where
//! the call reads them, or a copy a batched call keeps (`kept`): the
//! program may change its arrays once the call returns, and the call's
//! report is made later.

use crate::mpi;
use crate::sys::{MPI_Count, MPI_Datatype};
use std::ffi::c_int;
use std::sync::Arc;

/// An array of counts: `int` in the classic interface, `MPI_Count` in the
/// large-count (`_c`) one; or a copy.
#[derive(Debug, Clone)]
pub enum Counts {
    None,
    Int(*const c_int),
    Big(*const MPI_Count),
    Kept(Arc<[i64]>),
}

impl Counts {
    /// Entry `i` (0 for a missing array, which the wrappers pass only
    /// where the call has none).
    #[allow(clippy::unnecessary_cast)] // MPI_Count's width is the MPI's choice
    pub(crate) fn at(&self, i: usize) -> i64 {
        // SAFETY: the user's array has one entry per rank or neighbor, as
        // MPI requires; a null array is never read.
        unsafe {
            match self {
                Counts::Int(p) if !p.is_null() => *p.add(i) as i64,
                Counts::Big(p) if !p.is_null() => *p.add(i) as i64,
                Counts::Kept(v) => v.get(i).copied().unwrap_or(0),
                _ => 0,
            }
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Counts::None)
    }

    /// Whether this array holds what `kept` holds, a copy `kept` made of
    /// an array (`Counts::None`: the array is not read, nothing to hold).
    pub(crate) fn holds(&self, kept: &Counts) -> bool {
        match kept {
            Counts::None => true,
            Counts::Kept(v) => v.iter().enumerate().all(|(i, &c)| self.at(i) == c),
            _ => false,
        }
    }

    /// Its first `n` entries, copied.
    pub(crate) fn kept(&self, n: usize) -> Counts {
        Counts::Kept((0..n).map(|i| self.at(i)).collect())
    }
}

impl From<*const c_int> for Counts {
    fn from(p: *const c_int) -> Counts {
        Counts::Int(p)
    }
}

impl From<*const MPI_Count> for Counts {
    fn from(p: *const MPI_Count) -> Counts {
        Counts::Big(p)
    }
}

/// An array of datatypes (`MPI_Alltoallw`, `MPI_Neighbor_alltoallw`), or
/// a copy (the handles' bits).
#[derive(Debug, Clone)]
pub enum Types {
    None,
    User(*const MPI_Datatype),
    Kept(Arc<[u64]>),
}

impl Types {
    /// Entry `i`. The wrappers pass an array wherever the call reads one
    /// (a null one is `None`, never read).
    pub(crate) fn at(&self, i: usize) -> MPI_Datatype {
        match self {
            // SAFETY: the user's array has one entry per rank or neighbor,
            // as MPI requires.
            Types::User(p) => unsafe { *p.add(i) },
            Types::Kept(v) => mpi::from_bits(v.get(i).copied().unwrap_or(0)),
            Types::None => mpi::byte(),
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Types::None)
    }

    /// As `Counts::holds`.
    pub(crate) fn holds(&self, kept: &Types) -> bool {
        match kept {
            Types::None => true,
            Types::Kept(v) => v
                .iter()
                .enumerate()
                .all(|(i, &t)| mpi::bits(self.at(i)) == t),
            Types::User(_) => false,
        }
    }

    /// Its first `n` entries, copied.
    pub(crate) fn kept(&self, n: usize) -> Types {
        Types::Kept((0..n).map(|i| mpi::bits(self.at(i))).collect())
    }

    /// Whether a copy names the datatype whose bits are `t`.
    pub(crate) fn names(&self, t: u64) -> bool {
        matches!(self, Types::Kept(v) if v.contains(&t))
    }
}

impl From<*const MPI_Datatype> for Types {
    fn from(p: *const MPI_Datatype) -> Types {
        if p.is_null() {
            Types::None
        } else {
            Types::User(p)
        }
    }
}
