//! Completion: the Wait/Test family's bookkeeping for point-to-point
//! requests.

use super::channels::quietly;
use super::companions::{send_completed, CANCELLING};
use super::counts::{send_done, PENDING_SENDS};
use super::matching::{posted, received, truncated, POSTED};
use crate::mpi;
use crate::sys::*;
use std::ffi::c_int;
use std::sync::atomic::Ordering;

pub(super) fn status_ignore(p: *const MPI_Status) -> bool {
    // SAFETY: reads mpi-sys's copy of MPI_STATUS_IGNORE.
    std::ptr::eq(p, unsafe { RSMPI_STATUS_IGNORE })
}

/// The user's status, or ours where the user ignores it.
pub fn status_or(status: *mut MPI_Status, own: &mut MPI_Status) -> *mut MPI_Status {
    if status_ignore(status) {
        own
    } else {
        status
    }
}

pub(super) fn statuses_ignore(p: *const MPI_Status) -> bool {
    // SAFETY: reads mpi-sys's copy of MPI_STATUSES_IGNORE.
    std::ptr::eq(p, unsafe { RSMPI_STATUSES_IGNORE })
}

/// The receive keys under requests, taken out before a completion call
/// on them (and put back for those that did not complete: `unclaim`).
/// Taken before, not after: at `MPI_THREAD_MULTIPLE` MPI may give a
/// completed request's handle to another thread's new request before
/// this thread looks its key up.
pub(super) fn claim(requests: &[u64]) -> Vec<Option<(usize, u64)>> {
    requests.iter().map(|&r| claim_one(r)).collect()
}

/// `claim` of one request (no allocation: `MPI_Wait`, `MPI_Test`).
pub(super) fn claim_one(request: u64) -> Option<(usize, u64)> {
    posted().with(|p| {
        let out = p.remove(request);
        POSTED.store(p.len(), Ordering::Release);
        out
    })
}

/// Puts back the claimed keys of the requests that did not complete
/// (`done[i]` false).
pub(super) fn unclaim(
    requests: &[u64],
    claimed: &[Option<(usize, u64)>],
    done: impl Fn(usize) -> bool,
) {
    posted().with(|p| {
        for (i, (&r, c)) in requests.iter().zip(claimed).enumerate() {
            if let (Some(key), false) = (c, done(i)) {
                p.insert(r, *key);
            }
        }
        POSTED.store(p.len(), Ordering::Release);
    });
}

pub(super) fn tracking() -> bool {
    POSTED.load(Ordering::Acquire) != 0
        || CANCELLING.load(Ordering::Acquire) != 0
        || PENDING_SENDS.load(Ordering::Acquire) != 0
}

pub(super) fn keys(count: c_int, requests: *const MPI_Request) -> Vec<u64> {
    (0..count.max(0) as usize)
        // SAFETY: the user's array holds count requests.
        .map(|i| mpi::bits(unsafe { *requests.add(i) }))
        .collect()
}

pub(super) fn zeroed_statuses(n: usize) -> Vec<MPI_Status> {
    // SAFETY: MPI_Status is plain data.
    (0..n.max(1))
        .map(|_| unsafe { std::mem::zeroed() })
        .collect()
}

/// The request at `key` (its receive's key `claimed`) completed with
/// `status`.
pub(super) fn completed(
    key: u64,
    claimed: Option<(usize, u64)>,
    status: &MPI_Status,
) -> Result<(), c_int> {
    let _s = crate::threads::enter();
    match claimed {
        Some(k) => received(Some(k), status),
        None => {
            if CANCELLING.load(Ordering::Acquire) != 0 {
                send_completed(key, status);
            }
            send_done(key);
            Ok(())
        }
    }
}

/// A request (its receive's key `claimed`) failed with a truncation: the
/// receive is checked (`truncated`).
pub(super) fn completed_truncated(claimed: Option<(usize, u64)>, status: &MPI_Status) {
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
    // SAFETY: all-zero bytes are a valid MPI_Status (plain integers).
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = status_or(status, &mut own);
    let claimed = [claim_one(key)];
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
pub(super) fn one_failed(
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
    // SAFETY: all-zero bytes are a valid MPI_Status (plain integers).
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = status_or(status, &mut own);
    let claimed = [claim_one(key)];
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
pub(super) unsafe fn over_array(
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
    // SAFETY: all-zero bytes are a valid MPI_Status (plain integers).
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = status_or(status, &mut own);
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
