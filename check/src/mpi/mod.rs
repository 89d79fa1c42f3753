//! The checker's MPI edge: every MPI call the checker makes is here or in
//! `wrap` (the interposed `MPI_` functions), and every one is a `PMPI_`
//! call, never an `MPI_` one (which would come back into the wrappers).
//!
//! The checks' own traffic runs on a private duplicate of each user
//! communicator, made when the communicator is made (or at its first
//! check), cached on it as an attribute of the checker's keyval and freed
//! with it (the keyval's delete callback).

pub mod wrap;

use mpi_sys::*;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

extern "C" {
    fn mxc_in_place() -> *mut c_void;
    fn mxc_packed() -> MPI_Datatype;
    fn mxc_byte() -> MPI_Datatype;
    fn mxc_root() -> c_int;
    fn mxc_err_other() -> c_int;
    fn mxc_max_object_name() -> c_int;
    fn mxc_op_index(op: MPI_Op) -> c_int;
    fn mxc_op_name(index: c_int) -> *const std::ffi::c_char;
    fn mxc_fn_identity(f: *const c_void) -> u64;
    fn mxc_keyval_create(keyval: *mut c_int, del: extern "C" fn(*mut c_void)) -> c_int;
}

/// A handle's bits (handles are ints in MPICH, pointers in Open MPI).
pub fn bits<T: Copy>(t: T) -> u64 {
    let mut out = [0u8; 8];
    let n = std::mem::size_of::<T>().min(8);
    // SAFETY: T is a plain handle (an integer or a pointer) of at most 8
    // bytes; its bytes are copied into a zeroed u64.
    unsafe {
        std::ptr::copy_nonoverlapping(&t as *const T as *const u8, out.as_mut_ptr(), n);
    }
    u64::from_ne_bytes(out)
}

pub fn in_place() -> *const c_void {
    // SAFETY: returns the MPI_IN_PLACE constant.
    unsafe { mxc_in_place() }
}

pub fn is_in_place(p: *const c_void) -> bool {
    p == in_place()
}

pub fn packed() -> MPI_Datatype {
    // SAFETY: returns the MPI_PACKED constant.
    unsafe { mxc_packed() }
}

pub fn byte() -> MPI_Datatype {
    // SAFETY: returns the MPI_BYTE constant.
    unsafe { mxc_byte() }
}

pub fn root_constant() -> c_int {
    // SAFETY: returns the MPI_ROOT constant.
    unsafe { mxc_root() }
}

pub fn comm_world() -> MPI_Comm {
    // SAFETY: reads mpi-sys's copy of MPI_COMM_WORLD.
    unsafe { RSMPI_COMM_WORLD }
}

pub fn comm_self() -> MPI_Comm {
    // SAFETY: reads mpi-sys's copy of MPI_COMM_SELF.
    unsafe { RSMPI_COMM_SELF }
}

pub fn comm_null() -> MPI_Comm {
    // SAFETY: reads mpi-sys's copy of MPI_COMM_NULL.
    unsafe { RSMPI_COMM_NULL }
}

pub fn request_null() -> MPI_Request {
    // SAFETY: reads mpi-sys's copy of MPI_REQUEST_NULL.
    unsafe { RSMPI_REQUEST_NULL }
}

pub fn undefined() -> c_int {
    // SAFETY: reads mpi-sys's copy of MPI_UNDEFINED.
    unsafe { RSMPI_UNDEFINED }
}

/// An op's identity for the record: (op, commute). Predefined ops by
/// their index (1..), user ops by their function's identity (the same in
/// every process of one program) and commutativity, as `MPI_Op_create`
/// recorded them.
pub fn op_identity(op: MPI_Op) -> (u64, u64) {
    // SAFETY: compares the handle with the predefined ops.
    let index = unsafe { mxc_op_index(op) };
    if index > 0 {
        return (index as u64, 1);
    }
    let ops = user_ops().lock().unwrap_or_else(|e| e.into_inner());
    match ops.iter().find(|(h, _, _)| *h == bits(op)) {
        Some(&(_, id, commute)) => (id | 1 << 63, commute),
        None => (bits(op) | 1 << 62, 0),
    }
}

/// A description of an op identity: "MPI_SUM", "a user op (function
/// 0x1234 in the program, commutative)".
pub fn op_text(op: u64, commute: u64) -> String {
    if op > 0 && op < 64 {
        // SAFETY: mxc_op_name returns a static C string.
        let name = unsafe { std::ffi::CStr::from_ptr(mxc_op_name(op as c_int)) };
        return name.to_string_lossy().into_owned();
    }
    let c = if commute != 0 {
        "commutative"
    } else {
        "non-commutative"
    };
    if op & 1 << 63 != 0 {
        format!("a user op (function identity {:#x}, {c})", op & !(1 << 63))
    } else {
        format!(
            "an op the checker did not see created (handle {:#x})",
            op & !(1 << 62)
        )
    }
}

type UserOps = std::sync::Mutex<Vec<(u64, u64, u64)>>;

fn user_ops() -> &'static UserOps {
    static OPS: std::sync::OnceLock<UserOps> = std::sync::OnceLock::new();
    OPS.get_or_init(Default::default)
}

/// Records a user op made by `MPI_Op_create`.
///
/// # Safety
/// `f` is the user function MPI_Op_create was given (or null).
pub unsafe fn op_created(op: MPI_Op, f: *const c_void, commute: c_int) {
    // SAFETY: dladdr on a function pointer the user gave MPI (the caller's contract).
    let id = unsafe { mxc_fn_identity(f) };
    let mut ops = user_ops().lock().unwrap_or_else(|e| e.into_inner());
    ops.retain(|(h, _, _)| *h != bits(op));
    ops.push((bits(op), id, (commute != 0) as u64));
}

pub fn op_freed(op: MPI_Op) {
    let mut ops = user_ops().lock().unwrap_or_else(|e| e.into_inner());
    ops.retain(|(h, _, _)| *h != bits(op));
}

/// The checker's state of one user communicator.
pub struct State {
    /// The private duplicate the checks run on (MPI_COMM_NULL for an
    /// intercommunicator, which is not checked).
    pub dup: MPI_Comm,
    pub seq: u64,
    pub rank: usize,
    pub size: usize,
    pub inter: bool,
}

static KEYVAL: AtomicI32 = AtomicI32::new(i32::MIN);

extern "C" fn delete_state(value: *mut c_void) {
    if value.is_null() {
        return;
    }
    // SAFETY: every attribute value of the keyval is a Box<State> leaked
    // by `state`, and MPI calls this once per value.
    let mut st = unsafe { Box::from_raw(value as *mut State) };
    if !st.inter {
        // SAFETY: the duplicate is the checker's own.
        unsafe { PMPI_Comm_free(&mut st.dup) };
    }
}

fn keyval() -> c_int {
    let k = KEYVAL.load(Ordering::Acquire);
    if k != i32::MIN {
        return k;
    }
    let mut k: c_int = 0;
    // SAFETY: creates a keyval (local call); delete_state frees the values.
    unsafe { mxc_keyval_create(&mut k, delete_state) };
    match KEYVAL.compare_exchange(i32::MIN, k, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => k,
        Err(other) => {
            // SAFETY: our keyval lost the race; free it.
            unsafe { PMPI_Comm_free_keyval(&mut k) };
            other
        }
    }
}

/// The state of `comm`, made (collectively: it duplicates `comm`) when it
/// has none. Null for MPI_COMM_NULL.
pub fn state(comm: MPI_Comm) -> Option<&'static mut State> {
    if bits(comm) == bits(comm_null()) {
        return None;
    }
    let kv = keyval();
    let mut value: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: reads our attribute; value receives the stored pointer.
    unsafe {
        PMPI_Comm_get_attr(
            comm,
            kv,
            &mut value as *mut *mut c_void as *mut c_void,
            &mut flag,
        )
    };
    if flag != 0 && !value.is_null() {
        // SAFETY: the value is a leaked Box<State>, alive until the
        // delete callback; one thread uses a communicator's checks at a time.
        return Some(unsafe { &mut *(value as *mut State) });
    }
    let (mut inter, mut rank, mut size) = (0, 0, 0);
    // SAFETY: plain queries of a valid communicator.
    unsafe {
        PMPI_Comm_test_inter(comm, &mut inter);
        PMPI_Comm_rank(comm, &mut rank);
        PMPI_Comm_size(comm, &mut size);
    }
    let mut dup = comm_null();
    if inter == 0 {
        // SAFETY: duplicates the user's communicator for the checker.
        unsafe {
            PMPI_Comm_dup(comm, &mut dup);
            PMPI_Comm_set_errhandler(dup, RSMPI_ERRORS_RETURN);
        }
    }
    let st = Box::into_raw(Box::new(State {
        dup,
        seq: 0,
        rank: rank as usize,
        size: size as usize,
        inter: inter != 0,
    }));
    // SAFETY: attaches the state; MPI calls delete_state when comm is freed.
    unsafe { PMPI_Comm_set_attr(comm, kv, st as *mut c_void) };
    // SAFETY: st was just leaked and is owned by the attribute.
    Some(unsafe { &mut *st })
}

/// Frees the state of `comm` now (before MPI_Finalize).
pub fn drop_state(comm: MPI_Comm) {
    let k = KEYVAL.load(Ordering::Acquire);
    if k == i32::MIN {
        return;
    }
    let mut value: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: reads our attribute (Open MPI refuses to delete an absent one).
    unsafe {
        PMPI_Comm_get_attr(
            comm,
            k,
            &mut value as *mut *mut c_void as *mut c_void,
            &mut flag,
        )
    };
    if flag != 0 {
        // SAFETY: deletes our attribute, which runs delete_state.
        unsafe { PMPI_Comm_delete_attr(comm, k) };
    }
}

/// The communicator's name for reports: its name if set (MPI names
/// MPI_COMM_WORLD and MPI_COMM_SELF), else "an unnamed communicator of N
/// ranks".
pub fn comm_name(comm: MPI_Comm, size: usize) -> String {
    // SAFETY: reads the MPI_MAX_OBJECT_NAME constant.
    let max = unsafe { mxc_max_object_name() } as usize;
    let mut buf = vec![0u8; max + 1];
    let mut len: c_int = 0;
    // SAFETY: buf holds MPI_MAX_OBJECT_NAME bytes.
    unsafe { PMPI_Comm_get_name(comm, buf.as_mut_ptr() as *mut _, &mut len) };
    let name = String::from_utf8_lossy(&buf[..(len.max(0) as usize).min(max)]).into_owned();
    if name.is_empty() {
        format!("an unnamed communicator of {size} ranks")
    } else {
        name
    }
}

/// The checker's error code (its own class, with its own string).
pub fn error_code() -> c_int {
    static CODE: AtomicI32 = AtomicI32::new(0);
    let c = CODE.load(Ordering::Acquire);
    if c != 0 {
        return c;
    }
    let (mut class, mut code) = (0, 0);
    // SAFETY: local calls adding an error class, code and string.
    let ok = unsafe {
        PMPI_Add_error_class(&mut class) == 0
            && PMPI_Add_error_code(class, &mut code) == 0
            && PMPI_Add_error_string(
                code,
                c"mpix-check: inconsistent collective call (see the mpix-check report on stderr)"
                    .as_ptr() as *mut _,
            ) == 0
    };
    // SAFETY: reads the MPI_ERR_OTHER constant.
    let code = if ok { code } else { unsafe { mxc_err_other() } };
    CODE.store(code, Ordering::Release);
    code
}

/// Hands the checker's error to `comm`'s error handler: aborts under
/// MPI_ERRORS_ARE_FATAL; returns the code the call should return when the
/// handler returns.
pub fn raise(comm: MPI_Comm) -> c_int {
    let code = error_code();
    // SAFETY: calls the user's communicator's error handler.
    unsafe { PMPI_Comm_call_errhandler(comm, code) };
    code
}

/// Waits for `reqs` to complete, for at most `timeout` (None: forever).
/// False when the time ran out (the requests stay active).
pub fn wait(reqs: &mut [MPI_Request], timeout: Option<Duration>) -> bool {
    let start = Instant::now();
    let mut spins = 0u64;
    loop {
        let mut flag: c_int = 0;
        // SAFETY: the requests are the checker's own, active or null.
        unsafe {
            PMPI_Testall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                &mut flag,
                RSMPI_STATUSES_IGNORE,
            )
        };
        if flag != 0 {
            return true;
        }
        spins += 1;
        if spins % 64 == 0 {
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                return false;
            }
            if spins > 4096 {
                std::thread::yield_now();
            }
        }
    }
}

/// Posts the allgather of one record per rank on the private duplicate.
///
/// # Safety
/// `send` and `recv` stay alive and unmoved until the request completes;
/// `recv` holds size × `send.len()` words.
pub unsafe fn iallgather(dup: MPI_Comm, send: &[u64], recv: &mut [u64]) -> MPI_Request {
    let mut req = request_null();
    let n = (send.len() * 8) as c_int;
    // SAFETY: the caller keeps the buffers alive; bytes of plain u64s.
    unsafe {
        PMPI_Iallgather(
            send.as_ptr() as *const c_void,
            n,
            byte(),
            recv.as_mut_ptr() as *mut c_void,
            n,
            byte(),
            dup,
            &mut req,
        )
    };
    req
}

/// Posts the all-to-all of `per` words per rank on the private duplicate.
///
/// # Safety
/// As `iallgather`; both buffers hold size × `per` words.
pub unsafe fn ialltoall(dup: MPI_Comm, send: &[u64], recv: &mut [u64], per: usize) -> MPI_Request {
    let mut req = request_null();
    let n = (per * 8) as c_int;
    // SAFETY: the caller keeps the buffers alive.
    unsafe {
        PMPI_Ialltoall(
            send.as_ptr() as *const c_void,
            n,
            byte(),
            recv.as_mut_ptr() as *mut c_void,
            n,
            byte(),
            dup,
            &mut req,
        )
    };
    req
}

/// A barrier on the private duplicate, bounded by `timeout`.
pub fn barrier(dup: MPI_Comm, timeout: Option<Duration>) -> bool {
    let mut req = request_null();
    // SAFETY: a barrier on the checker's duplicate.
    unsafe { PMPI_Ibarrier(dup, &mut req) };
    wait(std::slice::from_mut(&mut req), timeout)
}

/// Sends bytes to `dest` on the private duplicate without waiting: the
/// buffer is leaked and the request freed (the error path only).
pub fn send_bytes(dup: MPI_Comm, dest: usize, tag: c_int, bytes: Vec<u8>) {
    let bytes = bytes.leak();
    let mut req = request_null();
    // SAFETY: the buffer is leaked, so it outlives the send.
    unsafe {
        PMPI_Isend(
            bytes.as_ptr() as *const c_void,
            bytes.len() as c_int,
            byte(),
            dest as c_int,
            tag,
            dup,
            &mut req,
        );
        PMPI_Request_free(&mut req);
    }
}

/// Receives bytes from `source` on the private duplicate, bounded by
/// `timeout`; None when it ran out.
pub fn recv_bytes(
    dup: MPI_Comm,
    source: usize,
    tag: c_int,
    timeout: Option<Duration>,
) -> Option<Vec<u8>> {
    let start = Instant::now();
    let mut flag: c_int = 0;
    // SAFETY: MPI_Status is plain data.
    let mut status: MPI_Status = unsafe { std::mem::zeroed() };
    while flag == 0 {
        // SAFETY: probes the checker's duplicate.
        unsafe { PMPI_Iprobe(source as c_int, tag, dup, &mut flag, &mut status) };
        if flag == 0 {
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                return None;
            }
            std::thread::yield_now();
        }
    }
    let mut n: c_int = 0;
    // SAFETY: the status of the probed message.
    unsafe { PMPI_Get_count(&status, byte(), &mut n) };
    let mut buf = vec![0u8; n.max(0) as usize];
    // SAFETY: buf holds the probed message's bytes.
    unsafe {
        PMPI_Recv(
            buf.as_mut_ptr() as *mut c_void,
            n,
            byte(),
            source as c_int,
            tag,
            dup,
            RSMPI_STATUS_IGNORE,
        )
    };
    Some(buf)
}

/// The size of a datatype in bytes (0 when MPI cannot say).
pub fn type_size(t: MPI_Datatype) -> u64 {
    let mut s: MPI_Count = 0;
    // SAFETY: a query of a datatype handle the user passed.
    unsafe { PMPI_Type_size_x(t, &mut s) };
    s.max(0) as u64
}

/// `count` copies of `t` as one datatype, for the comparison of two
/// signatures: `t` itself when count is 1 (then `owned` is false).
pub fn contiguous(count: i64, t: MPI_Datatype) -> (MPI_Datatype, bool) {
    if count == 1 {
        return (t, false);
    }
    let mut out = t;
    // SAFETY: builds a new type the caller frees with `free_type`.
    let rc = unsafe { PMPI_Type_contiguous(count.clamp(0, i32::MAX as i64) as c_int, t, &mut out) };
    (out, rc == 0)
}

pub fn free_type(mut t: MPI_Datatype) {
    // SAFETY: frees a type the checker made.
    unsafe { PMPI_Type_free(&mut t) };
}

/// Whether `t` is a predefined type (combiner MPI_COMBINER_NAMED: never freed).
pub fn is_named(t: MPI_Datatype) -> bool {
    mpix_marshal::type_tree(t).is_ok_and(|n| n.is_predefined())
}

/// A counter that numbers the checks of this process (for the JSON log).
pub static FINDINGS: AtomicU64 = AtomicU64::new(0);

pub fn world_rank() -> i32 {
    let mut r = 0;
    // SAFETY: a plain query.
    unsafe { PMPI_Comm_rank(comm_world(), &mut r) };
    r
}
