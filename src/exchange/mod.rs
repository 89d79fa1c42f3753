//! The type exchange: send a datatype to a peer once, and afterwards only
//! its identifier (spec/exchange.md).
//!
//! Each communicator the exchange is used on gets two private duplicates,
//! made by the first exchange call on it (collective, like
//! `MPI_Comm_dup`): *references* travel on the first with the user's tag,
//! *definitions* (descriptions) on the second, in order, with tag 0. The
//! sender's cache per peer maps identifiers to entries, each numbered by
//! the definition that made it; the receiver's cache holds the same
//! entries with their descriptions. A reference names its entry's number,
//! so the receiver knows which definitions it must have read first, and
//! an eviction (the sender's decision, least recently used, announced in
//! the definition that replaces the entry) says how many references to
//! the evicted entry were sent, so that references still in flight find it.
//! Everything is released when the communicator is freed (its attribute's
//! delete callback) or MPI finalizes.

mod lent;
pub mod wire;

use crate::error::{Error, Result};
use crate::format::Representation;
use crate::marshal;
use crate::mpi::comm::{self, Comm, CommHandle, Request, Status};
use crate::mpi::{self, Datatype};
use rustc_hash::FxHashMap as HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use wire::{Bcast, Definition, Id, Reference};

/// The default bound on the entries cached per communicator and peer.
pub const DEFAULT_LIMIT: usize = 64;
/// The largest limit: a receiver refuses definitions past it.
pub const MAX_LIMIT: usize = 1 << 20;

/// The limit set by `set_cache_limit` (0: not set).
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Sets the cache limit of communicators the exchange is first used on
/// from now on (1 to `MAX_LIMIT`); it overrides `MPIX_TYPE_CACHE_LIMIT`.
pub fn set_cache_limit(n: usize) -> Result<()> {
    if n == 0 || n > MAX_LIMIT {
        return Err(Error::invalid(format!(
            "a type cache limit of {n} (it is 1 to {MAX_LIMIT})"
        )));
    }
    LIMIT.store(n, Ordering::Relaxed);
    Ok(())
}

fn limit() -> usize {
    match LIMIT.load(Ordering::Relaxed) {
        0 => std::env::var("MPIX_TYPE_CACHE_LIMIT")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| (1..=MAX_LIMIT).contains(&n))
            .unwrap_or(DEFAULT_LIMIT),
        n => n,
    }
}

/// How long a receiver waits for a definition that a reference says was
/// sent before it (`MPIX_TYPE_EXCHANGE_TIMEOUT` seconds, default 60).
fn timeout() -> Duration {
    let secs = std::env::var("MPIX_TYPE_EXCHANGE_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(60.0);
    Duration::from_secs_f64(secs)
}

/// Counters of what this process's exchange sent, for tests and benches.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// References made (sent by a type send, or handed to the caller of
    /// `reference` for its own message), and their bytes.
    pub references: u64,
    pub reference_bytes: u64,
    /// Definitions (descriptions) sent, and their bytes (with headers).
    pub definitions: u64,
    pub definition_bytes: u64,
    /// Broadcasts made as root, and the bytes broadcast.
    pub broadcasts: u64,
    pub broadcast_bytes: u64,
}

static COUNTERS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

fn count(i: usize, bytes: usize) {
    COUNTERS[i].fetch_add(1, Ordering::Relaxed);
    COUNTERS[i + 1].fetch_add(bytes as u64, Ordering::Relaxed);
}

pub fn counters() -> Counters {
    let c = |i: usize| COUNTERS[i].load(Ordering::Relaxed);
    Counters {
        references: c(0),
        reference_bytes: c(1),
        definitions: c(2),
        definition_bytes: c(3),
        broadcasts: c(4),
        broadcast_bytes: c(5),
    }
}

/// The identity of this build, as the internal representation checks it
/// (spec/internal.md §2), hashed: two processes that send each other
/// internal streams agree on it.
fn identity() -> Id {
    static ID: OnceLock<Id> = OnceLock::new();
    *ID.get_or_init(|| {
        let l = &mpi::local().constants;
        let salt = std::env::var("MPIX_TYPE_EXCHANGE_BUILD_TAG").unwrap_or_default();
        wire::digest(
            format!(
                "{}|{}.{}|{}|{}|{}|{}|{}|{salt}",
                mpi::library_version(),
                l.version,
                l.subversion,
                l.is_open_mpi,
                env!("CARGO_PKG_VERSION"),
                marshal::build_id(),
                cfg!(target_endian = "big"),
                std::mem::size_of::<usize>(),
            )
            .as_bytes(),
        )
    })
}

/// What each peer said about itself when the exchange was set up.
struct Peer {
    same_build: bool,
    limit: usize,
}

/// A sender's entry.
struct SendEntry {
    seq: u64,
    refs: u64,
    last_use: u64,
}

#[derive(Default)]
struct SendPeer {
    next_seq: u64,
    clock: u64,
    entries: HashMap<Id, SendEntry>,
}

/// A description as kept by a receiver: the representation and bytes it
/// rebuilds the type from.
#[derive(Clone)]
struct Description {
    rep: Representation,
    bytes: Arc<[u8]>,
}

struct RecvEntry {
    id: Id,
    description: Description,
    /// The committed handle `resolve` lends (bits), made on its first use.
    handle: Option<u64>,
    consumed: u64,
    /// Set when evicted: how many references were sent in all.
    retired: Option<u64>,
}

impl Drop for RecvEntry {
    /// However the entry goes (evicted, its communicator freed), its
    /// handle goes with it, or with its last borrower.
    fn drop(&mut self) {
        if let Some(bits) = self.handle.take() {
            lent::uncache(mpi::handle_from_bits(bits));
        }
    }
}

#[derive(Default)]
struct RecvPeer {
    /// Definitions read so far (the last one's number).
    defs: u64,
    live: usize,
    entries: HashMap<u64, RecvEntry>,
}

/// What a process knows of one root's broadcasts.
#[derive(Default)]
struct BcastFrom {
    /// Entries by number.
    entries: HashMap<u64, (Id, Description)>,
    last: u64,
}

/// The exchange of one communicator.
pub struct Exchange {
    refs: CommHandle,
    defs: CommHandle,
    inter: bool,
    peers: Vec<Peer>,
    limit: usize,
    send: Mutex<HashMap<c_int, SendPeer>>,
    recv: Mutex<HashMap<c_int, RecvPeer>>,
    /// Definitions sent and not yet received (synchronous sends).
    pending: Mutex<Vec<Request>>,
    /// As a broadcast's root: the entries every receiver holds.
    bcast_send: Mutex<SendPeer>,
    /// As a receiver: each root's entries.
    bcast_recv: Mutex<HashMap<c_int, BcastFrom>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Live exchanges by the number their communicator's attribute holds.
static REGISTRY: Mutex<Option<HashMap<usize, Arc<Exchange>>>> = Mutex::new(None);
static NEXT: AtomicUsize = AtomicUsize::new(1);
/// Held while an exchange is set up, so that two threads do not both
/// duplicate a communicator.
static SETUP: Mutex<()> = Mutex::new(());

/// The attribute's delete callback: the communicator is being freed.
unsafe extern "C" fn on_delete(_c: Comm, _k: c_int, value: *mut c_void, _x: *mut c_void) -> c_int {
    let key = value as usize;
    // Nothing may unwind into MPI.
    let _ = std::panic::catch_unwind(move || {
        let ex = lock(&REGISTRY).as_mut().and_then(|r| r.remove(&key));
        if let Some(ex) = ex {
            release(&[ex]);
        }
    });
    0
}

/// At MPI_Finalize: every exchange still alive is released, together
/// (processes may hold them in different orders), then every handle
/// still lent.
fn release_all() {
    let all: Vec<Arc<Exchange>> = lock(&REGISTRY)
        .take()
        .into_iter()
        .flatten()
        .map(|(_, ex)| ex)
        .collect();
    release(&all);
    lent::free_all();
    comm::free_exchange_keyval();
}

/// Releases exchanges whose communicators every process is freeing (or
/// MPI finalizing). First they settle: each process reads and drops the
/// definitions sent to it that nobody needed, until its own were all
/// received and a nonblocking barrier says everyone's were (so no
/// message is left behind on a freed communicator); then the duplicates
/// and caches are freed. A process that never gets there (a peer gone)
/// is waited for at most the exchange timeout.
fn release(exs: &[Arc<Exchange>]) {
    // Runs inside the program's MPI_Comm_free or MPI_Finalize: the
    // library's own calls, whichever operation of the program it is in.
    mpi::own_calls::within(|| release_now(exs))
}

fn release_now(exs: &[Arc<Exchange>]) {
    let deadline = Instant::now() + timeout();
    let mut barriers: Vec<Option<Request>> = exs.iter().map(|_| None).collect();
    let mut settled = vec![false; exs.len()];
    while settled.iter().any(|s| !s) && Instant::now() < deadline {
        for (i, ex) in exs.iter().enumerate() {
            if !settled[i] {
                // An MPI error here leaves nothing to wait for.
                settled[i] = ex.settle(&mut barriers[i]).unwrap_or(true);
            }
        }
        std::thread::yield_now();
    }
    drop(barriers);
    for ex in exs {
        ex.free();
    }
}

/// How many datatype handles the receivers' caches hold or lend (for
/// tests).
pub fn cached_handles() -> usize {
    lent::held()
}

/// How many exchanges are alive (for tests).
pub fn live_exchanges() -> usize {
    lock(&REGISTRY).as_ref().map_or(0, |r| r.len())
}

impl Exchange {
    /// One step of settling (see `release`): true once done.
    fn settle(&self, barrier: &mut Option<Request>) -> Result<bool> {
        while let Some(m) = comm::improbe(comm::any_source(), 0, self.defs.0)? {
            comm::mrecv(m)?;
        }
        if barrier.is_none() {
            if !self.reap()? {
                return Ok(false);
            }
            *barrier = Some(comm::ibarrier(self.defs.0)?);
        }
        barrier.as_mut().map_or(Ok(true), Request::test)
    }

    /// Forgets the definitions that were received; true when none is left.
    fn reap(&self) -> Result<bool> {
        let mut pending = lock(&self.pending);
        let mut result = Ok(());
        pending.retain_mut(|r| match r.test() {
            Ok(done) => !done,
            Err(e) => {
                result = Err(e);
                true
            }
        });
        result.map(|()| pending.is_empty())
    }

    fn free(&self) {
        lock(&self.pending).clear();
        let _ = comm::free(self.refs.0);
        let _ = comm::free(self.defs.0);
        lock(&self.send).clear();
        lock(&self.recv).clear();
        *lock(&self.bcast_send) = SendPeer::default();
        lock(&self.bcast_recv).clear();
    }

    /// The smallest limit of this process and every peer: a broadcast
    /// root's bound.
    fn bcast_limit(&self) -> usize {
        self.peers
            .iter()
            .map(|p| p.limit)
            .min()
            .unwrap_or(1)
            .min(self.limit)
    }

    fn peer(&self, rank: c_int, what: &str) -> Result<&Peer> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.peers.get(r))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{what} {rank} is not a rank of the communicator ({} processes)",
                    self.peers.len()
                ))
            })
    }
}

/// The exchange of `c`, set up on first use (collective over `c`).
fn attach(c: Comm) -> Result<Arc<Exchange>> {
    mpi::ready()?;
    if comm::comm_bits(c) == comm::comm_bits(comm::comm_null()) {
        return Err(Error::invalid("the communicator is MPI_COMM_NULL"));
    }
    let keyval = comm::exchange_keyval(on_delete)?;
    let find = |key: usize| lock(&REGISTRY).as_ref().and_then(|r| r.get(&key).cloned());
    if let Some(key) = comm::get_attr(c, keyval)? {
        return find(key).ok_or_else(|| {
            Error::invalid("the type exchange of this communicator was released (MPI finalizing)")
        });
    }
    let _setup = lock(&SETUP);
    if let Some(key) = comm::get_attr(c, keyval)? {
        return find(key).ok_or_else(|| Error::invalid("the type exchange was released"));
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| mpi::at_finalize(release_all));
    let inter = comm::is_inter(c)?;
    // The one collective call of the program's own (it makes the first
    // exchange call on `c` collective): a tool checks it as such.
    let refs = mpi::own_calls::collective_point(|| comm::dup(c))?;
    let defs = match comm::dup(c) {
        Ok(d) => d,
        Err(e) => {
            let _ = comm::free(refs);
            return Err(e);
        }
    };
    let ex = set_up(refs, defs, inter).inspect_err(|_| {
        let _ = comm::free(refs);
        let _ = comm::free(defs);
    })?;
    let key = NEXT.fetch_add(1, Ordering::Relaxed);
    let ex = Arc::new(ex);
    lock(&REGISTRY)
        .get_or_insert_with(HashMap::default)
        .insert(key, ex.clone());
    if let Err(e) = comm::set_attr(c, keyval, key) {
        if let Some(ex) = lock(&REGISTRY).as_mut().and_then(|r| r.remove(&key)) {
            ex.free();
        }
        return Err(e);
    }
    Ok(ex)
}

/// The peers' identities and limits, gathered on the new duplicate.
fn set_up(refs: Comm, defs: Comm, inter: bool) -> Result<Exchange> {
    let n = comm::peer_count(refs, inter)? as usize;
    let limit = limit();
    let mut mine = [0u8; 24];
    mine[..16].copy_from_slice(&identity());
    mine[16..20].copy_from_slice(&(limit as u32).to_be_bytes());
    let mut all = vec![0u8; 24 * n];
    comm::allgather(&mine, &mut all, refs)?;
    let peers = all
        .chunks_exact(24)
        .map(|p| Peer {
            same_build: p[..16] == mine[..16],
            limit: (u32::from_be_bytes(p[16..20].try_into().expect("4 bytes")) as usize)
                .clamp(1, MAX_LIMIT),
        })
        .collect();
    Ok(Exchange {
        refs: CommHandle(refs),
        defs: CommHandle(defs),
        inter,
        peers,
        limit,
        send: Mutex::default(),
        recv: Mutex::default(),
        pending: Mutex::default(),
        bcast_send: Mutex::default(),
        bcast_recv: Mutex::default(),
    })
}

/// The identifier of `datatype`: the digest of its external stream.
fn identify(datatype: Datatype) -> Result<Id> {
    marshal::with_stream(Representation::External, datatype, |b| Ok(wire::digest(b)))
}

/// A fingerprint of an internal stream: its length and ends (the stream
/// itself is compared whole), so that a lookup hashes 128 bytes at most.
fn fingerprint(b: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write_usize(b.len());
    h.write(&b[..b.len().min(64)]);
    h.write(&b[b.len().saturating_sub(64)..]);
    h.finish()
}

/// Identifiers of internal streams marshalled before, by fingerprint: the
/// same internal stream (same build, same tree, same names) is the same
/// external one.
type Known = HashMap<u64, Vec<(Box<[u8]>, Id)>>;
static KNOWN: Mutex<Option<Known>> = Mutex::new(None);
/// Streams remembered at most (then forgotten all at once).
const KNOWN_MAX: usize = 1024;

/// The identifier of `datatype`: kept on the type, else looked up by its
/// internal stream (the cheapest to write, replayed from the type's cache,
/// and not copied when known), else computed from the external stream.
fn identify_fast(datatype: Datatype) -> Result<Id> {
    // Fastest: the identifier kept on the type for its current names and
    // attributes (a type whose internal plan is cached).
    if let Some(Some(id)) = marshal::with_varying_parts(datatype, |v, e| Ok(e.identity(v)))? {
        return Ok(id);
    }
    let id = identify_by_stream(datatype)?;
    marshal::with_varying_parts(datatype, |v, e| {
        e.set_identity(v, id);
        Ok(())
    })?;
    Ok(id)
}

/// The identifier of `datatype`, looked up by its whole internal stream.
fn identify_by_stream(datatype: Datatype) -> Result<Id> {
    let found = marshal::with_stream(Representation::Internal, datatype, |b| {
        let fp = fingerprint(b);
        let known = lock(&KNOWN);
        let hit = known
            .as_ref()
            .and_then(|m| m.get(&fp))
            .and_then(|bucket| bucket.iter().find(|(s, _)| &s[..] == b))
            .map(|(_, id)| *id);
        Ok(hit.ok_or_else(|| (fp, Box::<[u8]>::from(b))))
    })?;
    let (fp, stream) = match found {
        Ok(id) => return Ok(id),
        Err(new) => new,
    };
    let id = identify(datatype)?;
    let mut known = lock(&KNOWN);
    let map = known.get_or_insert_with(HashMap::default);
    if map.values().map(Vec::len).sum::<usize>() >= KNOWN_MAX {
        map.clear();
    }
    map.entry(fp).or_default().push((stream, id));
    Ok(id)
}

fn describe(datatype: Datatype, rep: Representation) -> Result<Vec<u8>> {
    marshal::with_stream(rep, datatype, |b| Ok(b.to_vec()))
}

/// The least recently used entry, when the cache is full: the entry a new
/// one replaces (its identifier, number and reference count).
fn victim(peer: &SendPeer, limit: usize) -> Option<(Id, u64, u64)> {
    if peer.entries.len() < limit {
        return None;
    }
    peer.entries
        .iter()
        .min_by_key(|(_, e)| e.last_use)
        .map(|(id, e)| (*id, e.seq, e.refs))
}

/// The entry of `datatype` in a sender's cache `state`: found, or made
/// (evicting if full) with `define`, which gets the new entry's number and
/// the evicted entry's number and reference count, and starts the
/// definition. Counts one reference; returns the entry's number.
fn entry_for(
    state: &mut SendPeer,
    id: Id,
    limit: usize,
    define: impl FnOnce(u64, u64, u64) -> Result<()>,
) -> Result<u64> {
    state.clock += 1;
    let clock = state.clock;
    if let Some(e) = state.entries.get_mut(&id) {
        e.refs += 1;
        e.last_use = clock;
        return Ok(e.seq);
    }
    if state.next_seq >= wire::MAX_SEQ {
        return Err(Error::Exchange(format!(
            "{} types were described to this peer: the exchange numbers at most {} per pair of processes and communicator",
            state.next_seq,
            wire::MAX_SEQ
        )));
    }
    let seq = state.next_seq + 1;
    let evicted = victim(state, limit);
    let (evict, evict_refs) = evicted.map_or((0, 0), |(_, s, r)| (s, r));
    // The cache changes only once the definition is on its way.
    define(seq, evict, evict_refs)?;
    if let Some((old, _, _)) = evicted {
        state.entries.remove(&old);
    }
    state.next_seq = seq;
    state.entries.insert(
        id,
        SendEntry {
            seq,
            refs: 1,
            last_use: clock,
        },
    );
    Ok(seq)
}

/// The common part of `send` and `reference`: `dest`'s entry of
/// `datatype`, its definition started if new (it stays with the exchange
/// until the receiver reads it). None for `MPI_PROC_NULL`.
fn prepare(datatype: Datatype, dest: c_int, c: Comm) -> Result<Option<(Arc<Exchange>, Reference)>> {
    mpi::ready()?;
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the datatype is MPI_DATATYPE_NULL"));
    }
    let id = identify_fast(datatype)?;
    if dest == comm::proc_null() {
        return Ok(None);
    }
    let ex = attach(c)?;
    let peer = ex.peer(dest, "dest")?;
    let limit = ex.limit.min(peer.limit);
    let rep = if peer.same_build {
        Representation::Internal
    } else {
        Representation::Compressed
    };
    ex.reap()?;
    let seq = {
        let mut sends = lock(&ex.send);
        let state = sends.entry(dest).or_default();
        entry_for(state, id, limit, |seq, evict, evict_refs| {
            let payload = describe(datatype, rep)?;
            let def = Definition {
                rep,
                seq,
                evict,
                evict_refs,
                id,
                payload: &payload,
            }
            .encode();
            let len = def.len();
            // Started under the lock, so that definitions leave in order.
            let request = comm::issend(def, dest, 0, ex.defs.0)?;
            lock(&ex.pending).push(request);
            count(2, len);
            Ok(())
        })?
    };
    count(0, wire::REFERENCE_LEN);
    Ok(Some((ex, Reference::new(seq, &id))))
}

/// `MPIX_Type_send`.
pub fn send(datatype: Datatype, dest: c_int, tag: c_int, c: Comm) -> Result<()> {
    if let Some((ex, reference)) = prepare(datatype, dest, c)? {
        comm::send(&reference.encode(), dest, tag, ex.refs.0)?;
    }
    Ok(())
}

/// `MPIX_Type_reference`: the reference `send` would send, for the caller
/// to carry in its own message to `dest` (16 zero bytes for
/// `MPI_PROC_NULL`).
pub fn reference(datatype: Datatype, dest: c_int, c: Comm) -> Result<[u8; wire::REFERENCE_LEN]> {
    Ok(prepare(datatype, dest, c)?.map_or([0; wire::REFERENCE_LEN], |(_, r)| r.encode()))
}

/// `MPIX_Type_recv`: the rebuilt type and the reference's status.
pub fn recv(source: c_int, tag: c_int, c: Comm) -> Result<(Datatype, Status)> {
    mpi::ready()?;
    if source == comm::proc_null() {
        return Err(Error::invalid(
            "source is MPI_PROC_NULL: there is no type to receive",
        ));
    }
    let ex = attach(c)?;
    if source != comm::any_source() {
        ex.peer(source, "source")?;
    }
    let matched = comm::mprobe(source, tag, ex.refs.0)?;
    let (bytes, status) = comm::mrecv(matched)?;
    let from = status.MPI_SOURCE;
    let reference = Reference::decode(&bytes)?;
    let description = with_entry(&ex, from, &reference, Counted::Yes, |e| {
        Ok(e.description.clone())
    })?;
    let t = crate::unmarshal::bytes::unmarshal(description.rep, &description.bytes)?;
    Ok((t, status))
}

/// `MPIX_Type_resolve`: the committed type a reference from `source`
/// names, lent by the cache until `release`.
pub fn resolve(bytes: &[u8], source: c_int, c: Comm) -> Result<Datatype> {
    lend(bytes, source, c, Counted::Yes)
}

/// `resolve` without counting the reference as received: for a
/// reference whose count another use carries.
pub fn resolve_uncounted(bytes: &[u8], source: c_int, c: Comm) -> Result<Datatype> {
    lend(bytes, source, c, Counted::No)
}

/// Whether a use of a reference counts it as received.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counted {
    Yes,
    No,
}

fn lend(bytes: &[u8], source: c_int, c: Comm, counted: Counted) -> Result<Datatype> {
    let (ex, reference) = referenced(bytes, source, c)?;
    with_entry(&ex, source, &reference, counted, |e| {
        let bits = match e.handle {
            Some(bits) => bits,
            None => {
                let t = lent::adopt(crate::unmarshal::bytes::unmarshal(
                    e.description.rep,
                    &e.description.bytes,
                )?)?;
                *e.handle.insert(mpi::handle_bits(t))
            }
        };
        Ok(lent::lend(mpi::handle_from_bits(bits)))
    })
}

/// Counts a reference from `source` as received, as `resolve` does,
/// without making or lending its type: for a receiver that needs the
/// type only now and then (a checker's report).
pub fn consume(bytes: &[u8], source: c_int, c: Comm) -> Result<()> {
    let (ex, reference) = referenced(bytes, source, c)?;
    with_entry(&ex, source, &reference, Counted::Yes, |_| Ok(()))
}

/// The exchange on `c` and the reference `bytes` from `source`, checked.
fn referenced(bytes: &[u8], source: c_int, c: Comm) -> Result<(Arc<Exchange>, Reference)> {
    mpi::ready()?;
    // The exchange first: its set-up is collective, and the sender's
    // first call made its side of it.
    let ex = attach(c)?;
    if source == comm::any_source() || source == comm::proc_null() {
        return Err(Error::invalid(
            "source must be the rank that made the reference (not MPI_ANY_SOURCE or MPI_PROC_NULL)",
        ));
    }
    ex.peer(source, "source")?;
    let reference = Reference::decode(bytes)?;
    Ok((ex, reference))
}

/// `MPIX_Type_release`: gives back a type `resolve` lent.
pub fn release_lent(t: Datatype) -> Result<()> {
    mpi::ready()?;
    lent::release(t)
}

/// Runs `f` on the entry `reference` names in `from`'s cache, reading
/// `from`'s definitions up to it first, and counts the reference as
/// received when `counted` (an evicted entry goes once all its
/// references have come).
fn with_entry<R>(
    ex: &Exchange,
    from: c_int,
    reference: &Reference,
    counted: Counted,
    f: impl FnOnce(&mut RecvEntry) -> Result<R>,
) -> Result<R> {
    let mut recvs = lock(&ex.recv);
    let state = recvs.entry(from).or_default();
    if state.defs < reference.seq {
        let deadline = Instant::now() + timeout();
        while state.defs < reference.seq {
            read_definition(ex, from, state, deadline, reference.seq)?;
        }
    }
    let entry = state.entries.get_mut(&reference.seq).ok_or_else(|| {
        Error::Exchange(format!(
            "rank {from} refers to entry {} of its type cache, which it evicted before (a forged or replayed reference)",
            reference.seq
        ))
    })?;
    if !reference.matches(&entry.id) {
        return Err(Error::Exchange(format!(
            "rank {from} refers to entry {} of its type cache as {}…, but that entry holds {} (an unknown or forged reference)",
            reference.seq,
            hex(&reference.check),
            hex(&entry.id)
        )));
    }
    if counted == Counted::Yes {
        entry.consumed += 1;
    }
    let out = f(entry);
    if entry.retired.is_some_and(|total| entry.consumed >= total) {
        state.entries.remove(&reference.seq);
    }
    out
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads the next definition from `from` (waiting at most until
/// `deadline`) into the peer's cache.
fn read_definition(
    ex: &Exchange,
    from: c_int,
    state: &mut RecvPeer,
    deadline: Instant,
    wanted: u64,
) -> Result<()> {
    let mut spins = 0u32;
    let matched = loop {
        if let Some(m) = comm::improbe(from, 0, ex.defs.0)? {
            break m;
        }
        if Instant::now() > deadline {
            return Err(Error::Exchange(format!(
                "rank {from} refers to entry {wanted} of its type cache, but sent only {} descriptions (an unknown or forged identifier)",
                state.defs
            )));
        }
        spins += 1;
        if spins > 1000 {
            std::thread::sleep(Duration::from_micros(50));
        } else {
            std::thread::yield_now();
        }
    };
    let (bytes, _) = comm::mrecv(matched)?;
    let def = Definition::decode(&bytes)?;
    if def.seq != state.defs + 1 {
        return Err(Error::Exchange(format!(
            "rank {from}'s description {} arrived where {} was due",
            def.seq,
            state.defs + 1
        )));
    }
    if def.evict != 0 {
        let e = state
            .entries
            .get_mut(&def.evict)
            .filter(|e| e.retired.is_none())
            .ok_or_else(|| {
                Error::Exchange(format!(
                    "rank {from}'s description {} evicts entry {}, which is not in the cache",
                    def.seq, def.evict
                ))
            })?;
        if e.consumed > def.evict_refs {
            return Err(Error::Exchange(format!(
                "rank {from} evicts entry {} after {} references, but {} were received",
                def.evict, def.evict_refs, e.consumed
            )));
        }
        e.retired = Some(def.evict_refs);
        state.live -= 1;
        if e.consumed >= def.evict_refs {
            state.entries.remove(&def.evict);
        }
    }
    let limit = ex.limit.min(ex.peers[from as usize].limit);
    if state.live >= limit {
        return Err(Error::Exchange(format!(
            "rank {from}'s description {} would exceed the type cache limit {limit} without an eviction",
            def.seq
        )));
    }
    if def.rep == Representation::Internal && !ex.peers[from as usize].same_build {
        return Err(Error::Exchange(format!(
            "rank {from} sent description {} in the internal representation, but its build differs",
            def.seq
        )));
    }
    let description = checked(&def)?;
    state.defs = def.seq;
    state.live += 1;
    state.entries.insert(
        def.seq,
        RecvEntry {
            id: def.id,
            description,
            handle: None,
            consumed: 0,
            retired: None,
        },
    );
    Ok(())
}

/// A received description, kept in the form that rebuilds fastest: an
/// external or compressed one is checked against its identifier (and kept
/// expanded), an internal one is checked by its build header when rebuilt.
fn checked(def: &Definition<'_>) -> Result<Description> {
    let external: Vec<u8> = match def.rep {
        Representation::Internal => {
            return Ok(Description {
                rep: Representation::Internal,
                bytes: def.payload.into(),
            })
        }
        Representation::External => def.payload.to_vec(),
        Representation::Compressed => {
            crate::format::compressed::expand(def.payload, |b| Ok(b.to_vec()))?
        }
    };
    if wire::digest(&external) != def.id {
        return Err(Error::Exchange(format!(
            "description {} does not match its identifier {} (corrupt or forged)",
            def.seq,
            hex(&def.id)
        )));
    }
    Ok(Description {
        rep: Representation::External,
        bytes: external.into(),
    })
}

/// `MPIX_Type_bcast`: the root's type on every receiving process. The
/// root gets its own handle back, and so does, on an intercommunicator, a
/// process of the root's group passing `MPI_PROC_NULL`.
pub fn bcast(datatype: Datatype, root: c_int, c: Comm) -> Result<Datatype> {
    mpi::ready()?;
    let ex = attach(c)?;
    let is_root = if ex.inter {
        if root == comm::proc_null() {
            return Ok(datatype);
        }
        root == mpi::local().constants.root || {
            ex.peer(root, "root")?;
            false
        }
    } else {
        ex.peer(root, "root")?;
        root == comm::rank(ex.refs.0)?
    };
    if is_root {
        bcast_as_root(&ex, datatype, root)?;
        return Ok(datatype);
    }
    let description = bcast_receive(&ex, root)?;
    crate::unmarshal::bytes::unmarshal(description.rep, &description.bytes)
}

/// The root's side: a reference, or a definition and its description.
fn bcast_as_root(ex: &Exchange, datatype: Datatype, root: c_int) -> Result<()> {
    if datatype == mpi::local().datatype_null() {
        return Err(Error::invalid("the root's datatype is MPI_DATATYPE_NULL"));
    }
    let id = identify_fast(datatype)?;
    // Internal only if every receiver reads this build's streams.
    let rep = if ex.peers.iter().all(|p| p.same_build) {
        Representation::Internal
    } else {
        Representation::Compressed
    };
    let mut state = lock(&ex.bcast_send);
    let mut header = None;
    let mut payload = None;
    let seq = entry_for(&mut state, id, ex.bcast_limit(), |seq, evict, _| {
        let p = describe(datatype, rep)?;
        header = Some(Bcast {
            rep: Some(rep),
            seq,
            evict,
            len: p.len() as u64,
            id,
        });
        payload = Some(p);
        Ok(())
    })?;
    let header = header.unwrap_or(Bcast {
        rep: None,
        seq,
        evict: 0,
        len: 0,
        id,
    });
    let mut bytes = header.encode();
    comm::bcast(&mut bytes, root, ex.refs.0)?;
    count(4, bytes.len() + payload.as_ref().map_or(0, |p| p.len()));
    if let Some(mut p) = payload {
        comm::bcast(&mut p, root, ex.refs.0)?;
    }
    Ok(())
}

/// A receiver's side: the description of the root's type, from the
/// broadcast or from this process's cache of the root's broadcasts.
fn bcast_receive(ex: &Exchange, root: c_int) -> Result<Description> {
    let mut roots = lock(&ex.bcast_recv);
    let state = roots.entry(root).or_default();
    let mut header = [0u8; wire::BCAST_LEN];
    comm::bcast(&mut header, root, ex.refs.0)?;
    let h = Bcast::decode(&header)?;
    let Some(rep) = h.rep else {
        let (id, d) = state.entries.get(&h.seq).ok_or_else(|| {
            Error::Exchange(format!(
                "the root refers to broadcast entry {}, which is not cached (an unknown or forged identifier)",
                h.seq
            ))
        })?;
        if *id != h.id {
            return Err(Error::Exchange(format!(
                "the root refers to broadcast entry {} with identifier {}, but it holds {}",
                h.seq,
                hex(&h.id),
                hex(id)
            )));
        }
        return Ok(d.clone());
    };
    // The payload is broadcast whatever this process thinks of the
    // header, so that the collective stays matched.
    let len = usize::try_from(h.len)
        .ok()
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or_else(|| Error::Exchange(format!("a description of {} bytes", h.len)))?;
    let mut payload = vec![0u8; len];
    comm::bcast(&mut payload, root, ex.refs.0)?;
    if h.seq != state.last + 1 {
        return Err(Error::Exchange(format!(
            "broadcast description {} arrived where {} was due",
            h.seq,
            state.last + 1
        )));
    }
    if h.evict != 0 && state.entries.remove(&h.evict).is_none() {
        return Err(Error::Exchange(format!(
            "broadcast description {} evicts entry {}, which is not cached",
            h.seq, h.evict
        )));
    }
    // The root bounds its entries by every receiver's limit; this
    // process knows its own.
    if state.entries.len() >= ex.limit {
        return Err(Error::Exchange(format!(
            "broadcast description {} would exceed the type cache limit {}",
            h.seq, ex.limit
        )));
    }
    if rep == Representation::Internal && !ex.peers[root as usize].same_build {
        return Err(Error::Exchange(format!(
            "broadcast description {} is internal, but the root's build differs",
            h.seq
        )));
    }
    let d = checked(&Definition {
        rep,
        seq: h.seq,
        evict: h.evict,
        evict_refs: 0,
        id: h.id,
        payload: &payload,
    })?;
    state.last = h.seq;
    state.entries.insert(h.seq, (h.id, d.clone()));
    Ok(d)
}

/// `MPIX_Type_exchange_setup`: sets up the exchange of `c` now
/// (collective over `c`; nothing happens if it is set up already).
pub fn setup(c: Comm) -> Result<()> {
    attach(c).map(|_| ())
}

/// The private duplicates of `c` (references, definitions), setting the
/// exchange up if needed: for tests that forge messages.
#[doc(hidden)]
pub fn private_comms(c: Comm) -> Result<(Comm, Comm)> {
    let ex = attach(c)?;
    Ok((ex.refs.0, ex.defs.0))
}
