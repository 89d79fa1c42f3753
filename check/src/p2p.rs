//! Point-to-point type-signature checks (Gropp 2000; issue 16), on by
//! default (issue 29, item 5); `MPIX_CHECK_P2P=0` turns them off.
//!
//! # Design
//!
//! *What travels.* With each user message the sender sends a 48-byte
//! **companion** ([`Companion`]): the hash and element count of its
//! signature of (count, datatype), its count, whether the type is all
//! `MPI_PACKED`, and the type exchange's 16-byte reference to its datatype
//! (`mpix_marshal::type_reference`), or for a predefined type its portable
//! code (`mpix_marshal::predefined_code`: it needs no exchange, which is
//! most of a checked small message's cost). The companion goes to the same
//! destination with the same tag, on a private duplicate of the user's
//! communicator (the **channel**, made at a collective point: `MPI_Init`
//! for `MPI_COMM_WORLD`, the wrapped constructors for new communicators;
//! never lazily inside a point-to-point call). It is sent with
//! `MPI_Isend` *before* the user's send, so the sender never blocks on it
//! and a receiver that waits for a companion never waits for the sender's
//! program to progress. Its request and buffer are kept and reaped later.
//!
//! *Which companion belongs to which message.* MPI's non-overtaking rule
//! orders the messages of one sender on one (communicator, tag) in both
//! channels alike; on the receiving side, among the receives (posted by one
//! thread) that get messages from one (source, tag), the earlier-posted one
//! gets the earlier message (a later receive cannot take a message while an
//! earlier pending receive matches it). So companions are consumed per
//! (source, tag) in the *posting order* of the receives, not in their
//! completion order: every receive is queued when posted; when it
//! completes, the status gives the actual source and tag (wildcards
//! resolved by MPI, whatever they were) and the receive is checked once no
//! earlier queued receive could still take a message of that (source,
//! tag) — an earlier pending receive whose pattern matches defers it
//! until that one completes. The user's receive itself is never changed:
//! same arguments, same matching, and the status the user sees (the
//! checker passes its own status only where the user gave
//! `MPI_STATUS_IGNORE`).
//!
//! *What is checked.* A receive may take fewer elements than it allows,
//! so the sender's hash is compared with the hash of the first n basic
//! elements of the receive's (count, datatype), n the sender's element
//! count (`mpix_marshal::signature_prefix_summary`; the whole receive's
//! kept hash when n fills it). A message with more elements than the
//! receive allows, that MPI nevertheless delivered (e.g. 4 `MPI_BYTE`s into
//! one `MPI_INT`), is reported too. `MPI_BYTE` is a basic type like any
//! other (it matches only `MPI_BYTE`); a side that is `MPI_PACKED` is not
//! checked, as in the collective checker.
//!
//! *Reports.* At the receiving rank, as the collective checker's: the
//! call, communicator, source, tag, both (count, datatype) and the first
//! differing element with both sides' basic types and tree paths. The
//! receiver resolves every reference exactly once (and releases it): the
//! sender's description of a derived type travels once per peer and type
//! through the exchange's cache, so a correct program pays the hash and a
//! cache look-up per message (a predefined type: the hash alone). A
//! report is raised on the communicator's error handler with the
//! checker's own point-to-point error class, whose string
//! is "mpix-check: mismatched point-to-point type signature (…)" (the
//! collective checker's class is another).
//!
//! *Intercommunicators* are checked like intracommunicators: the channel
//! is a duplicate of the intercommunicator, so a companion goes to the
//! same remote-group rank as its message, and a report names the ranks
//! by group ("remote group rank 0").
//!
//! *Not sent.* `MPI_PROC_NULL` sends and receives involve no companion.
//! Communicators made by constructors the checker does not wrap
//! (`MPI_Comm_idup`, whose communicator cannot be used inside the call,
//! the dynamic-process ones, MPI 4's `…_from_group(s)`) have no channel:
//! their messages are not checked, on both sides alike.
//!
//! # Failed, cancelled and freed operations
//!
//! *A send call that returns an error* (the user's communicator returns
//! errors) posted no message: its companion is cancelled (`unsent`).
//! `MPI_Sendrecv` is the exception: its error may be the receive's (a
//! truncation) with the message sent, and a message without its companion
//! would leave its receiver waiting, so the companion stays.
//!
//! *A receive that fails with a truncation* (the message is larger than
//! the receive: `MPI_ERR_TRUNCATE`, or `MPI_ERR_IN_STATUS` whose status
//! says so) was matched: its status gives the source and tag, so it is
//! checked as a completed receive (its companion taken in order), the
//! report printed and not raised; then MPI's error goes to the user's
//! handler. That needs the error back from MPI before the user's handler
//! (by default fatal) sees it: the checker's own error handler, installed
//! on each communicator with a channel, keeps the errors raised inside the
//! checked calls (`crate::mpi::errhandler`). Another failed receive
//! posted nothing (`not_posted`).
//!
//! *A cancelled send.* `MPI_Cancel` of a nonblocking send is watched; when
//! its completion (any Wait/Test form) shows MPI cancelled the message,
//! the companion is cancelled too. The companion is cancelled only after
//! the message is known to be: cancelling it first could leave a message
//! without its companion, which would make its receiver wait. When MPI
//! cannot cancel the companion any more (it was delivered; MPICH and Open
//! MPI do not cancel sends that have left, which is also why the user's
//! own cancel usually fails), it stays queued at the receiver and only a
//! *later* message of that (communicator, tag) from this rank could take
//! it in its place. That needs a transport that cancels delivered user
//! messages but not delivered companions: not the case of MPICH or Open
//! MPI (MPI 4.1 deprecates cancelling sends). A receiver cannot skip such
//! a companion by itself: it cannot tell which message a companion was
//! for, and the sender learns the outcome of its cancel only after the
//! receiver may have taken the next message. A companion can be cancelled
//! only while the sender still holds its request: until it is reaped
//! (whenever 64 are held, the completed ones go), unless its send's cancel
//! was asked before that (then it is kept until the outcome is known).
//!
//! *`MPI_Request_free` of an active receive.* MPI still completes it, but
//! the checker never sees its status. Without wildcards it keeps its
//! place: once a later-posted receive completes with a message of its
//! (source, tag), it was matched before that one (MPI gives a message to
//! the earliest pending receive that matches), so its companion is taken
//! and dropped in order, unchecked. With a wildcard, which (source, tag)
//! it took cannot be known: the channel stops checking from then on (no
//! false report, no wait for a companion) and drops the companions that
//! arrive. `MPI_Isendrecv`/`MPI_Isendrecv_replace` with a wildcard do the
//! same, since MPICH 4.0 leaves their status unset (without one, their own
//! (source, tag) stand for the status's).
//!
//! # Lost messages
//!
//! Each rank counts the companions it sends and consumes per world rank;
//! at `MPI_Finalize` the counts are exchanged and the companions no
//! receive consumed are reported as lost messages, with the nonblocking
//! sends never completed (`lost`).
//!
//! # Wrapped
//!
//! `MPI_Send`, `MPI_Ssend`, `MPI_Bsend`, `MPI_Rsend`, their `MPI_I…` and
//! `…_init` forms with `MPI_Start`/`MPI_Startall`, `MPI_Recv`,
//! `MPI_Irecv`, `MPI_Recv_init`, `MPI_Sendrecv`, `MPI_Sendrecv_replace`,
//! `MPI_Isendrecv`, `MPI_Isendrecv_replace`, `MPI_Mprobe`/`MPI_Improbe`
//! with `MPI_Mrecv`/`MPI_Imrecv`, the large-count `_c` form of each where
//! mpi.h declares it (`cfg(mpi_large_count)`), `MPI_Cancel`,
//! `MPI_Request_free`, and the completion of receives by every Wait/Test
//! form, `MPI_Comm_set_errhandler`/`MPI_Comm_get_errhandler` (the
//! user's handler, kept by `crate::mpi::errhandler`). (`MPI_Probe`/
//! `MPI_Iprobe` need no wrapper: they take no message.)
//! Not wrapped, and needing no companion: the partitioned
//! `MPI_Psend_init`/`MPI_Precv_init` (MPI 4). A partitioned send matches
//! only a partitioned receive (MPI 4.0, 4.2), so no receive the checker
//! pairs can take a partitioned message, and no companion is missing;
//! their requests' Wait/Test forms are polled as any other's (tested on a
//! checked communicator between regular messages of the same tag).
//!
//! # Threads
//!
//! At `MPI_THREAD_MULTIPLE`, threads may send on one (communicator,
//! destination, tag) and receive on one communicator at once: each
//! wrapper posts a companion with its message, and queues a receive with
//! its posting, under one lock (`crate::threads`), released before any
//! wait, so the orders the pairing relies on are the orders MPI sees.
//! At the other levels one thread calls MPI at a time: no lock.

use crate::mpi;
use crate::record::{PACKED, UNKNOWN};
use crate::report::{self, Mode, Report};
use crate::sys::*;
use mpix_marshal::HashKind;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

pub mod lost;

extern "C" {
    fn mxc_p2p_keyval_create(keyval: *mut c_int, del: extern "C" fn(*mut c_void)) -> c_int;
}

/// The companion's size in bytes.
const LEN: usize = 48;

/// What the sender says about one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Companion {
    pub hash: u64,
    /// The number of basic elements sent.
    pub elements: u64,
    /// The send's count.
    pub count: i64,
    /// `PACKED`, `UNKNOWN` (record.rs flags), `NO_REFERENCE`, `PREDEFINED`.
    pub flags: u64,
    /// The type exchange's reference to a derived type, or a predefined
    /// type's portable code (little-endian, in the first two bytes).
    pub reference: [u8; 16],
}

/// The sender could not make a reference: its type is not known.
const NO_REFERENCE: u64 = 8;
/// The type is predefined: `reference` holds its portable code (no
/// exchange: the code names it at the receiver).
const PREDEFINED: u64 = 16;

impl Companion {
    pub fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[0..8].copy_from_slice(&self.hash.to_le_bytes());
        b[8..16].copy_from_slice(&self.elements.to_le_bytes());
        b[16..24].copy_from_slice(&self.count.to_le_bytes());
        b[24..32].copy_from_slice(&self.flags.to_le_bytes());
        b[32..48].copy_from_slice(&self.reference);
        b
    }

    pub fn decode(b: &[u8; LEN]) -> Companion {
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let mut reference = [0u8; 16];
        reference.copy_from_slice(&b[32..48]);
        Companion {
            hash: word(0),
            elements: word(8),
            count: word(16) as i64,
            flags: word(24),
            reference,
        }
    }
}

pub use crate::report::p2p_enabled as enabled;

// ---- the channel of a communicator ----

/// One posted receive, in posting order.
struct Rec {
    id: u64,
    call: &'static str,
    source: c_int,
    tag: c_int,
    count: i64,
    datatype: MPI_Datatype,
    /// `crate::sig::TYPES_FREED` at posting: a derived receive type freed since
    /// is not read again (only its signature taken at posting is used).
    freed: u64,
    sig: crate::record::Sig,
    /// The actual (source, tag) once complete (or matched, for a matched
    /// probe's message).
    got: Option<(c_int, c_int)>,
    /// False for a matched probe's message until its receive (count,
    /// datatype) is known: it holds its place in its (source, tag) order.
    ready: bool,
    /// Freed by `MPI_Request_free` while active: its message's companion
    /// is taken unchecked once a later receive shows it was matched.
    detached: bool,
    /// Its (source, tag) come from its arguments, not from the status
    /// (`MPI_Isendrecv`: MPICH 4.0 leaves that status unset).
    own_pattern: bool,
}

/// The checker's point-to-point state of one user communicator.
pub struct Channel {
    comm: MPI_Comm,
    dup: MPI_Comm,
    rank: usize,
    /// The local group's size.
    size: usize,
    /// An intercommunicator: a message's source and destination are ranks
    /// of the remote group (its channel, a duplicate, is one too).
    inter: bool,
    posted: u64,
    queue: VecDeque<Rec>,
    /// A receive with a wildcard was freed while active: which (source,
    /// tag) it took cannot be known, so the channel's receives are no
    /// longer checked.
    lost: bool,
    /// The world rank of each peer (the remote group's, on an
    /// intercommunicator; -1 outside MPI_COMM_WORLD), for the lost-message
    /// counts (`lost`).
    world: Vec<i32>,
}

static KEYVAL: AtomicI32 = AtomicI32::new(i32::MIN);

extern "C" fn delete_channel(value: *mut c_void) {
    if value.is_null() {
        return;
    }
    lock(channels()).retain(|&c| c != value as usize);
    // SAFETY: every value of the keyval is a Box<Channel> leaked by
    // `setup`; MPI calls this once per value.
    let mut ch = *unsafe { Box::from_raw(value as *mut Channel) };
    mpi::errhandler::forget(ch.comm, false);
    if ch.lost {
        drop_arrived(&ch);
    } else {
        lost::channel_freed(&mut ch);
    }
    // SAFETY: the checker's own duplicate (its exchange settles here,
    // inside the user's collective free).
    crate::internal::within(|| unsafe { PMPI_Comm_free(&mut ch.dup) });
}

fn keyval() -> Option<c_int> {
    let k = KEYVAL.load(Ordering::Acquire);
    if k != i32::MIN {
        return Some(k);
    }
    let mut k: c_int = 0;
    // SAFETY: creates a keyval (a local call).
    if unsafe { mxc_p2p_keyval_create(&mut k, delete_channel) } != 0 {
        return None;
    }
    KEYVAL.store(k, Ordering::Release);
    Some(k)
}

/// Makes `comm`'s channel: called where every member of `comm` is in a
/// collective call (it duplicates `comm` and sets the type exchange up on
/// the duplicate; on an intercommunicator, both groups are in the call).
pub fn setup(comm: MPI_Comm, parent: Option<MPI_Comm>) {
    if !enabled()
        || SETTING_UP.with(|s| s.get())
        || mpi::bits(comm) == mpi::bits(mpi::comm_null())
        || channel(comm).is_some()
    {
        return;
    }
    // The exchange's own duplicates come back through the wrapped
    // MPI_Comm_dup: they get no channel.
    SETTING_UP.with(|s| s.set(true));
    if make_channel(comm) {
        // A failed receive is reported before the user's handler sees
        // its error (mpi::errhandler).
        mpi::errhandler::install(comm, parent);
    }
    SETTING_UP.with(|s| s.set(false));
}

thread_local! {
    static SETTING_UP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Checks made on a failed call's path: their reports are printed,
    /// not raised (the MPI's error is handed on after them).
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the reports printed, not raised.
fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let prev = QUIET.with(|q| q.replace(true));
    let out = f();
    QUIET.with(|q| q.set(prev));
    out
}

fn make_channel(comm: MPI_Comm) -> bool {
    let Some(kv) = keyval() else { return false };
    let (mut inter, mut rank, mut size) = (0, 0, 0);
    let mut dup = mpi::comm_null();
    // SAFETY: queries of a valid communicator and its duplicate.
    let ok = unsafe {
        PMPI_Comm_test_inter(comm, &mut inter) == 0
            && PMPI_Comm_rank(comm, &mut rank) == 0
            && PMPI_Comm_size(comm, &mut size) == 0
            && PMPI_Comm_dup(comm, &mut dup) == 0
    };
    if !ok {
        return false;
    }
    // SAFETY: the checker's duplicate; its errors come back as codes.
    unsafe { PMPI_Comm_set_errhandler(dup, RSMPI_ERRORS_RETURN) };
    // The exchange's set-up is collective over the duplicate: here, now.
    let _ = crate::internal::within(|| mpix_marshal::setup_type_exchange(dup));
    let ch = Box::into_raw(Box::new(Channel {
        comm,
        dup,
        rank: rank as usize,
        size: size as usize,
        inter: inter != 0,
        posted: 0,
        queue: VecDeque::new(),
        lost: false,
        world: lost::world_ranks(comm, inter != 0),
    }));
    // SAFETY: attaches the channel; MPI calls delete_channel at free.
    if unsafe { PMPI_Comm_set_attr(comm, kv, ch as *mut c_void) } != 0 {
        delete_channel(ch as *mut c_void);
        return false;
    }
    lock(channels()).push(ch as usize);
    true
}

/// The channels alive (their addresses), for `mpix_check_p2p_pending`.
fn channels() -> &'static Mutex<Vec<usize>> {
    static C: OnceLock<Mutex<Vec<usize>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The checker's point-to-point state that a long run must keep bounded
/// (issue 16; `check/tests/c/p2p_long.c` asserts it): `*in_flight`, the
/// companions this rank sent and still holds (their requests and
/// buffers, reaped whenever 64 are held), and `*queued`, the receives
/// posted on this rank's checked communicators and not checked yet (in
/// all their channels' queues). Returns 0, or 1 (both counts 0) when the
/// point-to-point checks are off. Look it up with `dlsym(RTLD_DEFAULT,
/// "mpix_check_p2p_pending")`, so that a program also runs without the
/// checker. Call it from the thread that uses the checked communicators
/// (it reads their channels without a lock, as the checks do); a null
/// pointer is skipped.
///
/// # Safety
/// Each pointer is null or points to an `int64_t` to write.
#[no_mangle]
pub unsafe extern "C" fn mpix_check_p2p_pending(in_flight: *mut i64, queued: *mut i64) -> c_int {
    let _s = crate::threads::enter();
    let on = enabled();
    let (f, q) = if on {
        let f = lock(self::in_flight()).len();
        let q: usize = lock(channels())
            .iter()
            // SAFETY: a registered channel is alive until delete_channel
            // unregisters it; see the thread note above.
            .map(|&c| unsafe { &*(c as *const Channel) }.queue.len())
            .sum();
        (f as i64, q as i64)
    } else {
        (0, 0)
    };
    // SAFETY: the caller's pointers, null or writable.
    unsafe {
        if !in_flight.is_null() {
            *in_flight = f;
        }
        if !queued.is_null() {
            *queued = q;
        }
    }
    c_int::from(!on)
}

/// `comm`'s channel, if it has one.
fn channel(comm: MPI_Comm) -> Option<&'static mut Channel> {
    if !enabled() {
        return None;
    }
    let kv = KEYVAL.load(Ordering::Acquire);
    if kv == i32::MIN || mpi::bits(comm) == mpi::bits(mpi::comm_null()) {
        return None;
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
    // SAFETY: a leaked Box<Channel>, alive until the delete callback; one
    // thread uses a communicator's channel at a time.
    Some(unsafe { &mut *(value as *mut Channel) })
}

/// The private duplicate of `comm`'s channel, if it has one.
pub fn channel_dup(comm: MPI_Comm) -> Option<MPI_Comm> {
    channel(comm).map(|ch| ch.dup)
}

/// Frees `comm`'s channel now (at MPI_Finalize, for MPI_COMM_WORLD),
/// after the companions still in flight have been taken.
pub fn finalize(comm: MPI_Comm) {
    let _s = crate::threads::enter();
    if !enabled() {
        return;
    }
    reap(true);
    mpi::errhandler::forget(comm, true);
    let kv = KEYVAL.load(Ordering::Acquire);
    if kv != i32::MIN && channel(comm).is_some() {
        // SAFETY: deletes our attribute, which runs delete_channel.
        unsafe { PMPI_Comm_delete_attr(comm, kv) };
    }
    if kv != i32::MIN {
        let mut k = kv;
        // SAFETY: our keyval, no longer needed.
        unsafe { PMPI_Comm_free_keyval(&mut k) };
        KEYVAL.store(i32::MIN, Ordering::Release);
    }
}

// ---- the sending side ----

/// A companion in flight: its request and its buffer (boxed: MPI reads
/// it until the request completes).
struct InFlight {
    req: MPI_Request,
    /// The companion's own key (its request's bits at posting: MPI sets
    /// the handle to MPI_REQUEST_NULL when it completes).
    key: u64,
    /// The user's nonblocking send request it goes with (0: none).
    user: u64,
    /// The destination's world rank (-1: not in MPI_COMM_WORLD).
    peer: i32,
    _buf: Box<[u8; LEN]>,
}

// SAFETY: the request is a plain handle and the buffer is owned.
unsafe impl Send for InFlight {}

fn in_flight() -> &'static Mutex<Vec<InFlight>> {
    static F: OnceLock<Mutex<Vec<InFlight>>> = OnceLock::new();
    F.get_or_init(Default::default)
}

pub(crate) fn proc_null() -> c_int {
    // SAFETY: reads mpi-sys's copy of MPI_PROC_NULL.
    unsafe { RSMPI_PROC_NULL }
}

/// Sends the companion of a send of (count, datatype) to `dest` with
/// `tag` on `comm`, before the user's send. Nothing for `MPI_PROC_NULL`
/// or a communicator without a channel. Its key, for `unsent` (the user's
/// call failed) or `attach_send` (the user's request).
pub fn sent(
    comm: MPI_Comm,
    dest: c_int,
    tag: c_int,
    count: impl Into<i64>,
    t: MPI_Datatype,
) -> Option<u64> {
    let _s = crate::threads::enter();
    if dest == proc_null() {
        return None;
    }
    let ch = channel(comm)?;
    let count = count.into();
    let sig = crate::sig::sig_of(count, t);
    let (reference, no_ref) = match mpix_marshal::predefined_code(t) {
        Some(p) => {
            let mut r = [0u8; 16];
            r[..2].copy_from_slice(&p.0.to_le_bytes());
            (r, PREDEFINED)
        }
        None => match crate::internal::within(|| mpix_marshal::type_reference(t, dest, ch.dup)) {
            Ok(r) => (r, 0),
            Err(_) => ([0u8; 16], NO_REFERENCE),
        },
    };
    let c = Companion {
        hash: sig.hash,
        elements: sig.count,
        count,
        flags: (sig.flags & (PACKED | UNKNOWN)) | no_ref,
        reference,
    };
    let buf = Box::new(c.encode());
    let mut req = mpi::request_null();
    // SAFETY: the buffer is boxed and kept with the request until it
    // completes (`reap`).
    let rc = unsafe {
        PMPI_Isend(
            buf.as_ptr() as *const c_void,
            LEN as c_int,
            mpi::byte(),
            dest,
            tag,
            ch.dup,
            &mut req,
        )
    };
    if rc != 0 {
        return None;
    }
    let key = mpi::bits(req);
    let peer = ch.world.get(dest as usize).copied().unwrap_or(-1);
    lost::count_sent(peer);
    let mut f = in_flight().lock().unwrap_or_else(|e| e.into_inner());
    f.push(InFlight {
        req,
        key,
        user: 0,
        peer,
        _buf: buf,
    });
    let n = f.len();
    drop(f);
    if n >= 64 {
        reap(false);
    }
    Some(key)
}

/// The user's send call returned an error: its message does not exist,
/// so its companion is cancelled (and its buffer freed).
///
/// If MPI cannot cancel it (a 48-byte message usually leaves at once),
/// it stays queued at the receiver, where only a later message of the
/// same (communicator, tag) from this rank could take it in its place:
/// a program that goes on sending on a communicator after one of its sends
/// failed there is outside what the checks promise (see the module doc).
pub fn unsent(key: Option<u64>) {
    let _s = crate::threads::enter();
    let Some(key) = key else { return };
    let entry = {
        let mut f = in_flight().lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = f.iter().position(|e| e.key == key) else {
            return;
        };
        f.swap_remove(i)
    };
    let peer = entry.peer;
    // The message does not exist: it is not counted as sent. A companion
    // MPI could not cancel any more arrives alone (an orphan: `lost`).
    lost::uncount_sent(peer, !cancel_companion(entry));
}

/// Cancels one companion and waits for the cancel to settle (local:
/// either MPI removes it or it has been delivered). Whether it was
/// cancelled.
fn cancel_companion(mut entry: InFlight) -> bool {
    // SAFETY: MPI_Status is plain data.
    let mut st: MPI_Status = unsafe { std::mem::zeroed() };
    let mut cancelled = 0;
    // SAFETY: the checker's own request; its buffer lives in `entry`
    // until the wait returns.
    unsafe {
        if PMPI_Cancel(&mut entry.req) != 0 || PMPI_Wait(&mut entry.req, &mut st) != 0 {
            return false;
        }
        if PMPI_Test_cancelled(&st, &mut cancelled) != 0 {
            return false;
        }
    }
    cancelled != 0
}

/// Keeps which user request a nonblocking send's companion goes with,
/// so that a cancel of that request can take the companion too.
pub fn attach_send(key: Option<u64>, request: MPI_Request) {
    let _s = crate::threads::enter();
    let Some(key) = key else { return };
    let mut f = in_flight().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = f.iter_mut().find(|e| e.key == key) {
        e.user = mpi::bits(request);
    }
}

/// User send requests the user asked MPI to cancel, with their
/// companions' keys: the outcome shows at their completion.
fn cancelling() -> &'static Mutex<Vec<(u64, u64)>> {
    static C: OnceLock<Mutex<Vec<(u64, u64)>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

static CANCELLING: AtomicUsize = AtomicUsize::new(0);

/// Before `MPI_Cancel` of `request`: a nonblocking send whose companion
/// is still in flight is watched until it completes.
pub fn cancel_requested(request: MPI_Request) {
    let _s = crate::threads::enter();
    if !enabled() {
        return;
    }
    let r = mpi::bits(request);
    let key = {
        let f = in_flight().lock().unwrap_or_else(|e| e.into_inner());
        match f.iter().find(|e| e.user == r && r != 0) {
            Some(e) => e.key,
            None => return,
        }
    };
    let mut c = cancelling().lock().unwrap_or_else(|e| e.into_inner());
    c.push((r, key));
    CANCELLING.store(c.len(), Ordering::Release);
}

/// A watched send request completed with `status`: when MPI cancelled
/// the user's message, its companion is cancelled too.
fn send_completed(request: u64, status: &MPI_Status) {
    let key = {
        let mut c = cancelling().lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = c.iter().position(|(r, _)| *r == request) else {
            return;
        };
        let (_, key) = c.swap_remove(i);
        CANCELLING.store(c.len(), Ordering::Release);
        key
    };
    let mut cancelled = 0;
    // SAFETY: a status MPI wrote.
    if unsafe { PMPI_Test_cancelled(status, &mut cancelled) } != 0 || cancelled == 0 {
        return;
    }
    // The message was not sent: its companion must not be either. When
    // MPI can no longer cancel it, see `unsent`.
    unsent(Some(key));
}

/// Frees the buffers of the companions that have left. `all`: at
/// finalize, waits for them (a bounded time: the receivers of a correct
/// program have taken them all), then cancels what is left.
fn reap(all: bool) {
    let mut f = in_flight().lock().unwrap_or_else(|e| e.into_inner());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let watched: Vec<u64> = {
            let c = cancelling().lock().unwrap_or_else(|e| e.into_inner());
            c.iter().map(|(_, k)| *k).collect()
        };
        f.retain_mut(|InFlight { req, key, .. }| {
            // A companion whose user send is being cancelled stays
            // cancellable until that cancel's outcome is known.
            if !all && watched.contains(key) {
                return true;
            }
            let mut flag = 0;
            // SAFETY: the checker's own request.
            let rc = unsafe { PMPI_Test(req, &mut flag, RSMPI_STATUS_IGNORE) };
            rc == 0 && flag == 0
        });
        if !all || f.is_empty() {
            return;
        }
        if std::time::Instant::now() > deadline {
            for InFlight { req, .. } in f.iter_mut() {
                // SAFETY: the checker's own requests, cancelled and waited.
                unsafe {
                    PMPI_Cancel(req);
                    PMPI_Wait(req, RSMPI_STATUS_IGNORE);
                }
            }
            f.clear();
            return;
        }
        std::thread::yield_now();
    }
}

// ---- the receiving side ----

/// A receive's key under its request, until it completes.
type Posted = Mutex<Vec<(u64, usize, u64)>>;

fn posted() -> &'static Posted {
    static P: OnceLock<Posted> = OnceLock::new();
    P.get_or_init(Default::default)
}

static POSTED: AtomicUsize = AtomicUsize::new(0);

/// Queues a receive on `comm` (before the user's call): its id, or None
/// when it is not checked.
pub fn receiving(
    call: &'static str,
    comm: MPI_Comm,
    source: c_int,
    tag: c_int,
    count: impl Into<i64>,
    t: MPI_Datatype,
) -> Option<(usize, u64)> {
    let _s = crate::threads::enter();
    if source == proc_null() {
        return None;
    }
    let ch = channel(comm)?;
    if ch.lost {
        drop_arrived(ch);
        return None;
    }
    let count = count.into();
    ch.posted += 1;
    ch.queue.push_back(Rec {
        id: ch.posted,
        call,
        source,
        tag,
        count,
        datatype: t,
        freed: crate::sig::TYPES_FREED.load(Ordering::Acquire),
        sig: crate::sig::sig_of(count, t),
        got: None,
        ready: true,
        detached: false,
        own_pattern: false,
    });
    Some((ch as *mut Channel as usize, ch.posted))
}

/// As `receiving`, for a call whose completion status MPI may leave
/// unset (`MPI_Isendrecv`, `MPI_Isendrecv_replace`): its own (source,
/// tag) stand for the status's. With a wildcard, which message it took
/// cannot be known: the channel stops checking (no false report, no
/// wait for a companion).
pub fn receiving_unreported(
    call: &'static str,
    comm: MPI_Comm,
    source: c_int,
    tag: c_int,
    count: impl Into<i64>,
    t: MPI_Datatype,
) -> Option<(usize, u64)> {
    let _s = crate::threads::enter();
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    if source == any_source || tag == any_tag {
        if let Some(ch) = channel(comm) {
            ch.lost = true;
            ch.queue.clear();
        }
        return None;
    }
    let key = receiving(call, comm, source, tag, count, t)?;
    // SAFETY: the channel outlives its receives.
    let ch = unsafe { &mut *(key.0 as *mut Channel) };
    if let Some(r) = ch.queue.iter_mut().find(|r| r.id == key.1) {
        r.own_pattern = true;
    }
    Some(key)
}

/// The user's receive call failed: it posted nothing.
pub fn not_posted(key: Option<(usize, u64)>) {
    let _s = crate::threads::enter();
    if let Some((ch, id)) = key {
        // SAFETY: the channel outlives its receives.
        let ch = unsafe { &mut *(ch as *mut Channel) };
        ch.queue.retain(|r| r.id != id);
    }
}

/// A matched probe (`MPI_Mprobe`, `MPI_Improbe`) took a message from
/// (source, tag) on `comm`: its place in that order is now, its receive's
/// (count, datatype) comes with `MPI_Mrecv`/`MPI_Imrecv`.
pub fn matched(comm: MPI_Comm, status: &MPI_Status, message: MPI_Message) {
    let _s = crate::threads::enter();
    if status.MPI_SOURCE == proc_null() {
        return;
    }
    let Some(ch) = channel(comm) else { return };
    ch.posted += 1;
    ch.queue.push_back(Rec {
        id: ch.posted,
        call: "MPI_Mrecv",
        source: status.MPI_SOURCE,
        tag: status.MPI_TAG,
        count: 0,
        datatype: mpi::byte(),
        freed: 0,
        sig: crate::record::Sig::NONE,
        got: Some((status.MPI_SOURCE, status.MPI_TAG)),
        ready: false,
        detached: false,
        own_pattern: false,
    });
    let mut m = messages().lock().unwrap_or_else(|e| e.into_inner());
    m.push((mpi::bits(message), ch as *mut Channel as usize, ch.posted));
}

type Messages = Mutex<Vec<(u64, usize, u64)>>;

fn messages() -> &'static Messages {
    static M: OnceLock<Messages> = OnceLock::new();
    M.get_or_init(Default::default)
}

/// The receive of a matched message (`call`: MPI_Mrecv or MPI_Imrecv)
/// with (count, datatype): its key, ready to be checked at completion.
pub fn receiving_matched(
    call: &'static str,
    message: MPI_Message,
    count: impl Into<i64>,
    t: MPI_Datatype,
) -> Option<(usize, u64)> {
    let _s = crate::threads::enter();
    let (ch, id) = {
        let mut m = messages().lock().unwrap_or_else(|e| e.into_inner());
        let i = m.iter().position(|(k, _, _)| *k == mpi::bits(message))?;
        let (_, ch, id) = m.swap_remove(i);
        (ch, id)
    };
    // SAFETY: the channel outlives its receives.
    let chan = unsafe { &mut *(ch as *mut Channel) };
    let r = chan.queue.iter_mut().find(|r| r.id == id)?;
    let count = count.into();
    r.call = call;
    r.count = count;
    r.datatype = t;
    r.freed = crate::sig::TYPES_FREED.load(Ordering::Acquire);
    r.sig = crate::sig::sig_of(count, t);
    Some((ch, id))
}

/// Keeps a nonblocking receive's key under its request.
pub fn attach(key: Option<(usize, u64)>, request: MPI_Request) {
    let _s = crate::threads::enter();
    if let Some((ch, id)) = key {
        let mut p = posted().lock().unwrap_or_else(|e| e.into_inner());
        p.push((mpi::bits(request), ch, id));
        POSTED.store(p.len(), Ordering::Release);
    }
}

/// A receive completed with `status`: it is checked now, or as soon as
/// no earlier receive can take a message of its (source, tag).
pub fn received(key: Option<(usize, u64)>, status: &MPI_Status) -> Result<(), c_int> {
    let _s = crate::threads::enter();
    let Some((ch, id)) = key else { return Ok(()) };
    // SAFETY: the channel outlives its receives.
    let ch = unsafe { &mut *(ch as *mut Channel) };
    let mut cancelled = 0;
    // SAFETY: a status MPI wrote.
    unsafe { PMPI_Test_cancelled(status, &mut cancelled) };
    if ch.lost {
        ch.queue.clear();
        drop_arrived(ch);
        return Ok(());
    }
    if cancelled != 0 || status.MPI_SOURCE == proc_null() {
        ch.queue.retain(|r| r.id != id);
    } else if let Some(r) = ch.queue.iter_mut().find(|r| r.id == id) {
        r.got = Some(if r.own_pattern {
            (r.source, r.tag)
        } else {
            (status.MPI_SOURCE, status.MPI_TAG)
        });
        r.ready = true;
    }
    drain(ch)
}

/// A receive failed with a truncation (MPI_ERR_TRUNCATE): MPI matched
/// its message, whose source and tag `status` gives; it is checked as a
/// completed receive, its report printed and not raised (the MPI's error
/// is handed to the user's handler after it).
pub fn truncated(key: Option<(usize, u64)>, status: &MPI_Status) {
    let _s = crate::threads::enter();
    quietly(|| {
        let _ = received(key, status);
    });
}

fn matches(r: &Rec, source: c_int, tag: c_int) -> bool {
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    (r.source == any_source || r.source == source) && (r.tag == any_tag || r.tag == tag)
}

/// Checks every completed receive whose companion is next in its
/// (source, tag) order, in posting order.
fn drain(ch: &mut Channel) -> Result<(), c_int> {
    settle_detached(ch);
    let mut result = Ok(());
    let mut i = 0;
    while i < ch.queue.len() {
        let Some((s, t)) = ch.queue[i].got else {
            i += 1;
            continue;
        };
        let blocked = !ch.queue[i].ready
            || ch.queue.iter().take(i).any(|e| match e.got {
                None => matches(e, s, t),
                Some(g) => g == (s, t),
            });
        if blocked {
            i += 1;
            continue;
        }
        let Some(r) = ch.queue.remove(i) else { break };
        if r.detached {
            let _ = recv_companion(ch, s, t);
            continue;
        }
        if let Err(rc) = check_one(ch, &r, s, t) {
            result = result.and(Err(rc));
        }
    }
    result
}

/// A receive freed while active (its pattern without wildcards) was
/// matched once a later-posted receive completed with a message of that
/// (source, tag): MPI gives a message to the earliest pending receive
/// that matches it, so the freed one was no longer pending. Its place in
/// the order is then known: (source, tag).
fn settle_detached(ch: &mut Channel) {
    // The common case, no freed receive: nothing to settle (and no
    // allocation on each completion).
    if !ch.queue.iter().any(|r| r.detached) {
        return;
    }
    let done: Vec<(usize, (c_int, c_int))> = ch
        .queue
        .iter()
        .enumerate()
        .filter(|(_, r)| r.ready && !r.detached)
        .filter_map(|(i, r)| r.got.map(|g| (i, g)))
        .collect();
    for (i, (s, t)) in done {
        for e in ch.queue.iter_mut().take(i) {
            if e.detached && e.got.is_none() && e.source == s && e.tag == t {
                e.got = Some((s, t));
            }
        }
    }
}

/// A channel that no longer checks still gets companions: those that have
/// arrived are taken and dropped (at its receives and at its free), so
/// that they neither pile up nor stay unmatched at `MPI_Finalize` (where
/// some transports warn about them). Best effort: one still in flight at
/// the free stays behind.
fn drop_arrived(ch: &Channel) {
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    loop {
        let mut flag = 0;
        // SAFETY: MPI_Status is plain data.
        let mut st: MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: probes the checker's own duplicate.
        let rc = unsafe { PMPI_Iprobe(any_source, any_tag, ch.dup, &mut flag, &mut st) };
        if rc != 0 || flag == 0 {
            return;
        }
        let _ = recv_companion(ch, st.MPI_SOURCE, st.MPI_TAG);
    }
}

/// The world rank of `source` in `ch` (-1 outside MPI_COMM_WORLD).
fn world_of(ch: &Channel, source: c_int) -> i32 {
    ch.world.get(source as usize).copied().unwrap_or(-1)
}

/// Receives the companion from (source, tag) on `ch`, counted as
/// consumed. The sender posted it before its message (received or
/// probed by now): this returns without waiting for the sender's program.
fn recv_companion(ch: &Channel, source: c_int, tag: c_int) -> Option<Companion> {
    let mut buf = [0u8; LEN];
    // SAFETY: buf holds LEN bytes.
    let rc = unsafe {
        PMPI_Recv(
            buf.as_mut_ptr() as *mut c_void,
            LEN as c_int,
            mpi::byte(),
            source,
            tag,
            ch.dup,
            RSMPI_STATUS_IGNORE,
        )
    };
    if rc != 0 {
        return None;
    }
    lost::count_consumed(world_of(ch, source));
    Some(Companion::decode(&buf))
}

/// An active receive was freed (`MPI_Request_free`): MPI still completes
/// it, unseen. Without wildcards it keeps its place (`settle_detached`);
/// with one, the channel stops checking (no false report, no wait).
fn receive_freed(key: (usize, u64)) {
    let (ch, id) = key;
    // SAFETY: the channel outlives its receives.
    let ch = unsafe { &mut *(ch as *mut Channel) };
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    let Some(r) = ch.queue.iter_mut().find(|r| r.id == id) else {
        return;
    };
    if r.source == any_source || r.tag == any_tag || !r.ready {
        ch.lost = true;
        ch.queue.clear();
        drop_arrived(ch);
        return;
    }
    r.detached = true;
}

/// Takes the companion of receive `r`'s message from (source, tag) and
/// compares.
fn check_one(ch: &Channel, r: &Rec, source: c_int, tag: c_int) -> Result<(), c_int> {
    let Some(c) = recv_companion(ch, source, tag) else {
        return Ok(());
    };
    // The sender's type, for a report: a predefined one by its code (a
    // table look-up), a derived one lent by the exchange (every reference
    // is resolved once, and given back below).
    let (sender_type, lent) = if c.flags & PREDEFINED != 0 {
        let code = u16::from_le_bytes([c.reference[0], c.reference[1]]);
        (
            mpix_marshal::predefined_datatype(mpix_marshal::Predefined(code)),
            false,
        )
    } else if c.flags & NO_REFERENCE == 0 {
        let t =
            crate::internal::within(|| mpix_marshal::resolve_type(&c.reference, source, ch.dup));
        (t.ok(), true)
    } else {
        (None, false)
    };
    let out = match compare(&c, r) {
        Compared::Fine => Ok(()),
        Compared::Differ(why) => report(ch, r, source, tag, &c, sender_type, why),
    };
    if let (Some(t), true) = (sender_type, lent) {
        let _ = crate::internal::within(|| mpix_marshal::release_type(t));
    }
    out
}

enum Compared {
    Fine,
    Differ(&'static str),
}

/// Gropp's rule: the sender's signature against the first `elements`
/// basic elements of the receive's.
fn compare(c: &Companion, r: &Rec) -> Compared {
    if (c.flags | r.sig.flags) & UNKNOWN != 0 || (c.flags | r.sig.flags) & PACKED != 0 {
        return Compared::Fine;
    }
    if c.elements > r.sig.count {
        return Compared::Differ("the message has more basic elements than the receive takes");
    }
    if c.elements == r.sig.count {
        return if c.hash == r.sig.hash {
            Compared::Fine
        } else {
            Compared::Differ("the type signatures do not match")
        };
    }
    // A prefix: the receive's tree, unless its derived type was freed since.
    if crate::sig::TYPES_FREED.load(Ordering::Acquire) != r.freed && !mpi::is_named(r.datatype) {
        return Compared::Fine;
    }
    let Ok(count) = u128::try_from(r.count) else {
        return Compared::Fine;
    };
    match mpix_marshal::signature_prefix_summary(
        r.datatype,
        count,
        c.elements as u128,
        HashKind::DEFAULT,
    ) {
        Ok(s) if s.packed || s.hash == c.hash => Compared::Fine,
        Ok(_) => Compared::Differ(
            "the type signature of the message does not match the start of the receive's",
        ),
        Err(_) => Compared::Fine,
    }
}

/// This rank's and the sender's names in a report: by rank in the
/// communicator (by group on an intercommunicator), with the world rank
/// where it differs.
fn names(ch: &Channel, source: c_int) -> (String, String) {
    let with_world = |name: String, rank: usize, world: i32| {
        if world >= 0 && world as usize != rank {
            format!("{name} (world rank {world})")
        } else {
            name
        }
    };
    let (local, remote) = if ch.inter {
        ("local group rank", "remote group rank")
    } else {
        ("rank", "rank")
    };
    (
        with_world(
            format!("{local} {}", ch.rank),
            ch.rank,
            mpi::world_rank_cached(),
        ),
        with_world(
            format!("{remote} {source}"),
            source.max(0) as usize,
            world_of(ch, source),
        ),
    )
}

fn report(
    ch: &Channel,
    r: &Rec,
    source: c_int,
    tag: c_int,
    c: &Companion,
    sender_type: Option<MPI_Datatype>,
    why: &'static str,
) -> Result<(), c_int> {
    let (me, them) = names(ch, source);
    let readable =
        mpi::is_named(r.datatype) || crate::sig::TYPES_FREED.load(Ordering::Acquire) == r.freed;
    let el = |n: u64| if n == 1 { "element" } else { "elements" };
    let mut details = vec![match sender_type {
        Some(t) => format!(
            "{them} sends (count, datatype) = {}: {} {}",
            crate::sig::describe(c.count, t),
            c.elements,
            el(c.elements)
        ),
        None => format!("{them} sends {} {}", c.elements, el(c.elements)),
    }];
    details.push(if readable {
        format!(
            "{me} receives (count, datatype) = {}: at most {} {}",
            crate::sig::describe(r.count, r.datatype),
            r.sig.count,
            el(r.sig.count)
        )
    } else {
        format!("{me} receives at most {} {}", r.sig.count, el(r.sig.count))
    });
    let mut fields = vec![
        ("source", source.to_string()),
        ("tag", tag.to_string()),
        ("sent_elements", c.elements.to_string()),
        ("receive_elements", r.sig.count.to_string()),
    ];
    if let (Some(t), true) = (sender_type, readable) {
        let (lines, f) =
            crate::sig::difference_lines((&them, c.count, t), (&me, r.count, r.datatype));
        details.extend(lines);
        fields.extend(f);
    }
    // Where the receive's check ran (the sender's call site is not known
    // here: the companion does not carry it).
    details.push(crate::site::site_line(
        &me,
        r.call,
        &crate::site::call_site(),
    ));
    let rep = Report {
        call: r.call.to_string(),
        comm: if ch.inter {
            mpi::inter_name(ch.comm)
        } else {
            mpi::comm_name(ch.comm, ch.size)
        },
        seq: r.id,
        rank: ch.rank,
        size: ch.size,
        kind: "p2p-signature",
        summary: format!("{why}: the message from {them} with tag {tag}"),
        details,
        fields,
    };
    rep.emit(mpi::world_rank_cached());
    if report::config().mode == Mode::Warn || QUIET.with(|q| q.get()) {
        return Ok(());
    }
    Err(mpi::raise_code(ch.comm, None, mpi::p2p_error_code()))
}

// ---- persistent requests ----

/// What a start posted on the checker's side: a receive's key or a send's
/// companion's.
#[derive(Clone, Copy, Default)]
pub struct Starting {
    recv: Option<(usize, u64)>,
    send: Option<u64>,
}

/// What a persistent point-to-point request does at each start. Its
/// datatype is the checker's duplicate of a derived type (the user may
/// free its own handle while the request lives).
#[derive(Clone, Copy)]
enum Persistent {
    Send {
        comm: MPI_Comm,
        peer: c_int,
        tag: c_int,
        count: i64,
        datatype: MPI_Datatype,
        owned: bool,
    },
    Recv {
        comm: MPI_Comm,
        peer: c_int,
        tag: c_int,
        count: i64,
        datatype: MPI_Datatype,
        owned: bool,
    },
}

struct PersistentEntry(u64, Persistent);

// SAFETY: plain handles.
unsafe impl Send for PersistentEntry {}

fn persistent() -> &'static Mutex<Vec<PersistentEntry>> {
    static P: OnceLock<Mutex<Vec<PersistentEntry>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

/// A persistent send (`recv` false) or receive was made on `comm`: kept
/// under its request when `comm` has a channel.
pub fn persistent_made(
    recv: bool,
    comm: MPI_Comm,
    peer: c_int,
    tag: c_int,
    count: impl Into<i64>,
    t: MPI_Datatype,
    request: MPI_Request,
) {
    let _s = crate::threads::enter();
    if peer == proc_null() || channel(comm).is_none() {
        return;
    }
    let (datatype, owned) = if mpi::is_named(t) {
        (t, false)
    } else {
        let mut d = t;
        // SAFETY: duplicates the user's committed type (a local call).
        if unsafe { PMPI_Type_dup(t, &mut d) } != 0 {
            return;
        }
        (d, true)
    };
    let count = count.into();
    let p = if recv {
        Persistent::Recv {
            comm,
            peer,
            tag,
            count,
            datatype,
            owned,
        }
    } else {
        Persistent::Send {
            comm,
            peer,
            tag,
            count,
            datatype,
            owned,
        }
    };
    let mut v = persistent().lock().unwrap_or_else(|e| e.into_inner());
    v.push(PersistentEntry(mpi::bits(request), p));
}

fn persistent_of(request: MPI_Request) -> Option<Persistent> {
    let v = persistent().lock().unwrap_or_else(|e| e.into_inner());
    v.iter().find(|e| e.0 == mpi::bits(request)).map(|e| e.1)
}

/// Before `MPI_Start` of `request`: a send's companion, or a receive
/// queued. The key to `started` after the user's call.
pub fn starting(request: MPI_Request) -> Starting {
    let _s = crate::threads::enter();
    if !enabled() {
        return Starting::default();
    }
    let Some(p) = persistent_of(request) else {
        return Starting::default();
    };
    match p {
        Persistent::Send {
            comm,
            peer,
            tag,
            count,
            datatype,
            ..
        } => {
            // A start that fails posts no message: its companion goes too.
            Starting {
                recv: None,
                send: sent(comm, peer, tag, count, datatype),
            }
        }
        Persistent::Recv {
            comm,
            peer,
            tag,
            count,
            datatype,
            ..
        } => Starting {
            recv: receiving("MPI_Recv_init", comm, peer, tag, count, datatype),
            send: None,
        },
    }
}

/// After `MPI_Start`: the receive's key under its request (or dropped
/// when the start failed).
pub fn started(s: Starting, rc: c_int, request: MPI_Request) {
    let _s = crate::threads::enter();
    if rc != 0 {
        unsent(s.send);
        not_posted(s.recv);
    } else {
        attach_send(s.send, request);
        attach(s.recv, request);
        if s.send.is_some() {
            if let Some(Persistent::Send {
                comm,
                peer,
                tag,
                count,
                datatype,
                ..
            }) = persistent_of(request)
            {
                lost::send_posted("MPI_Start", request, comm, peer, tag, count, datatype);
            }
        }
    }
}

/// Before `MPI_Request_free`: a persistent request's record and type go.
pub fn request_freed(request: MPI_Request) {
    let _s = crate::threads::enter();
    if !enabled() {
        return;
    }
    if tracking() {
        if let Some(k) = claim(&[mpi::bits(request)])[0] {
            receive_freed(k);
        }
        lost::send_done(mpi::bits(request));
    }
    let mut v = persistent().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = v.iter().position(|e| e.0 == mpi::bits(request)) {
        let (Persistent::Send {
            datatype, owned, ..
        }
        | Persistent::Recv {
            datatype, owned, ..
        }) = v.swap_remove(i).1;
        if owned {
            mpi::free_type(datatype);
        }
    }
}

// ---- completion: the Wait/Test family ----

fn status_ignore(p: *const MPI_Status) -> bool {
    // SAFETY: reads mpi-sys's copy of MPI_STATUS_IGNORE.
    std::ptr::eq(p, unsafe { RSMPI_STATUS_IGNORE })
}

fn statuses_ignore(p: *const MPI_Status) -> bool {
    // SAFETY: reads mpi-sys's copy of MPI_STATUSES_IGNORE.
    std::ptr::eq(p, unsafe { RSMPI_STATUSES_IGNORE })
}

/// The receive keys under requests, taken out before a completion call
/// on them (and put back for those that did not complete: `unclaim`).
/// Taken before, not after: at `MPI_THREAD_MULTIPLE` MPI may give a
/// completed request's handle to another thread's new request before
/// this thread looks its key up.
fn claim(requests: &[u64]) -> Vec<Option<(usize, u64)>> {
    let _s = crate::threads::enter();
    let mut p = lock(posted());
    let out = requests
        .iter()
        .map(|&r| {
            let i = p.iter().position(|(k, _, _)| *k == r)?;
            let (_, ch, id) = p.swap_remove(i);
            Some((ch, id))
        })
        .collect();
    POSTED.store(p.len(), Ordering::Release);
    out
}

/// Puts back the claimed keys of the requests that did not complete
/// (`done[i]` false).
fn unclaim(requests: &[u64], claimed: &[Option<(usize, u64)>], done: impl Fn(usize) -> bool) {
    let mut p = lock(posted());
    for (i, (&r, c)) in requests.iter().zip(claimed).enumerate() {
        if let (Some((ch, id)), false) = (c, done(i)) {
            p.push((r, *ch, *id));
        }
    }
    POSTED.store(p.len(), Ordering::Release);
}

fn tracking() -> bool {
    POSTED.load(Ordering::Acquire) != 0
        || CANCELLING.load(Ordering::Acquire) != 0
        || lost::PENDING_SENDS.load(Ordering::Acquire) != 0
}

fn keys(count: c_int, requests: *const MPI_Request) -> Vec<u64> {
    (0..count.max(0) as usize)
        // SAFETY: the user's array holds count requests.
        .map(|i| mpi::bits(unsafe { *requests.add(i) }))
        .collect()
}

fn zeroed_statuses(n: usize) -> Vec<MPI_Status> {
    // SAFETY: MPI_Status is plain data.
    (0..n.max(1))
        .map(|_| unsafe { std::mem::zeroed() })
        .collect()
}

/// The request at `key` (its receive's key `claimed`) completed with
/// `status`.
fn completed(key: u64, claimed: Option<(usize, u64)>, status: &MPI_Status) -> Result<(), c_int> {
    let _s = crate::threads::enter();
    match claimed {
        Some(k) => received(Some(k), status),
        None => {
            if CANCELLING.load(Ordering::Acquire) != 0 {
                send_completed(key, status);
            }
            lost::send_done(key);
            Ok(())
        }
    }
}

/// A request (its receive's key `claimed`) failed with a truncation: the
/// receive is checked (`truncated`).
fn completed_truncated(claimed: Option<(usize, u64)>, status: &MPI_Status) {
    let _s = crate::threads::enter();
    if let Some(k) = claimed {
        truncated(Some(k), status);
    }
}

/// `PMPI_Wait` and the checks of the receive it completes.
///
/// # Safety
/// The user's arguments of MPI_Wait.
pub unsafe fn wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    if !tracking() {
        // SAFETY: the user's arguments.
        return unsafe { crate::polled::wait(request, status) };
    }
    // SAFETY: the user's request.
    let key = mpi::bits(unsafe { *request });
    let mut own = zeroed_statuses(1);
    let st = if status_ignore(status) {
        own.as_mut_ptr()
    } else {
        status
    };
    let claimed = claim(&[key]);
    // SAFETY: the user's request; st is the user's status or ours.
    let out = mpi::errhandler::deferred(|| unsafe { crate::polled::wait(request, st) });
    if out.err != 0 {
        return one_failed(key, claimed[0], st, out);
    }
    // SAFETY: MPI wrote the status.
    completed(key, claimed[0], unsafe { &*st })
        .err()
        .unwrap_or(out.rc)
}

/// The completion of one request failed (`out`): a truncated receive's
/// message was matched, so it is checked; then the error goes on to the
/// user's handler, as without the checker.
fn one_failed(
    key: u64,
    claimed: Option<(usize, u64)>,
    st: *mut MPI_Status,
    out: mpi::errhandler::Outcome,
) -> c_int {
    if mpi::errhandler::truncated(out.err) {
        // SAFETY: MPI wrote the status of the message it matched.
        completed_truncated(claimed, unsafe { &*st });
    } else {
        unclaim(&[key], &[claimed], |_| false);
    }
    mpi::errhandler::hand_on(out.caught, out.rc)
}

/// `PMPI_Test` and the checks of the receive it completes.
///
/// # Safety
/// The user's arguments of MPI_Test.
pub unsafe fn test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    if !tracking() {
        // SAFETY: the user's arguments.
        return unsafe { crate::polled::test(request, flag, status) };
    }
    // SAFETY: the user's request.
    let key = mpi::bits(unsafe { *request });
    let mut own = zeroed_statuses(1);
    let st = if status_ignore(status) {
        own.as_mut_ptr()
    } else {
        status
    };
    let claimed = claim(&[key]);
    // SAFETY: as for wait.
    let out = mpi::errhandler::deferred(|| unsafe { crate::polled::test(request, flag, st) });
    if out.err != 0 {
        return one_failed(key, claimed[0], st, out);
    }
    let rc = out.rc;
    // SAFETY: MPI wrote flag.
    if unsafe { *flag } == 0 {
        unclaim(&[key], &claimed, |_| false);
        return rc;
    }
    // SAFETY: MPI wrote the status.
    completed(key, claimed[0], unsafe { &*st })
        .err()
        .unwrap_or(rc)
}

/// Runs `f` (a completion call over `count` requests) with a status array
/// of our own where the user gave MPI_STATUSES_IGNORE, then checks the
/// receives `done` names: (index of the request, index of its status).
unsafe fn over_array(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
    f: impl FnOnce(*mut MPI_Status) -> c_int,
    done: impl FnOnce() -> Vec<(usize, usize)>,
) -> c_int {
    let keys = keys(count, requests);
    let claimed = claim(&keys);
    let mut own = Vec::new();
    let st = if statuses_ignore(statuses) {
        own = zeroed_statuses(keys.len());
        own.as_mut_ptr()
    } else {
        statuses
    };
    let mpi::errhandler::Outcome { rc, err, caught } = mpi::errhandler::deferred(|| f(st));
    let mut finished = vec![false; keys.len()];
    if err != 0 {
        // Each status says: the receives that completed (a truncated one
        // too: its message was matched) are checked, reports printed.
        if mpi::errhandler::in_status(rc) || mpi::errhandler::in_status(err) {
            for (i, j) in done() {
                // SAFETY: MPI wrote status j.
                let s = unsafe { &*st.add(j) };
                if let Some(&k) = keys.get(i) {
                    if s.MPI_ERROR == 0 || mpi::errhandler::truncated(s.MPI_ERROR) {
                        finished[i] = true;
                        quietly(|| completed(k, claimed[i], s)).ok();
                    }
                }
            }
        }
        unclaim(&keys, &claimed, |i| finished[i]);
        drop(own);
        return mpi::errhandler::hand_on(caught, rc);
    }
    let mut out = rc;
    for (i, j) in done() {
        if let Some(&k) = keys.get(i) {
            finished[i] = true;
            // SAFETY: MPI wrote status j.
            if let Err(e) = completed(k, claimed[i], unsafe { &*st.add(j) }) {
                out = e;
            }
        }
    }
    unclaim(&keys, &claimed, |i| finished[i]);
    drop(own);
    out
}

/// `PMPI_Waitall` with the checks.
///
/// # Safety
/// The user's arguments of MPI_Waitall.
pub unsafe fn waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    if !tracking() {
        // SAFETY: the user's arguments.
        return unsafe { crate::polled::waitall(count, requests, statuses) };
    }
    let n = count.max(0) as usize;
    // SAFETY: the user's arguments, with our statuses where ignored.
    unsafe {
        over_array(
            count,
            requests,
            statuses,
            |st| crate::polled::waitall(count, requests, st),
            || (0..n).map(|i| (i, i)).collect(),
        )
    }
}

/// `PMPI_Testall` with the checks.
///
/// # Safety
/// The user's arguments of MPI_Testall.
pub unsafe fn testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if !tracking() {
        // SAFETY: the user's arguments.
        return unsafe { crate::polled::testall(count, requests, flag, statuses) };
    }
    let n = count.max(0) as usize;
    // SAFETY: as for waitall; flag is read after MPI wrote it.
    unsafe {
        over_array(
            count,
            requests,
            statuses,
            |st| crate::polled::testall(count, requests, flag, st),
            || {
                if *flag != 0 {
                    (0..n).map(|i| (i, i)).collect()
                } else {
                    vec![]
                }
            },
        )
    }
}

/// `PMPI_Waitany` or `PMPI_Testany` (with `flag`) with the checks.
///
/// # Safety
/// The user's arguments of MPI_Waitany / MPI_Testany.
pub unsafe fn any(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut MPI_Status,
) -> c_int {
    let call = |st: *mut MPI_Status| match flag {
        // SAFETY: the user's arguments.
        Some(f) => unsafe { crate::polled::any(count, requests, index, Some(f), st) },
        // SAFETY: the user's arguments.
        None => unsafe { crate::polled::any(count, requests, index, None, st) },
    };
    if !tracking() {
        return call(status);
    }
    let keys = keys(count, requests);
    let claimed = claim(&keys);
    let mut own = zeroed_statuses(1);
    let st = if status_ignore(status) {
        own.as_mut_ptr()
    } else {
        status
    };
    let out = mpi::errhandler::deferred(|| call(st));
    let rc = out.rc;
    // SAFETY: MPI wrote index (and flag).
    let (i, done) = unsafe { (*index, flag.map_or(true, |f| *f != 0)) };
    let which = usize::try_from(i).ok().filter(|&i| i < keys.len());
    let completed_one = (done || out.err != 0).then_some(which).flatten();
    unclaim(&keys, &claimed, |j| Some(j) == completed_one);
    match completed_one {
        Some(j) if out.err != 0 => one_failed(keys[j], claimed[j], st, out),
        None if out.err != 0 => mpi::errhandler::hand_on(out.caught, rc),
        // SAFETY: MPI wrote the status.
        Some(j) => completed(keys[j], claimed[j], unsafe { &*st })
            .err()
            .unwrap_or(rc),
        None => rc,
    }
}

/// `PMPI_Waitsome` or `PMPI_Testsome` with the checks.
///
/// # Safety
/// The user's arguments of MPI_Waitsome / MPI_Testsome.
pub unsafe fn some(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    test: bool,
) -> c_int {
    let call = |st: *mut MPI_Status| {
        if test {
            // SAFETY: the user's arguments.
            unsafe { crate::polled::some(incount, requests, outcount, indices, st, true) }
        } else {
            // SAFETY: the user's arguments.
            unsafe { crate::polled::some(incount, requests, outcount, indices, st, false) }
        }
    };
    if !tracking() {
        return call(statuses);
    }
    // SAFETY: the user's arguments; MPI wrote outcount and that many
    // indices when the call succeeded.
    unsafe {
        over_array(incount, requests, statuses, call, || {
            let n = *outcount;
            if n == mpi::undefined() || n <= 0 {
                return vec![];
            }
            (0..n as usize)
                .map(|j| ((*indices.add(j)).max(0) as usize, j))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn companions_round_trip() {
        let c = Companion {
            hash: 0x0123_4567_89ab_cdef,
            elements: 1 << 40,
            count: -3,
            flags: PACKED | NO_REFERENCE,
            reference: [7; 16],
        };
        assert_eq!(Companion::decode(&c.encode()), c);
    }
}
