//! The receiving side: posted receives in posting order, matched to
//! their messages' companions as they complete or are probed.

use super::channels::{channel, channels, is_quiet, lock, quietly, Channel, Rec};
use super::companions::proc_null;
use super::verdict::{any_arrived, check_one, recv_companion};
use crate::mpi;
use crate::slots::Slots;
use crate::sys::*;
use crate::threads::Shared;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// A receive's key under its request, until it completes.
pub(super) type Posted = Shared<Slots<(usize, u64)>>;

pub(super) fn posted() -> &'static Posted {
    static P: OnceLock<Posted> = OnceLock::new();
    P.get_or_init(|| Shared::new(Slots::default()))
}

pub(super) static POSTED: AtomicUsize = AtomicUsize::new(0);

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
        kept: false,
        site: ("", 0),
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
    ch.completed += 1;
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
        kept: false,
        site: ("", 0),
    });
    let mut m = messages().lock().unwrap_or_else(|e| e.into_inner());
    m.push((mpi::bits(message), ch as *mut Channel as usize, ch.posted));
}

pub(super) type Messages = Mutex<Vec<(u64, usize, u64)>>;

pub(super) fn messages() -> &'static Messages {
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
        posted().with(|p| {
            // (A handle MPI gave again was completed unseen: replaced.)
            p.insert(mpi::bits(request), (ch, id));
            POSTED.store(p.len(), Ordering::Release);
        });
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
    let batched = ch.batches.is_some();
    if cancelled != 0 || status.MPI_SOURCE == proc_null() {
        ch.queue.retain(|r| r.id != id);
    } else if let Some(r) = ch.queue.iter_mut().find(|r| r.id == id) {
        if r.got.is_none() {
            ch.completed += 1;
        }
        let got = if r.own_pattern {
            (r.source, r.tag)
        } else {
            (status.MPI_SOURCE, status.MPI_TAG)
        };
        r.got = Some(got);
        r.ready = true;
        if batched {
            r.site = crate::site::entered();
            // On a failed call's path (a truncation) the check must come
            // before the MPI's error reaches the program: its batch is
            // asked for.
            if is_quiet() {
                let source = status.MPI_SOURCE;
                let _ = poll_and_drain(ch);
                pulled(ch, id, source);
                return Ok(());
            }
            let later_done = ch.latest_done > id;
            ch.latest_done = ch.latest_done.max(id);
            if ch.errors_come_back() {
                return awaited(ch, id, got, status.MPI_SOURCE);
            }
            if !may_check(ch, got, later_done) {
                return Ok(());
            }
        }
    }
    drain(ch)
}

/// While a wait lasts (the watchdog's idle hook, batched mode): every
/// channel sends what it keeps and takes what has arrived, and the
/// receives whose companions came are checked.
pub(super) fn idle() {
    // Not inside the library's own operations, nor at their collective
    // points: a check there would use the exchange the operation holds.
    if !super::enabled()
        || crate::internal::active()
        || mpix_marshal::library_collective_point().is_some()
    {
        return;
    }
    let _s = crate::threads::enter();
    let chans: Vec<usize> = lock(channels()).clone();
    for c in chans {
        // SAFETY: a registered channel is alive until its delete callback
        // unregisters it; the point-to-point lock is held.
        let ch = unsafe { &mut *(c as *mut Channel) };
        let dup = ch.dup;
        let Some(b) = ch.batches.as_mut() else {
            continue;
        };
        b.flush_all(dup);
        if b.poll(dup) {
            let _ = drain(ch);
        }
    }
}

/// In the batched mode, a receive polls for batches this often.
const POLL_EVERY: u64 = 16;

/// In the batched mode, after a receive completed with a message of
/// (source, tag) `got`: whether a check may be due (else `drain` is
/// skipped). One is when a batch arrived (looked for at every
/// `POLL_EVERY`-th completion, and at every wait that lasts: `idle`),
/// when this receive's companion is here, or when a later-posted receive
/// completed before it (`later_done`: it may have waited for this one to
/// be matched).
fn may_check(ch: &mut Channel, got: (c_int, c_int), later_done: bool) -> bool {
    let dup = ch.dup;
    let Some(b) = ch.batches.as_mut() else {
        return true;
    };
    b.completions += 1;
    if b.completions % POLL_EVERY == 0 && b.poll(dup) {
        return true;
    }
    b.has(got.0, got.1) || later_done
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

/// Derived types the program freed while a queued receive named them
/// (the batched mode), freed once no queued receive does.
fn kept_types() -> &'static Mutex<Vec<u64>> {
    static K: OnceLock<Mutex<Vec<u64>>> = OnceLock::new();
    K.get_or_init(Default::default)
}
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// The program frees the derived type `t`: in the batched mode, when a
/// receive waiting for its companion names it, the free waits until that
/// receive is checked, so that its report can still read the type (true:
/// the caller does not free it).
pub fn keep(t: MPI_Datatype) -> bool {
    let _s = crate::threads::enter();
    if !super::enabled() || !super::batches::wanted() || crate::internal::active() {
        return false;
    }
    let key = mpi::bits(t);
    let mut named = false;
    for &c in lock(channels()).iter() {
        // SAFETY: a registered channel is alive until its delete callback
        // unregisters it; the point-to-point lock is held.
        let ch = unsafe { &mut *(c as *mut Channel) };
        // (A queued receive's type is live: in this mode its earlier
        // free would have been kept too.)
        for r in ch.queue.iter_mut().filter(|r| mpi::bits(r.datatype) == key) {
            r.kept = true;
            named = true;
        }
    }
    if named {
        let mut k = lock(kept_types());
        k.push(key);
        KEPT.store(k.len(), Ordering::Release);
    }
    named
}

/// Frees the kept types no queued receive names any more.
fn release_kept() {
    if KEPT.load(Ordering::Acquire) == 0 {
        return;
    }
    let chans: Vec<usize> = lock(channels()).clone();
    let named = |key: u64| {
        chans.iter().any(|&c| {
            // SAFETY: as in `keep`.
            let ch = unsafe { &*(c as *const Channel) };
            ch.queue
                .iter()
                .any(|r| r.kept && mpi::bits(r.datatype) == key)
        })
    };
    let mut k = lock(kept_types());
    k.retain(|&t| {
        if named(t) {
            return true;
        }
        mpi::free_type(mpi::from_bits(t));
        crate::sig::TYPES_FREED.fetch_add(1, Ordering::AcqRel);
        false
    });
    KEPT.store(k.len(), Ordering::Release);
}

/// In the batched mode, at the channel's free (its batches all in): the
/// receives that were waiting for their companions are checked.
pub(super) fn check_late(ch: &mut Channel) {
    let _ = poll_and_drain(ch);
    release_kept();
}

/// How long a failed receive waits for its companion's batch.
const PULL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// In the batched mode, a receive `id` MPI failed whose companion has not
/// come is checked once its sender, asked, has sent its batch (the
/// sender answers at its next wait that lasts, within its next
/// `POLL_EVERY` receives, or at the channel's free; `PULL_WAIT` at most).
fn pulled(ch: &mut Channel, id: u64, source: c_int) {
    let waiting = |ch: &Channel| ch.queue.iter().any(|r| r.id == id);
    if ch.batches.is_none() || !waiting(ch) {
        return;
    }
    pull_until(ch, source, waiting, |ch| {
        let _ = poll_and_drain(ch);
    });
}

/// Asks `source` for the companions it keeps (`Batches::pull`), then
/// makes `step` until `waiting` is over, `PULL_WAIT` at most.
fn pull_until(
    ch: &mut Channel,
    source: c_int,
    waiting: impl Fn(&Channel) -> bool,
    mut step: impl FnMut(&mut Channel),
) {
    let dup = ch.dup;
    if let Some(b) = ch.batches.as_mut() {
        b.pull(dup, source);
    }
    let deadline = std::time::Instant::now() + PULL_WAIT;
    while waiting(ch) && std::time::Instant::now() < deadline {
        step(ch);
        std::thread::yield_now();
    }
}

/// The batches arrived taken in, no receive checked (`awaited`).
fn poll_only(ch: &mut Channel) {
    let dup = ch.dup;
    if let Some(b) = ch.batches.as_mut() {
        b.poll(dup);
    }
}

/// How many polls a receive waiting for its companion makes before it
/// asks its sender for it (`awaited`).
const SPINS: u32 = 10_000;

/// In the batched mode on a communicator whose errors come back to the
/// program: the completed receive `id` of (source, tag) `got` (from
/// `source`) waits for its companion, which its sender sent at once
/// (`companions::sent`), and is checked now, so that a finding is
/// returned by its own call. A sender that kept it (its handler differs)
/// is asked for it, `PULL_WAIT` at most. The wait ends when an entry of
/// that (source, tag) is here: if an earlier receive takes it, this one
/// is checked after that one, as in any mode.
fn awaited(ch: &mut Channel, id: u64, got: (c_int, c_int), source: c_int) -> Result<(), c_int> {
    let missing = |ch: &Channel| {
        ch.queue.iter().any(|r| r.id == id)
            && ch.batches.as_ref().is_some_and(|b| !b.has(got.0, got.1))
    };
    let mut spins = 0;
    while missing(ch) && spins < SPINS {
        poll_only(ch);
        spins += 1;
    }
    if missing(ch) {
        pull_until(ch, source, missing, poll_only);
    }
    drain(ch)
}

pub(super) fn matches(r: &Rec, source: c_int, tag: c_int) -> bool {
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    (r.source == any_source || r.source == source) && (r.tag == any_tag || r.tag == tag)
}

/// `drain`, the batches arrived taken first (batched mode).
pub(super) fn poll_and_drain(ch: &mut Channel) -> Result<(), c_int> {
    poll_only(ch);
    drain(ch)
}

/// Checks every completed receive whose companion is next in its
/// (source, tag) order, in posting order (in the batched mode, whose
/// companion's batch has come: taken in already, see `poll_and_drain`).
fn drain(ch: &mut Channel) -> Result<(), c_int> {
    settle_detached(ch);
    let mut result = Ok(());
    // What the receives kept so far (before `i`) block: the (source, tag)
    // of those completed (each once), and the pending ones' patterns.
    let mut got_before: Vec<(c_int, c_int)> = vec![];
    let mut pending_before: Vec<usize> = vec![];
    // Past the last completed receive nothing is checkable: the pass
    // ends when it has met `ch.completed` of them (or the queue's end).
    let mut left = ch.completed;
    let mut kept = 0;
    let mut i = 0;
    while i < ch.queue.len() && left > 0 {
        let Some((s, t)) = ch.queue[i].got else {
            pending_before.push(i);
            i += 1;
            continue;
        };
        left -= 1;
        let blocked = !ch.queue[i].ready
            || got_before.contains(&(s, t))
            || pending_before.iter().any(|&j| matches(&ch.queue[j], s, t));
        // In the batched mode, a companion whose batch has not come yet.
        if blocked || ch.batches.as_ref().is_some_and(|b| !b.has(s, t)) {
            if !got_before.contains(&(s, t)) {
                got_before.push((s, t));
            }
            kept += 1;
            i += 1;
            continue;
        }
        let Some(r) = ch.queue.remove(i) else { break };
        ch.completed = ch.completed.saturating_sub(1);
        if r.detached {
            let _ = recv_companion(ch, s, t);
            continue;
        }
        if let Err(rc) = check_one(ch, &r, s, t) {
            result = result.and(Err(rc));
        }
        if r.kept {
            release_kept();
        }
    }
    if i >= ch.queue.len() {
        // The whole queue was seen: the count is exact again.
        ch.completed = kept;
    }
    result
}

/// A receive freed while active (its pattern without wildcards) was
/// matched once a later-posted receive completed with a message of that
/// (source, tag): MPI gives a message to the earliest pending receive
/// that matches it, so the freed one was no longer pending. Its place in
/// the order is then known: (source, tag).
pub(super) fn settle_detached(ch: &mut Channel) {
    // The common case, no freed receive: nothing to settle (and no
    // scan or allocation on each completion).
    if !ch.maybe_detached {
        return;
    }
    if !ch.queue.iter().any(|r| r.detached) {
        ch.maybe_detached = false;
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
                ch.completed += 1;
            }
        }
    }
}

/// A channel that no longer checks still gets companions: those that have
/// arrived are taken and dropped (at its receives and at its free), so
/// that they neither pile up nor stay unmatched at `MPI_Finalize` (where
/// some transports warn about them). Best effort: one still in flight at
/// the free stays behind.
pub(super) fn drop_arrived(ch: &mut Channel) {
    while let Some((s, t)) = any_arrived(ch) {
        let _ = recv_companion(ch, s, t);
    }
}

/// An active receive was freed (`MPI_Request_free`): MPI still completes
/// it, unseen. Without wildcards it keeps its place (`settle_detached`);
/// with one, the channel stops checking (no false report, no wait).
pub(super) fn receive_freed(key: (usize, u64)) {
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
    ch.maybe_detached = true;
}
