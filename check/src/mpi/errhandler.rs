//! The point-to-point checker's error handler (issue 29): a mismatch that
//! makes the receive fail (the message is larger than the receive:
//! `MPI_ERR_TRUNCATE`) is reported before the error reaches the user's
//! error handler, which would otherwise end the job first.
//!
//! *Installed.* On each communicator that gets a point-to-point channel
//! (`crate::p2p::setup`: `MPI_COMM_WORLD` at `MPI_Init`, the wrapped
//! constructors), the checker installs its own error handler and keeps the
//! user's (a reference of its own: the user's `MPI_Errhandler_free` cannot
//! destroy it). A communicator made from a checked one inherits the
//! checker's handler: it gets its parent's user handler. A communicator
//! the checker does not know that inherited the checker's handler (one
//! made by a constructor it does not wrap, e.g. `MPI_Comm_idup`) falls
//! back to `MPI_COMM_WORLD`'s user handler (`MPI_ERRORS_ARE_FATAL` when
//! none is known).
//!
//! *What it does.* Inside a point-to-point call the checker runs for the
//! user on a checked communicator (`defer`), it keeps the error and
//! returns, so that the `PMPI_` call returns it to the checker, which
//! reports a mismatch the error shows and then hands the error on
//! (`dispatch`). Anywhere else it hands the error to the user's handler at
//! once, so every other failing call behaves as without the checker.
//! Handing on: the user's handler is set on the communicator, called with
//! `PMPI_Comm_call_errhandler` and the checker's set back (a rare path,
//! under a lock a thread may take again from inside the user's handler).
//!
//! *Interposed.* `MPI_Comm_set_errhandler` replaces the user's handler
//! kept (the checker's stays installed), `MPI_Comm_get_errhandler`
//! returns the user's (a new reference, as MPI's), and the reference is
//! released when the channel is (`MPI_Comm_free`, `MPI_Comm_disconnect`,
//! `MPI_Finalize` for `MPI_COMM_WORLD`, where the user's is set back).
//! Windows and files are not concerned (no point-to-point there).

use super::bits;
use crate::sys::*;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

extern "C" {
    fn mxc_p2p_errhandler_create(
        eh: *mut MPI_Errhandler,
        f: extern "C" fn(*mut MPI_Comm, *mut c_int),
    ) -> c_int;
    fn mxc_errhandler_predefined(eh: MPI_Errhandler) -> c_int;
    fn mxc_err_truncate() -> c_int;
    fn mxc_err_in_status() -> c_int;
    fn mxc_err_is_argument(class: c_int) -> c_int;
}

/// The checker's handler (its bits; 0: not made, u64::MAX: MPI refused).
static OURS: AtomicU64 = AtomicU64::new(0);

/// A thread's deferred call: whether it is in one, and the (communicator,
/// code) MPI raised in it (one thread-local: the hot path's cost).
type DeferredState = (bool, Option<(u64, c_int)>);

thread_local! {
    static DEFERRED: Cell<DeferredState> = const { Cell::new((false, None)) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static HELD: RefCell<Option<MutexGuard<'static, ()>>> = const { RefCell::new(None) };
}

/// The user's handler of each communicator with the checker's installed
/// (bits of a reference the checker holds).
fn users() -> &'static Mutex<HashMap<u64, u64>> {
    static U: OnceLock<Mutex<HashMap<u64, u64>>> = OnceLock::new();
    U.get_or_init(Default::default)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lock of the handler swaps, taken again freely by the thread that
/// holds it (a user handler that fails on another checked communicator).
struct Swap;

impl Swap {
    fn take() -> Swap {
        static L: Mutex<()> = Mutex::new(());
        if DEPTH.with(|d| d.get()) == 0 {
            let g = lock(&L);
            HELD.with(|h| *h.borrow_mut() = Some(g));
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        Swap
    }
}

impl Drop for Swap {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        if DEPTH.with(|d| d.get()) == 0 {
            HELD.with(|h| drop(h.borrow_mut().take()));
        }
    }
}

fn ours() -> Option<MPI_Errhandler> {
    let b = OURS.load(Ordering::Acquire);
    if b == u64::MAX {
        return None;
    }
    if b != 0 {
        return Some(super::from_bits(b));
    }
    let mut eh: MPI_Errhandler = super::from_bits(0);
    // SAFETY: creates an error handler (a local call).
    let ok = unsafe { mxc_p2p_errhandler_create(&mut eh, on_error) } == 0;
    let b = if ok { bits(eh) } else { u64::MAX };
    match OURS.compare_exchange(0, b, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => ok.then_some(eh),
        Err(won) => (won != u64::MAX).then(|| super::from_bits(won)),
    }
}

/// The checker's handler if it was made (never makes it).
fn made() -> Option<MPI_Errhandler> {
    match OURS.load(Ordering::Acquire) {
        0 | u64::MAX => None,
        b => Some(super::from_bits(b)),
    }
}

fn fatal() -> MPI_Errhandler {
    // SAFETY: reads mpi-sys's copy of MPI_ERRORS_ARE_FATAL.
    unsafe { RSMPI_ERRORS_ARE_FATAL }
}

fn release(eh: u64) {
    let mut e: MPI_Errhandler = super::from_bits(eh);
    // SAFETY: a reference the checker holds (a predefined one is kept).
    unsafe {
        if mxc_errhandler_predefined(e) == 0 {
            PMPI_Errhandler_free(&mut e);
        }
    }
}

/// A new reference to `eh`, made through `comm` (whose handler is then
/// `eh`: the caller sets the checker's back).
fn hold(comm: MPI_Comm, eh: MPI_Errhandler) -> u64 {
    let mut r = eh;
    // SAFETY: the user's communicator and a valid handler.
    unsafe {
        PMPI_Comm_set_errhandler(comm, eh);
        PMPI_Comm_get_errhandler(comm, &mut r);
    }
    bits(r)
}

fn set(comm: MPI_Comm, eh: MPI_Errhandler) {
    // SAFETY: the user's communicator and a valid handler.
    unsafe { PMPI_Comm_set_errhandler(comm, eh) };
}

/// The handler `comm` has now (the reference released at once: only its
/// identity is wanted).
fn current(comm: MPI_Comm) -> u64 {
    let mut eh = fatal();
    // SAFETY: a query of the user's communicator.
    if unsafe { PMPI_Comm_get_errhandler(comm, &mut eh) } != 0 {
        return 0;
    }
    let b = bits(eh);
    release(b);
    b
}

/// Installs the checker's handler on `comm` (which has just got its
/// channel), keeping the user's: the one it has, or, when it inherited
/// the checker's, `parent`'s user handler.
pub fn install(comm: MPI_Comm, parent: Option<MPI_Comm>) {
    let Some(o) = ours() else { return };
    if lock(users()).contains_key(&bits(comm)) {
        return;
    }
    let _s = Swap::take();
    let mut eh = fatal();
    // SAFETY: a query of the user's communicator (a new reference).
    if unsafe { PMPI_Comm_get_errhandler(comm, &mut eh) } != 0 {
        return;
    }
    let user = if bits(eh) == bits(o) {
        release(bits(eh));
        let inherited = parent
            .and_then(|p| lock(users()).get(&bits(p)).copied())
            .map(super::from_bits)
            .unwrap_or_else(|| world_user().unwrap_or_else(fatal));
        hold(comm, inherited)
    } else {
        bits(eh)
    };
    set(comm, o);
    lock(users()).insert(bits(comm), user);
}

fn world_user() -> Option<MPI_Errhandler> {
    lock(users())
        .get(&bits(super::comm_world()))
        .map(|&b| super::from_bits(b))
}

/// `comm`'s channel goes: the user's handler is released (and set back
/// on `comm` when `restore`: `MPI_COMM_WORLD` at `MPI_Finalize`).
pub fn forget(comm: MPI_Comm, restore: bool) {
    let Some(user) = lock(users()).remove(&bits(comm)) else {
        return;
    };
    if restore {
        let _s = Swap::take();
        set(comm, super::from_bits(user));
    }
    release(user);
}

/// The user's handler of a communicator that has the checker's.
fn user_of(comm: MPI_Comm) -> MPI_Errhandler {
    let u = lock(users());
    u.get(&bits(comm))
        .or_else(|| u.get(&bits(super::comm_world())))
        .map(|&b| super::from_bits(b))
        .unwrap_or_else(fatal)
}

/// MPI calls this on an error on a communicator with the checker's
/// handler.
extern "C" fn on_error(comm: *mut MPI_Comm, code: *mut c_int) {
    if comm.is_null() || code.is_null() {
        return;
    }
    // SAFETY: MPI passes the communicator and the code.
    let (comm, code) = unsafe { (*comm, *code) };
    if DEFERRED.with(|d| d.get().0) {
        DEFERRED.with(|d| d.set((true, Some((bits(comm), code)))));
        return;
    }
    let _ = dispatch(comm, code);
}

/// Hands `code` to the user's handler of `comm` as MPI would have: aborts
/// under a fatal one. Whether that handler is `MPI_ERRORS_RETURN` (the
/// call then returns `code`).
pub fn dispatch(comm: MPI_Comm, code: c_int) -> bool {
    let user = user_of(comm);
    if bits(user) == bits(fatal()) {
        super::abort_fatal(code);
    }
    let _s = Swap::take();
    set(comm, user);
    // SAFETY: calls the user's handler of the user's communicator.
    unsafe { PMPI_Comm_call_errhandler(comm, code) };
    if let Some(o) = made() {
        set(comm, o);
    }
    // SAFETY: reads mpi-sys's copy of MPI_ERRORS_RETURN.
    bits(user) == bits(unsafe { RSMPI_ERRORS_RETURN })
}

/// Whether the handler of `object` (else of `comm`) is
/// `MPI_ERRORS_ARE_FATAL`, or the checker's standing for a user's that is.
pub fn fatal_on(comm: MPI_Comm, object: Option<super::Object>) -> bool {
    let now = match object {
        None => {
            let now = current(comm);
            if now != 0 && made().is_some_and(|o| bits(o) == now) {
                bits(user_of(comm))
            } else {
                now
            }
        }
        Some(super::Object::Win(w)) => {
            let mut eh = fatal();
            // SAFETY: a query of the user's window (a new reference).
            if unsafe { PMPI_Win_get_errhandler(w, &mut eh) } != 0 {
                return false;
            }
            release(bits(eh));
            bits(eh)
        }
        Some(super::Object::File(_)) => return false,
    };
    now == bits(fatal())
}

/// A point-to-point call the checker runs for the user: an error MPI
/// raises meanwhile is kept (`finish`) rather than handed on.
struct Deferred {
    prev: bool,
    done: bool,
}

/// What a deferred call ended with: what it returned, its error
/// (`error`) and the (communicator, code) MPI raised, if any.
pub struct Outcome {
    pub rc: c_int,
    pub err: c_int,
    pub caught: Option<(MPI_Comm, c_int)>,
}

/// Runs `f`, a point-to-point call made for the user, deferred: an error
/// MPI raises meanwhile comes back here rather than to the user's handler.
pub fn deferred(f: impl FnOnce() -> c_int) -> Outcome {
    let d = defer();
    let rc = f();
    let caught = d.finish();
    Outcome {
        rc,
        err: error(rc, &caught),
        caught,
    }
}

/// Starts a deferred call (a thread-local store: the hot path).
fn defer() -> Deferred {
    let prev = DEFERRED.with(|d| {
        let (prev, caught) = d.get();
        d.set((true, if prev { caught } else { None }));
        prev
    });
    Deferred { prev, done: false }
}

impl Deferred {
    /// Ends the deferred call: the (communicator, code) MPI raised, if any.
    fn finish(mut self) -> Option<(MPI_Comm, c_int)> {
        self.done = true;
        let prev = self.prev;
        DEFERRED
            .with(|d| {
                let (_, caught) = d.get();
                // A nested call leaves what it caught to the outer one.
                d.set((prev, if prev { caught } else { None }));
                if prev {
                    None
                } else {
                    caught
                }
            })
            .map(|(b, code)| (super::from_bits(b), code))
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        if !self.done {
            let prev = self.prev;
            DEFERRED.with(|d| d.set((prev, d.get().1.filter(|_| prev))));
        }
    }
}

/// The error of a deferred call that returned `rc`: `rc`, or the code
/// MPI raised when it returned MPI_SUCCESS after the checker's handler
/// (MPICH 5.0 does so after a user-defined handler).
fn error(rc: c_int, caught: &Option<(MPI_Comm, c_int)>) -> c_int {
    match (rc, caught) {
        (0, Some((_, code))) => *code,
        _ => rc,
    }
}

/// Hands on what a deferred call that returned `rc` caught: what the call
/// returns, as without the checker. The MPI's return after a user-defined
/// handler is `rc` (the checker's is one too), after `MPI_ERRORS_RETURN`
/// the error.
pub fn hand_on(caught: Option<(MPI_Comm, c_int)>, rc: c_int) -> c_int {
    match caught {
        Some((comm, code)) => {
            let returns = dispatch(comm, code);
            if rc == 0 && returns {
                code
            } else {
                rc
            }
        }
        None => rc,
    }
}

fn class(code: c_int) -> c_int {
    let mut c = code;
    // SAFETY: a local query.
    unsafe { PMPI_Error_class(code, &mut c) };
    c
}

/// Whether `code` says the message was larger than the receive.
pub fn truncated(code: c_int) -> bool {
    // SAFETY: reads a constant.
    code != 0 && class(code) == unsafe { mxc_err_truncate() }
}

/// Whether `code` is of a class MPI raises for this process's own
/// arguments (a datatype, count, buffer, tag, rank, root, op, communicator
/// or other argument it refuses) before it communicates: no difference
/// between the ranks' calls causes it.
pub fn argument_error(code: c_int) -> bool {
    // SAFETY: compares with constants.
    code != 0 && unsafe { mxc_err_is_argument(class(code)) } != 0
}

/// `MPI_Comm_set_errhandler` calls so far: what a communicator's handler
/// was found to be stays true while this has not moved.
static SETS: AtomicU64 = AtomicU64::new(0);

/// A handler was set on a communicator (`MPI_Comm_set_errhandler`).
pub fn note_set() {
    SETS.fetch_add(1, Ordering::AcqRel);
}

/// Whether an error on a communicator comes back to the program (its
/// handler is not `MPI_ERRORS_ARE_FATAL`), as last found: asked of MPI
/// again only after a handler was set somewhere (`note_set`).
#[derive(Default, Clone, Copy)]
pub struct Returns(Option<(u64, bool)>);

impl Returns {
    /// Whether errors on `comm` (this one's communicator) come back.
    pub fn now(&mut self, comm: MPI_Comm) -> bool {
        let sets = SETS.load(Ordering::Acquire);
        match self.0 {
            Some((at, returns)) if at == sets => returns,
            _ => {
                let returns = !fatal_on(comm, None);
                self.0 = Some((sets, returns));
                returns
            }
        }
    }
}

/// Whether `code` is MPI_ERR_IN_STATUS (each status says).
pub fn in_status(code: c_int) -> bool {
    // SAFETY: reads a constant.
    code != 0 && class(code) == unsafe { mxc_err_in_status() }
}

/// `MPI_Comm_set_errhandler` on a communicator with the checker's
/// handler: the user's kept is replaced, the checker's stays.
pub fn user_set(comm: MPI_Comm, eh: MPI_Errhandler) -> Option<c_int> {
    let o = made()?;
    let old = *lock(users()).get(&bits(comm))?;
    let _s = Swap::take();
    let mut r = eh;
    // SAFETY: the user's arguments (an invalid handler fails here, as
    // without the checker); then a new reference to it.
    let rc = unsafe { PMPI_Comm_set_errhandler(comm, eh) };
    if rc != 0 {
        set(comm, o);
        return Some(rc);
    }
    // SAFETY: as above.
    unsafe { PMPI_Comm_get_errhandler(comm, &mut r) };
    set(comm, o);
    lock(users()).insert(bits(comm), bits(r));
    release(old);
    Some(0)
}

/// `MPI_Comm_get_errhandler` of a communicator with the checker's
/// handler: a new reference to the user's (None: not such a one).
pub fn user_get(comm: MPI_Comm) -> Option<MPI_Errhandler> {
    let o = made()?;
    let known = lock(users()).contains_key(&bits(comm));
    if !known && current(comm) != bits(o) {
        return None;
    }
    let user = user_of(comm);
    let _s = Swap::take();
    let r = hold(comm, user);
    set(comm, o);
    Some(super::from_bits(r))
}
