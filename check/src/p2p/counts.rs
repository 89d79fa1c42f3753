//! What the check at MPI_Finalize counts as the program runs: per world
//! rank, the companions sent, orphaned and consumed; and the nonblocking
//! sends still pending.

use super::channels::{channel, world_of};
use crate::mpi;
use crate::slots::Slots;
use crate::sys::*;
use crate::threads::Shared;
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Per world rank: companions sent to it, orphans (companions whose
/// message was cancelled but not they), companions consumed from it.
pub(super) struct Counts {
    pub(super) sent: Vec<AtomicU64>,
    pub(super) orphans: Vec<AtomicU64>,
    pub(super) consumed: Vec<AtomicU64>,
}

pub(super) fn counts() -> Option<&'static Counts> {
    COUNTS.get()
}

pub(super) static COUNTS: OnceLock<Counts> = OnceLock::new();

pub(super) fn add(v: &[AtomicU64], peer: i32, d: i64) {
    if let Some(c) = usize::try_from(peer).ok().and_then(|p| v.get(p)) {
        // A load and a store, not a read-modify-write (which costs more on
        // every message): the wrappers' lock (`crate::threads`) or the
        // thread level already makes one thread count at a time.
        let _s = crate::threads::enter();
        c.store(
            c.load(Ordering::Relaxed).wrapping_add(d as u64),
            Ordering::Relaxed,
        );
    }
}

/// A companion went to world rank `peer`.
pub fn count_sent(peer: i32) {
    if let Some(c) = counts() {
        add(&c.sent, peer, 1);
    }
}

/// The message of a companion to `peer` does not exist (its call failed,
/// or MPI cancelled it): not counted; `orphan`: its companion still went.
pub fn uncount_sent(peer: i32, orphan: bool) {
    if let Some(c) = counts() {
        add(&c.sent, peer, -1);
        if orphan {
            add(&c.orphans, peer, 1);
        }
    }
}

/// A companion from world rank `peer` was taken.
pub fn count_consumed(peer: i32) {
    if let Some(c) = counts() {
        add(&c.consumed, peer, 1);
    }
}

/// The world rank of each rank of `comm` (its remote group's, for an
/// intercommunicator), -1 outside MPI_COMM_WORLD. Sets the counts up on
/// the first call (MPI_COMM_WORLD's channel, at MPI_Init).
pub fn world_ranks(comm: MPI_Comm, inter: bool) -> Vec<i32> {
    let mut wsize = 0;
    // SAFETY: a plain query.
    unsafe { PMPI_Comm_size(mpi::comm_world(), &mut wsize) };
    COUNTS.get_or_init(|| {
        let v = || (0..wsize.max(0)).map(|_| AtomicU64::new(0)).collect();
        Counts {
            sent: v(),
            orphans: v(),
            consumed: v(),
        }
    });
    let mut g = std::mem::MaybeUninit::<MPI_Group>::uninit();
    let mut wg = std::mem::MaybeUninit::<MPI_Group>::uninit();
    let mut out = vec![];
    // SAFETY: local group queries of valid communicators; both groups are
    // freed, and the buffers hold n ranks.
    unsafe {
        let rc = if inter {
            PMPI_Comm_remote_group(comm, g.as_mut_ptr())
        } else {
            PMPI_Comm_group(comm, g.as_mut_ptr())
        };
        if rc != 0 {
            return out;
        }
        let mut g = g.assume_init();
        if PMPI_Comm_group(mpi::comm_world(), wg.as_mut_ptr()) == 0 {
            let mut wg = wg.assume_init();
            let mut n = 0;
            if PMPI_Group_size(g, &mut n) == 0 {
                let from: Vec<c_int> = (0..n).collect();
                let mut to = vec![0 as c_int; n.max(0) as usize];
                if PMPI_Group_translate_ranks(g, n, from.as_ptr(), wg, to.as_mut_ptr()) == 0 {
                    let undefined = mpi::undefined();
                    out = to
                        .into_iter()
                        .map(|r| if r == undefined { -1 } else { r })
                        .collect();
                }
            }
            PMPI_Group_free(&mut wg);
        }
        PMPI_Group_free(&mut g);
    }
    out
}

pub(super) struct PendingSend {
    /// Its place in posting order (the report lists them so).
    pub(super) seq: u64,
    pub(super) call: &'static str,
    pub(super) comm: MPI_Comm,
    /// The destination and its world rank.
    pub(super) dest: c_int,
    pub(super) world: i32,
    pub(super) tag: c_int,
    pub(super) count: i64,
    pub(super) datatype: MPI_Datatype,
    /// `crate::sig::TYPES_FREED` at posting (a derived type freed since is not
    /// read again).
    pub(super) freed: u64,
}

// SAFETY: plain handles.
unsafe impl Send for PendingSend {}

/// How many sends are kept (the completion calls look for theirs only
/// when some are).
pub static PENDING_SENDS: AtomicUsize = AtomicUsize::new(0);

/// The nonblocking sends pending, by request, and the last `seq` given.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) sends: Slots<PendingSend>,
    seq: u64,
}

pub(super) fn pending() -> &'static Shared<Pending> {
    static P: OnceLock<Shared<Pending>> = OnceLock::new();
    P.get_or_init(|| Shared::new(Pending::default()))
}

/// A nonblocking send (or a persistent send's start) on a checked
/// communicator posted its message under `request`.
pub fn send_posted(
    call: &'static str,
    request: MPI_Request,
    comm: MPI_Comm,
    dest: c_int,
    tag: c_int,
    count: i64,
    datatype: MPI_Datatype,
) {
    let Some(ch) = channel(comm) else {
        return;
    };
    let world = world_of(ch, dest);
    let key = mpi::bits(request);
    let freed = crate::sig::TYPES_FREED.load(Ordering::Acquire);
    pending().with(|p| {
        p.seq += 1;
        let send = PendingSend {
            seq: p.seq,
            call,
            comm,
            dest,
            world,
            tag,
            count,
            datatype,
            freed,
        };
        // (A handle MPI gave again was completed unseen: replaced.)
        p.sends.insert(key, send);
        PENDING_SENDS.store(p.sends.len(), Ordering::Release);
    });
}

/// The request `key` completed or was freed.
pub fn send_done(key: u64) {
    if PENDING_SENDS.load(Ordering::Acquire) == 0 {
        return;
    }
    pending().with(|p| {
        if p.sends.remove(key).is_some() {
            PENDING_SENDS.store(p.sends.len(), Ordering::Release);
        }
    });
}
