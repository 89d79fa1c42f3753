//! No message is lost silently (issue 29, item 4): `MPI_Finalize` is
//! checked. Every rank reports the messages sent to it that no receive
//! took, and its own nonblocking sends that were never completed.
//!
//! # How
//!
//! *With the point-to-point checks* (`MPIX_CHECK_P2P=1`) every user
//! message has a companion (`crate::p2p`), and a receive consumes its
//! message's companion. Each rank counts, per world rank, the companions it
//! sent (less those of messages cancelled or never posted) and the
//! companions it consumed: two atomic additions per message. At
//! `MPI_Finalize`, one `MPI_Alltoall` on the checker's private duplicate of
//! `MPI_COMM_WORLD` (`MPI_Finalize` is collective over the world) tells
//! every rank how many companions each rank sent it. Where fewer were
//! consumed, the missing ones are lost messages: the rank probes its
//! channels (bounded: 2 s) until it has them all, takes them (they are the
//! checker's own messages), decodes the sender's (count, datatype) and
//! probes the user's communicator for the message itself (its size; a
//! small message, up to 4 KiB, is taken too, so that the next one of that
//! source and tag can be seen). A correct program pays the counters and the
//! one `MPI_Alltoall`, nothing else: it has nothing to find.
//!
//! *Without them*, nothing is counted: after a barrier on the private
//! duplicate, `MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG)` on `MPI_COMM_WORLD`
//! and `MPI_COMM_SELF` finds the messages that arrived and were never
//! received (source, tag, size in bytes: no datatype travels). Limits: a
//! message still in transit at the barrier is not seen (MPI does not order
//! messages on two communicators), nor one on another communicator.
//!
//! *Pending sends*: with the point-to-point checks, every nonblocking or
//! persistent send on a checked communicator is kept under its request
//! until a Wait/Test form completes it (or `MPI_Request_free` frees it: the
//! program gave it up, which MPI allows). Those left at `MPI_Finalize` are
//! reported by their sender.
//!
//! *Not reported*: the checker's own messages (companions, the collective
//! checks', the status channel's) and the type exchange's: all travel on
//! private duplicates, never probed as the user's. A companion whose
//! message was cancelled is not counted as sent; one MPI could not cancel
//! any more is counted as an orphan, and a companion of that sender whose
//! message is not on the user's communicator is dropped as that orphan.
//!
//! *Freed communicators*: a message no receive took is lost as much when
//! the program freed its communicator since. When the program frees a
//! checked communicator with no receive of it pending, the companions that
//! have arrived are taken and kept (decoded) for the report at
//! `MPI_Finalize`; the user's message itself cannot be probed any more.
//!
//! *Exit status*: under `MPIX_CHECK` (fatal, the default) a rank that
//! reported ends with exit status 1 when the program exits (after its own
//! code after `MPI_Finalize` has run, as valgrind's `--error-exitcode`):
//! `MPI_Finalize` itself returns `MPI_SUCCESS`, since a program rarely
//! reads it and nothing can be recovered there. `MPIX_CHECK=warn` only
//! reports.

use super::channels::{channels, lock, world_of, Channel};
use super::companions::Companion;
use super::counts::{counts, pending, world_ranks, PendingSend, PENDING_SENDS};
use super::matching::drop_arrived;
use super::verdict::{any_arrived, arrived, recv_companion, SenderType};
use crate::mpi;
use crate::report::{self, Mode, Report};
use crate::sys::*;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

extern "C" {
    fn mxc_set_exit_status(code: c_int);
}

/// How long a rank waits for companions it knows were sent to it.
const WAIT: Duration = Duration::from_secs(2);
/// A lost message up to this size is taken off the user's communicator
/// (it has arrived whole under every MPI's eager protocol), so that the
/// next one of its source and tag can be seen.
const TAKE: c_int = 4096;
/// At most this many grouped lines per report.
const LINES: usize = 20;

// ---- lost messages ----

/// `MPIX_CHECK_LOST=0` turns the check at MPI_Finalize off (a program that
/// leaves messages behind on purpose).
fn wanted() -> bool {
    !matches!(
        std::env::var("MPIX_CHECK_LOST")
            .unwrap_or_default()
            .as_str(),
        "0" | "off" | "no"
    )
}

/// One lost message, as reported (grouped by all its fields).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Lost {
    comm: String,
    /// The source in the communicator (its name for intercommunicators
    /// says "remote group rank").
    source: String,
    world: i32,
    tag: c_int,
    /// "(count, datatype) = …", or empty when no companion said it.
    what: String,
    /// The message's size in bytes, when known.
    bytes: Option<u64>,
}

/// Lost messages found at the free of their communicator.
fn freed_lost() -> &'static Mutex<Vec<Lost>> {
    static F: OnceLock<Mutex<Vec<Lost>>> = OnceLock::new();
    F.get_or_init(Default::default)
}

fn channel_name(ch: &Channel) -> String {
    if ch.inter {
        mpi::inter_name(ch.comm)
    } else {
        mpi::comm_name(ch.comm, ch.size)
    }
}

fn source_name(ch: &Channel, source: c_int) -> String {
    if ch.inter {
        format!("remote group rank {source}")
    } else {
        format!("rank {source}")
    }
}

/// The sender's (count, datatype) of a companion, and its size in bytes.
fn describe(c: &Companion, source: c_int, dup: MPI_Comm) -> (String, Option<u64>) {
    let sender_type = SenderType::of(c, source, dup);
    let el = if c.elements == 1 {
        "element"
    } else {
        "elements"
    };
    match sender_type.get() {
        Some(t) => (
            format!(
                "(count, datatype) = {}: {} {el}",
                crate::sig::describe(c.count, t),
                c.elements
            ),
            Some(mpi::type_size(t).saturating_mul(c.count.max(0) as u64)),
        ),
        None => (
            format!(
                "{} {el} (the sender's datatype is unknown here)",
                c.elements
            ),
            None,
        ),
    }
}

fn probe(source: c_int, tag: c_int, comm: MPI_Comm) -> Option<MPI_Status> {
    let mut flag = 0;
    // SAFETY: MPI_Status is plain data.
    let mut st: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: a probe of a valid communicator.
    let rc = unsafe { PMPI_Iprobe(source, tag, comm, &mut flag, &mut st) };
    (rc == 0 && flag != 0).then_some(st)
}

fn bytes_of(st: &MPI_Status) -> u64 {
    let mut n: MPI_Count = 0;
    // SAFETY: a status MPI wrote.
    unsafe { PMPI_Get_elements_x(st, mpi::byte(), &mut n) };
    n.max(0) as u64
}

/// Takes the user's message that `st` probed off `comm` when it is small
/// (it has arrived whole): the next one of its source and tag shows then.
/// Whether it was taken.
fn take_message(st: &MPI_Status, comm: MPI_Comm) -> bool {
    let n = bytes_of(st);
    if n > TAKE as u64 {
        return false;
    }
    let mut flag = 0;
    let mut msg = std::mem::MaybeUninit::<MPI_Message>::uninit();
    // SAFETY: MPI_Status is plain data.
    let mut s2: MPI_Status = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; TAKE as usize];
    // SAFETY: a matched probe of the message just seen, then its receive
    // into a buffer of TAKE bytes (no more than that arrived).
    unsafe {
        if PMPI_Improbe(
            st.MPI_SOURCE,
            st.MPI_TAG,
            comm,
            &mut flag,
            msg.as_mut_ptr(),
            &mut s2,
        ) != 0
            || flag == 0
        {
            return false;
        }
        let mut msg = msg.assume_init();
        PMPI_Mrecv(
            buf.as_mut_ptr() as *mut c_void,
            TAKE,
            mpi::byte(),
            &mut msg,
            RSMPI_STATUS_IGNORE,
        ) == 0
    }
}

/// At the free of a checked communicator with no receive of it pending:
/// the companions that have arrived are of messages no receive took.
pub(super) fn channel_freed(ch: &mut Channel) {
    if counts().is_none() {
        return;
    }
    settle(ch);
    if ch.queue.iter().any(|r| r.got.is_none() && !r.detached) {
        return;
    }
    let name = format!("{} (freed since)", channel_name(ch));
    let mut found = vec![];
    while let Some((s, t)) = any_arrived(ch) {
        let Some(c) = recv_companion(ch, s, t) else {
            break;
        };
        let (what, bytes) = describe(&c, s, ch.dup);
        found.push(Lost {
            comm: name.clone(),
            source: source_name(ch, s),
            world: world_of(ch, s),
            tag: t,
            what,
            bytes,
        });
    }
    lock(freed_lost()).extend(found);
}

/// The companions of receives that took their message but were not
/// checked yet (an earlier receive still pending, or freed while active)
/// are taken first: their messages were received.
fn settle(ch: &mut Channel) {
    // In the batched mode those whose batch has come are checked.
    let batched = ch.batches.is_some();
    if batched {
        let _ = super::matching::poll_and_drain(ch);
    }
    let done: Vec<(u64, (c_int, c_int))> = ch
        .queue
        .iter()
        .filter_map(|r| match r.got {
            Some(g) => Some((r.id, g)),
            None if r.detached => Some((r.id, (r.source, r.tag))),
            None => None,
        })
        .collect();
    let mut waiting = vec![];
    for (id, (s, t)) in done {
        if arrived(ch, s, t) {
            let _ = recv_companion(ch, s, t);
        } else if batched {
            // Its batch may still come (`by_companions` waits for it).
            waiting.push(id);
        }
    }
    ch.queue
        .retain(|r| (r.got.is_none() && !r.detached) || waiting.contains(&r.id));
}

/// The live channels (their user communicators are valid).
fn live() -> Vec<&'static mut Channel> {
    lock(channels())
        .iter()
        // SAFETY: a registered channel is alive until delete_channel
        // unregisters it; MPI_Finalize runs on one thread.
        .map(|&c| unsafe { &mut *(c as *mut Channel) })
        .collect()
}

/// Descriptions already made, by (channel, source, reference, count,
/// flags).
type Described = HashMap<(u64, c_int, [u8; 16], i64, u64), (String, Option<u64>)>;

/// The companions sent to this rank and not consumed: each a lost
/// message, with its user message probed (and taken when small).
fn by_companions(
    expected: &[i64],
    orphans: &mut [u64],
    stuck: &mut Vec<(u64, c_int, c_int)>,
    out: &mut Vec<Lost>,
) {
    let Some(c) = counts() else { return };
    let chans = live();
    for ch in chans {
        if ch.lost {
            drop_arrived(ch);
        } else {
            settle(ch);
        }
    }
    let missing = || -> i64 {
        expected
            .iter()
            .zip(&c.consumed)
            .map(|(&e, k)| (e - k.load(Ordering::Relaxed) as i64).max(0))
            .sum()
    };
    // Waits up to WAIT for the next companion (10^6 lost messages take
    // longer than that to read).
    let mut deadline = Instant::now() + WAIT;
    // Lost messages whose user message could not be taken: the next ones
    // of that (communicator, source, tag) are not probed.
    let mut cache: Described = HashMap::new();
    while missing() > 0 && Instant::now() < deadline {
        let mut any = false;
        for ch in live() {
            if ch.lost {
                continue;
            }
            if ch.batches.is_some() {
                settle(ch);
            }
            while let Some((s, t)) = any_arrived(ch) {
                let Some(comp) = recv_companion(ch, s, t) else {
                    break;
                };
                any = true;
                deadline = Instant::now() + WAIT;
                if let Some(l) = lost_one(ch, s, t, &comp, &mut cache, stuck, orphans) {
                    out.push(l);
                }
            }
        }
        if !any {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    never_came(expected, &c.consumed, orphans, out);
}

/// The lost message of one companion received at the end: its user
/// message probed and taken when small (not after one that could not be
/// taken, on that (communicator, source, tag)); None for an orphan (a
/// companion whose message MPI cancelled).
fn lost_one(
    ch: &Channel,
    s: c_int,
    t: c_int,
    comp: &Companion,
    cache: &mut Described,
    stuck: &mut Vec<(u64, c_int, c_int)>,
    orphans: &mut [u64],
) -> Option<Lost> {
    let world = world_of(ch, s);
    let key = (mpi::bits(ch.dup), s, comp.reference, comp.count, comp.flags);
    let (what, bytes) = cache
        .entry(key)
        .or_insert_with(|| describe(comp, s, ch.dup))
        .clone();
    let mut size = bytes;
    let head = (mpi::bits(ch.comm), s, t);
    if !stuck.contains(&head) {
        match probe(s, t, ch.comm) {
            Some(m) => {
                size = Some(bytes_of(&m));
                if !take_message(&m, ch.comm) {
                    stuck.push(head);
                }
            }
            None => {
                let o = usize::try_from(world).ok().and_then(|w| orphans.get_mut(w));
                if let Some(o) = o.filter(|o| **o > 0) {
                    *o -= 1;
                    return None;
                }
            }
        }
    }
    Some(Lost {
        comm: channel_name(ch),
        source: source_name(ch, s),
        world,
        tag: t,
        what,
        bytes: size,
    })
}

/// What never came: sent on a communicator freed since (before its
/// companion arrived), or still in flight after the wait.
fn never_came(expected: &[i64], consumed: &[AtomicU64], orphans: &[u64], out: &mut Vec<Lost>) {
    for (w, (&e, k)) in expected.iter().zip(consumed).enumerate() {
        let n = e - k.load(Ordering::Relaxed) as i64 - orphans.get(w).copied().unwrap_or(0) as i64;
        for _ in 0..n.max(0) {
            out.push(Lost {
                comm: "a communicator freed since (or the message is still in flight)".into(),
                source: "a rank".into(),
                world: w as i32,
                tag: -1,
                what: String::new(),
                bytes: None,
            });
        }
    }
}

/// Messages without a companion on `comm`: probed, and taken when small.
fn sweep(
    comm: MPI_Comm,
    name: &str,
    inter: bool,
    stuck: &[(u64, c_int, c_int)],
    out: &mut Vec<Lost>,
) {
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    let world = world_ranks(comm, inter);
    // Bounded: a program that keeps sending to itself from another thread
    // would keep this going.
    let deadline = Instant::now() + 10 * WAIT;
    while let Some(st) = probe(any_source, any_tag, comm) {
        let s = st.MPI_SOURCE;
        if stuck.contains(&(mpi::bits(comm), s, st.MPI_TAG)) {
            // Reported with its companion, and too large to take.
            break;
        }
        out.push(Lost {
            comm: name.to_string(),
            source: if inter {
                format!("remote group rank {s}")
            } else {
                format!("rank {s}")
            },
            world: world.get(s as usize).copied().unwrap_or(-1),
            tag: st.MPI_TAG,
            what: String::new(),
            bytes: Some(bytes_of(&st)),
        });
        if !take_message(&st, comm) || Instant::now() > deadline {
            break;
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Groups identical findings, in order, with their counts.
fn grouped<T: Ord + Clone>(v: Vec<T>) -> Vec<(T, usize)> {
    let mut m: std::collections::BTreeMap<T, usize> = Default::default();
    for x in v {
        *m.entry(x).or_default() += 1;
    }
    m.into_iter().collect()
}

fn lost_line((l, n): &(Lost, usize)) -> String {
    let from = if l.world >= 0 {
        format!("{} (world rank {})", l.source, l.world)
    } else {
        l.source.clone()
    };
    let mut s = format!(
        "{} from {from} on {}",
        plural(*n, "message", "messages"),
        l.comm
    );
    if l.tag >= 0 {
        s.push_str(&format!(", tag {}", l.tag));
    }
    if !l.what.is_empty() {
        s.push_str(&format!(": {}", l.what));
    }
    if let Some(b) = l.bytes {
        s.push_str(&format!(
            ", {b} {}{}",
            if b == 1 { "byte" } else { "bytes" },
            if *n > 1 { " each" } else { "" }
        ));
    }
    s
}

/// The check at `MPI_Finalize`, before the checker frees its state:
/// collective over MPI_COMM_WORLD, as `MPI_Finalize` is.
pub fn at_finalize() {
    if report::config().mode == Mode::Off || crate::internal::active() || !wanted() {
        return;
    }
    let Some(st) = mpi::state(mpi::comm_world()) else {
        return;
    };
    if st.unchecked {
        return;
    }
    let (me, size) = (mpi::world_rank_cached(), st.size);
    let p2p = super::enabled() && counts().is_some();
    let mut found = report_pending_sends(me, size);
    let mut lost: Vec<Lost> = vec![];
    let mut stuck = vec![];
    if p2p {
        super::channels::flush_all();
        by_counts(st.dup, &mut stuck, &mut lost);
    } else {
        // SAFETY: the checker's duplicate of MPI_COMM_WORLD.
        unsafe { PMPI_Barrier(st.dup) };
    }
    // Messages without a companion (all of them without the point-to-point
    // checks) on the communicators every program has.
    let world = mpi::comm_world();
    sweep(
        world,
        &mpi::comm_name(world, size),
        false,
        &stuck,
        &mut lost,
    );
    let selfc = mpi::comm_self();
    sweep(selfc, &mpi::comm_name(selfc, 1), false, &stuck, &mut lost);
    found += report_lost(me, size, lost, p2p);
    if found > 0 && report::config().mode == Mode::Fatal {
        // SAFETY: sets the status the process exits with (shim.c).
        unsafe { mxc_set_exit_status(1) };
    }
}

/// Reports this rank's nonblocking sends never completed; their number.
fn report_pending_sends(me: c_int, size: usize) -> usize {
    let mut sends: Vec<PendingSend> = pending()
        .with(|p| std::mem::take(&mut p.sends))
        .into_values()
        .collect();
    sends.sort_unstable_by_key(|s| s.seq);
    PENDING_SENDS.store(0, Ordering::Release);
    if sends.is_empty() {
        return 0;
    }
    let lines: Vec<(String, usize)> = grouped(sends.iter().map(pending_send_line).collect());
    let total = sends.len();
    let mut details = kinds(&lines, |(l, n)| format!("{n} x {l}"));
    details.push("no MPI_Wait/MPI_Test form completed their requests before MPI_Finalize".into());
    let summary = format!(
        "{} of world rank {me} never completed",
        plural(total, "nonblocking send", "nonblocking sends")
    );
    finalize_report(
        me,
        size,
        "pending-send",
        summary,
        details,
        ("pending_sends", total),
    );
    total
}

/// A report of `MPI_Finalize`'s check by world rank `me`, with its count.
fn finalize_report(
    me: c_int,
    size: usize,
    kind: &'static str,
    summary: String,
    details: Vec<String>,
    (field, total): (&'static str, usize),
) {
    Report {
        call: "MPI_Finalize".into(),
        comm: "MPI_COMM_WORLD".into(),
        seq: 1,
        rank: me.max(0) as usize,
        size,
        kind,
        summary,
        details,
        fields: vec![(field, total.to_string())],
    }
    .emit(me);
}

/// The first `LINES` groups as report lines, and how many more kinds.
fn kinds<T>(groups: &[T], line: impl Fn(&T) -> String) -> Vec<String> {
    let mut details: Vec<String> = groups.iter().take(LINES).map(line).collect();
    if groups.len() > LINES {
        details.push(format!("… and {} more kinds", groups.len() - LINES));
    }
    details
}

/// "MPI_Isend to rank 1 on MPI_COMM_WORLD, tag 3: (count, datatype) = …"
fn pending_send_line(p: &PendingSend) -> String {
    let channel = live()
        .into_iter()
        .find(|c| mpi::bits(c.comm) == mpi::bits(p.comm));
    let readable = channel.is_some()
        && (mpi::is_named(p.datatype)
            || crate::sig::TYPES_FREED.load(Ordering::Acquire) == p.freed);
    let comm = match channel {
        Some(c) => channel_name(c),
        None => "a communicator freed since".into(),
    };
    let what = if readable {
        format!(
            ": (count, datatype) = {}",
            crate::sig::describe(p.count, p.datatype)
        )
    } else {
        format!(": count {}", p.count)
    };
    let to = if p.world >= 0 {
        format!("rank {} (world rank {})", p.dest, p.world)
    } else {
        format!("rank {}", p.dest)
    };
    format!("{} to {to} on {comm}, tag {}{what}", p.call, p.tag)
}

/// How many companions every rank sent to every other (one all-to-all on
/// the checker's duplicate `dup`), then the messages lost by those counts.
fn by_counts(dup: MPI_Comm, stuck: &mut Vec<(u64, c_int, c_int)>, lost: &mut Vec<Lost>) {
    let c = counts().unwrap_or_else(|| unreachable!());
    let n = c.sent.len();
    let mut out = vec![0u64; 2 * n];
    for w in 0..n {
        out[2 * w] = c.sent[w].load(Ordering::Relaxed);
        out[2 * w + 1] = c.orphans[w].load(Ordering::Relaxed);
    }
    let Some(inn) = mpi::alltoall_words(dup, &out, 2) else {
        return;
    };
    let expected: Vec<i64> = (0..n)
        .map(|w| (inn[2 * w] + inn[2 * w + 1]) as i64)
        .collect();
    let mut orphans: Vec<u64> = (0..n).map(|w| inn[2 * w + 1]).collect();
    // Found at the free of their communicators: counted as consumed.
    lost.append(&mut lock(freed_lost()));
    by_companions(&expected, &mut orphans, stuck, lost);
}

/// Reports the messages sent to this rank and never received; their
/// number.
fn report_lost(me: c_int, size: usize, lost: Vec<Lost>, p2p: bool) -> usize {
    if lost.is_empty() {
        return 0;
    }
    let total = lost.len();
    let groups = grouped(lost);
    let mut details = kinds(&groups, lost_line);
    if !p2p {
        details.push(
            "(with the point-to-point checks off only MPI_COMM_WORLD and MPI_COMM_SELF are probed, and no datatype is known)"
                .into(),
        );
    }
    let summary = format!(
        "{} sent to world rank {me} {} never received",
        plural(total, "message", "messages"),
        if total == 1 { "was" } else { "were" }
    );
    finalize_report(
        me,
        size,
        "lost-message",
        summary,
        details,
        ("lost_messages", total),
    );
    total
}
