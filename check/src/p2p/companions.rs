//! The sending side: the companion (what a sender says about one
//! message) and the companions in flight until their requests complete.

use super::batches;
use super::channels::{channel, channels, lock, Channel};
use super::counts::{count_sent, uncount_sent};
use crate::mpi;
use crate::record::{PACKED, UNKNOWN};
use crate::report::p2p_enabled as enabled;
use crate::sys::*;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The companion's size in bytes.
pub(super) const LEN: usize = batches::LEN;

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
pub(super) const NO_REFERENCE: u64 = 8;
/// The type is predefined: `reference` holds its portable code (no
/// exchange: the code names it at the receiver).
pub(super) const PREDEFINED: u64 = 16;
/// The reference was counted by an earlier companion of the same batch:
/// the exchange counts a type's reference once per batch (batched mode;
/// the receiver resolves it without counting it again).
pub(super) const REPEAT: u64 = 32;

impl Companion {
    /// Whether it names a derived type by a reference the exchange counts
    /// when the receiver uses it (a derived type's first companion in its
    /// batch, or every one in the immediate mode).
    pub(super) fn counted(&self) -> bool {
        self.flags & (PREDEFINED | NO_REFERENCE | REPEAT) == 0
    }

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

/// A companion in flight: its request and its buffer (boxed: MPI reads
/// it until the request completes).
pub(super) struct InFlight {
    pub(super) req: MPI_Request,
    /// The companion's own key (its request's bits at posting: MPI sets
    /// the handle to MPI_REQUEST_NULL when it completes).
    pub(super) key: u64,
    /// The user's nonblocking send request it goes with (0: none).
    pub(super) user: u64,
    /// The destination's world rank (-1: not in MPI_COMM_WORLD).
    pub(super) peer: i32,
    pub(super) _buf: Box<[u8]>,
}

// SAFETY: the request is a plain handle and the buffer is owned.
unsafe impl Send for InFlight {}

pub(super) fn in_flight() -> &'static Mutex<Vec<InFlight>> {
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
    let (reference, kind) = reference(ch, t, dest);
    let c = Companion {
        hash: sig.hash,
        elements: sig.count,
        count,
        flags: (sig.flags & (PACKED | UNKNOWN)) | kind,
        reference,
    };
    let peer = ch.world.get(dest as usize).copied().unwrap_or(-1);
    let now = ch.errors_come_back();
    if let Some(b) = ch.batches.as_mut() {
        count_sent(peer);
        return Some(b.append(ch.dup, dest, tag, peer, &c.encode(), now));
    }
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
    count_sent(peer);
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

/// What a companion names the type of a send to `dest` by, with its flag:
/// a predefined type's code; a derived type's reference, made once per
/// batch and type in the batched mode (`REPEAT` after the first) and per
/// message in the immediate mode; nothing when the type is not known.
fn reference(ch: &mut Channel, t: MPI_Datatype, dest: c_int) -> ([u8; 16], u64) {
    if let Some(p) = mpix_marshal::predefined_code(t) {
        let mut r = [0u8; 16];
        r[..2].copy_from_slice(&p.0.to_le_bytes());
        return (r, PREDEFINED);
    }
    // A freed handle may come back as another type, and a renamed type
    // is described anew: the frees and renames so far are in the key.
    let key = (mpi::bits(t), crate::sig::type_changes());
    if let Some(r) = ch.batches.as_ref().and_then(|b| b.reference(dest, key)) {
        return (r, REPEAT);
    }
    match crate::internal::within(|| mpix_marshal::type_reference(t, dest, ch.dup)) {
        Ok(r) => {
            if let Some(b) = ch.batches.as_mut() {
                b.keep_reference(dest, key, r);
            }
            (r, 0)
        }
        Err(_) => ([0u8; 16], NO_REFERENCE),
    }
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
    if batches::is_batched(key) {
        // Taken back when not sent yet; else its batch has gone.
        let taken = unsend_batched(key);
        uncount_sent(batches::peer_of(key), !taken);
        return;
    }
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
    uncount_sent(peer, !cancel_companion(entry));
}

/// Takes a batched companion back from its outbox: whether it had not
/// been sent yet (else its batch has gone).
fn unsend_batched(key: u64) -> bool {
    lock(channels()).iter().any(|&c| {
        // SAFETY: a registered channel is alive until its delete callback
        // unregisters it; the point-to-point lock is held.
        let ch = unsafe { &mut *(c as *mut Channel) };
        ch.batches.as_mut().is_some_and(|b| b.unsend(key).is_some())
    })
}

/// The key of the batched companion, not sent yet, of user send request
/// `request`.
fn attached_batched(request: u64) -> Option<u64> {
    lock(channels()).iter().find_map(|&c| {
        // SAFETY: as in `unsend_batched`.
        let ch = unsafe { &*(c as *const Channel) };
        ch.batches.as_ref()?.attached(request)
    })
}

/// Cancels one companion and waits for the cancel to settle (local:
/// either MPI removes it or it has been delivered). Whether it was
/// cancelled.
pub(super) fn cancel_companion(mut entry: InFlight) -> bool {
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
    if batches::is_batched(key) {
        batches::attach(key, mpi::bits(request));
        return;
    }
    let mut f = in_flight().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = f.iter_mut().find(|e| e.key == key) {
        e.user = mpi::bits(request);
    }
}

/// User send requests the user asked MPI to cancel, with their
/// companions' keys: the outcome shows at their completion.
pub(super) fn cancelling() -> &'static Mutex<Vec<(u64, u64)>> {
    static C: OnceLock<Mutex<Vec<(u64, u64)>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

pub(super) static CANCELLING: AtomicUsize = AtomicUsize::new(0);

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
            None => match attached_batched(r) {
                Some(k) => k,
                None => return,
            },
        }
    };
    let mut c = cancelling().lock().unwrap_or_else(|e| e.into_inner());
    c.push((r, key));
    CANCELLING.store(c.len(), Ordering::Release);
}

/// A watched send request completed with `status`: when MPI cancelled
/// the user's message, its companion is cancelled too.
pub(super) fn send_completed(request: u64, status: &MPI_Status) {
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
pub(super) fn reap(all: bool) {
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
