//! The F90 parameterized types (`MPI_Type_create_f90_real`, `_complex`,
//! `_integer`). Every one the library creates (unmarshal, and through it
//! the exchange and comparison) comes from [`create`]:
//!
//! * **One lock.** These calls are not thread-safe on MPICH 5.0 (two
//!   threads creating the same type for the first time can get a null
//!   handle) nor on Open MPI 4.1 and 5.0 (two handles for one type):
//!   docs/mpich-f90-race.md. The library's own calls are serialized here;
//!   a program's own concurrent calls remain the program's.
//! * **One answer per pair.** The handles are predefined (never freed), so
//!   each (kind, p, r) is asked once per process and its handle, or MPI's
//!   refusal, kept.
//! * **No process-wide state for the common pairs.** Whether a pair exists
//!   depends on the MPI's Fortran kinds, which only the call can tell, and a
//!   refused pair raises an error on `MPI_COMM_WORLD` or `MPI_COMM_SELF`
//!   (fatal by default). A pair that IEEE single or double precision or a
//!   64-bit integer satisfies exists on every MPI with Fortran kinds, so it
//!   is asked directly. Only a pair beyond those (quad precision, a 128-bit
//!   integer) is asked with the two communicators' handlers set to
//!   `MPI_ERRORS_RETURN` for the call: once per pair per process, under the
//!   lock.

use super::{shim, Datatype};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::Mutex;

/// Which constructor: the shim's `which`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum F90 {
    Real = 0,
    Complex = 1,
    Integer = 2,
}

/// A kept answer: the handle, or MPI's error code.
#[derive(Clone, Copy)]
struct Answer(std::result::Result<Datatype, c_int>);

// SAFETY: a datatype handle is an integer (MPICH) or a pointer to an object
// MPI owns and never frees (a predefined F90 type, Open MPI); Rust never
// dereferences it, and MPI lets any thread use it.
unsafe impl Send for Answer {}

/// Answers by (kind, p, r).
type Answers = HashMap<(F90, c_int, c_int), Answer>;

static ANSWERS: Mutex<Option<Answers>> = Mutex::new(None);

/// `MPI_Type_create_f90_*(p, r)` with local values (`undefined` is the
/// local `MPI_UNDEFINED`; `p` is ignored for `Integer`). Err(code): MPI
/// refused (`shim::UNSUPPORTED`: this MPI lacks the call).
pub fn create(
    kind: F90,
    p: c_int,
    r: c_int,
    undefined: c_int,
) -> std::result::Result<Datatype, c_int> {
    let p = if kind == F90::Integer { undefined } else { p };
    let mut answers = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
    let answers = answers.get_or_insert_with(HashMap::new);
    if let Some(a) = answers.get(&(kind, p, r)) {
        return a.0;
    }
    let guarded = !always_exists(kind, p, r, undefined) as c_int;
    let mut out = super::local().datatype_null();
    // SAFETY: out is a valid local; the lock above serializes the call.
    let rc = unsafe { shim::mpixm_type_create_f90(kind as c_int, p, r, guarded, &mut out) };
    let answer = Answer(if rc == 0 { Ok(out) } else { Err(rc) });
    answers.insert((kind, p, r), answer);
    answer.0
}

/// Whether every MPI with Fortran kinds has the pair: IEEE double
/// precision (precision 15, range 307) covers a real or complex pair, a
/// 64-bit integer (range 18) an integer one. Measured on MPICH 4.0 and
/// 5.0 and Open MPI 4.1 and 5.0: each accepts exactly these and more.
fn always_exists(kind: F90, p: c_int, r: c_int, undefined: c_int) -> bool {
    let within = |v: c_int, max: c_int| v == undefined || (0..=max).contains(&v);
    match kind {
        F90::Integer => (0..=18).contains(&r),
        F90::Real | F90::Complex => {
            (p != undefined || r != undefined) && within(p, 15) && within(r, 307)
        }
    }
}
