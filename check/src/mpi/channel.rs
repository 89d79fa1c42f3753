//! The status channel: after a timeout, a waiting rank asks the ranks of
//! its check's communicator where they are, and ranks waiting in checks
//! answer from their poll loops. It runs on the checker's private
//! duplicate of `MPI_COMM_WORLD` under tags the checks never use (the
//! table of tags: `super::TAG_*`), so it never matches a check's message.
//! No message is sent unless a check times out.

use super::{bits, byte, comm_world, from_bits, ok, TAG_ANSWER, TAG_QUERY};
use crate::sys::*;
use crate::wire::{put_str, Reader, Wait};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static CHANNEL: AtomicU64 = AtomicU64::new(0);
static OPEN: AtomicBool = AtomicBool::new(false);
/// The messages this rank posted to each world rank, and those it took:
/// at MPI_Finalize each rank takes in every message sent to it.
static SENT_TO: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static TAKEN: AtomicU64 = AtomicU64::new(0);
/// How long `close` waits for messages posted to this rank (they are on
/// their way: only a send MPI failed could keep one away).
const WAIT: Duration = Duration::from_secs(10);

/// The channel is the world state's private duplicate (set at MPI_Init).
pub fn open(dup: MPI_Comm) {
    CHANNEL.store(bits(dup), Ordering::Release);
    OPEN.store(true, Ordering::Release);
}

/// Closes the channel at MPI_Finalize, once every rank is past the
/// checks' last wait, before the duplicate is freed: nothing more is
/// posted, and what was posted here is taken in. A late answer (from a
/// rank that was computing when asked) can still be on its way then, and
/// MPICH 5 refuses to free a communicator holding unmatched messages (the
/// job ended with "being freed has 2 unmatched message(s)"). Each rank
/// learns from an all-to-all of counts how many were posted to it.
pub fn close() {
    if !OPEN.swap(false, Ordering::AcqRel) {
        return;
    }
    let comm: MPI_Comm = from_bits(CHANNEL.load(Ordering::Acquire));
    let mut n: c_int = 0;
    // SAFETY: a local query of the checker's duplicate.
    if ok(unsafe { PMPI_Comm_size(comm, &mut n) }).is_err() {
        return;
    }
    let mut sent = SENT_TO.lock().unwrap_or_else(|e| e.into_inner()).clone();
    sent.resize(n.max(0) as usize, 0);
    let Some(owed) = super::alltoall_words(comm, &sent, 1) else {
        return;
    };
    let owed: u64 = owed.iter().sum();
    let deadline = Instant::now() + WAIT;
    while TAKEN.load(Ordering::Acquire) < owed && Instant::now() < deadline {
        if take(comm, TAG_QUERY).is_none() && take(comm, TAG_ANSWER).is_none() {
            std::thread::yield_now();
        }
    }
}

fn channel() -> Option<MPI_Comm> {
    OPEN.load(Ordering::Acquire)
        .then(|| from_bits(CHANNEL.load(Ordering::Acquire)))
}

/// What a rank answered: where it waits.
#[derive(Debug, Clone)]
pub struct Answer {
    pub world: i32,
    pub id: u64,
    pub call: u64,
    pub seq: u64,
    /// Its name of the communicator it waits on.
    pub name: String,
    /// Where the program made the call whose check it waits in
    /// (`crate::site::call_site`'s form; empty: not known).
    pub site: String,
    /// A collective check's phase, and the world ranks of its communicator.
    pub phase: u64,
    pub members: Vec<i32>,
    /// A point-to-point wait (or MPI_Finalize's), instead of a check.
    pub wait: Option<Wait>,
}

/// The world ranks of a private communicator's ranks, in its rank order
/// (empty when MPI cannot say).
pub fn members(dup: u64) -> Vec<i32> {
    let dup: MPI_Comm = from_bits(dup);
    let mut g = std::mem::MaybeUninit::<MPI_Group>::uninit();
    let mut wg = std::mem::MaybeUninit::<MPI_Group>::uninit();
    // SAFETY: local group queries of valid communicators; both groups are
    // freed below, and the buffers hold n ranks.
    unsafe {
        if ok(PMPI_Comm_group(dup, g.as_mut_ptr())).is_err() {
            return vec![];
        }
        let mut g = g.assume_init();
        let mut out = vec![];
        if ok(PMPI_Comm_group(comm_world(), wg.as_mut_ptr())).is_ok() {
            let mut wg = wg.assume_init();
            let mut n = 0;
            if ok(PMPI_Group_size(g, &mut n)).is_ok() {
                let from: Vec<c_int> = (0..n).collect();
                let mut to = vec![0 as c_int; n.max(0) as usize];
                if ok(PMPI_Group_translate_ranks(
                    g,
                    n,
                    from.as_ptr(),
                    wg,
                    to.as_mut_ptr(),
                ))
                .is_ok()
                {
                    out = to;
                }
            }
            PMPI_Group_free(&mut wg);
        }
        PMPI_Group_free(&mut g);
        out
    }
}

/// Sends bytes without waiting (a timeout's few small messages), counted.
fn post(comm: MPI_Comm, dest: c_int, tag: c_int, bytes: Vec<u8>) {
    let Ok(d) = usize::try_from(dest) else { return };
    if super::send_bytes(comm, d, tag, bytes) {
        let mut sent = SENT_TO.lock().unwrap_or_else(|e| e.into_inner());
        if sent.len() <= d {
            sent.resize(d + 1, 0);
        }
        sent[d] += 1;
    }
}

/// Receives a message `Iprobe` found (any source, `tag`), or None.
fn take(comm: MPI_Comm, tag: c_int) -> Option<(c_int, Vec<u8>)> {
    let mut flag: c_int = 0;
    // SAFETY: MPI_Status is plain data.
    let mut status: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: probes the checker's channel.
    ok(unsafe { PMPI_Iprobe(RSMPI_ANY_SOURCE, tag, comm, &mut flag, &mut status) }).ok()?;
    if flag == 0 {
        return None;
    }
    let mut n: c_int = 0;
    // SAFETY: the status of the probed message.
    ok(unsafe { PMPI_Get_count(&status, byte(), &mut n) }).ok()?;
    let source = status.MPI_SOURCE;
    let mut buf = vec![0u8; n.max(0) as usize];
    // SAFETY: buf holds the probed message's bytes.
    ok(unsafe {
        PMPI_Recv(
            buf.as_mut_ptr() as *mut c_void,
            n,
            byte(),
            source,
            tag,
            comm,
            RSMPI_STATUS_IGNORE,
        )
    })
    .ok()?;
    TAKEN.fetch_add(1, Ordering::AcqRel);
    Some((source, buf))
}

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

/// Asks every member but this rank where it is; returns the query's serial
/// (answers to older queries are dropped).
pub fn ask(members: &[i32]) -> u64 {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed) + 1;
    let Some(comm) = channel() else {
        return serial;
    };
    let me = super::world_rank_cached();
    for &m in members {
        if m != me && m >= 0 {
            post(comm, m, TAG_QUERY, serial.to_le_bytes().to_vec());
        }
    }
    serial
}

/// Answers the queries that arrived, with the check this thread waits in,
/// or its point-to-point wait (`crate::hang`).
/// How many queries each world rank sent this one (index: the rank): a
/// hang's reporter waits, before it ends the job, until each rank of the
/// hang has asked twice more, so their lines pointing at the report are out.
static QUERIES_FROM: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// The queries `rank` has sent this rank so far.
pub fn queries_from(rank: i32) -> u32 {
    let q = QUERIES_FROM.lock().unwrap_or_else(|e| e.into_inner());
    usize::try_from(rank)
        .ok()
        .and_then(|r| q.get(r).copied())
        .unwrap_or(0)
}

fn count_query(rank: i32) {
    let Ok(r) = usize::try_from(rank) else { return };
    let mut q = QUERIES_FROM.lock().unwrap_or_else(|e| e.into_inner());
    if q.len() <= r {
        q.resize(r + 1, 0);
    }
    q[r] += 1;
}

/// Answers the queries that arrived: with the check this thread waits
/// in, else with `describe` (its point-to-point wait, `crate::hang`). A
/// check's call site, found the first time it is asked for (which can
/// take longer than the asker waits), follows in a second answer.
pub fn answer_queries(describe: fn() -> Option<Wait>) {
    let Some(comm) = channel() else { return };
    while let Some((source, q)) = take(comm, TAG_QUERY) {
        count_query(source);
        let serial = words(&q).first().copied().unwrap_or(0);
        if let Some(w) = crate::waiting::current() {
            let known = crate::waiting::site_known();
            let site = known.as_deref().unwrap_or("");
            post(comm, source, TAG_ANSWER, check_answer(serial, &w, site));
            if known.is_none() {
                let site = crate::waiting::site();
                post(comm, source, TAG_ANSWER, check_answer(serial, &w, &site));
            }
        } else if let Some(p) = describe() {
            let mut out = Vec::new();
            for x in [serial, 0, 0, 0, 0] {
                out.extend_from_slice(&x.to_le_bytes());
            }
            put_str(&mut out, "");
            put_str(&mut out, "");
            out.push(1);
            p.encode(&mut out);
            post(comm, source, TAG_ANSWER, out);
        }
    }
}

/// The answer of a rank waiting in check `w`, with its call site (empty:
/// not found yet).
fn check_answer(serial: u64, w: &crate::waiting::Waiting, site: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for x in [serial, w.id, w.call, w.seq, w.phase as u64] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    put_str(&mut out, &crate::names::name_of(w.comm, w.size));
    put_str(&mut out, site);
    out.push(0);
    let m = members(w.dup);
    out.extend_from_slice(&(m.len() as u32).to_le_bytes());
    for r in m {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out
}

/// The answers to query `serial` that arrived.
pub fn collect(serial: u64) -> Vec<Answer> {
    let Some(comm) = channel() else {
        return vec![];
    };
    let mut out = Vec::new();
    while let Some((source, b)) = take(comm, TAG_ANSWER) {
        if let Some(a) = decode(source, serial, &b) {
            out.push(a);
        }
    }
    out
}

fn decode(source: c_int, serial: u64, b: &[u8]) -> Option<Answer> {
    let mut r = Reader(b);
    let s = r.u64()?;
    if s != serial {
        return None;
    }
    let (id, call, seq, phase) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
    let name = r.str()?;
    let site = r.str()?;
    let (mut members, mut wait) = (vec![], None);
    if r.u8()? == 0 {
        let n = r.u32()? as usize;
        for _ in 0..n {
            members.push(r.u32()? as i32);
        }
    } else {
        wait = Some(Wait::decode(r.0)?);
    }
    Some(Answer {
        world: source,
        id,
        call,
        seq,
        name,
        site,
        phase,
        members,
        wait,
    })
}
