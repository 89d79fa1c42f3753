//! The batched transport of companions (`MPIX_CHECK_VERIFY=batched`,
//! issue 31): a sender keeps each message's companion, with its tag, in
//! an outbox per (channel, destination) and sends the outbox as one batch
//! when it holds `BATCH` entries, when a wait lasts (`idle`), when the
//! receiver asks for it (a truncation to report: `pull`), and at the
//! channel's free and `MPI_Finalize`. A receiver takes every batch that
//! has arrived into an inbox per source and pairs each completed receive
//! with the first entry of its (source, tag) there: MPI's order of one
//! sender's messages of one (communicator, tag) is the order of their
//! entries, as it is the order of the immediate mode's companions. A
//! receive whose entry has not come yet stays queued; it is checked when
//! its batch arrives (`crate::p2p::matching::drain`).
//!
//! The channel carries nothing else in this mode: batches with tag
//! `BATCH_TAG` (entries of `ENTRY` bytes: the tag, little-endian, then
//! the companion) and empty pulls with tag `PULL_TAG`, received by one
//! persistent receive from any source.

use crate::mpi;
use crate::sys::*;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Entries per batch.
pub(super) const BATCH: usize = 64;
/// A companion's size in bytes (`super::companions::Companion`, encoded:
/// this module carries it as bytes).
pub(super) const LEN: usize = 48;
/// One entry: the message's tag and its companion.
const ENTRY: usize = 4 + LEN;
/// The batches in flight a channel keeps before it frees the buffers of
/// those that have left.
const SENDING: usize = 16;
const BATCH_TAG: c_int = 0;
const PULL_TAG: c_int = 1;
/// How long the free of a channel waits for the batches it is owed.
const WAIT: Duration = Duration::from_secs(10);
/// A batched companion's key: this bit set (an immediate one's key is its
/// request's bits), the destination's world rank + 1 in the next 23 bits
/// (0: not in MPI_COMM_WORLD), and a sequence number in the low 40.
const BATCHED_KEY: u64 = 1 << 63;
const PEER_SHIFT: u32 = 40;
static NEXT_KEY: AtomicU64 = AtomicU64::new(0);

/// The companions of one destination not sent yet, with their keys.
#[derive(Default)]
struct Outbox {
    bytes: Vec<u8>,
    keys: Vec<u64>,
    /// The user's send request of each, when nonblocking (`attach`).
    users: Vec<u64>,
    /// The type references made for the entries (`keep_reference`), by
    /// type: the batch names each type's reference, counted, once.
    refs: Vec<(TypeKey, [u8; 16])>,
}

/// A derived type for `Batches::reference`: its handle's bits and the
/// number of type frees and renames when it was used (a freed handle may
/// come back as another type; a renamed one is described anew).
pub(super) type TypeKey = (u64, u64);

/// The types whose references one outbox keeps; a batch of more derived
/// types makes a counted reference per message for the others.
const KEPT_TYPES: usize = 16;

/// A channel's batches: its outboxes and inboxes, one per peer.
pub(super) struct Batches {
    out: Vec<Outbox>,
    /// The destinations whose outbox holds entries.
    dirty: Vec<usize>,
    inbox: Vec<VecDeque<(c_int, [u8; LEN])>>,
    /// Batches and pulls sent, until their requests complete.
    sending: Vec<(MPI_Request, Box<[u8]>)>,
    /// Entries sent to, and received from, each peer.
    sent_to: Vec<u64>,
    got_from: Vec<u64>,
    /// The persistent receive of batches and pulls, and its buffer.
    req: MPI_Request,
    buf: Box<[u8]>,
    /// Receives completed on the channel (`matching::may_check`).
    pub(super) completions: u64,
}

// SAFETY: plain handles and owned buffers.
unsafe impl Send for Batches {}

/// Whether the companions go in batches (`MPIX_CHECK_VERIFY=batched`).
pub fn wanted() -> bool {
    matches!(
        crate::report::config().verify,
        crate::report::Verify::Batched(_)
    )
}

impl Batches {
    /// Empty batches for `peers` peers, no receive posted.
    fn empty(peers: usize) -> Batches {
        Batches {
            out: (0..peers).map(|_| Outbox::default()).collect(),
            dirty: vec![],
            inbox: (0..peers).map(|_| VecDeque::new()).collect(),
            sending: vec![],
            sent_to: vec![0; peers],
            got_from: vec![0; peers],
            req: mpi::request_null(),
            buf: vec![0u8; BATCH * ENTRY].into_boxed_slice(),
            completions: 0,
        }
    }

    /// The batches of a channel `dup` with `peers` peers; its receive
    /// started. None when MPI refuses it.
    pub(super) fn new(dup: MPI_Comm, peers: usize) -> Option<Batches> {
        let mut b = Batches::empty(peers);
        // SAFETY: read mpi-sys's copies of the wildcards.
        let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
        // SAFETY: the buffer is owned by `b` and outlives the request
        // (cancelled and freed by `close`).
        let ok = unsafe {
            PMPI_Recv_init(
                b.buf.as_mut_ptr() as *mut c_void,
                (BATCH * ENTRY) as c_int,
                mpi::byte(),
                any_source,
                any_tag,
                dup,
                &mut b.req,
            ) == 0
                && PMPI_Start(&mut b.req) == 0
        };
        ok.then_some(b)
    }

    /// Keeps the companion of a message to `dest` with `tag`; sends the
    /// outbox when full, or at once (`now`: the communicator's errors
    /// come back to the program). Its key (for `unsend`).
    pub(super) fn append(
        &mut self,
        dup: MPI_Comm,
        dest: c_int,
        tag: c_int,
        world: i32,
        c: &[u8; LEN],
        now: bool,
    ) -> u64 {
        let peer = (world.saturating_add(1).clamp(0, (1 << 23) - 1) as u64) << PEER_SHIFT;
        let seq = NEXT_KEY.fetch_add(1, Ordering::Relaxed) & ((1 << PEER_SHIFT) - 1);
        let key = BATCHED_KEY | peer | seq;
        let d = dest as usize;
        let me = self as *mut Batches as usize;
        let Some(o) = self.out.get_mut(d) else {
            return key;
        };
        if o.keys.is_empty() {
            self.dirty.push(d);
        }
        o.bytes.extend_from_slice(&tag.to_le_bytes());
        o.bytes.extend_from_slice(c);
        o.keys.push(key);
        o.users.push(0);
        let at = (me, d, o.keys.len() - 1, key);
        if o.keys.len() >= BATCH || now {
            self.flush(dup, d);
            LAST.with(|l| l.set((0, 0, 0, 0)));
        } else {
            LAST.with(|l| l.set(at));
        }
        key
    }

    /// The reference an entry of `dest`'s outbox already carries for
    /// the type `key`, counted.
    pub(super) fn reference(&self, dest: c_int, key: TypeKey) -> Option<[u8; 16]> {
        let o = self.out.get(dest as usize)?;
        o.refs.iter().find(|(k, _)| *k == key).map(|(_, r)| *r)
    }

    /// Keeps the counted reference `r` of the next entry to `dest`, of
    /// the type `key`, for the outbox's later entries of that type.
    pub(super) fn keep_reference(&mut self, dest: c_int, key: TypeKey, r: [u8; 16]) {
        if let Some(o) = self.out.get_mut(dest as usize) {
            if o.refs.len() < KEPT_TYPES {
                o.refs.push((key, r));
            }
        }
    }

    /// Sends `dest`'s outbox, if it holds entries.
    fn flush(&mut self, dup: MPI_Comm, dest: usize) {
        self.dirty.retain(|&x| x != dest);
        let Some(o) = self.out.get_mut(dest) else {
            return;
        };
        if o.keys.is_empty() {
            return;
        }
        let n = o.keys.len() as u64;
        let bytes = std::mem::replace(&mut o.bytes, Vec::with_capacity(BATCH * ENTRY));
        let bytes = bytes.into_boxed_slice();
        o.keys.clear();
        o.users.clear();
        o.refs.clear();
        self.sent_to[dest] += n;
        self.send(dup, dest as c_int, BATCH_TAG, bytes);
    }

    /// Sends every outbox holding entries.
    pub(super) fn flush_all(&mut self, dup: MPI_Comm) {
        for d in std::mem::take(&mut self.dirty) {
            self.flush(dup, d);
        }
    }

    /// Takes every batch that has arrived into the inboxes, and answers
    /// the pulls; whether anything arrived.
    pub(super) fn poll(&mut self, dup: MPI_Comm) -> bool {
        let mut any = false;
        // (None after `close`: a null request would test complete.)
        while mpi::bits(self.req) != mpi::bits(mpi::request_null()) {
            let mut flag = 0;
            // SAFETY: MPI_Status is plain data.
            let mut st: MPI_Status = unsafe { std::mem::zeroed() };
            // SAFETY: the channel's persistent receive.
            if unsafe { PMPI_Test(&mut self.req, &mut flag, &mut st) } != 0 || flag == 0 {
                return any;
            }
            any = true;
            self.arrived(dup, &st);
            // SAFETY: restarts the inactive persistent receive.
            if unsafe { PMPI_Start(&mut self.req) } != 0 {
                return any;
            }
        }
        any
    }

    /// One batch or pull received with `st`.
    fn arrived(&mut self, dup: MPI_Comm, st: &MPI_Status) {
        let source = st.MPI_SOURCE;
        let s = source as usize;
        if st.MPI_TAG == PULL_TAG {
            self.flush(dup, s);
            return;
        }
        let mut bytes = 0;
        // SAFETY: a status MPI wrote.
        unsafe { PMPI_Get_count(st, mpi::byte(), &mut bytes) };
        let n = bytes.max(0) as usize / ENTRY;
        let Some(inbox) = self.inbox.get_mut(s) else {
            return;
        };
        for e in self.buf[..n * ENTRY].chunks_exact(ENTRY) {
            let tag = c_int::from_le_bytes([e[0], e[1], e[2], e[3]]);
            let mut c = [0u8; LEN];
            c.copy_from_slice(&e[4..]);
            inbox.push_back((tag, c));
        }
        self.got_from[s] += n as u64;
    }

    /// Whether the companion of the next message from (source, tag) has
    /// arrived.
    pub(super) fn has(&self, source: c_int, tag: c_int) -> bool {
        self.inbox
            .get(source as usize)
            .is_some_and(|q| q.iter().any(|(t, _)| *t == tag))
    }

    /// Takes the companion of the next message from (source, tag).
    pub(super) fn take(&mut self, source: c_int, tag: c_int) -> Option<[u8; LEN]> {
        let q = self.inbox.get_mut(source as usize)?;
        let i = q.iter().position(|(t, _)| *t == tag)?;
        q.remove(i).map(|(_, c)| c)
    }

    /// The (source, tag) of an arrived companion, if any.
    pub(super) fn first(&self) -> Option<(c_int, c_int)> {
        self.inbox
            .iter()
            .enumerate()
            .find_map(|(s, q)| q.front().map(|(t, _)| (s as c_int, *t)))
    }

    /// Entries not sent yet (on all destinations), and batches whose
    /// send has not completed.
    pub(super) fn held(&self) -> usize {
        self.dirty
            .iter()
            .map(|&d| self.out[d].keys.len())
            .sum::<usize>()
            + self.sending.len()
    }

    /// Takes the entry `key` back when it has not been sent: its
    /// destination, or None when it has gone (or is not this channel's).
    pub(super) fn unsend(&mut self, key: u64) -> Option<usize> {
        for (d, o) in self.out.iter_mut().enumerate() {
            if let Some(i) = o.keys.iter().position(|&k| k == key) {
                o.keys.remove(i);
                o.users.remove(i);
                o.bytes.drain(i * ENTRY..(i + 1) * ENTRY);
                if o.keys.is_empty() {
                    self.dirty.retain(|&x| x != d);
                }
                return Some(d);
            }
        }
        None
    }

    /// At the channel's free (every member is in the free): sends what
    /// is kept, learns what each peer sent here, and takes it all in
    /// (waiting `WAIT` at most). The persistent receive is cancelled
    /// first: a wildcard receive on an intercommunicator's duplicate can
    /// take MPICH's own messages of a collective on it.
    pub(super) fn close(&mut self, dup: MPI_Comm) {
        self.flush_all(dup);
        self.cancel(dup);
        let Some(owed) = mpi::alltoall_words(dup, &self.sent_to, 1) else {
            return;
        };
        let deadline = Instant::now() + WAIT;
        for (s, &o) in owed.iter().enumerate() {
            while self.got_from[s] < o && Instant::now() < deadline {
                if !self.receive_from(dup, s as c_int) {
                    std::thread::yield_now();
                }
            }
        }
        // Every peer has taken what it was owed by now, but a pull may
        // still be unmatched: what has not left is cancelled.
        self.reap(true);
    }

    /// Takes one batch from `source` if one has arrived.
    fn receive_from(&mut self, dup: MPI_Comm, source: c_int) -> bool {
        let mut flag = 0;
        // SAFETY: MPI_Status is plain data.
        let mut st: MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: probes, then receives into the owned buffer of
        // BATCH * ENTRY bytes, the checker's own duplicate.
        unsafe {
            if PMPI_Iprobe(source, BATCH_TAG, dup, &mut flag, &mut st) != 0 || flag == 0 {
                return false;
            }
            if PMPI_Recv(
                self.buf.as_mut_ptr() as *mut c_void,
                (BATCH * ENTRY) as c_int,
                mpi::byte(),
                source,
                BATCH_TAG,
                dup,
                &mut st,
            ) != 0
            {
                return false;
            }
        }
        self.arrived(dup, &st);
        true
    }

    /// Sends `bytes` to `dest` with `tag` on `dup`; the request and
    /// buffer are kept until the send completes.
    fn send(&mut self, dup: MPI_Comm, dest: c_int, tag: c_int, bytes: Box<[u8]>) {
        let mut req = mpi::request_null();
        // SAFETY: the buffer is boxed and kept with the request until it
        // completes (`reap`).
        let rc = unsafe {
            PMPI_Isend(
                bytes.as_ptr() as *const c_void,
                bytes.len() as c_int,
                mpi::byte(),
                dest,
                tag,
                dup,
                &mut req,
            )
        };
        if rc == 0 {
            self.sending.push((req, bytes));
        }
        if self.sending.len() >= SENDING {
            self.reap(false);
        }
    }

    /// Frees the buffers of the sends that have left; `all`: cancels the
    /// others (at the channel's free, after every peer took its own).
    fn reap(&mut self, all: bool) {
        self.sending.retain_mut(|(req, _)| {
            let mut flag = 0;
            // SAFETY: the channel's own request; cancelled and waited for
            // when `all`.
            unsafe {
                if PMPI_Test(req, &mut flag, RSMPI_STATUS_IGNORE) == 0 && flag != 0 {
                    return false;
                }
                if all {
                    PMPI_Cancel(req);
                    PMPI_Wait(req, RSMPI_STATUS_IGNORE);
                }
            }
            !all
        });
    }

    /// Asks `source` to send what it keeps for this rank now (a receive
    /// that failed needs its companion to be reported).
    pub(super) fn pull(&mut self, dup: MPI_Comm, source: c_int) {
        self.send(dup, source, PULL_TAG, Box::new([]));
    }

    /// Cancels the persistent receive (a batch it took meanwhile is kept)
    /// and frees it.
    fn cancel(&mut self, dup: MPI_Comm) {
        if mpi::bits(self.req) == mpi::bits(mpi::request_null()) {
            return;
        }
        // SAFETY: MPI_Status is plain data.
        let mut st: MPI_Status = unsafe { std::mem::zeroed() };
        let mut cancelled = 0;
        // SAFETY: the channel's own request; its buffer lives in `self`.
        unsafe {
            PMPI_Cancel(&mut self.req);
            PMPI_Wait(&mut self.req, &mut st);
            PMPI_Test_cancelled(&st, &mut cancelled);
        }
        if cancelled == 0 && st.MPI_TAG == BATCH_TAG {
            self.arrived(dup, &st);
        }
        // SAFETY: the inactive persistent request, freed once.
        unsafe { PMPI_Request_free(&mut self.req) };
    }

    /// The key of the companion not sent yet of user request `request`.
    pub(super) fn attached(&self, request: u64) -> Option<u64> {
        self.out.iter().find_map(|o| {
            let i = o.users.iter().position(|&u| u == request)?;
            Some(o.keys[i])
        })
    }
}

/// Whether `key` is a batched companion's.
pub(super) fn is_batched(key: u64) -> bool {
    key & BATCHED_KEY != 0
}

/// The world rank of a batched companion's destination (-1: not in
/// MPI_COMM_WORLD).
pub(super) fn peer_of(key: u64) -> i32 {
    ((key & !BATCHED_KEY) >> PEER_SHIFT) as i32 - 1
}

thread_local! {
    /// Where `append` put its latest entry (its batches, destination,
    /// index and key), for `attach` right after.
    static LAST: std::cell::Cell<(usize, usize, usize, u64)> = const { std::cell::Cell::new((0, 0, 0, 0)) };
}

/// Keeps which user request the batched companion `key` goes with (the
/// latest one appended on this thread), for a cancel of that request.
pub(super) fn attach(key: u64, request: u64) {
    let (b, d, i, k) = LAST.with(|l| l.get());
    if k != key || b == 0 {
        return;
    }
    // SAFETY: the batches `append` just used, in the same call (its
    // channel is alive; the point-to-point lock is held).
    let b = unsafe { &mut *(b as *mut Batches) };
    if let Some(u) = b.out.get_mut(d).and_then(|o| o.users.get_mut(i)) {
        *u = request;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_their_destination() {
        let mut b = Batches::empty(4);
        let dup = mpi::comm_null();
        let k = b.append(dup, 2, 7, 5, &[1; LEN], false);
        assert!(is_batched(k));
        assert_eq!(peer_of(k), 5);
        assert_eq!(peer_of(b.append(dup, 3, 7, -1, &[1; LEN], false)), -1);
        assert!(!is_batched(0x8400_0000));
    }

    #[test]
    fn an_entry_not_sent_is_taken_back_and_found_by_its_request() {
        let mut b = Batches::empty(2);
        let dup = mpi::comm_null();
        let k1 = b.append(dup, 1, 3, 1, &[1; LEN], false);
        let k2 = b.append(dup, 1, 4, 1, &[2; LEN], false);
        attach(k2, 0xabc);
        assert_eq!(b.attached(0xabc), Some(k2));
        assert_eq!(b.held(), 2);
        assert_eq!(b.unsend(k1), Some(1));
        assert_eq!(b.unsend(k1), None);
        // The one left is the second, tag and companion.
        assert_eq!(b.out[1].bytes[..4], 4i32.to_le_bytes());
        assert_eq!(b.out[1].bytes[4..ENTRY], [2; LEN]);
        assert_eq!(b.unsend(k2), Some(1));
        assert_eq!(b.held(), 0);
        assert!(b.dirty.is_empty());
    }

    #[test]
    fn a_receive_takes_the_first_entry_of_its_tag() {
        let mut b = Batches::empty(2);
        b.inbox[1].extend([(5, [1; LEN]), (6, [2; LEN]), (5, [3; LEN])]);
        assert_eq!(b.first(), Some((1, 5)));
        assert!(b.has(1, 6) && !b.has(0, 6) && !b.has(1, 7));
        assert_eq!(b.take(1, 5), Some([1; LEN]));
        assert_eq!(b.take(1, 5), Some([3; LEN]));
        assert_eq!(b.take(1, 5), None);
        assert_eq!(b.first(), Some((1, 6)));
    }
}
