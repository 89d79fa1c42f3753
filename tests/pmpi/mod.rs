//! Datatype handle counting and fault injection through the MPI profiling
//! interface, for Rust tests (the Rust counterpart of tests/c/leakcount.h).
//!
//! A test binary that includes this module defines `MPI_Type_free`, every
//! datatype constructor and `MPI_Type_get_contents` itself. The library is
//! linked statically into the test binary, so its calls (and those of its
//! C shim) resolve to these definitions, which count and then call the MPI
//! library's `PMPI_` entry points, looked up with `dlsym` (so that a
//! large-count constructor the local MPI lacks costs no link error).
//!
//! Counts are per thread: tests running in parallel do not disturb each
//! other, and the library makes and frees handles on the calling thread.
//!
//! * `live()`: derived handles alive (made by a constructor, or returned by
//!   `MPI_Type_get_contents`, minus those freed);
//! * `made()`: constructor calls that succeeded;
//! * `queries()`: `MPI_Type_get_envelope` and `MPI_Type_get_contents` calls
//!   (either form), the work a traversal of a type does;
//! * `fail_constructor(k)`: the k-th constructor call from now returns
//!   `INJECTED` without calling MPI; `fail_set_name(k)`, `fail_contents(k)`
//!   the same for `MPI_Type_set_name` and `MPI_Type_get_contents`.
#![allow(dead_code, non_snake_case, clippy::missing_safety_doc)]

use mpix_marshal::testing::mpi::sys::{MPI_Aint, MPI_Count, MPI_Datatype};
use std::cell::Cell;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The code an injected failure returns (an MPI error class, so
/// `MPI_Error_string` knows it).
pub const INJECTED: c_int = mpix_marshal::testing::mpi::sys::MPI_ERR_INTERN as c_int;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static MADE: Cell<u64> = const { Cell::new(0) };
    static FAIL_CONSTRUCTOR: Cell<u64> = const { Cell::new(0) };
    static FAIL_SET_NAME: Cell<u64> = const { Cell::new(0) };
    static FAIL_CONTENTS: Cell<u64> = const { Cell::new(0) };
    static INJECTIONS: Cell<u64> = const { Cell::new(0) };
    static ENVELOPES: Cell<u64> = const { Cell::new(0) };
    static CONTENTS: Cell<u64> = const { Cell::new(0) };
}

/// Envelope and contents calls made on this thread so far, in that order.
pub fn queries() -> (u64, u64) {
    (ENVELOPES.with(|c| c.get()), CONTENTS.with(|c| c.get()))
}

fn bump(counter: &'static std::thread::LocalKey<Cell<u64>>) {
    counter.with(|c| c.set(c.get() + 1));
}

/// Derived handles alive on this thread.
pub fn live() -> i64 {
    LIVE.with(|c| c.get())
}

/// Successful constructor calls on this thread.
pub fn made() -> u64 {
    MADE.with(|c| c.get())
}

/// Failures injected so far on this thread.
pub fn injections() -> u64 {
    INJECTIONS.with(|c| c.get())
}

/// The k-th constructor call from now (1-based) fails; 0: none.
pub fn fail_constructor(k: u64) {
    FAIL_CONSTRUCTOR.with(|c| c.set(k));
}

/// The k-th `MPI_Type_set_name` call from now fails; 0: none.
pub fn fail_set_name(k: u64) {
    FAIL_SET_NAME.with(|c| c.set(k));
}

/// The k-th `MPI_Type_get_contents` call from now fails; 0: none.
pub fn fail_contents(k: u64) {
    FAIL_CONTENTS.with(|c| c.set(k));
}

/// Counts a call down; true when this call is to fail.
fn due(counter: &'static std::thread::LocalKey<Cell<u64>>) -> bool {
    counter.with(|c| match c.get() {
        0 => false,
        1 => {
            c.set(0);
            INJECTIONS.with(|i| i.set(i.get() + 1));
            true
        }
        k => {
            c.set(k - 1);
            false
        }
    })
}

fn add_live(n: i64) {
    LIVE.with(|c| c.set(c.get() + n));
}

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// The MPI library's entry point `name` (RTLD_DEFAULT is the null handle
/// on glibc); aborts, with a message, if the MPI lacks it.
fn pmpi(cache: &AtomicPtr<c_void>, name: &CStr) -> *mut c_void {
    let p = cache.load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    // SAFETY: name is NUL-terminated; a null handle is RTLD_DEFAULT.
    let p = unsafe { dlsym(std::ptr::null_mut(), name.as_ptr()) };
    if p.is_null() {
        eprintln!("pmpi: the MPI library has no {name:?}");
        std::process::abort();
    }
    cache.store(p, Ordering::Release);
    p
}

/// Defines `MPI_<name>` as a counting wrapper over `PMPI_<name>`: a
/// constructor whose last argument receives the new handle.
macro_rules! constructor {
    ($name:ident, $pname:literal, ($($arg:ident : $ty:ty),*)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
            if due(&FAIL_CONSTRUCTOR) {
                return INJECTED;
            }
            // SAFETY: the symbol is the MPI function of this very signature.
            let f: unsafe extern "C" fn($($ty),*) -> c_int =
                unsafe { std::mem::transmute(pmpi(&P, $pname)) };
            let rc = unsafe { f($($arg),*) };
            if rc == 0 {
                add_live(1);
                MADE.with(|c| c.set(c.get() + 1));
            }
            rc
        }
    };
}

type T = MPI_Datatype;

constructor!(MPI_Type_contiguous, c"PMPI_Type_contiguous", (c: c_int, o: T, n: *mut T));
constructor!(MPI_Type_vector, c"PMPI_Type_vector", (c: c_int, b: c_int, s: c_int, o: T, n: *mut T));
constructor!(MPI_Type_create_hvector, c"PMPI_Type_create_hvector",
    (c: c_int, b: c_int, s: MPI_Aint, o: T, n: *mut T));
constructor!(MPI_Type_indexed, c"PMPI_Type_indexed",
    (c: c_int, b: *const c_int, d: *const c_int, o: T, n: *mut T));
constructor!(MPI_Type_create_hindexed, c"PMPI_Type_create_hindexed",
    (c: c_int, b: *const c_int, d: *const MPI_Aint, o: T, n: *mut T));
constructor!(MPI_Type_create_indexed_block, c"PMPI_Type_create_indexed_block",
    (c: c_int, b: c_int, d: *const c_int, o: T, n: *mut T));
constructor!(MPI_Type_create_hindexed_block, c"PMPI_Type_create_hindexed_block",
    (c: c_int, b: c_int, d: *const MPI_Aint, o: T, n: *mut T));
constructor!(MPI_Type_create_struct, c"PMPI_Type_create_struct",
    (c: c_int, b: *const c_int, d: *const MPI_Aint, t: *const T, n: *mut T));
constructor!(MPI_Type_create_subarray, c"PMPI_Type_create_subarray",
    (k: c_int, s: *const c_int, ss: *const c_int, st: *const c_int, o: c_int, t: T, n: *mut T));
constructor!(MPI_Type_create_darray, c"PMPI_Type_create_darray",
    (sz: c_int, r: c_int, k: c_int, g: *const c_int, di: *const c_int, da: *const c_int,
     p: *const c_int, o: c_int, t: T, n: *mut T));
constructor!(MPI_Type_create_resized, c"PMPI_Type_create_resized",
    (o: T, lb: MPI_Aint, e: MPI_Aint, n: *mut T));
constructor!(MPI_Type_dup, c"PMPI_Type_dup", (o: T, n: *mut T));
// MPI-4 large-count constructors (called by the shim when the MPI has them).
constructor!(MPI_Type_contiguous_c, c"PMPI_Type_contiguous_c", (c: MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_vector_c, c"PMPI_Type_vector_c",
    (c: MPI_Count, b: MPI_Count, s: MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_create_hvector_c, c"PMPI_Type_create_hvector_c",
    (c: MPI_Count, b: MPI_Count, s: MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_indexed_c, c"PMPI_Type_indexed_c",
    (c: MPI_Count, b: *const MPI_Count, d: *const MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_create_hindexed_c, c"PMPI_Type_create_hindexed_c",
    (c: MPI_Count, b: *const MPI_Count, d: *const MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_create_indexed_block_c, c"PMPI_Type_create_indexed_block_c",
    (c: MPI_Count, b: MPI_Count, d: *const MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_create_hindexed_block_c, c"PMPI_Type_create_hindexed_block_c",
    (c: MPI_Count, b: MPI_Count, d: *const MPI_Count, o: T, n: *mut T));
constructor!(MPI_Type_create_struct_c, c"PMPI_Type_create_struct_c",
    (c: MPI_Count, b: *const MPI_Count, d: *const MPI_Count, t: *const T, n: *mut T));
constructor!(MPI_Type_create_subarray_c, c"PMPI_Type_create_subarray_c",
    (k: c_int, s: *const MPI_Count, ss: *const MPI_Count, st: *const MPI_Count, o: c_int, t: T,
     n: *mut T));
constructor!(MPI_Type_create_darray_c, c"PMPI_Type_create_darray_c",
    (sz: c_int, r: c_int, k: c_int, g: *const MPI_Count, di: *const c_int, da: *const c_int,
     p: *const c_int, o: c_int, t: T, n: *mut T));
constructor!(MPI_Type_create_resized_c, c"PMPI_Type_create_resized_c",
    (o: T, lb: MPI_Count, e: MPI_Count, n: *mut T));
// MPI-1 constructors (removed in MPI-3.0; MPICH still has them).
constructor!(MPI_Type_hvector, c"PMPI_Type_hvector",
    (c: c_int, b: c_int, s: MPI_Aint, o: T, n: *mut T));
constructor!(MPI_Type_hindexed, c"PMPI_Type_hindexed",
    (c: c_int, b: *mut c_int, d: *mut MPI_Aint, o: T, n: *mut T));
constructor!(MPI_Type_struct, c"PMPI_Type_struct",
    (c: c_int, b: *mut c_int, d: *mut MPI_Aint, t: *mut T, n: *mut T));

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(t: *mut T) -> c_int {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    // SAFETY: the symbol is PMPI_Type_free.
    let f: unsafe extern "C" fn(*mut T) -> c_int =
        unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_free")) };
    let rc = unsafe { f(t) };
    if rc == 0 {
        add_live(-1);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_name(t: T, name: *const c_char) -> c_int {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    if due(&FAIL_SET_NAME) {
        return INJECTED;
    }
    // SAFETY: the symbol is PMPI_Type_set_name.
    let f: unsafe extern "C" fn(T, *const c_char) -> c_int =
        unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_set_name")) };
    unsafe { f(t, name) }
}

/// Whether `t` is derived (get_contents returned a new reference to it):
/// not predefined, and not an F90 type (also predefined, never freed).
fn is_derived(t: T) -> bool {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    // SAFETY: the symbol is PMPI_Type_get_envelope; the out-pointers are locals.
    let f: unsafe extern "C" fn(T, *mut c_int, *mut c_int, *mut c_int, *mut c_int) -> c_int =
        unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_get_envelope")) };
    let (mut ni, mut na, mut nd, mut combiner) = (0, 0, 0, 0);
    if unsafe { f(t, &mut ni, &mut na, &mut nd, &mut combiner) } != 0 {
        return false;
    }
    let c = &mpix_marshal::testing::mpi::local().constants;
    ![c.named, c.f90_real, c.f90_complex, c.f90_integer].contains(&combiner)
}

fn count_returned(types: *const T, n: usize) {
    for i in 0..n {
        // SAFETY: MPI filled n handles.
        if is_derived(unsafe { *types.add(i) }) {
            add_live(1);
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents(
    t: T,
    ni: c_int,
    na: c_int,
    nd: c_int,
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    types: *mut T,
) -> c_int {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    bump(&CONTENTS);
    if due(&FAIL_CONTENTS) {
        return INJECTED;
    }
    type F =
        unsafe extern "C" fn(T, c_int, c_int, c_int, *mut c_int, *mut MPI_Aint, *mut T) -> c_int;
    // SAFETY: the symbol is PMPI_Type_get_contents.
    let f: F = unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_get_contents")) };
    let rc = unsafe { f(t, ni, na, nd, ints, addrs, types) };
    if rc == 0 {
        count_returned(types, nd.max(0) as usize);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents_c(
    t: T,
    ni: MPI_Count,
    na: MPI_Count,
    nc: MPI_Count,
    nd: MPI_Count,
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    counts: *mut MPI_Count,
    types: *mut T,
) -> c_int {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    bump(&CONTENTS);
    if due(&FAIL_CONTENTS) {
        return INJECTED;
    }
    type F = unsafe extern "C" fn(
        T,
        MPI_Count,
        MPI_Count,
        MPI_Count,
        MPI_Count,
        *mut c_int,
        *mut MPI_Aint,
        *mut MPI_Count,
        *mut T,
    ) -> c_int;
    // SAFETY: the symbol is PMPI_Type_get_contents_c.
    let f: F = unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_get_contents_c")) };
    let rc = unsafe { f(t, ni, na, nc, nd, ints, addrs, counts, types) };
    if rc == 0 {
        count_returned(types, nd.max(0) as usize);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    t: T,
    ni: *mut c_int,
    na: *mut c_int,
    nd: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    bump(&ENVELOPES);
    type F = unsafe extern "C" fn(T, *mut c_int, *mut c_int, *mut c_int, *mut c_int) -> c_int;
    // SAFETY: the symbol is PMPI_Type_get_envelope; the caller's pointers
    // are passed on unchanged.
    let f: F = unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_get_envelope")) };
    unsafe { f(t, ni, na, nd, combiner) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope_c(
    t: T,
    ni: *mut MPI_Count,
    na: *mut MPI_Count,
    nc: *mut MPI_Count,
    nd: *mut MPI_Count,
    combiner: *mut c_int,
) -> c_int {
    static P: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    bump(&ENVELOPES);
    type F = unsafe extern "C" fn(
        T,
        *mut MPI_Count,
        *mut MPI_Count,
        *mut MPI_Count,
        *mut MPI_Count,
        *mut c_int,
    ) -> c_int;
    // SAFETY: the symbol is PMPI_Type_get_envelope_c; the caller's pointers
    // are passed on unchanged.
    let f: F = unsafe { std::mem::transmute(pmpi(&P, c"PMPI_Type_get_envelope_c")) };
    unsafe { f(t, ni, na, nc, nd, combiner) }
}
