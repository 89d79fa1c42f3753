//! The completion calls (the table's `own` shape): a nonblocking
//! collective's check completes with its request, then the
//! point-to-point checks complete theirs (`crate::p2p`).

use crate::check;
use crate::mpi;
use crate::sys::*;
use std::ffi::c_int;

/// A persistent collective's request freed before any completion still
/// has its check in flight: the check completes first (every rank posted
/// its part when it made the request, so this does not wait for a start).
pub(crate) unsafe fn request_free(request: *mut MPI_Request) -> c_int {
    // SAFETY: the user's request.
    crate::p2p::request_freed(unsafe { *request });
    // SAFETY: the user's request.
    crate::hang::freed(unsafe { *request });
    if check::any_pending() {
        // SAFETY: the user's request.
        if let Err(rc) = check::complete(unsafe { *request }, true) {
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { PMPI_Request_free(request) }
}

pub(crate) unsafe fn wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    if check::any_pending() {
        // SAFETY: the user's request.
        if let Err(rc) = check::complete(unsafe { *request }, true) {
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::wait(request, status) }
}

pub(crate) unsafe fn test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        // SAFETY: the user's request.
        match check::complete(unsafe { *request }, false) {
            Err(rc) => return rc,
            Ok(false) => {
                // SAFETY: the user's flag.
                unsafe { *flag = 0 };
                return 0;
            }
            Ok(true) => {}
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::test(request, flag, status) }
}

pub(crate) unsafe fn waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        for i in 0..count.max(0) as usize {
            // SAFETY: the user's array has count requests.
            if let Err(rc) = check::complete(unsafe { *requests.add(i) }, true) {
                return rc;
            }
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::waitall(count, requests, statuses) }
}

pub(crate) unsafe fn testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        let mut all = true;
        for i in 0..count.max(0) as usize {
            // SAFETY: the user's array has count requests.
            match check::complete(unsafe { *requests.add(i) }, false) {
                Err(rc) => return rc,
                Ok(done) => all &= done,
            }
        }
        if !all {
            // SAFETY: the user's flag.
            unsafe { *flag = 0 };
            return 0;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::testall(count, requests, flag, statuses) }
}

pub(crate) unsafe fn waitany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    loop {
        if !check::any_pending() {
            // SAFETY: the user's arguments.
            return unsafe { crate::p2p::any(count, requests, index, None, status) };
        }
        let busy = match drive(count, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if !busy.iter().any(|&b| b) {
            // SAFETY: the user's arguments.
            return unsafe { crate::p2p::any(count, requests, index, None, status) };
        }
        let mut copy = masked(requests, &busy);
        let mut flag = 0;
        // SAFETY: the copy has count requests; the user's index and status.
        let rc =
            unsafe { crate::p2p::any(count, copy.as_mut_ptr(), index, Some(&mut flag), status) };
        unmask(requests, &copy, &busy);
        // SAFETY: MPI wrote the index.
        if rc != 0 || (flag != 0 && unsafe { *index } != mpi::undefined()) {
            return rc;
        }
        std::thread::yield_now();
    }
}

pub(crate) unsafe fn testany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        let busy = match drive(count, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if busy.iter().any(|&b| b) {
            let mut copy = masked(requests, &busy);
            // SAFETY: the copy has count requests; the user's outputs.
            let rc =
                unsafe { crate::p2p::any(count, copy.as_mut_ptr(), index, Some(flag), status) };
            unmask(requests, &copy, &busy);
            // SAFETY: MPI wrote index and flag.
            unsafe {
                if rc == 0 && *flag != 0 && *index == mpi::undefined() {
                    *flag = 0; // a request with a check in flight is still active
                }
            }
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::any(count, requests, index, Some(flag), status) }
}

pub(crate) unsafe fn waitsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    loop {
        if !check::any_pending() {
            // SAFETY: the user's arguments.
            return unsafe {
                crate::p2p::some(incount, requests, outcount, indices, statuses, false)
            };
        }
        let busy = match drive(incount, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if !busy.iter().any(|&b| b) {
            // SAFETY: the user's arguments.
            return unsafe {
                crate::p2p::some(incount, requests, outcount, indices, statuses, false)
            };
        }
        let mut copy = masked(requests, &busy);
        // SAFETY: the copy has incount requests; the user's outputs.
        let rc = unsafe {
            crate::p2p::some(
                incount,
                copy.as_mut_ptr(),
                outcount,
                indices,
                statuses,
                true,
            )
        };
        unmask(requests, &copy, &busy);
        // SAFETY: MPI wrote outcount.
        let n = unsafe { *outcount };
        if rc != 0 || (n > 0 && n != mpi::undefined()) {
            return rc;
        }
        std::thread::yield_now();
    }
}

pub(crate) unsafe fn testsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        let busy = match drive(incount, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if busy.iter().any(|&b| b) {
            let mut copy = masked(requests, &busy);
            // SAFETY: the copy has incount requests; the user's outputs.
            let rc = unsafe {
                crate::p2p::some(
                    incount,
                    copy.as_mut_ptr(),
                    outcount,
                    indices,
                    statuses,
                    true,
                )
            };
            unmask(requests, &copy, &busy);
            // SAFETY: MPI wrote outcount.
            unsafe {
                if rc == 0 && *outcount == mpi::undefined() {
                    *outcount = 0; // a request with a check in flight is still active
                }
            }
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::some(incount, requests, outcount, indices, statuses, true) }
}

/// Drives the checks of `requests` without blocking; returns which still
/// have a check in flight.
fn drive(count: c_int, requests: *mut MPI_Request) -> Result<Vec<bool>, c_int> {
    (0..count.max(0) as usize)
        .map(|i| {
            // SAFETY: the user's array has count requests.
            check::complete(unsafe { *requests.add(i) }, false).map(|done| !done)
        })
        .collect()
}

/// The user's requests with those whose check is in flight replaced by
/// MPI_REQUEST_NULL (they cannot complete before their check).
fn masked(requests: *mut MPI_Request, busy: &[bool]) -> Vec<MPI_Request> {
    busy.iter()
        .enumerate()
        .map(|(i, &b)| {
            if b {
                mpi::request_null()
            } else {
                // SAFETY: the user's array has busy.len() requests.
                unsafe { *requests.add(i) }
            }
        })
        .collect()
}

fn unmask(requests: *mut MPI_Request, copy: &[MPI_Request], busy: &[bool]) {
    for (i, &b) in busy.iter().enumerate() {
        if !b {
            // SAFETY: as in `masked`.
            unsafe { *requests.add(i) = copy[i] };
        }
    }
}
