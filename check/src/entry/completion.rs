//! The completion calls (the table's `own` shape): a nonblocking
//! collective's check completes with its request, then the
//! point-to-point checks complete theirs (`crate::p2p`).

use crate::check;
use crate::mpi;
use crate::p2p;
use crate::sys::*;
use std::ffi::c_int;

/// A persistent collective's request freed before any completion still
/// has its check in flight: the check completes first (every rank posted
/// its part when it made the request, so this does not wait for a start).
pub(crate) unsafe fn request_free(request: *mut MPI_Request) -> c_int {
    // SAFETY: the user's request.
    p2p::request_freed(unsafe { *request });
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

/// Keeps the call's site for a receive it completes whose check runs
/// later (the batched point-to-point checks).
#[inline(always)]
fn entering(name: &'static str) -> Option<crate::site::Entered> {
    p2p::batched().then(|| crate::site::entering(name))
}

pub(crate) unsafe fn wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    let _site = entering("MPI_Wait");
    if check::any_pending() {
        // SAFETY: the user's request.
        if let Err(rc) = check::complete(unsafe { *request }, true) {
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { p2p::wait(request, status) }
}

pub(crate) unsafe fn test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let _site = entering("MPI_Test");
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
    unsafe { p2p::test(request, flag, status) }
}

pub(crate) unsafe fn waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    let _site = entering("MPI_Waitall");
    if check::any_pending() {
        for i in 0..count.max(0) as usize {
            // SAFETY: the user's array has count requests.
            if let Err(rc) = check::complete(unsafe { *requests.add(i) }, true) {
                return rc;
            }
        }
    }
    // SAFETY: the user's arguments.
    unsafe { p2p::waitall(count, requests, statuses) }
}

pub(crate) unsafe fn testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let _site = entering("MPI_Testall");
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
    unsafe { p2p::testall(count, requests, flag, statuses) }
}

pub(crate) unsafe fn waitany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let _site = entering("MPI_Waitany");
    loop {
        let mut flag = 0;
        // SAFETY: the user's arguments (or a copy of its requests).
        let any = |r| unsafe { p2p::any(count, r, index, Some(&mut flag), status) };
        match masked_call(count, requests, any) {
            Err(rc) => return rc,
            // SAFETY: the user's arguments.
            Ok(None) => return unsafe { p2p::any(count, requests, index, None, status) },
            // SAFETY: MPI wrote the index.
            Ok(Some(rc)) if rc != 0 || (flag != 0 && unsafe { *index } != mpi::undefined()) => {
                return rc
            }
            Ok(Some(_)) => std::thread::yield_now(),
        }
    }
}

pub(crate) unsafe fn testany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    let _site = entering("MPI_Testany");
    // SAFETY: the user's arguments (or a copy of its requests).
    let any = |r| unsafe { p2p::any(count, r, index, Some(flag), status) };
    // SAFETY: MPI wrote index and flag.
    test_call(count, requests, any, || unsafe {
        if *flag != 0 && *index == mpi::undefined() {
            *flag = 0; // a request with a check in flight is still active
        }
    })
}

pub(crate) unsafe fn waitsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let _site = entering("MPI_Waitsome");
    loop {
        // SAFETY: the user's arguments (or a copy of its requests).
        let some = |r| unsafe { p2p::some(incount, r, outcount, indices, statuses, true) };
        match masked_call(incount, requests, some) {
            Err(rc) => return rc,
            Ok(None) => {
                // SAFETY: the user's arguments.
                return unsafe { p2p::some(incount, requests, outcount, indices, statuses, false) };
            }
            Ok(Some(rc)) => {
                // SAFETY: MPI wrote outcount.
                let n = unsafe { *outcount };
                if rc != 0 || (n > 0 && n != mpi::undefined()) {
                    return rc;
                }
            }
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
    let _site = entering("MPI_Testsome");
    // SAFETY: the user's arguments (or a copy of its requests).
    let some = |r| unsafe { p2p::some(incount, r, outcount, indices, statuses, true) };
    // SAFETY: MPI wrote outcount.
    test_call(incount, requests, some, || unsafe {
        if *outcount == mpi::undefined() {
            *outcount = 0; // a request with a check in flight is still active
        }
    })
}

/// A test call on the user's requests, or on the masked copy
/// (`masked_call`), after which a success runs `masked_done`: what the
/// call said of the copy's completion, corrected for the masked requests.
fn test_call(
    count: c_int,
    requests: *mut MPI_Request,
    call: impl FnOnce(*mut MPI_Request) -> c_int + Copy,
    masked_done: impl FnOnce(),
) -> c_int {
    match masked_call(count, requests, call) {
        Err(rc) => rc,
        Ok(None) => call(requests),
        Ok(Some(rc)) => {
            if rc == 0 {
                masked_done();
            }
            rc
        }
    }
}

/// Runs `call` on a copy of the user's requests in which those with a
/// check in flight are `MPI_REQUEST_NULL` (they cannot complete before
/// their check), and copies the others back: `Some(its code)`. `None`
/// when no request has a check in flight (the caller makes the call on
/// the user's requests).
fn masked_call(
    count: c_int,
    requests: *mut MPI_Request,
    call: impl FnOnce(*mut MPI_Request) -> c_int,
) -> Result<Option<c_int>, c_int> {
    if !check::any_pending() {
        return Ok(None);
    }
    let busy = drive(count, requests)?;
    if !busy.iter().any(|&b| b) {
        return Ok(None);
    }
    let mut copy = masked(requests, &busy);
    let rc = call(copy.as_mut_ptr());
    unmask(requests, &copy, &busy);
    Ok(Some(rc))
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
