//! The checker's MPI edge: every MPI call the checker makes is a `PMPI_`
//! call, never an `MPI_` one (which would come back into the wrappers,
//! `crate::entry`).
//!
//! The checks' own traffic runs on a private duplicate of each user
//! communicator, made when the communicator is made (or at its first
//! check), cached on it as an attribute of the checker's keyval and freed
//! with it (the keyval's delete callback).

pub mod channel;
mod doubling;
pub mod errhandler;

pub use doubling::Posted;

use crate::digest;
use crate::sys::*;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

extern "C" {
    fn mxc_in_place() -> *mut c_void;
    fn mxc_packed() -> MPI_Datatype;
    fn mxc_byte() -> MPI_Datatype;
    fn mxc_root() -> c_int;
    fn mxc_err_other() -> c_int;
    fn mxc_max_object_name() -> c_int;
    fn mxc_max_error_string() -> c_int;
    fn mxc_op_index(op: MPI_Op) -> c_int;
    fn mxc_op_name(index: c_int) -> *const std::ffi::c_char;
    fn mxc_fn_identity(f: *const c_void) -> u64;
    fn mxc_topo_cart() -> c_int;
    fn mxc_topo_graph() -> c_int;
    fn mxc_topo_dist_graph() -> c_int;
    fn mxc_proc_null() -> c_int;
    fn mxc_datatype_null() -> MPI_Datatype;
    fn mxc_local_ranks() -> c_int;
    fn mxc_online_cores() -> c_int;
    fn mxc_host_name(name: *mut std::ffi::c_char, len: c_int);
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

pub fn proc_null() -> c_int {
    // SAFETY: returns the MPI_PROC_NULL constant.
    unsafe { mxc_proc_null() }
}

pub fn datatype_null() -> MPI_Datatype {
    // SAFETY: returns the MPI_DATATYPE_NULL constant.
    unsafe { mxc_datatype_null() }
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

/// A predefined op's name ("MPI_SUM"); None for a user op.
pub fn op_name(op: MPI_Op) -> Option<&'static str> {
    // SAFETY: compares the handle with the predefined ops.
    let index = unsafe { mxc_op_index(op) };
    if index <= 0 {
        return None;
    }
    // SAFETY: mxc_op_name returns a static C string.
    unsafe { std::ffi::CStr::from_ptr(mxc_op_name(index)) }
        .to_str()
        .ok()
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

/// A communicator's neighborhood, in the order the neighborhood
/// collectives use its buffers' blocks (MPI 4.0 §8.6): `None` for an
/// `MPI_PROC_NULL` neighbor (a Cartesian edge), whose block moves nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topo {
    pub sources: Vec<Option<usize>>,
    pub dests: Vec<Option<usize>>,
}

fn rank_or_null(r: c_int) -> Option<usize> {
    // SAFETY: reads the MPI_PROC_NULL constant.
    (r != unsafe { mxc_proc_null() } && r >= 0).then_some(r as usize)
}

/// The neighborhood of `comm`, or None when it has no topology (then a
/// neighborhood collective is erroneous, and MPI says so itself).
pub fn topology(comm: MPI_Comm) -> Option<Topo> {
    let mut kind: c_int = 0;
    // SAFETY: a query of a valid communicator.
    ok(unsafe { PMPI_Topo_test(comm, &mut kind) }).ok()?;
    // SAFETY: read the topology constants.
    let (cart, graph, dist) = unsafe { (mxc_topo_cart(), mxc_topo_graph(), mxc_topo_dist_graph()) };
    if kind == cart {
        let mut ndims: c_int = 0;
        // SAFETY: a query of a Cartesian communicator.
        ok(unsafe { PMPI_Cartdim_get(comm, &mut ndims) }).ok()?;
        let mut list = Vec::with_capacity(2 * ndims.max(0) as usize);
        for d in 0..ndims {
            let (mut src, mut dst) = (0, 0);
            // SAFETY: as above; the neighbors at -1 and +1 in dimension d.
            ok(unsafe { PMPI_Cart_shift(comm, d, 1, &mut src, &mut dst) }).ok()?;
            list.push(rank_or_null(src));
            list.push(rank_or_null(dst));
        }
        return Some(Topo {
            sources: list.clone(),
            dests: list,
        });
    }
    if kind == graph {
        let (mut rank, mut n) = (0, 0);
        // SAFETY: queries of a graph communicator; the buffer holds n ranks.
        let list = unsafe {
            ok(PMPI_Comm_rank(comm, &mut rank)).ok()?;
            ok(PMPI_Graph_neighbors_count(comm, rank, &mut n)).ok()?;
            let mut v = vec![0 as c_int; n.max(0) as usize];
            ok(PMPI_Graph_neighbors(comm, rank, n, v.as_mut_ptr())).ok()?;
            v
        };
        let list: Vec<Option<usize>> = list.into_iter().map(rank_or_null).collect();
        return Some(Topo {
            sources: list.clone(),
            dests: list,
        });
    }
    if kind == dist {
        let (mut indeg, mut outdeg, mut weighted) = (0, 0, 0);
        // SAFETY: queries of a distributed-graph communicator; each buffer
        // holds its degree's entries (at least one, for the weights MPI may
        // leave alone).
        let (src, dst) = unsafe {
            ok(PMPI_Dist_graph_neighbors_count(
                comm,
                &mut indeg,
                &mut outdeg,
                &mut weighted,
            ))
            .ok()?;
            let (i, o) = (indeg.max(0) as usize, outdeg.max(0) as usize);
            let (mut src, mut dst) = (vec![0 as c_int; i.max(1)], vec![0 as c_int; o.max(1)]);
            let (mut sw, mut dw) = (vec![0 as c_int; i.max(1)], vec![0 as c_int; o.max(1)]);
            ok(PMPI_Dist_graph_neighbors(
                comm,
                indeg,
                src.as_mut_ptr(),
                sw.as_mut_ptr(),
                outdeg,
                dst.as_mut_ptr(),
                dw.as_mut_ptr(),
            ))
            .ok()?;
            src.truncate(i);
            dst.truncate(o);
            (src, dst)
        };
        return Some(Topo {
            sources: src.into_iter().map(rank_or_null).collect(),
            dests: dst.into_iter().map(rank_or_null).collect(),
        });
    }
    None
}

/// An intercommunicator's two groups as the checker sees them: its checks
/// run on a private intracommunicator that merges both groups (made with
/// `MPI_Intercomm_merge`), in which every rank has its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inter {
    /// This rank's group holds rank 0 of the merged communicator.
    pub low: bool,
    /// The merged rank of each rank of the local group, and of the remote.
    pub local: Vec<usize>,
    pub remote: Vec<usize>,
    /// Each merged rank as (in the local group, rank in its group).
    pub who: Vec<(bool, usize)>,
}

impl Inter {
    /// The record's group of a merged rank (`GROUP_LOW` / `GROUP_HIGH`).
    pub fn group_of(&self, merged: usize) -> u64 {
        let local = self.who.get(merged).is_some_and(|w| w.0);
        if local == self.low {
            crate::record::GROUP_LOW
        } else {
            crate::record::GROUP_HIGH
        }
    }
}

/// The checker's state of one user communicator.
pub struct State {
    /// The private communicator the checks run on: a duplicate of an
    /// intracommunicator, the merged groups of an intercommunicator.
    pub dup: MPI_Comm,
    pub seq: u64,
    /// The rank and size of the (local) group, as the user knows them.
    pub rank: usize,
    pub size: usize,
    /// Not checked (a communicator the checker could not query or duplicate).
    pub unchecked: bool,
    /// An intercommunicator's groups.
    pub inter: Option<std::sync::Arc<Inter>>,
    /// The communicator's identity, the same in all its processes (its
    /// first rank's world rank and count of states), for timeout reports.
    pub id: u64,
    /// The user communicator's handle bits (its name's key for the watchdog).
    pub comm: u64,
    /// Its neighborhood, read at its first neighborhood collective.
    pub topo: Option<std::sync::Arc<Topo>>,
    /// What reports call a window's or file's checks ("a window on
    /// MPI_COMM_WORLD"); None for a communicator (its name is asked anew).
    pub label: Option<String>,
    /// The checks' calls not yet verified (`crate::batch`), kept here to
    /// be found without a look-up; opaque to this layer.
    pub batch: Option<Box<dyn std::any::Any>>,
    /// The call being checked's place in the order of blocking calls
    /// across communicators (`crate::order`; 0 outside the batched mode).
    pub before: u64,
}

static KEYVAL: AtomicI32 = AtomicI32::new(i32::MIN);

extern "C" fn delete_state(value: *mut c_void) {
    if value.is_null() {
        return;
    }
    // SAFETY: every attribute value of the keyval is a Box<State> leaked
    // by `state`, and MPI calls this once per value.
    free_state(*unsafe { Box::from_raw(value as *mut State) });
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
    if let Some(st) = known_state(comm) {
        return Some(st);
    }
    let st = Box::into_raw(new_state(comm, bits(comm), None));
    // SAFETY: attaches the state; MPI calls delete_state when comm is freed.
    unsafe { PMPI_Comm_set_attr(comm, keyval(), st as *mut c_void) };
    // SAFETY: st was just leaked and is owned by the attribute.
    Some(unsafe { &mut *st })
}

/// The state of `comm` if it has one (a local call).
pub fn known_state(comm: MPI_Comm) -> Option<&'static mut State> {
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
    None
}

/// A new state for checks on `comm` (or on a window or file made on it,
/// whose handle is `key`), with its private duplicate. A communicator the
/// checker cannot query or duplicate gets a state that checks nothing.
fn new_state(comm: MPI_Comm, key: u64, label: Option<String>) -> Box<State> {
    let (mut is_inter, mut rank, mut size) = (0, 0, 0);
    let mut dup = comm_null();
    let mut inter = None;
    // SAFETY: plain queries of a valid communicator, and its private
    // duplicate (or merge) for the checker.
    let ok = unsafe {
        ok(PMPI_Comm_test_inter(comm, &mut is_inter)).is_ok()
            && ok(PMPI_Comm_rank(comm, &mut rank)).is_ok()
            && ok(PMPI_Comm_size(comm, &mut size)).is_ok()
            && if is_inter != 0 {
                // All processes pass the same `high`: the merged order is
                // the MPI's choice, read back below.
                ok(PMPI_Intercomm_merge(comm, 0, &mut dup)).is_ok()
            } else {
                ok(PMPI_Comm_dup(comm, &mut dup)).is_ok()
            }
            && ok(PMPI_Comm_set_errhandler(dup, RSMPI_ERRORS_RETURN)).is_ok()
    };
    let mut ok = ok;
    if ok && is_inter != 0 {
        inter = groups(comm, dup).map(std::sync::Arc::new);
        ok = inter.is_some();
    }
    let id = if ok { identity(dup) } else { 0 };
    let name = label.clone().unwrap_or_else(|| {
        if is_inter != 0 {
            inter_name(comm)
        } else {
            comm_name(comm, size.max(0) as usize)
        }
    });
    crate::names::set_name(key, name);
    Box::new(State {
        dup,
        seq: 0,
        rank: rank.max(0) as usize,
        size: size.max(0) as usize,
        unchecked: !ok,
        inter,
        id,
        comm: key,
        topo: None,
        label,
        batch: None,
        before: 0,
    })
}

/// A new private communicator's identity: its rank 0's world rank and
/// count of states made, broadcast (one small collective per communicator
/// made, while all its members are in the call that makes it).
fn identity(dup: MPI_Comm) -> u64 {
    static MADE: AtomicU64 = AtomicU64::new(0);
    let mine = (world_rank_cached().max(0) as u64) << 32 | MADE.fetch_add(1, Ordering::Relaxed);
    let mut id = mine;
    // SAFETY: one u64 from rank 0 of the checker's own communicator.
    let rc = unsafe {
        PMPI_Bcast(
            &mut id as *mut u64 as *mut c_void,
            1,
            RSMPI_UINT64_T,
            0,
            dup,
        )
    };
    if rc == 0 {
        id
    } else {
        0
    }
}

/// Where each rank of group `g` sits in group `to`; None if one is not
/// in it (a local call).
fn translate(g: MPI_Group, to: MPI_Group) -> Option<Vec<usize>> {
    let mut n = 0;
    // SAFETY: local queries of valid groups; both buffers hold n ranks.
    unsafe {
        ok(PMPI_Group_size(g, &mut n)).ok()?;
        let from: Vec<c_int> = (0..n).collect();
        let mut ranks = vec![0 as c_int; n.max(0) as usize];
        ok(PMPI_Group_translate_ranks(
            g,
            n,
            from.as_ptr(),
            to,
            ranks.as_mut_ptr(),
        ))
        .ok()?;
        ranks.into_iter().map(|r| usize::try_from(r).ok()).collect()
    }
}

/// The world ranks of an intracommunicator's ranks, in its order; None
/// if one is not in `MPI_COMM_WORLD` (a spawned process's).
pub fn world_ranks(comm: MPI_Comm) -> Option<Vec<usize>> {
    let mut g = [std::mem::MaybeUninit::<MPI_Group>::uninit(); 2];
    // SAFETY: the two groups, freed below.
    let made = unsafe {
        ok(PMPI_Comm_group(comm, g[0].as_mut_ptr())).is_ok()
            && ok(PMPI_Comm_group(comm_world(), g[1].as_mut_ptr())).is_ok()
    };
    if !made {
        return None;
    }
    // SAFETY: both were written.
    let [mut cg, mut wg] = g.map(|x| unsafe { x.assume_init() });
    let ranks = translate(cg, wg);
    // SAFETY: the groups made above.
    unsafe {
        PMPI_Group_free(&mut cg);
        PMPI_Group_free(&mut wg);
    }
    ranks
}

/// Where each rank of an intercommunicator's two groups sits in the
/// merged communicator (local calls on the groups).
fn groups(comm: MPI_Comm, merged: MPI_Comm) -> Option<Inter> {
    let mut g = [std::mem::MaybeUninit::<MPI_Group>::uninit(); 3];
    // SAFETY: the local and remote groups and the merged one, freed below.
    let made = unsafe {
        ok(PMPI_Comm_group(comm, g[0].as_mut_ptr())).is_ok()
            && ok(PMPI_Comm_remote_group(comm, g[1].as_mut_ptr())).is_ok()
            && ok(PMPI_Comm_group(merged, g[2].as_mut_ptr())).is_ok()
    };
    if !made {
        return None;
    }
    // SAFETY: all three were written.
    let [mut lg, mut rg, mut mg] = g.map(|x| unsafe { x.assume_init() });
    let local = translate(lg, mg);
    let remote = translate(rg, mg);
    // SAFETY: the groups made above.
    unsafe {
        PMPI_Group_free(&mut lg);
        PMPI_Group_free(&mut rg);
        PMPI_Group_free(&mut mg);
    }
    let (local, remote) = (local?, remote?);
    let mut who = vec![(false, 0); local.len() + remote.len()];
    for (i, &m) in local.iter().enumerate() {
        *who.get_mut(m)? = (true, i);
    }
    for (i, &m) in remote.iter().enumerate() {
        *who.get_mut(m)? = (false, i);
    }
    Some(Inter {
        low: local.contains(&0),
        local,
        remote,
        who,
    })
}

/// An intercommunicator's name for reports: its name if set, else "an
/// unnamed intercommunicator (N local, M remote ranks)".
pub fn inter_name(comm: MPI_Comm) -> String {
    let (mut n, mut m) = (0, 0);
    // SAFETY: plain queries of a valid intercommunicator.
    unsafe {
        PMPI_Comm_size(comm, &mut n);
        PMPI_Comm_remote_size(comm, &mut m);
    }
    let name = comm_name(comm, 0);
    if name.starts_with("an unnamed") {
        format!("an unnamed intercommunicator ({n} local, {m} remote ranks)")
    } else {
        name
    }
}

/// The states of windows and files (which have no attributes the checker
/// could use for files, so both live here), by handle.
fn objects() -> &'static std::sync::Mutex<std::collections::HashMap<u64, usize>> {
    static O: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<u64, usize>>> =
        std::sync::OnceLock::new();
    O.get_or_init(Default::default)
}

/// A window or file was made on `comm` (collectively): its checks get a
/// private duplicate of `comm`, as a communicator's do.
pub fn object_made<T: Copy>(handle: T, comm: MPI_Comm, label: String) {
    let st = Box::into_raw(new_state(comm, bits(handle), Some(label)));
    let old = objects()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(bits(handle), st as usize);
    if let Some(old) = old {
        // SAFETY: a state this map owned (a handle MPI reused).
        free_state(*unsafe { Box::from_raw(old as *mut State) });
    }
}

/// The state of a window or file, when the checker saw it made.
pub fn object_state(object: Object) -> Option<&'static mut State> {
    let p = *objects()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&object.key())?;
    // SAFETY: the map owns the leaked Box until `object_freed`; one thread
    // uses an object's checks at a time.
    Some(unsafe { &mut *(p as *mut State) })
}

/// A window or file was freed (its handle's bits from before the call).
pub fn object_freed(handle: u64) {
    let p = objects()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&handle);
    if let Some(p) = p {
        // SAFETY: the map owned it.
        free_state(*unsafe { Box::from_raw(p as *mut State) });
    }
}

fn free_state(mut st: State) {
    crate::names::forget(st.comm);
    if bits(st.dup) != bits(comm_null()) {
        // SAFETY: the duplicate is the checker's own.
        unsafe { PMPI_Comm_free(&mut st.dup) };
    }
}

/// A window's name for reports: its name if set, else "a window on COMM".
pub fn win_label(win: MPI_Win, comm: MPI_Comm) -> String {
    // SAFETY: reads the MPI_MAX_OBJECT_NAME constant.
    let max = unsafe { mxc_max_object_name() } as usize;
    let mut buf = vec![0u8; max + 1];
    let mut len: c_int = 0;
    // SAFETY: buf holds MPI_MAX_OBJECT_NAME bytes.
    let rc = unsafe { PMPI_Win_get_name(win, buf.as_mut_ptr() as *mut _, &mut len) };
    let name = String::from_utf8_lossy(&buf[..(len.max(0) as usize).min(max)]).into_owned();
    if rc == 0 && !name.is_empty() {
        return name;
    }
    let mut size = 0;
    // SAFETY: a query of a valid communicator.
    unsafe { PMPI_Comm_size(comm, &mut size) };
    format!("a window on {}", comm_name(comm, size.max(0) as usize))
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

/// Keeps the watchdog's copy of a communicator's name current.
pub fn renamed(comm: MPI_Comm) {
    let (mut size, mut inter) = (0, 0);
    // SAFETY: plain queries of a valid communicator.
    unsafe {
        PMPI_Comm_test_inter(comm, &mut inter);
        PMPI_Comm_size(comm, &mut size);
    }
    let name = if inter != 0 {
        inter_name(comm)
    } else {
        comm_name(comm, size.max(0) as usize)
    };
    crate::names::set_name(bits(comm), name);
}

/// The checker's error code for collective findings (its own class,
/// with its own string).
pub fn error_code() -> c_int {
    static CODE: AtomicI32 = AtomicI32::new(0);
    error_code_in(
        &CODE,
        c"mpix-check: inconsistent collective call (see the mpix-check report on stderr)",
    )
}

/// The checker's error code for point-to-point findings: a class of its
/// own, so that a program (or a test) can tell the two apart.
pub fn p2p_error_code() -> c_int {
    static CODE: AtomicI32 = AtomicI32::new(0);
    error_code_in(
        &CODE,
        c"mpix-check: mismatched point-to-point type signature (see the mpix-check report on stderr)",
    )
}

/// The checker's error code for the misuse of a datatype (a receive into
/// overlapping entries): a class of its own, as above.
pub fn datatype_error_code() -> c_int {
    static CODE: AtomicI32 = AtomicI32::new(0);
    error_code_in(
        &CODE,
        c"mpix-check: erroneous use of a datatype (see the mpix-check report on stderr)",
    )
}

/// Whether `comm` is an intracommunicator (false for an
/// intercommunicator, or when MPI cannot say).
pub fn is_intracomm(comm: MPI_Comm) -> bool {
    let mut inter = 0;
    // SAFETY: a local query of the user's communicator.
    unsafe { PMPI_Comm_test_inter(comm, &mut inter) == 0 && inter == 0 }
}

/// This process's rank in `comm` and the size of its (local) group.
pub fn rank_size(comm: MPI_Comm) -> (usize, usize) {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: local queries of the user's communicator.
    unsafe {
        PMPI_Comm_rank(comm, &mut rank);
        PMPI_Comm_size(comm, &mut size);
    }
    (rank.max(0) as usize, size.max(0) as usize)
}

/// The code kept in `slot`, made (class, code and `text`) at first use;
/// MPI_ERR_OTHER when MPI cannot add one.
fn error_code_in(slot: &AtomicI32, text: &std::ffi::CStr) -> c_int {
    let c = slot.load(Ordering::Acquire);
    if c != 0 {
        return c;
    }
    let (mut class, mut code) = (0, 0);
    // SAFETY: local calls adding an error class, code and string.
    let ok = unsafe {
        PMPI_Add_error_class(&mut class) == 0
            && PMPI_Add_error_code(class, &mut code) == 0
            && PMPI_Add_error_string(code, text.as_ptr() as *mut _) == 0
    };
    // SAFETY: reads the MPI_ERR_OTHER constant.
    let code = if ok { code } else { unsafe { mxc_err_other() } };
    slot.store(code, Ordering::Release);
    code
}

/// A window or file a call is on (its checks have their own state).
#[derive(Debug, Clone, Copy)]
pub enum Object {
    Win(MPI_Win),
    File(MPI_File),
}

impl Object {
    pub fn key(self) -> u64 {
        match self {
            Object::Win(w) => bits(w),
            Object::File(f) => bits(f),
        }
    }
}

/// Hands the checker's error to the error handler of the call's
/// communicator, window or file: aborts under MPI_ERRORS_ARE_FATAL (a
/// communicator's and window's default); returns the code the call should
/// return when the handler returns (a file's default, MPI_ERRORS_RETURN).
pub fn raise(comm: MPI_Comm, object: Option<Object>) -> c_int {
    raise_code(comm, object, error_code())
}

/// As `raise`, with `code` (the point-to-point checker's own).
pub fn raise_code(comm: MPI_Comm, object: Option<Object>, code: c_int) -> c_int {
    FOUND.store(true, Ordering::Relaxed);
    if errhandler::fatal_on(comm, object) {
        abort_fatal(code);
    }
    // SAFETY: calls the user's object's error handler.
    unsafe {
        match object {
            None => PMPI_Comm_call_errhandler(comm, code),
            Some(Object::Win(w)) => PMPI_Win_call_errhandler(w, code),
            Some(Object::File(f)) => PMPI_File_call_errhandler(f, code),
        }
    };
    code
}

/// The digest's datatype (one whole digest: MPI never splits it between
/// calls of the operation) and operation, made at the first check.
static DIGEST_TYPE_OP: std::sync::OnceLock<Result<(u64, u64), c_int>> = std::sync::OnceLock::new();
static DIGEST_FREED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn digest_type_op() -> Result<(MPI_Datatype, MPI_Op), c_int> {
    if DIGEST_FREED.load(Ordering::Acquire) {
        return Err(mxc_err_other_code());
    }
    let made = DIGEST_TYPE_OP.get_or_init(|| {
        let mut t = std::mem::MaybeUninit::<MPI_Datatype>::zeroed();
        let mut op = std::mem::MaybeUninit::<MPI_Op>::zeroed();
        // SAFETY: makes and commits a contiguous type of predefined words
        // and creates an op on a function of the right signature.
        unsafe {
            ok(PMPI_Type_contiguous(
                digest::WORDS as c_int,
                RSMPI_UINT64_T,
                t.as_mut_ptr(),
            ))?;
            ok(PMPI_Type_commit(t.as_mut_ptr()))?;
            ok(PMPI_Op_create(Some(combine_digests), 1, op.as_mut_ptr()))?;
            Ok((bits(t.assume_init()), bits(op.assume_init())))
        }
    });
    let (t, op) = (*made)?;
    Ok((from_bits(t), from_bits(op)))
}

/// Frees the digest's type and op (at MPI_Finalize: a correct program's
/// finalize reports no objects left behind, as without the checker).
pub fn free_digest_type_op() {
    if let Some(Ok((t, op))) = DIGEST_TYPE_OP.get() {
        if !DIGEST_FREED.swap(true, Ordering::AcqRel) {
            let (mut t, mut op): (MPI_Datatype, MPI_Op) = (from_bits(*t), from_bits(*op));
            // SAFETY: the checker's own type and op, freed once.
            unsafe {
                PMPI_Type_free(&mut t);
                PMPI_Op_free(&mut op);
            }
        }
    }
}

/// A handle back from its bits (the inverse of `bits`).
pub fn from_bits<T: Copy>(b: u64) -> T {
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    let n = std::mem::size_of::<T>().min(8);
    // SAFETY: T is a plain handle of at most 8 bytes, all of them written.
    unsafe {
        std::ptr::copy_nonoverlapping(b.to_ne_bytes().as_ptr(), out.as_mut_ptr() as *mut u8, n);
        out.assume_init()
    }
}

fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

unsafe extern "C" fn combine_digests(
    input: *mut c_void,
    inout: *mut c_void,
    len: *mut c_int,
    _t: *mut MPI_Datatype,
) {
    // SAFETY: MPI passes `len` digests (elements of the digest type) in
    // each buffer, suitably aligned as the user buffers of the check were.
    unsafe {
        let n = (*len).max(0) as usize;
        let a = std::slice::from_raw_parts(input as *const digest::Digest, n);
        let b = std::slice::from_raw_parts_mut(inout as *mut digest::Digest, n);
        for (x, acc) in a.iter().zip(b.iter_mut()) {
            digest::combine(x, acc);
        }
    }
}

/// The fast path's one reduction: every rank's digest reduced, by this
/// checker's own recursive doubling over point-to-point messages on the
/// private communicator. Polled when waits are watched (so that a timeout
/// can end it; a polled `MPI_Iallreduce` costs several times a blocking
/// reduction on Open MPI), MPI's blocking waits otherwise. Not MPI's
/// `MPI_Allreduce`: a nonblocking call's check (`post_digest_shape`) sends
/// the same messages, so that a blocking check on some ranks and a
/// nonblocking one on others meet and see that they differ (MPI never
/// matches a blocking collective with a nonblocking one).
/// `place` is this rank's rank and the size of `dup`.
pub fn allreduce_digest(
    dup: MPI_Comm,
    place: (usize, usize),
    mine: &digest::Digest,
) -> Result<digest::Digest, c_int> {
    let (mut acc, mut got) = (*mine, [0u64; digest::WORDS]);
    doubling::run(dup, place, TAG_DIGEST, mine, &mut acc, &mut got)?;
    Ok(acc)
}

/// The tags of the checker's messages on its private communicators, all
/// in this one table so that no two uses share one (the slow path's
/// per-check tags, `check::tag`, stay below 30002):
/// the fast path's digests,
const TAG_DIGEST: c_int = 32000;
/// the status channel's queries and answers (`channel`),
pub(super) const TAG_QUERY: c_int = 32001;
pub(super) const TAG_ANSWER: c_int = 32002;
/// a batch's digests (`allreduce_batch`): a batch never meets a single
/// digest.
const TAG_BATCH: c_int = 32003;

/// A batch of digests (`digest::batch`) reduced by the same recursive
/// doubling as `allreduce_digest`, on a tag of its own. Polled when
/// waits are watched.
pub fn allreduce_batch(
    dup: MPI_Comm,
    place: (usize, usize),
    mine: &[u64],
) -> Result<Vec<u64>, c_int> {
    let (mut acc, mut got) = (mine.to_vec(), vec![0u64; mine.len()]);
    doubling::run(dup, place, TAG_BATCH, mine, &mut acc, &mut got)?;
    Ok(acc)
}

/// `allreduce_batch`, posted: the same messages, advanced while the
/// program goes on (`Posted::advance`), then waited for (`Posted::wait`).
pub fn post_batch(dup: MPI_Comm, place: (usize, usize), mine: &[u64]) -> Result<Posted, c_int> {
    Posted::start(dup, place, TAG_BATCH, mine)
}

/// A nonblocking call's part in the doubling's messages (see
/// `allreduce_digest`), all posted at once: this rank's own digest to each
/// rank the doubling sends to, and a receive from each rank it receives
/// from into `got` (resized here; it must stay unmoved, like `mine`,
/// until the requests complete). The contents received are not used when
/// every rank's check is nonblocking (`MPI_Iallreduce` reduces the
/// digests then); they exist so that a rank in a blocking check finds
/// this rank's digest where it waits for its partner's.
///
/// # Safety
/// `mine` and `got`'s buffer stay alive and unmoved until the requests
/// complete.
pub unsafe fn post_digest_shape(
    dup: MPI_Comm,
    place: (usize, usize),
    mine: &digest::Digest,
    got: &mut Vec<digest::Digest>,
) -> Result<Vec<MPI_Request>, c_int> {
    let (to, from) = doubling::partners(place.0, place.1);
    *got = vec![[0u64; digest::WORDS]; from.len()];
    let mut reqs = Vec::with_capacity(to.len() + from.len());
    let n = (digest::WORDS * 8) as c_int;
    for (k, &peer) in from.iter().enumerate() {
        let mut r = request_null();
        // SAFETY: the caller keeps `got` alive and unmoved.
        let rc = unsafe {
            PMPI_Irecv(
                got[k].as_mut_ptr() as *mut c_void,
                n,
                byte(),
                peer as c_int,
                TAG_DIGEST,
                dup,
                &mut r,
            )
        };
        if rc != 0 {
            wait_all(&mut reqs);
            return Err(rc);
        }
        reqs.push(r);
    }
    for &peer in &to {
        let mut r = request_null();
        // SAFETY: the caller keeps `mine` alive and unmoved.
        let rc = unsafe {
            PMPI_Isend(
                mine.as_ptr() as *const c_void,
                n,
                byte(),
                peer as c_int,
                TAG_DIGEST,
                dup,
                &mut r,
            )
        };
        if rc != 0 {
            wait_all(&mut reqs);
            return Err(rc);
        }
        reqs.push(r);
    }
    Ok(reqs)
}

/// Tests the checker's requests: true when all completed.
pub fn test_all(reqs: &mut [MPI_Request]) -> Result<bool, c_int> {
    let mut flag: c_int = 0;
    // SAFETY: the checker's own requests, active or null.
    ok(unsafe {
        PMPI_Testall(
            reqs.len() as c_int,
            reqs.as_mut_ptr(),
            &mut flag,
            RSMPI_STATUSES_IGNORE,
        )
    })?;
    Ok(flag != 0)
}

/// Waits for the checker's requests (polled when waits are watched).
pub fn wait_requests(reqs: &mut [MPI_Request]) -> Result<(), c_int> {
    ok(wait_all(reqs))
}

/// Whether a message with `tag` from any rank waits on `dup`.
pub fn probe_tag(dup: MPI_Comm, tag: c_int) -> Result<bool, c_int> {
    let mut flag: c_int = 0;
    // SAFETY: MPI_Status is plain data; probes the checker's duplicate.
    let mut status: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    ok(unsafe { PMPI_Iprobe(RSMPI_ANY_SOURCE, tag, dup, &mut flag, &mut status) })?;
    Ok(flag != 0)
}

/// The messages the collective checks' reductions sent (`swap`), for
/// `MPIX_CHECK_STATS`.
pub static SENT: AtomicU64 = AtomicU64::new(0);

/// Sends `send` to and/or receives into `recv` from `peer`, polled.
fn swap(
    dup: MPI_Comm,
    peer: usize,
    tag: c_int,
    send: Option<&[u64]>,
    recv: Option<&mut [u64]>,
) -> Result<(), c_int> {
    let mut reqs = [request_null(), request_null()];
    // SAFETY: both buffers outlive the wait below.
    let rc = unsafe { post_step(dup, peer, tag, send, recv, &mut reqs) };
    let waited = wait_all(&mut reqs);
    ok(rc)?;
    ok(waited)
}

/// Posts one exchange of words with `peer`: the receive into `reqs[0]`,
/// then the send into `reqs[1]`. Returns MPI's code.
///
/// # Safety
/// Both buffers must stay valid and unmoved, and `send` unwritten, until
/// both requests complete.
unsafe fn post_step(
    dup: MPI_Comm,
    peer: usize,
    tag: c_int,
    send: Option<&[u64]>,
    recv: Option<&mut [u64]>,
    reqs: &mut [MPI_Request; 2],
) -> c_int {
    let mut rc = 0;
    // SAFETY: the caller keeps the buffers alive until the requests end.
    unsafe {
        if let Some(r) = recv {
            rc = PMPI_Irecv(
                r.as_mut_ptr() as *mut c_void,
                (r.len() * 8) as c_int,
                byte(),
                peer as c_int,
                tag,
                dup,
                &mut reqs[0],
            );
        }
        if let (0, Some(d)) = (rc, send) {
            SENT.fetch_add(1, Ordering::Relaxed);
            rc = PMPI_Isend(
                d.as_ptr() as *const c_void,
                (d.len() * 8) as c_int,
                byte(),
                peer as c_int,
                tag,
                dup,
                &mut reqs[1],
            );
        }
    }
    rc
}

/// The same, posted (a nonblocking collective's check).
///
/// # Safety
/// `mine` and `out` stay alive and unmoved until the request completes.
pub unsafe fn iallreduce_digest(
    dup: MPI_Comm,
    mine: &digest::Digest,
    out: &mut digest::Digest,
) -> Result<MPI_Request, c_int> {
    let (t, op) = digest_type_op()?;
    let mut req = request_null();
    // SAFETY: the caller keeps both buffers alive.
    ok(unsafe {
        PMPI_Iallreduce(
            mine.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
            1,
            t,
            op,
            dup,
            &mut req,
        )
    })?;
    Ok(req)
}

/// How a watched wait is polled: `step` is called until it says done.
pub type Poll = fn(&mut dyn FnMut() -> Result<bool, c_int>) -> Result<(), c_int>;

static POLL: std::sync::OnceLock<Poll> = std::sync::OnceLock::new();

/// The checks hand the edge the watchdog's poll (`crate::watchdog`) before
/// they wait: the edge never calls up into the layers above it.
pub fn watch_with(poll: Poll) {
    POLL.get_or_init(|| poll);
}

/// The poll of watched waits: set when `MPIX_CHECK_TIMEOUT` is not 0 and
/// the checks handed one over; otherwise waits are MPI's blocking calls.
fn watched() -> Option<Poll> {
    crate::report::config().timeout?;
    POLL.get().copied()
}

/// Tests one of the checker's requests: true when it completed.
pub fn test_request(req: &mut MPI_Request) -> Result<bool, c_int> {
    let mut flag: c_int = 0;
    // SAFETY: the checker's own request.
    ok(unsafe { PMPI_Test(req, &mut flag, RSMPI_STATUS_IGNORE) })?;
    Ok(flag != 0)
}

/// The slow path's exchange, point to point on the private duplicate (so
/// that it never has to be ordered with the checks' collectives): rank j
/// gets `block(j)` of `per` words from this rank; the result holds every
/// rank's block for this rank, in rank order. A block for all ranks alike
/// is an allgather, one per rank an alltoall, an empty one a barrier.
pub fn exchange(
    dup: MPI_Comm,
    tag: c_int,
    rank: usize,
    size: usize,
    per: usize,
    block: impl Fn(usize) -> Vec<u64>,
) -> Result<Vec<u64>, c_int> {
    let mut out = vec![0u64; per * size];
    let blocks: Vec<Vec<u64>> = (0..size).map(&block).collect();
    if blocks.iter().any(|b| b.len() != per) {
        return Err(mxc_err_other_code());
    }
    let mut reqs = Vec::with_capacity(2 * size);
    let n = (per * 8) as c_int;
    for j in 0..size {
        if j == rank {
            out[per * j..per * (j + 1)].copy_from_slice(&blocks[j]);
            continue;
        }
        let (mut rr, mut sr) = (request_null(), request_null());
        // SAFETY: `out` and `blocks` outlive the Waitall below and are not
        // touched before it.
        let rc = unsafe {
            let r = PMPI_Irecv(
                out.as_mut_ptr().add(per * j) as *mut c_void,
                n,
                byte(),
                j as c_int,
                tag,
                dup,
                &mut rr,
            );
            if r != 0 {
                r
            } else {
                PMPI_Isend(
                    blocks[j].as_ptr() as *const c_void,
                    n,
                    byte(),
                    j as c_int,
                    tag,
                    dup,
                    &mut sr,
                )
            }
        };
        reqs.push(rr);
        reqs.push(sr);
        if rc != 0 {
            wait_all(&mut reqs);
            return Err(rc);
        }
    }
    ok(wait_all(&mut reqs))?;
    Ok(out)
}

fn wait_all(reqs: &mut [MPI_Request]) -> c_int {
    let Some(poll) = watched() else {
        // SAFETY: the checker's own requests, active or null.
        return unsafe {
            PMPI_Waitall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                RSMPI_STATUSES_IGNORE,
            )
        };
    };
    let r = poll(&mut || {
        let mut flag: c_int = 0;
        // SAFETY: the checker's own requests, active or null.
        ok(unsafe {
            PMPI_Testall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                &mut flag,
                RSMPI_STATUSES_IGNORE,
            )
        })?;
        Ok(flag != 0)
    });
    r.err().unwrap_or(0)
}

fn mxc_err_other_code() -> c_int {
    // SAFETY: reads the MPI_ERR_OTHER constant.
    unsafe { mxc_err_other() }
}

/// Sends bytes to `dest` on a private communicator without waiting: the
/// buffer is leaked and the request freed (the error and timeout paths
/// only). False when MPI refused the send.
pub fn send_bytes(dup: MPI_Comm, dest: usize, tag: c_int, bytes: Vec<u8>) -> bool {
    let bytes = bytes.leak();
    let mut req = request_null();
    // SAFETY: the buffer is leaked, so it outlives the send.
    let rc = unsafe {
        PMPI_Isend(
            bytes.as_ptr() as *const c_void,
            bytes.len() as c_int,
            byte(),
            dest as c_int,
            tag,
            dup,
            &mut req,
        )
    };
    if rc == 0 {
        // SAFETY: the request just made.
        unsafe { PMPI_Request_free(&mut req) };
    }
    rc == 0
}

/// What every rank of `dup` sent every other, counted: each rank gives
/// `per` words for each rank (`out`: `per` times the size of `dup`) and
/// gets each rank's `per` words for it (one `MPI_Alltoall` on a checker's
/// duplicate, when every member is there); None when MPI failed.
pub fn alltoall_words(dup: MPI_Comm, out: &[u64], per: usize) -> Option<Vec<u64>> {
    let mut inn = vec![0u64; out.len()];
    let bytes = (8 * per) as c_int;
    // SAFETY: both arrays hold `per` words per rank of `dup`.
    let rc = unsafe {
        PMPI_Alltoall(
            out.as_ptr() as *const c_void,
            bytes,
            byte(),
            inn.as_mut_ptr() as *mut c_void,
            bytes,
            byte(),
            dup,
        )
    };
    (rc == 0).then_some(inn)
}

/// Receives bytes from `source` on the private duplicate (a polled probe:
/// a sender that never sends is reported after the timeout).
pub fn recv_bytes(dup: MPI_Comm, source: usize, tag: c_int) -> Option<Vec<u8>> {
    // SAFETY: MPI_Status is plain data.
    let mut status: MPI_Status = unsafe { std::mem::zeroed() };
    if let Some(poll) = watched() {
        poll(&mut || {
            let mut flag: c_int = 0;
            // SAFETY: probes the checker's duplicate.
            ok(unsafe { PMPI_Iprobe(source as c_int, tag, dup, &mut flag, &mut status) })?;
            Ok(flag != 0)
        })
        .ok()?;
    } else {
        // SAFETY: probes the checker's duplicate.
        ok(unsafe { PMPI_Probe(source as c_int, tag, dup, &mut status) }).ok()?;
    }
    let mut n: c_int = 0;
    // SAFETY: the status of the probed message.
    ok(unsafe { PMPI_Get_count(&status, byte(), &mut n) }).ok()?;
    let mut buf = vec![0u8; n.max(0) as usize];
    // SAFETY: buf holds the probed message's bytes.
    ok(unsafe {
        PMPI_Recv(
            buf.as_mut_ptr() as *mut c_void,
            n,
            byte(),
            source as c_int,
            tag,
            dup,
            RSMPI_STATUS_IGNORE,
        )
    })
    .ok()?;
    Some(buf)
}

/// Whether the checker has raised a finding of its own in this process.
static FOUND: AtomicBool = AtomicBool::new(false);

/// MPI's text for an error code.
pub fn error_string(code: c_int) -> String {
    // SAFETY: reads the MPI_MAX_ERROR_STRING constant.
    let max = unsafe { mxc_max_error_string() }.max(0) as usize;
    let mut buf = vec![0u8; max + 1];
    let mut len: c_int = 0;
    // SAFETY: buf holds MPI_MAX_ERROR_STRING bytes.
    if unsafe { PMPI_Error_string(code, buf.as_mut_ptr() as *mut _, &mut len) } != 0 {
        return format!("error code {code}");
    }
    String::from_utf8_lossy(&buf[..(len.max(0) as usize).min(max)]).into_owned()
}

/// Ends the job for an error whose handler is `MPI_ERRORS_ARE_FATAL`, as
/// the standard defines that handler (as if this process called
/// `MPI_Abort`): one line with MPI's text of the error, then `MPI_Abort`
/// on `MPI_COMM_WORLD`. Not through the MPI's own fatal path: MPICH 5
/// ends the process there with `exit` alone, and its process manager
/// sometimes misses that exit under load (the other ranks then wait in
/// `MPI_Finalize` for ever); `MPI_Abort` tells the process manager.
/// A rank with a finding another rank reports first gives that rank a
/// grace to print it (that rank's abort ends this process meanwhile).
pub fn abort_fatal(code: c_int) -> ! {
    if FOUND.load(Ordering::Relaxed) && !crate::report::emitted() {
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    let text = error_string(code);
    let line = format!(
        "mpix-check: rank {} ends the job (MPI_Abort; its error handler is MPI_ERRORS_ARE_FATAL): {}\n",
        world_rank_cached(),
        text.strip_prefix("mpix-check: ").unwrap_or(&text)
    );
    // One write, so that the ranks' lines do not interleave.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    // The process manager forwards what the ranks wrote before it ends
    // the job on the abort (MPICH's drops what it has not forwarded yet).
    crate::forwarded::wait_for_stderr();
    abort_job()
}

/// Ends the job: MPI_Abort on MPI_COMM_WORLD (the watchdog thread after a
/// timeout report, whose waiting thread is inside MPI and cannot return
/// an error; a fatal error handler, `abort_fatal`).
pub fn abort_job() -> ! {
    // SAFETY: MPI_Abort on MPI_COMM_WORLD; it does not return.
    unsafe { PMPI_Abort(comm_world(), 1) };
    std::process::abort();
}

static WORLD_RANK: AtomicI32 = AtomicI32::new(-1);

/// This process's rank in MPI_COMM_WORLD, as read at MPI_Init (for the
/// watchdog, which must not call MPI).
pub fn world_rank_cached() -> i32 {
    WORLD_RANK.load(Ordering::Relaxed)
}

/// A datatype's true lower bound, true extent and extent in bytes; None
/// when MPI cannot say.
pub fn type_bounds(t: MPI_Datatype) -> Option<(i64, i64, i64)> {
    let (mut tlb, mut text, mut lb, mut extent): (MPI_Count, MPI_Count, MPI_Count, MPI_Count) =
        (0, 0, 0, 0);
    // SAFETY: queries of a datatype handle the user passed.
    let rc = unsafe {
        PMPI_Type_get_true_extent_x(t, &mut tlb, &mut text)
            | PMPI_Type_get_extent_x(t, &mut lb, &mut extent)
    };
    #[allow(clippy::unnecessary_cast)] // MPI_Count's width is the MPI's choice
    (rc == 0).then_some((tlb as i64, text as i64, extent as i64))
}

/// Every rank's pair of `comm` (the checker's own duplicate), by rank.
pub fn allgather_pair(comm: MPI_Comm, mine: (i64, i64)) -> Option<Vec<(i64, i64)>> {
    let mut send = [0u8; 16];
    send[..8].copy_from_slice(&mine.0.to_le_bytes());
    send[8..].copy_from_slice(&mine.1.to_le_bytes());
    let word = |b: &[u8]| i64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let all = allgather_bytes(comm, &send)?;
    Some(
        all.chunks(16)
            .map(|p| (word(&p[..8]), word(&p[8..])))
            .collect(),
    )
}

/// Every rank's bytes (as many on each rank as `mine`) on `comm` (the
/// checker's own duplicate), rank after rank.
pub fn allgather_bytes(comm: MPI_Comm, mine: &[u8]) -> Option<Vec<u8>> {
    let (_, size) = rank_size(comm);
    let mut all = vec![0u8; mine.len() * size];
    // SAFETY: `mine` sent, as many bytes per rank received into a buffer
    // of size ranks; a collective every rank of `comm` makes at this point.
    let rc = unsafe {
        PMPI_Allgather(
            mine.as_ptr() as *const c_void,
            mine.len() as c_int,
            byte(),
            all.as_mut_ptr() as *mut c_void,
            mine.len() as c_int,
            byte(),
            comm,
        )
    };
    (rc == 0).then_some(all)
}

/// This node's host name ("" when unknown).
pub fn host_name() -> String {
    let mut buf = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds 256 bytes; the shim NUL-terminates it.
    unsafe { mxc_host_name(buf.as_mut_ptr(), buf.len() as c_int) };
    // SAFETY: NUL-terminated above.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// How many datatypes `MPI_Type_get_contents` returns for `t` (0 when
/// MPI cannot say).
pub fn envelope_datatypes(t: MPI_Datatype) -> usize {
    let (mut ni, mut na, mut nd, mut combiner) = (0, 0, 0, 0);
    // SAFETY: a query of a datatype handle the user passed.
    let rc = unsafe { PMPI_Type_get_envelope(t, &mut ni, &mut na, &mut nd, &mut combiner) };
    if rc == 0 {
        nd.max(0) as usize
    } else {
        0
    }
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

/// Whether this node runs more ranks of `MPI_COMM_WORLD` than it has
/// cores (a collective: every rank asks at `MPI_Init`).
pub fn oversubscribed() -> bool {
    // SAFETY: a split of MPI_COMM_WORLD every rank makes at MPI_Init, and
    // a sysconf query.
    let (ranks, cores) = unsafe { (mxc_local_ranks(), mxc_online_cores()) };
    cores > 0 && ranks > cores
}

pub fn world_rank() -> i32 {
    let mut r = 0;
    // SAFETY: a plain query.
    unsafe { PMPI_Comm_rank(comm_world(), &mut r) };
    WORLD_RANK.store(r, Ordering::Relaxed);
    r
}
