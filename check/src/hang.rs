//! Point-to-point hangs become reports (issue 29, item 2).
//!
//! When `MPIX_CHECK_TIMEOUT` is set (the default: 60 s), every blocking
//! point-to-point call the checker wraps waits in a way the watchdog sees:
//! `MPI_Recv` is `PMPI_Irecv` and a `PMPI_Test` loop, `MPI_Send` (Ssend,
//! Bsend, Rsend) its `PMPI_I…` form and a loop, `MPI_Probe`/`MPI_Mprobe`
//! loops of `PMPI_Iprobe`/`PMPI_Improbe`, `MPI_Mrecv` `PMPI_Imrecv`,
//! `MPI_Sendrecv` a receive and a send polled together
//! (`MPI_Sendrecv_replace` sends a packed copy of the buffer), and every
//! Wait form its Test form, all through `watchdog::poll` (the same
//! arguments, status and errors for the user). Meanwhile the thread's
//! **mark** says the call, communicator, peer and tag (for a Wait, the
//! requests: each nonblocking point-to-point request is remembered with
//! its call, communicator, peer and tag while it is active). `MPI_Finalize`
//! first waits in a polled barrier on the checker's duplicate of
//! `MPI_COMM_WORLD`, marked too. With `MPIX_CHECK_TIMEOUT=0` (or
//! `MPIX_CHECK=off`) each call is its `PMPI_` call, as before. These
//! wrappers are the point-to-point checks' own (`p2p::wrap`), which are
//! always interposed: the hangs are found whether or not `MPIX_CHECK_P2P`
//! is set.
//!
//! Past the timeout the waiting rank asks every rank of `MPI_COMM_WORLD`
//! where it is (the status channel, `mpi::channel`), twice a grace apart.
//! A rank is **stuck** when it answered both times with the same wait (the
//! same count of blocking calls on its thread, the same collective check
//! and phase). A rank that does not answer is outside MPI (computing) or in
//! a call the checker does not poll. The wait-for graph: a receive or probe
//! waits for its source (`MPI_ANY_SOURCE`: every rank of the
//! communicator), a send for its destination, a Wait for the peers of its
//! requests still active, `MPI_Finalize` and a collective check for every
//! rank of the job or communicator. A hang is reported only when every
//! rank reachable from this rank's wait is stuck; otherwise, if a rank did
//! not answer, one line says it is still computing, and the wait goes on
//! (and is looked at again each timeout). One rank reports (a rank waiting
//! in a collective check, which reports itself, else the lowest world rank
//! of the ranks in the hang); the others print one line pointing at it.

use crate::inside::Inside;
use crate::mpi::{self, bits, channel::Answer, comm_world, from_bits};
use crate::record::call_name;
use crate::report::{config, Mode, Report};
use crate::slots::Slots;
use crate::sys::*;
use crate::threads::Shared;
use std::cell::Cell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Whether blocking calls wait visibly: a timeout is set, the checker is
/// on, and this is not one of the checker's or the library's own calls.
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| config().timeout.is_some() && config().mode != Mode::Off)
        && !crate::internal::active()
}

/// Whether blocking point-to-point calls are made in their nonblocking
/// form and polled: when they wait visibly (`on`), and at
/// `MPI_THREAD_MULTIPLE` with the point-to-point checks on, where the
/// checks' lock is held while an operation is posted, never while it is
/// waited for (`crate::threads`).
pub fn polled() -> bool {
    on() || (crate::threads::multiple() && crate::report::p2p_enabled())
}

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Send,
    Recv,
    Probe,
    /// The receive of a message a matched probe took (it cannot wait for
    /// a match).
    Matched,
    /// A nonblocking or persistent collective operation (it waits for
    /// every rank of its communicator to start its part).
    Collective,
}

/// One operation a thread waits for.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    pub call: &'static str,
    pub kind: Kind,
    pub comm: u64,
    /// The destination or source as the user passed it.
    pub peer: c_int,
    pub tag: c_int,
    /// Its request (the user's, or the checker's for a blocking call); 0:
    /// none (a probe).
    pub req: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Mark {
    None,
    /// A blocking call: its operations (two for MPI_Sendrecv).
    Items {
        call: &'static str,
        items: [Option<Item>; 2],
    },
    /// A collective call of the program that waits for every member of
    /// its communicator (`collective`).
    Collective {
        call: &'static str,
        comm: u64,
    },
    /// A Wait form on the user's requests (the array lives during the call).
    Requests {
        call: &'static str,
        ptr: *const MPI_Request,
        count: usize,
    },
    Finalize,
}

thread_local! {
    static MARK: Cell<Mark> = const { Cell::new(Mark::None) };
    /// The blocking calls this thread made (a stuck rank answers the same).
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

pub(crate) struct Marked;

impl Drop for Marked {
    fn drop(&mut self) {
        MARK.with(|m| m.set(Mark::None));
    }
}

pub(crate) fn mark(m: Mark) -> Marked {
    COUNT.with(|c| c.set(c.get() + 1));
    MARK.with(|x| x.set(m));
    Marked
}

/// Whether this thread waits in a marked point-to-point call.
pub fn marked() -> bool {
    !matches!(MARK.with(|m| m.get()), Mark::None)
}

// ---- the requests the checker saw made ----

fn requests() -> &'static Shared<Slots<Item>> {
    static R: OnceLock<Shared<Slots<Item>>> = OnceLock::new();
    R.get_or_init(|| Shared::new(Slots::default()))
}

static REQUESTS: AtomicUsize = AtomicUsize::new(0);

/// A nonblocking or persistent request (point to point or collective) was made:
/// remembered until it is freed, for the marks of the waits.
pub fn made(
    request: MPI_Request,
    call: &'static str,
    kind: Kind,
    comm: MPI_Comm,
    peer: c_int,
    tag: c_int,
) {
    if !on() {
        return;
    }
    let key = bits(request);
    let item = Item {
        call,
        kind,
        comm: bits(comm),
        peer,
        tag,
        req: key,
    };
    requests().with(|r| {
        r.insert(key, item);
        REQUESTS.store(r.len(), Ordering::Release);
    });
}

/// The requests at `keys` (their handles before a completion call) that
/// MPI freed (the user's handle is MPI_REQUEST_NULL now) are forgotten.
pub(crate) fn forget_freed(keys: &[u64], requests: *const MPI_Request) {
    if REQUESTS.load(Ordering::Acquire) == 0 {
        return;
    }
    let null = bits(mpi::request_null());
    self::requests().with(|r| {
        for (i, &k) in keys.iter().enumerate() {
            // SAFETY: the user's array holds keys.len() requests.
            if k != null && bits(unsafe { *requests.add(i) }) == null {
                r.remove(k);
            }
        }
        REQUESTS.store(r.len(), Ordering::Release);
    });
}

/// `MPI_Request_free`: the request is forgotten.
pub fn freed(request: MPI_Request) {
    if REQUESTS.load(Ordering::Acquire) == 0 {
        return;
    }
    requests().with(|r| {
        r.remove(bits(request));
        REQUESTS.store(r.len(), Ordering::Release);
    });
}

pub(crate) fn keys_of(count: c_int, requests: *const MPI_Request) -> Vec<u64> {
    if REQUESTS.load(Ordering::Acquire) == 0 {
        return vec![];
    }
    (0..count.max(0) as usize)
        // SAFETY: the user's array holds count requests.
        .map(|i| bits(unsafe { *requests.add(i) }))
        .collect()
}

// ---- the communicators the checker knows (for "pending on …") ----

/// A user communicator the checker saw made (or MPI_COMM_WORLD).
pub fn known(comm: MPI_Comm) {
    if config().timeout.is_none() || bits(comm) == bits(mpi::comm_null()) {
        return;
    }
    crate::names::remember(bits(comm));
}

// ---- ranks and names ----

/// The group a communicator's peers are ranks of (the remote group of an
/// intercommunicator); the caller frees it.
fn peer_group(comm: MPI_Comm) -> Option<MPI_Group> {
    let mut inter: c_int = 0;
    let mut g = std::mem::MaybeUninit::<MPI_Group>::uninit();
    // SAFETY: local queries of a valid communicator.
    unsafe {
        if PMPI_Comm_test_inter(comm, &mut inter) != 0 {
            return None;
        }
        let rc = if inter != 0 {
            PMPI_Comm_remote_group(comm, g.as_mut_ptr())
        } else {
            PMPI_Comm_group(comm, g.as_mut_ptr())
        };
        (rc == 0).then(|| g.assume_init())
    }
}

/// Translates ranks of `comm`'s peer group to MPI_COMM_WORLD (`back`: the
/// other way); a rank with no counterpart is negative.
fn translate(comm: MPI_Comm, ranks: &[c_int], back: bool) -> Vec<c_int> {
    let Some(mut g) = peer_group(comm) else {
        return vec![-1; ranks.len()];
    };
    let mut wg = std::mem::MaybeUninit::<MPI_Group>::uninit();
    let mut out = vec![-1 as c_int; ranks.len()];
    // SAFETY: local group calls; both groups freed below.
    unsafe {
        if PMPI_Comm_group(comm_world(), wg.as_mut_ptr()) == 0 {
            let mut wg = wg.assume_init();
            let (from, to) = if back { (wg, g) } else { (g, wg) };
            if PMPI_Group_translate_ranks(
                from,
                ranks.len() as c_int,
                ranks.as_ptr(),
                to,
                out.as_mut_ptr(),
            ) != 0
            {
                out = vec![-1; ranks.len()];
            }
            PMPI_Group_free(&mut wg);
        }
        PMPI_Group_free(&mut g);
    }
    let undefined = mpi::undefined();
    out.into_iter()
        .map(|r| if r == undefined { -1 } else { r })
        .collect()
}

/// The world ranks of `comm`'s peer group.
fn members(comm: MPI_Comm) -> Vec<c_int> {
    let Some(mut g) = peer_group(comm) else {
        return vec![];
    };
    let mut n: c_int = 0;
    // SAFETY: local group calls.
    unsafe {
        PMPI_Group_size(g, &mut n);
        PMPI_Group_free(&mut g);
    }
    let all: Vec<c_int> = (0..n.max(0)).collect();
    translate(comm, &all, false)
        .into_iter()
        .filter(|&r| r >= 0)
        .collect()
}

fn comm_label(comm: MPI_Comm) -> String {
    let (mut size, mut inter) = (0, 0);
    // SAFETY: plain queries of a valid communicator.
    unsafe {
        PMPI_Comm_test_inter(comm, &mut inter);
        PMPI_Comm_size(comm, &mut size);
    }
    if inter != 0 {
        mpi::inter_name(comm)
    } else {
        mpi::comm_name(comm, size.max(0) as usize)
    }
}

pub(crate) fn any_source() -> c_int {
    // SAFETY: reads mpi-sys's copy of MPI_ANY_SOURCE.
    unsafe { RSMPI_ANY_SOURCE }
}

pub(crate) fn any_tag() -> c_int {
    // SAFETY: reads mpi-sys's copy of MPI_ANY_TAG.
    unsafe { RSMPI_ANY_TAG }
}

// ---- the answer: where this thread waits ----

pub use crate::wire::{Wait, COLLECTIVE, FINALIZE, THREADS, TRANSIENT, UNKNOWN};

/// Whether a request is still active (not complete).
fn active(req: u64) -> bool {
    if req == 0 {
        return true;
    }
    let mut r: MPI_Request = from_bits(req);
    if bits(r) == bits(mpi::request_null()) {
        return false;
    }
    let mut flag: c_int = 0;
    // SAFETY: a request of the call this thread is in; MPI_Request_get_status
    // does not free it.
    let rc = unsafe { PMPI_Request_get_status(r, &mut flag, RSMPI_STATUS_IGNORE) };
    let _ = &mut r;
    rc == 0 && flag == 0
}

fn peer_text(peer: c_int, world: c_int) -> String {
    if peer == any_source() {
        "MPI_ANY_SOURCE".into()
    } else if world >= 0 && world != peer {
        format!("{peer} = world rank {world}")
    } else {
        peer.to_string()
    }
}

fn tag_text(tag: c_int) -> String {
    if tag == any_tag() {
        "MPI_ANY_TAG".into()
    } else {
        tag.to_string()
    }
}

/// One operation's words, its peers and notes, into `w`.
fn describe_item(it: &Item, w: &mut Wait) -> String {
    if it.kind == Kind::Matched {
        // Its message is matched: its end needs no other call.
        w.flags |= UNKNOWN;
        return "a matched message".into();
    }
    let comm: MPI_Comm = from_bits(it.comm);
    let name = comm_label(comm);
    if it.kind == Kind::Collective {
        let me = mpi::world_rank_cached();
        w.peers
            .extend(members(comm).into_iter().filter(|&r| r != me));
        return name;
    }
    let world = if it.peer >= 0 {
        translate(comm, &[it.peer], false)[0]
    } else {
        -1
    };
    let args = match it.kind {
        Kind::Send => format!(
            "dest {}, tag {}",
            peer_text(it.peer, world),
            tag_text(it.tag)
        ),
        Kind::Matched => "a matched message".into(),
        _ => format!(
            "source {}, tag {}",
            peer_text(it.peer, world),
            tag_text(it.tag)
        ),
    };
    match it.kind {
        Kind::Matched => w.flags |= UNKNOWN,
        _ if it.peer == any_source() => w.peers.extend(members(comm)),
        _ if world >= 0 => w.peers.push(world),
        _ => {}
    }
    if matches!(it.kind, Kind::Recv | Kind::Probe) {
        pending(it, comm, world, w);
    }
    format!("{args}, {name}")
}

/// What is pending at this rank from the receive's source: a message that
/// matches (the wait ends by itself), one with another tag, one on another
/// communicator.
fn pending(it: &Item, comm: MPI_Comm, world: c_int, w: &mut Wait) {
    let probe = |c: MPI_Comm, source: c_int| -> Option<(c_int, c_int)> {
        let mut flag: c_int = 0;
        // SAFETY: MPI_Status is plain data.
        let mut st: MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: a probe (it takes nothing) on a valid communicator.
        let rc = unsafe { PMPI_Iprobe(source, any_tag(), c, &mut flag, &mut st) };
        (rc == 0 && flag != 0).then_some((st.MPI_SOURCE, st.MPI_TAG))
    };
    let to_world = |c: MPI_Comm, r: c_int| translate(c, &[r], false)[0];
    if let Some((s, t)) = probe(comm, it.peer) {
        if it.tag == any_tag() || t == it.tag {
            w.flags |= TRANSIENT;
        } else {
            w.notes.push(format!(
                "a message from rank {} with tag {t} is pending on this communicator ({})",
                to_world(comm, s),
                comm_label(comm)
            ));
        }
    }
    let others: Vec<u64> = crate::names::known();
    for c in others {
        if c == it.comm {
            continue;
        }
        let oc: MPI_Comm = from_bits(c);
        let source = if it.peer == any_source() {
            any_source()
        } else if world >= 0 {
            match translate(oc, &[world], true)[0] {
                r if r >= 0 => r,
                _ => continue,
            }
        } else {
            continue;
        };
        if let Some((s, t)) = probe(oc, source) {
            w.notes.push(format!(
                "a message from rank {} with tag {t} is pending on {}",
                to_world(oc, s),
                comm_label(oc)
            ));
        }
    }
}

/// Where this thread waits, for an answer (None: in no marked call).
pub fn describe() -> Option<Wait> {
    let m = MARK.with(|m| m.get());
    let mut w = Wait {
        count: COUNT.with(|c| c.get()),
        ..Default::default()
    };
    if crate::threads::multiple() {
        w.flags |= THREADS;
    }
    match m {
        Mark::None => return None,
        Mark::Finalize => {
            w.flags |= FINALIZE;
            w.text = "MPI_Finalize".into();
            w.peers = members(comm_world());
        }
        Mark::Collective { call, comm } => {
            let comm: MPI_Comm = from_bits(comm);
            w.text = format!("{call}({})", comm_label(comm));
            w.peers = members(comm);
        }
        Mark::Items { call, items } => {
            let mut parts = vec![];
            for it in items.iter().flatten() {
                if active(it.req) {
                    parts.push(describe_item(it, &mut w));
                }
            }
            if parts.is_empty() {
                w.flags |= TRANSIENT;
            }
            w.text = format!("{call}({})", parts.join("; "));
        }
        Mark::Requests { call, ptr, count } => {
            let null = bits(mpi::request_null());
            let mut parts = vec![];
            for i in 0..count {
                // SAFETY: the user's array, alive during the call.
                let k = bits(unsafe { *ptr.add(i) });
                if k == null || !active(k) {
                    continue;
                }
                let known = requests().with(|r| r.get(k).copied());
                match known {
                    Some(it) => {
                        let d = describe_item(&it, &mut w);
                        parts.push(format!("{}({d})", it.call));
                    }
                    None => {
                        w.flags |= UNKNOWN;
                        parts.push("a request the checker did not see made".into());
                    }
                }
            }
            if parts.is_empty() {
                w.flags |= TRANSIENT;
            }
            w.text = format!("{call}({})", parts.join(", "));
        }
    }
    w.peers.sort_unstable();
    w.peers.dedup();
    w.site = site_of(w.count);
    Some(w)
}

thread_local! {
    /// The call site of this thread's blocking call number N (a stack is
    /// captured and symbolized once per stuck call, not at every query).
    static SITE: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
}

fn site_of(count: u64) -> String {
    SITE.with(|s| {
        let mut s = s.borrow_mut();
        if s.0 != count {
            *s = (count, crate::site::call_site());
        }
        s.1.clone()
    })
}

/// ", called from main at a.c:12" for a call site, or nothing.
fn site_words(site: &str) -> String {
    match site.split_once('\t') {
        Some((_, place)) => format!(", called from {place}"),
        None if site.is_empty() || site == "an unknown place" => String::new(),
        None => format!(", called from {site}"),
    }
}

// ---- the timeout: ask, build the wait-for graph, report ----

fn grace(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(500), Duration::from_secs(5))
}

/// What the watchdog does after a look at a point-to-point wait.
pub enum After {
    /// The wait completed meanwhile.
    Done,
    /// Look again after another timeout.
    Again,
    /// Reported (warn mode): wait on without looking again.
    Quiet,
}

/// One round of queries: the answers within a grace (None: the wait
/// completed meanwhile).
/// `expect`: the ranks that answered the first round; the second waits
/// for all of them (a loaded machine answers late), at most four graces.
fn round(
    all: &[i32],
    grace: Duration,
    expect: Option<&HashMap<i32, Answer>>,
    step: &mut impl FnMut() -> Result<bool, c_int>,
) -> Result<Option<HashMap<i32, Answer>>, c_int> {
    let serial = mpi::channel::ask(all);
    let mut answers: HashMap<i32, Answer> = HashMap::new();
    let start = Instant::now();
    loop {
        let t = start.elapsed();
        if t >= grace * 4 {
            break;
        }
        if t >= grace && expect.map_or(true, |e| e.keys().all(|r| answers.contains_key(r))) {
            break;
        }
        for _ in 0..256 {
            if step()? {
                return Ok(None);
            }
        }
        mpi::channel::answer_queries(describe);
        for a in mpi::channel::collect(serial) {
            answers.insert(a.world, a);
        }
    }
    Ok(Some(answers))
}

/// A rank's state in the graph.
#[derive(Debug, Clone)]
struct Node {
    text: String,
    peers: Vec<i32>,
    notes: Vec<String>,
    flags: u8,
    stuck: bool,
    site: String,
}

fn node_of(a: &Answer) -> Node {
    match &a.wait {
        Some(w) => Node {
            text: w.text.clone(),
            peers: w.peers.clone(),
            notes: w.notes.clone(),
            flags: w.flags,
            stuck: false,
            site: w.site.clone(),
        },
        None => Node {
            text: format!("a collective check of {}", a.name),
            peers: a.members.clone(),
            notes: vec![],
            flags: COLLECTIVE,
            stuck: false,
            site: a.site.clone(),
        },
    }
}

fn same(a: &Answer, b: &Answer) -> bool {
    match (&a.wait, &b.wait) {
        (Some(x), Some(y)) => x.count == y.count && x.text == y.text,
        (None, None) => a.id == b.id && a.call == b.call && a.seq == b.seq && a.phase == b.phase,
        _ => false,
    }
}

fn can_progress(n: &Node) -> bool {
    !n.stuck || n.flags & (TRANSIENT | UNKNOWN | THREADS) != 0
}

/// The ranks reachable from `from` (itself included).
fn reach(nodes: &HashMap<i32, Node>, from: i32) -> Vec<i32> {
    let mut seen = HashSet::from([from]);
    let mut q = VecDeque::from([from]);
    let mut out = vec![];
    while let Some(r) = q.pop_front() {
        out.push(r);
        if let Some(n) = nodes.get(&r) {
            for &p in &n.peers {
                if seen.insert(p) {
                    q.push_back(p);
                }
            }
        }
    }
    out
}

fn blocked_all(nodes: &HashMap<i32, Node>, set: &[i32]) -> bool {
    set.iter()
        .all(|r| nodes.get(r).is_some_and(|n| !can_progress(n)))
}

/// The shortest path of waits from `me` back to `me`, or to a cycle, or to
/// a rank in MPI_Finalize (not followed: it waits for every rank).
fn chain(nodes: &HashMap<i32, Node>, me: i32) -> (Vec<i32>, bool) {
    let step = |r: i32| -> Vec<i32> {
        nodes
            .get(&r)
            .filter(|n| n.flags & FINALIZE == 0)
            .map(|n| n.peers.clone())
            .unwrap_or_default()
    };
    // A path along first waits, until a rank repeats (a cycle) or ends.
    let mut path = vec![me];
    let mut parent: HashMap<i32, i32> = HashMap::new();
    let mut q = VecDeque::from([me]);
    let mut seen = HashSet::from([me]);
    while let Some(r) = q.pop_front() {
        for p in step(r) {
            if p == me {
                // A cycle through me: the path from me to r.
                let mut back = vec![r];
                let mut x = r;
                while let Some(&y) = parent.get(&x) {
                    back.push(y);
                    x = y;
                }
                back.reverse();
                return (back, true);
            }
            if seen.insert(p) {
                parent.insert(p, r);
                q.push_back(p);
            }
        }
    }
    // No cycle through me: follow the lowest peer until a repeat or an end.
    let mut x = me;
    loop {
        let next = step(x).into_iter().find(|p| *p != x);
        match next {
            Some(p) if path.contains(&p) => {
                path.push(p);
                return (path, true);
            }
            Some(p) => {
                path.push(p);
                x = p;
            }
            None => return (path, false),
        }
    }
}

static COMPUTING_SAID: AtomicBool = AtomicBool::new(false);

/// The timeout's look at this thread's point-to-point wait.
pub fn timed_out(
    timeout: Duration,
    waited: Duration,
    step: &mut impl FnMut() -> Result<bool, c_int>,
) -> Result<After, c_int> {
    let me = mpi::world_rank_cached();
    let Some(mine) = describe() else {
        return Ok(After::Again);
    };
    let mut size: c_int = 0;
    // SAFETY: a query of MPI_COMM_WORLD.
    unsafe { PMPI_Comm_size(comm_world(), &mut size) };
    let all: Vec<i32> = (0..size).filter(|&r| r != me).collect();
    let g = grace(timeout);
    let asked: Vec<u32> = all.iter().map(|&r| mpi::channel::queries_from(r)).collect();
    let Some(first) = round(&all, g, None, step)? else {
        return Ok(After::Done);
    };
    let Some(second) = round(&all, g, Some(&first), step)? else {
        return Ok(After::Done);
    };
    let Some(mine2) = describe() else {
        return Ok(After::Done);
    };
    let mut nodes = gather_nodes(me, &mine, &mine2, &all, &first, &second);
    add_inside(&mut nodes, &all, &first, &second);
    let mine_reach = reach(&nodes, me);
    if !blocked_all(&nodes, &mine_reach) {
        say_computing(me, waited, &mine2.text, &nodes, &mine_reach);
        return Ok(After::Again);
    }
    let (in_hang, reporter) = in_hang_and_reporter(me, &nodes, &all, &first, &second);
    if reporter != me && defer_to(reporter, me, &mine2.text) {
        return Ok(After::Again);
    }
    report(timeout, waited, me, &nodes, &mine_reach, &in_hang);
    if config().mode == Mode::Fatal {
        end_after_report(timeout, g, &all, &asked, &in_hang, step);
    }
    Ok(After::Quiet)
}

thread_local! {
    /// The call each rank was inside at this thread's last look
    /// (`add_inside`): (code, number, communicator identity).
    static INSIDE: std::cell::RefCell<HashMap<i32, (u64, u64, u64)>> =
        std::cell::RefCell::new(HashMap::new());
}

/// The ranks that answered neither round but are inside MPI's own call
/// (the batched mode, `crate::inside`), waiting for the members of its
/// communicator (every rank when this one does not know it: then a hang
/// only when all are stuck). Stuck when the last look, a timeout ago,
/// found it inside the same call: a long collective that progresses is
/// not taken for a hang.
fn add_inside(
    nodes: &mut HashMap<i32, Node>,
    all: &[i32],
    first: &HashMap<i32, Answer>,
    second: &HashMap<i32, Answer>,
) {
    let silent = all
        .iter()
        .filter(|r| !first.contains_key(r) && !second.contains_key(r));
    let now: HashMap<i32, Inside> = silent
        .filter_map(|&r| Some((r, crate::inside::ask(r)?)))
        .collect();
    let last = INSIDE.with(|m| {
        let key = |i: &Inside| (i.call, i.seq, i.id);
        m.replace(now.iter().map(|(&r, i)| (r, key(i))).collect())
    });
    for (r, i) in now {
        let stuck = last.get(&r) == Some(&(i.call, i.seq, i.id));
        nodes.insert(r, inside_node(i, all, stuck));
    }
}

fn inside_node(i: Inside, all: &[i32], stuck: bool) -> Node {
    let comm = crate::names::known()
        .into_iter()
        .map(from_bits::<MPI_Comm>)
        .find(|&c| mpi::known_state(c).is_some_and(|st| st.id == i.id));
    let (peers, on) = match comm {
        Some(c) => (members(c), comm_label(c)),
        None => (all.to_vec(), "another communicator".into()),
    };
    Node {
        text: format!(
            "{} (call #{} on {on}: MPI's own call, recorded by the batched mode)",
            call_name(i.call),
            i.seq
        ),
        peers,
        notes: vec![],
        flags: 0,
        stuck,
        site: i.site,
    }
}

/// Every rank's node of the wait-for graph, from the two rounds of
/// answers (a rank is stuck when both rounds agree) and this rank's own.
fn gather_nodes(
    me: i32,
    mine: &Wait,
    mine2: &Wait,
    all: &[i32],
    first: &HashMap<i32, Answer>,
    second: &HashMap<i32, Answer>,
) -> HashMap<i32, Node> {
    let mut nodes: HashMap<i32, Node> = HashMap::new();
    nodes.insert(
        me,
        Node {
            text: mine2.text.clone(),
            peers: mine2.peers.clone(),
            notes: mine2.notes.clone(),
            flags: mine2.flags | mine.flags & TRANSIENT,
            stuck: true,
            site: mine2.site.clone(),
        },
    );
    for &r in all {
        match (first.get(&r), second.get(&r)) {
            (Some(a), Some(b)) => {
                let mut n = node_of(b);
                n.stuck = same(a, b);
                if let Some(w) = &a.wait {
                    n.flags |= w.flags & TRANSIENT;
                }
                nodes.insert(r, n);
            }
            (a, b) => {
                if let Some(x) = b.or(a) {
                    let mut n = node_of(x);
                    n.stuck = false;
                    nodes.insert(r, n);
                }
            }
        }
    }
    nodes
}

/// Not a hang: the ranks this one waits on that answered nothing are
/// computing (said once per process).
fn say_computing(me: i32, waited: Duration, text: &str, nodes: &HashMap<i32, Node>, reach: &[i32]) {
    let silent: Vec<i32> = reach
        .iter()
        .copied()
        .filter(|r| !nodes.contains_key(r))
        .collect();
    if silent.is_empty() || COMPUTING_SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    let s = if silent.len() == 1 { "" } else { "s" };
    let line = format!(
        "mpix-check: rank {me} has waited {} s in {text}; rank{s} {} {} still computing (not in MPI): not a hang, waiting on\n",
        waited.as_secs(),
        crate::record::ranks_text(&silent.iter().map(|&r| r as usize).collect::<Vec<_>>()),
        if silent.len() == 1 { "is" } else { "are" }
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// The ranks in the hang (every stuck rank whose reach is stuck) and the
/// one that reports it: a rank in a collective wait, else the lowest rank
/// that is in the hang or may be (it answered one round only, or
/// differently: its view may differ from this one).
fn in_hang_and_reporter(
    me: i32,
    nodes: &HashMap<i32, Node>,
    all: &[i32],
    first: &HashMap<i32, Answer>,
    second: &HashMap<i32, Answer>,
) -> (Vec<i32>, i32) {
    let mut in_hang: Vec<i32> = nodes
        .keys()
        .copied()
        .filter(|&r| {
            nodes.get(&r).is_some_and(|n| !can_progress(n)) && blocked_all(nodes, &reach(nodes, r))
        })
        .collect();
    in_hang.sort_unstable();
    let collective = in_hang
        .iter()
        .copied()
        .find(|r| nodes[r].flags & COLLECTIVE != 0);
    let uncertain = all.iter().copied().filter(|r| {
        first.contains_key(r) != second.contains_key(r)
            || nodes
                .get(r)
                .is_some_and(|n| !n.stuck && n.flags & (UNKNOWN | THREADS) == 0)
    });
    // A rank inside MPI's own call cannot report.
    let answers = |r: &i32| *r == me || second.contains_key(r);
    let lowest = in_hang
        .iter()
        .copied()
        .chain(uncertain)
        .filter(answers)
        .min();
    let reporter = collective.or(lowest).unwrap_or(me);
    (in_hang, reporter)
}

/// Another rank reports the hang: this one says so once, and gives it two
/// more looks' time (true) before it reports itself (a hang is never left
/// unreported).
fn defer_to(reporter: i32, me: i32, text: &str) -> bool {
    static POINTED: AtomicI32 = AtomicI32::new(-1);
    static LOOKS: AtomicI32 = AtomicI32::new(0);
    if POINTED.swap(reporter, Ordering::Relaxed) != reporter {
        LOOKS.store(0, Ordering::Relaxed);
        let line = format!(
            "mpix-check: rank {me} waits in {text}: part of the hang that rank {reporter} reports\n"
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    LOOKS.fetch_add(1, Ordering::Relaxed) < 2
}

/// Ends the job after the report. Each rank of the hang decides by two
/// rounds of queries of its own; once each has asked twice since this
/// rank's first round, its line pointing at the report is out (a grace
/// more for the write). Bounded: a timeout and two graces at most.
fn end_after_report(
    timeout: Duration,
    g: Duration,
    all: &[i32],
    asked: &[u32],
    in_hang: &[i32],
    step: &mut impl FnMut() -> Result<bool, c_int>,
) {
    let pointed = || {
        all.iter()
            .zip(asked)
            .all(|(&r, &a)| !in_hang.contains(&r) || mpi::channel::queries_from(r) >= a + 2)
    };
    let last = Instant::now() + timeout + 2 * g;
    let mut until = last;
    let mut done = false;
    while Instant::now() < until {
        let _ = step();
        mpi::channel::answer_queries(describe);
        if !done && pointed() {
            done = true;
            until = (Instant::now() + g).min(last);
        }
    }
    mpi::abort_job();
}

fn report(
    timeout: Duration,
    waited: Duration,
    me: i32,
    nodes: &HashMap<i32, Node>,
    mine_reach: &[i32],
    in_hang: &[i32],
) {
    let mine = &nodes[&me];
    let (path, cycle) = chain(nodes, me);
    // A cycle through me closes on me; a path that loops ends with the
    // rank it loops back to; a chain ends at its last rank.
    let closes = cycle
        && !path[1..].contains(&path[0])
        && path
            .iter()
            .filter(|&&r| r == *path.last().unwrap_or(&me))
            .count()
            == 1;
    let mut words = vec![];
    for (i, &r) in path.iter().enumerate() {
        let n = &nodes[&r];
        let next = if closes {
            Some(path[(i + 1) % path.len()])
        } else {
            path.get(i + 1).copied()
        };
        if !closes && cycle && i + 1 == path.len() {
            break; // the repeated rank, already named
        }
        words.push(match next {
            _ if n.flags & FINALIZE != 0 => format!("rank {r} is in MPI_Finalize"),
            Some(p) => format!("rank {r} waits for rank {p} in {}", n.text),
            None => format!("rank {r} waits in {}", n.text),
        });
    }
    let mut details = vec![format!(
        "{}: {}",
        if cycle { "the cycle" } else { "the chain" },
        words.join("; ")
    )];
    let mut listed: Vec<i32> = mine_reach.to_vec();
    listed.sort_unstable();
    for r in &listed {
        let n = &nodes[r];
        details.push(format!("rank {r}: {}{}", n.text, site_words(&n.site)));
        for note in &n.notes {
            details.push(format!("rank {r}: {note}"));
        }
    }
    let others: Vec<i32> = in_hang
        .iter()
        .copied()
        .filter(|r| !listed.contains(r))
        .collect();
    for r in others {
        let n = &nodes[&r];
        details.push(format!(
            "rank {r} (also stuck): {}{}",
            n.text,
            site_words(&n.site)
        ));
    }
    let (call, comm) = split(&mine.text);
    let (rank, size) = world_of_me();
    let r = Report {
        call,
        comm,
        seq: 0,
        rank,
        size,
        kind: "hang",
        summary: format!(
            "a hang: every rank this call waits for is blocked in MPI, waited {} s (timeout {} s); ranks are world ranks",
            waited.as_secs(),
            timeout.as_secs_f64()
        ),
        details,
        fields: vec![(
            "hang_world_ranks",
            format!(
                "[{}]",
                listed
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        )],
    };
    r.emit(me);
}

/// The call and the (first) communicator named in a wait's words.
fn split(text: &str) -> (String, String) {
    let call = text.split('(').next().unwrap_or(text).to_string();
    let comm = text
        .trim_end_matches(')')
        .rsplit(", ")
        .next()
        .filter(|s| text.contains('(') && !s.contains('('))
        .unwrap_or("MPI_COMM_WORLD")
        .trim_end_matches(')')
        .to_string();
    (call, comm)
}

fn world_of_me() -> (usize, usize) {
    let (mut r, mut n) = (0, 0);
    // SAFETY: queries of MPI_COMM_WORLD.
    unsafe {
        PMPI_Comm_rank(comm_world(), &mut r);
        PMPI_Comm_size(comm_world(), &mut n);
    }
    (r.max(0) as usize, n.max(0) as usize)
}
