//! The channel of a communicator: the private duplicate the companions
//! travel on, with its queue of posted receives; found by its
//! communicator's attribute.

use crate::mpi;
use crate::report::p2p_enabled as enabled;
use crate::sys::*;
use crate::threads::Shared;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// One posted receive, in posting order.
pub(super) struct Rec {
    pub(super) id: u64,
    pub(super) call: &'static str,
    pub(super) source: c_int,
    pub(super) tag: c_int,
    pub(super) count: i64,
    pub(super) datatype: MPI_Datatype,
    /// `crate::sig::TYPES_FREED` at posting: a derived receive type freed since
    /// is not read again (only its signature taken at posting is used).
    pub(super) freed: u64,
    pub(super) sig: crate::record::Sig,
    /// The actual (source, tag) once complete (or matched, for a matched
    /// probe's message).
    pub(super) got: Option<(c_int, c_int)>,
    /// False for a matched probe's message until its receive (count,
    /// datatype) is known: it holds its place in its (source, tag) order.
    pub(super) ready: bool,
    /// Freed by `MPI_Request_free` while active: its message's companion
    /// is taken unchecked once a later receive shows it was matched.
    pub(super) detached: bool,
    /// Its (source, tag) come from its arguments, not from the status
    /// (`MPI_Isendrecv`: MPICH 4.0 leaves that status unset).
    pub(super) own_pattern: bool,
    /// Its derived datatype, freed by the program while it waited, is
    /// kept alive until it is checked (`super::kept`).
    pub(super) kept: bool,
    /// The program's call that completed it and that call's return
    /// address (`crate::site::entered`), kept in the batched mode for a
    /// report made later; ("", 0) otherwise.
    pub(super) site: (&'static str, usize),
}

impl Rec {
    /// Whether its datatype handle may be read: not freed since posting
    /// (or kept), or predefined (a table look-up: the handle of a freed
    /// type must not be given to MPI).
    pub(super) fn readable(&self) -> bool {
        self.kept
            || crate::sig::TYPES_FREED.load(std::sync::atomic::Ordering::Acquire) == self.freed
            || mpix_marshal::predefined_code(self.datatype).is_some()
    }
}

/// The checker's point-to-point state of one user communicator.
pub struct Channel {
    pub(super) comm: MPI_Comm,
    pub(super) dup: MPI_Comm,
    pub(super) rank: usize,
    /// The local group's size.
    pub(super) size: usize,
    /// An intercommunicator: a message's source and destination are ranks
    /// of the remote group (its channel, a duplicate, is one too).
    pub(super) inter: bool,
    pub(super) posted: u64,
    pub(super) queue: VecDeque<Rec>,
    /// At least the number of queued receives whose (source, tag) is
    /// known (`got` set), never fewer: raised wherever `got` is set,
    /// lowered as `drain` checks them and made exact when a `drain` pass
    /// reaches the queue's end. `drain` stops once it has passed that
    /// many (nothing past the last one is checkable), so the usual
    /// completion, first in the queue, costs no scan of the rest.
    pub(super) completed: usize,
    /// The id of the latest-posted receive that completed so far (in the
    /// batched mode, a completion out of posting order may let earlier
    /// completed receives be checked: `matching::may_check`).
    pub(super) latest_done: u64,
    /// A receive was freed while active since `settle_detached` last
    /// found none (a hint: false means no queued receive is detached).
    pub(super) maybe_detached: bool,
    /// A receive with a wildcard was freed while active: which (source,
    /// tag) it took cannot be known, so the channel's receives are no
    /// longer checked.
    pub(super) lost: bool,
    /// Whether an error on the communicator comes back to the program:
    /// in the batched mode its companions then go at once, and a receive
    /// waits for its own (`matching::awaited`).
    pub(super) handler: crate::mpi::errhandler::Returns,
    /// The world rank of each peer (the remote group's, on an
    /// intercommunicator; -1 outside MPI_COMM_WORLD), for the lost-message
    /// counts (`lost`).
    pub(super) world: Vec<i32>,
    /// The batched transport's outboxes and inboxes (None: each companion
    /// travels alone, the immediate mode).
    pub(super) batches: Option<super::batches::Batches>,
}

impl Channel {
    /// In the batched mode, whether a finding on this channel's
    /// communicator is returned to the program (the default mode, and an
    /// error handler that returns): its receives are then checked in
    /// their own calls, as in the immediate mode.
    pub(super) fn errors_come_back(&mut self) -> bool {
        self.batches.is_some()
            && crate::report::config().mode == crate::report::Mode::Fatal
            && self.handler.now(self.comm)
    }
}

pub(super) static KEYVAL: AtomicI32 = AtomicI32::new(i32::MIN);
thread_local! {
    /// Checks made on a failed call's path: their reports are printed,
    /// not raised (the MPI's error is handed on after them).
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
/// Runs `f` with the reports printed, not raised.
pub(super) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let prev = QUIET.with(|q| q.replace(true));
    let out = f();
    QUIET.with(|q| q.set(prev));
    out
}

/// Whether this thread is inside `quietly`.
pub(super) fn is_quiet() -> bool {
    QUIET.with(|q| q.get())
}
/// The channels alive (their addresses), for `mpix_check_p2p_pending`.
pub(super) fn channels() -> &'static Mutex<Vec<usize>> {
    static C: OnceLock<Mutex<Vec<usize>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
/// `comm`'s channel, if it has one.
pub(super) fn channel(comm: MPI_Comm) -> Option<&'static mut Channel> {
    if !enabled() {
        return None;
    }
    let kv = KEYVAL.load(Ordering::Acquire);
    if kv == i32::MIN || mpi::bits(comm) == mpi::bits(mpi::comm_null()) {
        return None;
    }
    if let Some(ch) = found(comm) {
        return Some(ch);
    }
    let mut value: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: reads our attribute.
    let rc = unsafe {
        PMPI_Comm_get_attr(
            comm,
            kv,
            &mut value as *mut *mut c_void as *mut c_void,
            &mut flag,
        )
    };
    if rc != 0 || flag == 0 || value.is_null() {
        return None;
    }
    FOUND.with(|f| {
        *f = (
            mpi::bits(comm),
            FREES.load(Ordering::Acquire),
            value as usize,
        )
    });
    // SAFETY: a leaked Box<Channel>, alive until the delete callback; one
    // thread uses a communicator's channel at a time.
    Some(unsafe { &mut *(value as *mut Channel) })
}

/// The latest channel `channel` found: (communicator, `FREES` then, its
/// address). Most calls name the communicator the one before named, and
/// the attribute look-up is the dearer part of a small message's checks.
static FOUND: Shared<(u64, u64, usize)> = Shared::new((0, 0, 0));

/// How many channels were freed: a free makes `FOUND` stale (MPI may give
/// the freed communicator's handle to a new one).
pub(super) static FREES: AtomicU64 = AtomicU64::new(0);

/// The channel `FOUND` holds for `comm`, if still valid.
fn found(comm: MPI_Comm) -> Option<&'static mut Channel> {
    let (c, frees, at) = FOUND.with(|f| *f);
    if at == 0 || c != mpi::bits(comm) || frees != FREES.load(Ordering::Acquire) {
        return None;
    }
    // SAFETY: as in `channel`: no channel was freed since it was found.
    Some(unsafe { &mut *(at as *mut Channel) })
}

/// Every channel sends the batched companions it keeps (at
/// `MPI_Finalize`, before the counts are compared).
pub fn flush_all() {
    for &c in lock(channels()).iter() {
        // SAFETY: a registered channel is alive until its delete callback
        // unregisters it; MPI_Finalize runs on one thread.
        let ch = unsafe { &mut *(c as *mut Channel) };
        let dup = ch.dup;
        if let Some(b) = ch.batches.as_mut() {
            b.flush_all(dup);
        }
    }
}

/// The private duplicate of `comm`'s channel, if it has one.
pub fn channel_dup(comm: MPI_Comm) -> Option<MPI_Comm> {
    channel(comm).map(|ch| ch.dup)
}
/// The world rank of `source` in `ch` (-1 outside MPI_COMM_WORLD).
pub(super) fn world_of(ch: &Channel, source: c_int) -> i32 {
    ch.world.get(source as usize).copied().unwrap_or(-1)
}
