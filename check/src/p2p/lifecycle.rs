//! Channels made at collective points and freed with their communicators
//! (or at MPI_Finalize), and the pending counts a long run reads.

use super::batches;
use super::channels::{channel, channels, lock, Channel, FREES, KEYVAL};
use super::companions::{in_flight, reap};
use super::counts::world_ranks;
use super::lost;
use super::matching::drop_arrived;
use crate::mpi;
use crate::report::p2p_enabled as enabled;
use crate::sys::*;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

extern "C" {
    fn mxc_p2p_keyval_create(keyval: *mut c_int, del: extern "C" fn(*mut c_void)) -> c_int;
}
extern "C" fn delete_channel(value: *mut c_void) {
    if value.is_null() {
        return;
    }
    FREES.fetch_add(1, Ordering::AcqRel);
    lock(channels()).retain(|&c| c != value as usize);
    // SAFETY: every value of the keyval is a Box<Channel> leaked by
    // `setup`; MPI calls this once per value.
    let mut ch = *unsafe { Box::from_raw(value as *mut Channel) };
    mpi::errhandler::forget(ch.comm, false);
    let dup = ch.dup;
    if let Some(b) = ch.batches.as_mut() {
        // Every member is in the free: the batches owed come in, and the
        // receives still waiting for theirs are checked.
        b.close(dup);
        if !ch.lost {
            super::matching::check_late(&mut ch);
        }
    }
    if ch.lost {
        drop_arrived(&mut ch);
    } else {
        lost::channel_freed(&mut ch);
    }
    // SAFETY: the checker's own duplicate (its exchange settles here,
    // inside the user's collective free).
    crate::internal::within(|| unsafe { PMPI_Comm_free(&mut ch.dup) });
}

pub(super) fn keyval() -> Option<c_int> {
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
}

pub(super) fn make_channel(comm: MPI_Comm) -> bool {
    let Some(kv) = keyval() else { return false };
    let (mut inter, mut rank, mut size) = (0, 0, 0);
    let mut dup = mpi::comm_null();
    let mut peers = 0;
    // SAFETY: queries of a valid communicator and its duplicate.
    let ok = unsafe {
        PMPI_Comm_test_inter(comm, &mut inter) == 0
            && PMPI_Comm_rank(comm, &mut rank) == 0
            && PMPI_Comm_size(comm, &mut size) == 0
            && (if inter != 0 {
                PMPI_Comm_remote_size(comm, &mut peers)
            } else {
                PMPI_Comm_size(comm, &mut peers)
            }) == 0
            && PMPI_Comm_dup(comm, &mut dup) == 0
    };
    if !ok {
        return false;
    }
    // SAFETY: the checker's duplicate; its errors come back as codes.
    unsafe { PMPI_Comm_set_errhandler(dup, RSMPI_ERRORS_RETURN) };
    // The exchange's set-up is collective over the duplicate: here, now.
    let _ = crate::internal::within(|| mpix_marshal::setup_type_exchange(dup));
    if batches::wanted() {
        crate::watchdog::when_idle(super::matching::idle);
    }
    let ch = Box::into_raw(Box::new(Channel {
        comm,
        dup,
        rank: rank as usize,
        size: size as usize,
        inter: inter != 0,
        posted: 0,
        queue: VecDeque::new(),
        completed: 0,
        latest_done: 0,
        maybe_detached: false,
        lost: false,
        handler: Default::default(),
        world: world_ranks(comm, inter != 0),
        batches: batches::wanted()
            .then(|| batches::Batches::new(dup, peers.max(0) as usize))
            .flatten(),
    }));
    // SAFETY: attaches the channel; MPI calls delete_channel at free.
    if unsafe { PMPI_Comm_set_attr(comm, kv, ch as *mut c_void) } != 0 {
        delete_channel(ch as *mut c_void);
        return false;
    }
    lock(channels()).push(ch as usize);
    true
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
        let unsent: usize = lock(channels())
            .iter()
            // SAFETY: as below.
            .filter_map(|&c| unsafe { &*(c as *const Channel) }.batches.as_ref())
            .map(|b| b.held())
            .sum();
        let f = lock(self::in_flight()).len() + unsent;
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
