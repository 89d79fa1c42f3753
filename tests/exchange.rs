//! The type exchange (issue 15) in one process: a sender thread and a
//! receiving thread on private communicators of their own (duplicates of
//! MPI_COMM_SELF, so that each test has fresh caches). Multi-process runs
//! (wildcards across ranks, broadcasts, intercommunicators, processes of
//! different builds) are tests/c/exchange.c under mpiexec.
// The ABI build declares predefined handles as constants (no unsafe needed).
#![cfg_attr(feature = "abi", allow(unused_unsafe))]

mod common;
#[path = "pmpi/mod.rs"]
mod pmpi;

use common::*;
use mpix_marshal::testing::exchange::{self, wire};
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::{
    bcast_type, consume_reference, exchange_counters, marshal, recv_type, release_type,
    resolve_type, resolve_type_uncounted, send_type, type_reference, Comm, Error, Representation,
    TYPE_REFERENCE_SIZE,
};
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

/// The counters are per process: tests that read them run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn fresh_comm() -> Comm {
    init();
    let mut c = unsafe { ffi::RSMPI_COMM_NULL };
    ok(
        unsafe { ffi::MPI_Comm_dup(ffi::RSMPI_COMM_SELF, &mut c) },
        "dup",
    );
    c
}

fn free_comm(c: Comm) {
    let mut c = c;
    ok(unsafe { ffi::MPI_Comm_free(&mut c) }, "comm free");
}

#[derive(Clone, Copy)]
struct Sendable(Comm, mpix_marshal::Datatype);
unsafe impl Send for Sendable {}

/// Sends `t` to self with `tag` from another thread (the receive may run
/// concurrently; large descriptions need it).
fn send_async(c: Comm, t: mpix_marshal::Datatype, tag: i32) -> std::thread::JoinHandle<()> {
    let s = Sendable(c, t);
    std::thread::spawn(move || {
        let s = s;
        send_type(s.1, 0, tag, s.0).unwrap()
    })
}

fn round_trip(c: Comm, t: mpix_marshal::Datatype, tag: i32) -> mpix_marshal::Datatype {
    let h = send_async(c, t, tag);
    let got = recv_type(0, tag, c).unwrap();
    h.join().unwrap();
    assert_eq!((got.source, got.tag), (0, tag));
    got.datatype
}

#[test]
fn every_corpus_type_arrives_equal_and_the_second_send_is_a_reference() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // A cache that holds the whole corpus (the default of 64 would evict
    // early types, whose equal later twins, such as MPICH 5's value-index
    // types that are the predefined pair types, are then described again).
    exchange::set_cache_limit(4096).unwrap();
    let c = fresh_comm();
    exchange::private_comms(c).unwrap(); // set up now, with that limit
    exchange::set_cache_limit(exchange::DEFAULT_LIMIT).unwrap();
    // Types whose streams are equal are one type to the exchange (on Open
    // MPI a struct of one shared member handle and one of equal distinct
    // handles marshal alike): only a new stream is described.
    let mut seen = std::collections::HashSet::new();
    for case in corpus() {
        let new = seen.insert(marshal(Representation::External, case.datatype).unwrap());
        let before = exchange_counters();
        let first = round_trip(c, case.datatype, 1);
        assert_same(&case.name, case.datatype, first, true);
        let mid = exchange_counters();
        assert_eq!(
            mid.definitions,
            before.definitions + u64::from(new),
            "{}",
            case.name
        );
        assert_eq!(mid.references, before.references + 1);
        let second = round_trip(c, case.datatype, 2);
        assert_same(&case.name, case.datatype, second, true);
        let after = exchange_counters();
        assert_eq!(
            after.definitions, mid.definitions,
            "{}: described twice",
            case.name
        );
        assert_eq!(after.references, mid.references + 1);
        assert_eq!(
            after.reference_bytes - mid.reference_bytes,
            wire::REFERENCE_LEN as u64,
            "the second send is one 16-byte reference"
        );
        free(first);
        free(second);
    }
    free_comm(c);
}

#[test]
fn a_type_renamed_between_sends_is_described_again() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = fresh_comm();
    let t = vector(3, 2, 5, named("MPI_INT"));
    set_name(t, "before");
    let a = round_trip(c, t, 0);
    set_name(t, "after");
    let before = exchange_counters();
    let b = round_trip(c, t, 0);
    assert_eq!(exchange_counters().definitions, before.definitions + 1);
    assert_eq!(mpi_name(a), "before");
    assert_eq!(mpi_name(b), "after");
    assert_same("renamed", t, b, true);
    for x in [a, b, t] {
        free(x);
    }
    free_comm(c);
}

#[test]
fn renaming_an_inner_level_between_references_describes_the_type_again() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = fresh_comm();
    exchange::private_comms(c).unwrap();
    let inner = vector(3, 2, 5, named("MPI_INT"));
    set_name(inner, "inner before");
    let outer = contiguous(2, inner);
    let first = type_reference(outer, 0, c).unwrap();
    assert_eq!(type_reference(outer, 0, c).unwrap(), first, "cached");
    let before = exchange_counters().definitions;
    set_name(inner, "inner after");
    let renamed = type_reference(outer, 0, c).unwrap();
    assert_ne!(renamed, first, "the inner rename went unseen");
    assert_eq!(exchange_counters().definitions, before + 1);
    for r in [first, first, renamed] {
        let t = resolve_type(&r, 0, c).unwrap();
        release_type(t).unwrap();
    }
    free(outer);
    free(inner);
    free_comm(c);
}

fn mpi_name(t: mpix_marshal::Datatype) -> String {
    let n = mpix_marshal::testing::mpi::get_name(t)
        .unwrap()
        .unwrap_or_default();
    String::from_utf8(n).unwrap()
}

#[test]
fn eviction_at_the_limit_keeps_both_sides_in_agreement_whatever_the_receive_order() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    exchange::set_cache_limit(2).unwrap();
    let c = fresh_comm();
    exchange::private_comms(c).unwrap(); // set up now, with the limit 2
    exchange::set_cache_limit(exchange::DEFAULT_LIMIT).unwrap();
    let int = named("MPI_INT");
    let types: Vec<_> = (1..=4).map(|n| contiguous(n, int)).collect();
    // Sent in this order, with these tags: a, b, c (evicts a), a (evicts
    // b), d (evicts c), a (cached).
    let plan = [(0, 10), (1, 11), (2, 12), (0, 13), (3, 14), (0, 15)];
    let before = exchange_counters();
    // A send to self returns when it is received (MPICH): one thread per
    // send, each started once the previous one has passed the cache.
    let mut senders = Vec::new();
    for (n, &(i, tag)) in plan.iter().enumerate() {
        senders.push(send_async(c, types[i], tag));
        while exchange_counters().references < before.references + n as u64 + 1 {
            std::thread::yield_now();
        }
    }
    let sent = exchange_counters();
    assert_eq!(
        sent.definitions - before.definitions,
        5,
        "a, b, c, a again, d"
    );
    // Received in reverse: the references to evicted entries still find them.
    for &(i, tag) in plan.iter().rev() {
        let got = recv_type(0, tag, c).unwrap();
        assert_same(&format!("type {i} tag {tag}"), types[i], got.datatype, true);
        free(got.datatype);
    }
    for h in senders {
        h.join().unwrap();
    }
    // And the caches still agree afterwards.
    let d = round_trip(c, types[3], 20);
    assert_same("d again", types[3], d, true);
    free(d);
    let a = round_trip(c, types[1], 21);
    assert_same("b again", types[1], a, true);
    free(a);
    for t in types {
        free(t);
    }
    free_comm(c);
}

#[test]
fn wildcards_report_the_real_source_and_tag() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = fresh_comm();
    let t = paper_indexed();
    let h = send_async(c, t, 42);
    let any_source = unsafe { ffi::RSMPI_ANY_SOURCE };
    let any_tag = unsafe { ffi::RSMPI_ANY_TAG };
    let got = recv_type(any_source, any_tag, c).unwrap();
    h.join().unwrap();
    assert_eq!((got.source, got.tag), (0, 42));
    assert_eq!(got.status.MPI_SOURCE, 0);
    assert_same("wildcard", t, got.datatype, true);
    free(got.datatype);
    free(t);
    free_comm(c);
}

#[test]
fn predefined_types_come_back_as_themselves() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = fresh_comm();
    for name in ["MPI_INT", "MPI_DOUBLE", "MPI_BYTE"] {
        let got = round_trip(c, named(name), 3);
        assert_eq!(got, named(name));
    }
    let root = bcast_type(named("MPI_INT"), 0, c).unwrap();
    assert_eq!(root, named("MPI_INT"));
    free_comm(c);
}

#[test]
fn threads_sending_and_receiving_at_once() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = fresh_comm();
    let types: Vec<_> = (1..=6)
        .map(|n| vector(n, 2, 3, named("MPI_DOUBLE")))
        .collect();
    let senders: Vec<_> = (0..4)
        .map(|k| {
            let ts: Vec<_> = types.iter().map(|&t| Sendable(c, t)).collect();
            std::thread::spawn(move || {
                for round in 0..20 {
                    let s = ts[(k + round) % ts.len()];
                    send_type(s.1, 0, 100 + k as i32, s.0).unwrap();
                }
            })
        })
        .collect();
    let receivers: Vec<_> = (0..4)
        .map(|k| {
            let s = Sendable(c, types[0]);
            std::thread::spawn(move || {
                let s = s;
                let mut got = Vec::new();
                for _ in 0..20 {
                    let r = recv_type(0, 100 + k, s.0).unwrap();
                    got.push(mpix_marshal::type_tree(r.datatype).unwrap());
                    free(r.datatype);
                }
                got
            })
        })
        .collect();
    for h in senders {
        h.join().unwrap();
    }
    let trees: Vec<_> = types
        .iter()
        .map(|&t| mpix_marshal::type_tree(t).unwrap())
        .collect();
    for (k, h) in receivers.into_iter().enumerate() {
        for (round, tree) in h.join().unwrap().into_iter().enumerate() {
            assert_eq!(
                tree,
                trees[(k + round) % trees.len()],
                "thread {k} round {round}"
            );
        }
    }
    for t in types {
        free(t);
    }
    free_comm(c);
}

/// Sends forged bytes to self, without waiting (a send to self may wait
/// for its receive): the buffer is leaked, the request kept for `settle`
/// (MPICH over UCX crashes receiving a self-message whose request was freed).
fn raw_send(bytes: &[u8], tag: c_int, c: Comm) {
    let buf: &'static [u8] = Box::leak(bytes.to_vec().into_boxed_slice());
    let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
    ok(
        unsafe {
            ffi::MPI_Isend(
                buf.as_ptr() as *const c_void,
                buf.len() as c_int,
                ffi::RSMPI_UINT8_T,
                0,
                tag,
                c,
                &mut req,
            )
        },
        "raw send",
    );
    PENDING.lock().unwrap().push(Req(req));
}

struct Req(ffi::MPI_Request);
unsafe impl Send for Req {}
static PENDING: Mutex<Vec<Req>> = Mutex::new(Vec::new());

/// Waits for the forged sends (all received by now).
fn settle() {
    for mut r in PENDING.lock().unwrap().drain(..) {
        ok(
            unsafe { ffi::MPI_Wait(&mut r.0, ffi::RSMPI_STATUS_IGNORE) },
            "wait",
        );
    }
}

fn expect_exchange_error(r: mpix_marshal::Result<mpix_marshal::ReceivedType>, what: &str) {
    match r {
        Err(Error::Exchange(m)) => eprintln!("{what}: {m}"),
        Err(e) => panic!("{what}: the wrong error {e}"),
        Ok(_) => panic!("{what}: accepted"),
    }
}

#[test]
fn forged_identifiers_and_descriptions_are_refused_without_a_leak() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("MPIX_TYPE_EXCHANGE_TIMEOUT", "0.5");
    let c = fresh_comm();
    let (refs, defs) = exchange::private_comms(c).unwrap();
    let t = paper_indexed();
    let id = wire::digest(&marshal(Representation::External, t).unwrap());
    let live = pmpi::live();

    // A reference to an entry never defined (nothing on the definitions
    // channel): refused after the wait.
    raw_send(&wire::Reference::new(1, &id).encode(), 5, refs);
    expect_exchange_error(recv_type(0, 5, c), "undefined entry");

    // A definition whose description does not match its identifier.
    let ext = marshal(Representation::External, t).unwrap();
    let mut forged_id = id;
    forged_id[0] ^= 1;
    let def = wire::Definition {
        rep: Representation::External,
        seq: 1,
        evict: 0,
        evict_refs: 0,
        id: forged_id,
        payload: &ext,
    };
    raw_send(&def.encode(), 0, defs);
    raw_send(&wire::Reference::new(1, &forged_id).encode(), 5, refs);
    expect_exchange_error(
        recv_type(0, 5, c),
        "description not matching its identifier",
    );

    // Garbage on the reference channel.
    raw_send(b"MRgarbage_16byte", 6, refs);
    expect_exchange_error(recv_type(0, 6, c), "garbage");
    settle();
    assert_eq!(pmpi::live(), live, "a refused message left handles behind");
    free(t);
    free_comm(c);

    // A fresh exchange: a genuine entry, then a reference with its number
    // and another identifier.
    let c = fresh_comm();
    let (refs, _) = exchange::private_comms(c).unwrap();
    let t = paper_indexed();
    let got = round_trip(c, t, 1);
    free(got);
    let live = pmpi::live();
    let mut other = wire::digest(&marshal(Representation::External, t).unwrap());
    other[7] ^= 0x80;
    raw_send(&wire::Reference::new(1, &other).encode(), 7, refs);
    let r = recv_type(0, 7, c);
    expect_exchange_error(r, "a forged identifier for a genuine entry");
    settle();
    assert_eq!(pmpi::live(), live);
    // The genuine type still arrives.
    let again = round_trip(c, t, 1);
    assert_same("after a forgery", t, again, true);
    free(again);
    free(t);
    free_comm(c);
    std::env::remove_var("MPIX_TYPE_EXCHANGE_TIMEOUT");
}

#[test]
fn the_c_api_maps_an_unknown_identifier_to_its_error_kind() {
    use mpix_marshal::testing::capi::{ErrorKind, MPIX_Type_marshal_error_kind, MPIX_Type_recv};
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("MPIX_TYPE_EXCHANGE_TIMEOUT", "0.2");
    let c = fresh_comm();
    let (refs, _) = exchange::private_comms(c).unwrap();
    raw_send(&wire::Reference::new(3, &[7; 16]).encode(), 9, refs);
    let mut t = null();
    let mut status = unsafe { std::mem::zeroed::<ffi::MPI_Status>() };
    status.MPI_TAG = -12345;
    let rc = unsafe { MPIX_Type_recv(&mut t, 0, 9, c, &mut status) };
    assert_ne!(rc, 0);
    let mut kind = 0;
    unsafe { MPIX_Type_marshal_error_kind(rc, &mut kind) };
    assert_eq!(kind, ErrorKind::Exchange as c_int);
    assert_eq!(t, null(), "the output was written on error");
    assert_eq!(status.MPI_TAG, -12345, "the status was written on error");
    settle();
    free_comm(c);
    std::env::remove_var("MPIX_TYPE_EXCHANGE_TIMEOUT");
}

#[test]
fn an_explicit_setup_is_done_once() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let base = exchange::live_exchanges();
    let c = fresh_comm();
    mpix_marshal::setup_type_exchange(c).unwrap();
    mpix_marshal::setup_type_exchange(c).unwrap();
    assert_eq!(exchange::live_exchanges(), base + 1);
    let null = unsafe { ffi::RSMPI_COMM_NULL };
    assert!(matches!(
        mpix_marshal::setup_type_exchange(null),
        Err(Error::InvalidArgument(_))
    ));
    free_comm(c);
    assert_eq!(exchange::live_exchanges(), base);
}

#[test]
fn freeing_the_communicator_releases_its_exchange() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let base = exchange::live_exchanges();
    let c = fresh_comm();
    let t = hdf5_complex(false);
    let got = round_trip(c, t, 1);
    free(got);
    assert_eq!(exchange::live_exchanges(), base + 1);
    let live = pmpi::live();
    free_comm(c);
    assert_eq!(exchange::live_exchanges(), base);
    assert_eq!(pmpi::live(), live, "the cache held datatype handles");
    free(t);
}

/// The size of `t` (it must be committed to be used in communication; a
/// pack of one element proves it is).
fn packs(t: mpix_marshal::Datatype) -> bool {
    pack(t, 1).is_some()
}

#[test]
fn a_resolved_reference_lends_the_cached_committed_handle() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = fresh_comm();
    exchange::private_comms(c).unwrap();
    let t = paper_indexed();
    let held = exchange::cached_handles();
    let live = pmpi::live();
    let before = exchange_counters();
    // A reference needs no thread: its description waits on the
    // exchange's channel until the resolve reads it.
    let r1 = type_reference(t, 0, c).unwrap();
    let r2 = type_reference(t, 0, c).unwrap();
    assert_eq!(r1.len(), TYPE_REFERENCE_SIZE);
    assert_eq!(r1, r2, "two references to one entry");
    let after = exchange_counters();
    assert_eq!(after.definitions, before.definitions + 1);
    assert_eq!(after.reference_bytes - before.reference_bytes, 32);
    let a = resolve_type(&r1, 0, c).unwrap();
    let b = resolve_type(&r2, 0, c).unwrap();
    assert_eq!(a, b, "one handle, lent twice");
    assert!(packs(a), "the lent handle is committed");
    assert_same("resolved", t, a, true);
    assert_eq!(exchange::cached_handles(), held + 1);
    release_type(a).unwrap();
    release_type(b).unwrap();
    match release_type(b) {
        Err(Error::InvalidArgument(m)) => eprintln!("released twice: {m}"),
        other => panic!("a third release: {other:?}"),
    }
    let proc_null = unsafe { ffi::RSMPI_PROC_NULL };
    assert_eq!(type_reference(t, proc_null, c).unwrap(), [0; 16]);
    free_comm(c);
    assert_eq!(
        exchange::cached_handles(),
        held,
        "the cache kept its handle"
    );
    assert_eq!(pmpi::live(), live, "handles left behind");
    free(t);
}

/// A fresh communicator whose exchange caches one type, the handles the
/// caches hold before, and two types x and y (y evicts x).
fn one_type_cache() -> (Comm, usize, mpix_marshal::Datatype, mpix_marshal::Datatype) {
    exchange::set_cache_limit(1).unwrap();
    let c = fresh_comm();
    exchange::private_comms(c).unwrap();
    exchange::set_cache_limit(exchange::DEFAULT_LIMIT).unwrap();
    let held = exchange::cached_handles();
    let x = contiguous(3, named("MPI_INT"));
    let y = vector(2, 1, 4, named("MPI_DOUBLE"));
    (c, held, x, y)
}

#[test]
fn an_evicted_type_stays_valid_until_its_borrower_releases_it() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (c, held, x, y) = one_type_cache();
    let rx = type_reference(x, 0, c).unwrap();
    let lx = resolve_type(&rx, 0, c).unwrap();
    // y evicts x; x's handle is still lent.
    let ry = type_reference(y, 0, c).unwrap();
    let ly = resolve_type(&ry, 0, c).unwrap();
    assert_same("x after its eviction", x, lx, true);
    assert!(packs(lx));
    assert_eq!(exchange::cached_handles(), held + 2);
    release_type(lx).unwrap();
    assert_eq!(exchange::cached_handles(), held + 1, "x freed at release");
    // x again: described again, a new entry.
    let before = exchange_counters().definitions;
    let rx2 = type_reference(x, 0, c).unwrap();
    assert_eq!(exchange_counters().definitions, before + 1);
    let lx2 = resolve_type(&rx2, 0, c).unwrap();
    assert_same("x again", x, lx2, true);
    release_type(lx2).unwrap();
    release_type(ly).unwrap();
    free_comm(c);
    assert_eq!(exchange::cached_handles(), held);
    free(x);
    free(y);
}

#[test]
fn a_consumed_reference_is_counted_without_making_its_type() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (c, held, x, y) = one_type_cache();
    let live = pmpi::live();
    let rx = type_reference(x, 0, c).unwrap();
    consume_reference(&rx, 0, c).unwrap();
    assert_eq!(exchange::cached_handles(), held, "no type made for it");
    // y evicts x, whose one reference has come: x's entry goes.
    let ry = type_reference(y, 0, c).unwrap();
    let ly = resolve_type(&ry, 0, c).unwrap();
    assert_same("y after a consumed x", y, ly, true);
    release_type(ly).unwrap();
    match consume_reference(&rx, 0, c) {
        Err(Error::Exchange(m)) => assert!(m.contains("evicted before"), "{m}"),
        other => panic!("x's reference again: {other:?}"),
    }
    let any = unsafe { ffi::RSMPI_ANY_SOURCE };
    assert!(matches!(
        consume_reference(&ry, any, c),
        Err(Error::InvalidArgument(_))
    ));
    free_comm(c);
    assert_eq!(exchange::cached_handles(), held);
    assert_eq!(pmpi::live(), live, "handles left behind");
    free(x);
    free(y);
}

#[test]
fn an_uncounted_resolve_leaves_the_entry_to_its_counted_references() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (c, held, x, y) = one_type_cache();
    let live = pmpi::live();
    // One counted reference to x, used uncounted first.
    let rx = type_reference(x, 0, c).unwrap();
    let a = resolve_type_uncounted(&rx, 0, c).unwrap();
    assert_same("x, uncounted", x, a, true);
    release_type(a).unwrap();
    // y evicts x after its one reference, which has not been counted
    // here: x's entry stays.
    let ry = type_reference(y, 0, c).unwrap();
    let ly = resolve_type(&ry, 0, c).unwrap();
    release_type(ly).unwrap();
    let b = resolve_type_uncounted(&rx, 0, c).unwrap();
    assert_same("x, uncounted after its eviction", x, b, true);
    release_type(b).unwrap();
    // Its count comes: the entry goes.
    consume_reference(&rx, 0, c).unwrap();
    match resolve_type_uncounted(&rx, 0, c) {
        Err(Error::Exchange(m)) => assert!(m.contains("evicted before"), "{m}"),
        other => panic!("x's reference after its count: {other:?}"),
    }
    free_comm(c);
    assert_eq!(exchange::cached_handles(), held);
    assert_eq!(pmpi::live(), live, "handles left behind");
    free(x);
    free(y);
}

#[test]
fn forged_references_are_refused_and_outputs_left_untouched() {
    use mpix_marshal::testing::capi::{
        ErrorKind, MPIX_Type_marshal_error_kind, MPIX_Type_reference, MPIX_Type_release,
        MPIX_Type_resolve,
    };
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("MPIX_TYPE_EXCHANGE_TIMEOUT", "0.2");
    let c = fresh_comm();
    exchange::private_comms(c).unwrap();
    let t = paper_indexed();
    let kind = |rc: c_int| {
        let mut k = 0;
        unsafe { MPIX_Type_marshal_error_kind(rc, &mut k) };
        k
    };
    let mut r = [0u8; 16];
    assert_eq!(
        unsafe { MPIX_Type_reference(t, 0, c, r.as_mut_ptr().cast()) },
        0
    );
    let mut bad = r;
    bad[15] ^= 1; // another identifier
    let mut out = null();
    let rc = unsafe { MPIX_Type_resolve(bad.as_ptr().cast(), 0, c, &mut out) };
    assert_eq!(kind(rc), ErrorKind::Exchange as c_int);
    assert_eq!(out, null(), "written on error");
    // An entry never defined: refused after the wait.
    let never = wire::Reference::new(9, &[1; 16]).encode();
    let rc = unsafe { MPIX_Type_resolve(never.as_ptr().cast(), 0, c, &mut out) };
    assert_eq!(kind(rc), ErrorKind::Exchange as c_int);
    // Not a reference; a wildcard source; NULL pointers.
    let rc = unsafe { MPIX_Type_resolve([0u8; 16].as_ptr().cast(), 0, c, &mut out) };
    assert_eq!(kind(rc), ErrorKind::Exchange as c_int);
    let any = unsafe { ffi::RSMPI_ANY_SOURCE };
    let rc = unsafe { MPIX_Type_resolve(r.as_ptr().cast(), any, c, &mut out) };
    assert_eq!(kind(rc), ErrorKind::InvalidArgument as c_int);
    let rc = unsafe { MPIX_Type_resolve(std::ptr::null(), 0, c, &mut out) };
    assert_eq!(kind(rc), ErrorKind::InvalidArgument as c_int);
    let rc = unsafe { MPIX_Type_reference(t, 0, c, std::ptr::null_mut()) };
    assert_eq!(kind(rc), ErrorKind::InvalidArgument as c_int);
    assert_eq!(out, null());
    // The genuine reference still resolves (the forgery with its entry's
    // number was refused before it counted), and is released through the
    // C API.
    assert_eq!(
        unsafe { MPIX_Type_resolve(r.as_ptr().cast(), 0, c, &mut out) },
        0
    );
    assert_same("genuine", t, out, true);
    let mut copy = out;
    assert_eq!(unsafe { MPIX_Type_release(&mut out) }, 0);
    assert_eq!(out, null(), "release sets MPI_DATATYPE_NULL");
    let rc = unsafe { MPIX_Type_release(&mut copy) };
    assert_eq!(kind(rc), ErrorKind::InvalidArgument as c_int);
    assert_ne!(copy, null(), "written on error");
    free_comm(c);
    free(t);
    std::env::remove_var("MPIX_TYPE_EXCHANGE_TIMEOUT");
}
