//! What the table's datatype rows (`calls.txt`: made_type, and the
//! `then:` of the calls that give out types) read of their arguments:
//! a constructor's counts and old types as `crate::datatypes::Arg`s.

use crate::datatypes::Arg;
use crate::mpi;
use crate::sys::*;
use crate::types;
use std::ffi::c_int;

/// The most entries of an argument array a check reads (a count beyond
/// it is MPI's to refuse; reading it all would cost what MPI does).
const MOST: i64 = 1 << 20;

/// The `n` entries of the array `p` MPI reads (none for a negative `n`
/// or a null array, which MPI refuses).
fn entries<T: Copy>(n: i64, p: *const T) -> Vec<T> {
    if p.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: the user's array has the `n` entries the call reads; at most
    // MOST of them are read here.
    unsafe { std::slice::from_raw_parts(p, n.min(MOST) as usize).to_vec() }
}

/// The arguments as the table's `arguments:` lines name them
/// (`Arg::count("count", count)`).
impl Arg {
    pub(crate) fn count(name: &'static str, v: impl Into<i64>) -> Arg {
        Arg::Count(name, v.into())
    }

    pub(crate) fn counts<C: Copy + Into<i64>>(
        name: &'static str,
        n: impl Into<i64>,
        p: *const C,
    ) -> Arg {
        Arg::Counts(
            name,
            entries(n.into(), p).into_iter().map(Into::into).collect(),
        )
    }

    pub(crate) fn old(name: &'static str, t: MPI_Datatype) -> Arg {
        Arg::Old(name, t)
    }

    pub(crate) fn olds(name: &'static str, n: impl Into<i64>, p: *const MPI_Datatype) -> Arg {
        Arg::Olds(name, entries(n.into(), p))
    }
}

/// A call gave out a type that is not the program's to free (an F90
/// type, `MPI_Type_match_size`'s): its handle is no longer a freed one.
pub(crate) fn given_type(rc: c_int, t: *mut MPI_Datatype) -> c_int {
    given_types(rc, &[t])
}

pub(crate) fn given_types(rc: c_int, ts: &[*mut MPI_Datatype]) -> c_int {
    if rc == 0 {
        for &t in ts.iter().filter(|t| !t.is_null()) {
            // SAFETY: MPI wrote the handle.
            types::given(mpi::bits(unsafe { *t }));
        }
    }
    rc
}
