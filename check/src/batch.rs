//! Batched verification (`MPIX_CHECK_VERIFY=batched`): a blocking
//! collective call on an intracommunicator is recorded (its arguments,
//! record and call site, the program's return address: `site::caller`;
//! its digest folded into the batch's summary) and made at once. The
//! calls of a communicator are verified together, in one reduction of
//! their summary. When `MPIX_CHECK_BATCH` of them are recorded, the
//! reduction is posted (`mpi::post_batch`) and its verdict taken when the
//! next batch is full (`rotate`, `land`): the ranks do not wait for each
//! other there. At the communicator's next checked call that is not
//! batched (before that call's own check), at its `MPI_Comm_free`, at
//! `MPI_Finalize` and before an error MPI raises in a recorded call
//! reaches the program, every recorded call is verified at once
//! (`flush`). Every rank of a correct program makes the same calls, so
//! every rank verifies at the same points.
//!
//! A call with the same arguments as the one before (a loop) reuses its
//! record and digest (`Last`).
//!
//! A call found inconsistent goes through the same slow path as an
//! immediate check (`check::slow_at`), with its own call number and call
//! site: the report is the one the call would have had, printed at the
//! verification. A type the program frees while a recorded call still
//! names it is freed after that call is verified, so that the report can
//! still read it (`keep`).
//!
//! The "v" and "w" calls (the neighborhood ones among them) are recorded
//! with a copy of the counts and datatypes arrays they read (their slow
//! path reads them after the program may have changed its arrays).
//!
//! What is not batched, and verified before it is made as in the
//! immediate mode: the nonblocking and persistent calls (their checks are
//! already off the critical path), `MPI_Reduce_scatter` (a difference in
//! its counts makes MPI fail or hang in the call), calls on
//! intercommunicators, windows and files.

use crate::check::{self, Call, Counts, Types};
use crate::digest::{self, Digest, Summary};
use crate::mpi::{self, State};
use crate::order::Order;
use crate::record::{Coll, Record, Sig, GROUP_INTRA, IN_PLACE_NA};
use crate::report::{config, Mode, Verify};
use crate::site;
use crate::sys::{MPI_Comm, MPI_Datatype};
use crate::waiting::Phase;
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The batches whose summaries differed and were compared digest by
/// digest (`MPIX_CHECK_STATS`).
pub static FULL: AtomicU64 = AtomicU64::new(0);

/// A recorded call's scalar arguments, handles as their bits: two calls
/// on a communicator with the same key are the same call, but for their
/// counts arrays.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    coll: Coll,
    large: bool,
    in_place: bool,
    root: c_int,
    comm: u64,
    op: Option<u64>,
    scount: i64,
    stype: u64,
    rcount: i64,
    rtype: u64,
    extra: u64,
}

impl Key {
    fn of(call: &Call) -> Key {
        Key {
            coll: call.coll,
            large: call.large,
            in_place: call.in_place,
            root: call.root,
            comm: mpi::bits(call.comm),
            op: call.op.map(mpi::bits),
            scount: call.scount,
            stype: mpi::bits(call.stype),
            rcount: call.rcount,
            rtype: mpi::bits(call.rtype),
            extra: call.extra,
        }
    }
}

/// A recorded call's arguments: all that a batchable call's `Call` holds
/// (no window, file or library operation).
struct Args {
    key: Key,
    arrays: Arrays,
    topo: Option<Arc<mpi::Topo>>,
}

/// A call's arrays, as kept (`Call::keep_arrays`).
#[derive(Clone)]
struct Arrays {
    scounts: Counts,
    rcounts: Counts,
    stypes: Types,
    rtypes: Types,
}

impl Arrays {
    /// A copy of `call`'s arrays (kept ones: shared, not copied again).
    fn copy_of(call: &Call) -> Arrays {
        Arrays {
            scounts: call.scounts.clone(),
            rcounts: call.rcounts.clone(),
            stypes: call.stypes.clone(),
            rtypes: call.rtypes.clone(),
        }
    }

    /// `call`'s arrays, taken.
    fn take(call: &mut Call) -> Arrays {
        Arrays {
            scounts: std::mem::replace(&mut call.scounts, Counts::None),
            rcounts: std::mem::replace(&mut call.rcounts, Counts::None),
            stypes: std::mem::replace(&mut call.stypes, Types::None),
            rtypes: std::mem::replace(&mut call.rtypes, Types::None),
        }
    }

    /// Whether `call`'s arrays hold these (`Counts::holds`).
    fn held_by(&self, call: &Call) -> bool {
        call.scounts.holds(&self.scounts)
            && call.rcounts.holds(&self.rcounts)
            && call.stypes.holds(&self.stypes)
            && call.rtypes.holds(&self.rtypes)
    }

    /// Gives `call` these arrays.
    fn give(&self, call: &mut Call) {
        call.scounts = self.scounts.clone();
        call.rcounts = self.rcounts.clone();
        call.stypes = self.stypes.clone();
        call.rtypes = self.rtypes.clone();
    }

    /// Whether a type array names the datatype whose bits are `t`.
    fn names(&self, t: u64) -> bool {
        self.stypes.names(t) || self.rtypes.names(t)
    }
}

impl Args {
    /// `call`'s arguments, its arrays taken.
    fn take(key: Key, call: &mut Call) -> Args {
        Args {
            key,
            arrays: Arrays::take(call),
            topo: call.topo.clone(),
        }
    }

    /// The call again, for its digest and report.
    fn call(&self) -> Call {
        let k = &self.key;
        let mut call = Call {
            large: k.large,
            in_place: k.in_place,
            root: k.root,
            op: k.op.map(mpi::from_bits),
            scount: k.scount,
            stype: mpi::from_bits(k.stype),
            rcount: k.rcount,
            rtype: mpi::from_bits(k.rtype),
            extra: k.extra,
            topo: self.topo.clone(),
            ..Call::new(k.coll, mpi::from_bits(k.comm))
        };
        self.arrays.give(&mut call);
        call
    }
}

/// The last call recorded on a communicator, whose record and digest a
/// repeat of it (a program's loop) reuses, renumbered: the signatures of
/// its types are not looked up again.
struct Last {
    key: Key,
    arrays: Arrays,
    rec: Record,
    digest: Digest,
    /// `TYPES_FREED` at its record: a type freed since may have given
    /// its handle to another.
    freed: u64,
}

impl Last {
    /// Whether a repeat may reuse the record `rec` and its digest: not
    /// with a user op (whose handle may be another op's once freed).
    fn reusable(rec: &Record) -> bool {
        rec.op >> 62 == 0
    }

    /// Whether `call`, with `key`, repeats this one: the same key and
    /// arrays' contents, and no type freed since.
    fn repeated_by(&self, call: &Call, key: &Key, freed: u64) -> bool {
        self.key == *key && self.freed == freed && self.arrays.held_by(call)
    }
}

/// One recorded call, not yet verified: what its report needs (its
/// digest is the record's, made again if the batch is compared in full).
struct Entry {
    args: Args,
    rec: Record,
    /// The program's return address from the call (`site::caller`).
    site: usize,
}

/// A batch whose summary is being reduced (`mpi::Posted`) while the
/// next one is recorded: its calls, kept until the verdict.
struct InFlight {
    entries: Vec<Entry>,
    reduction: mpi::Posted,
}

/// A communicator's recorded calls.
struct Batch {
    entries: Vec<Entry>,
    /// The batch before, not verified yet.
    in_flight: Option<InFlight>,
    /// Room for the next batch (a verified batch's, emptied).
    spare: Vec<Entry>,
    last: Option<Last>,
    /// The hash of their digests, in order.
    summary: Summary,
    /// Its state's address, its key in `open`.
    key: usize,
    /// Whether an error on the communicator comes back to the program.
    handler: mpi::errhandler::Returns,
    /// Its place in the order of blocking calls across communicators
    /// (None: not joined yet, or a rank of it is not in `MPI_COMM_WORLD`).
    order: Option<Arc<Order>>,
    joined: bool,
}

impl Drop for Batch {
    /// The state is freed (its communicator's free, or MPI's own at
    /// `MPI_Finalize`): off the list, and out of the order.
    fn drop(&mut self) {
        if let Ok(mut o) = open().lock() {
            o.retain(|&(_, k)| k != self.key);
        }
        if let Some(order) = &self.order {
            order.leave();
        }
    }
}

/// The communicators with a batch, by identity (the same on every rank,
/// so that `flush_all` verifies them in the same order everywhere) and
/// state address.
fn open() -> &'static Mutex<Vec<(u64, usize)>> {
    static OPEN: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());
    &OPEN
}

/// The batch size, in the batched mode. A process at
/// `MPI_THREAD_MULTIPLE` verifies immediately: a thread's type free would
/// read the batches other threads add to.
fn size() -> Option<usize> {
    match config().verify {
        Verify::Batched(n) if !crate::threads::multiple() => Some(n),
        _ => None,
    }
}

/// Whether `call` on `st` is recorded rather than verified at once: a
/// blocking call on an intracommunicator whose arrays, if any, can be
/// kept (`Call::keep_arrays`).
fn batchable(call: &Call, st: &State) -> bool {
    let no_arrays = call.scounts.is_none()
        && call.rcounts.is_none()
        && call.stypes.is_none()
        && call.rtypes.is_none();
    call.form == crate::record::Form::Blocking
        && st.inter.is_none()
        && call.object.is_none()
        && call.operation.is_none()
        && (no_arrays || call.arrays_keepable())
}

/// Whether an error on `st`'s communicator comes back to the program
/// (its handler is not `MPI_ERRORS_ARE_FATAL`): its calls are then
/// verified before they are made, so that a finding is returned by the
/// call it is about, not by a later one.
fn errors_come_back(st: &mut State, n: usize) -> bool {
    let comm = mpi::from_bits(st.comm);
    config().mode == Mode::Fatal && batch_of(st, n).handler.now(comm)
}

/// What the check of a blocking call did.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Verified (or not checked): make the call.
    Verified,
    /// Recorded, verified later: make the call through `made`.
    Recorded,
}

/// The check of a blocking collective call, before the call itself (as
/// `check::blocking`): in the batched mode, recorded when it can be (and
/// the batch verified when full), else the batch verified, then the call.
pub fn blocking(call: &mut Call) -> Result<Checked, c_int> {
    let Some(n) = size() else {
        return check::blocking(call).map(|_| Checked::Verified);
    };
    let Some(st) = check::enabled(call) else {
        return Ok(Checked::Verified);
    };
    st.before = place_in_order(call, st, n);
    if !batchable(call, st) || errors_come_back(st, n) {
        flush(st)?;
        return check::verify_now(call, st).map(|_| Checked::Verified);
    }
    let site = site::caller(call.coll as usize * 2 + usize::from(call.large));
    let code = call.coll as u64 | call.form.bits();
    let key = Key::of(call);
    let freed = crate::sig::TYPES_FREED.load(Ordering::Acquire);
    check::number(st);
    let place = (st.seq, st.before);
    let rec = if let Some(rec) = batch_of(st, n).repeat(call, &key, freed, place) {
        rec
    } else {
        let rec = call.record(st);
        let digest = check::digest_of(call, st, &rec);
        if call.arrays_keepable() {
            call.keep_arrays(st.rank, st.size);
        }
        let last = Last::reusable(&rec).then(|| Last {
            key,
            arrays: Arrays::copy_of(call),
            rec,
            digest,
            freed,
        });
        batch_of(st, n).add(&digest, last);
        rec
    };
    let b = batch_of(st, n);
    let args = Args::take(key, call);
    b.entries.push(Entry { args, rec, site });
    let recorded = b.entries.len();
    if recorded >= n {
        rotate(st)?;
    } else if recorded == n / 2 {
        // Once per batch (a test costs a poll of MPI's progress): the
        // doubling's first step is done by then, the next is posted.
        advance(st);
    }
    crate::inside::enter(code, st, site, &rec);
    Ok(Checked::Recorded)
}

/// The place of `call` on `st` in the order of blocking calls across
/// communicators (`crate::order`), the call counted: a blocking call on
/// an intracommunicator's own (not a window's or file's, nor one of the
/// marshalling library's operations: the checker makes those on its own
/// communicators too); 0 for others. The communicator joins the order at
/// its first.
fn place_in_order(call: &Call, st: &mut State, n: usize) -> u64 {
    if call.form != crate::record::Form::Blocking
        || st.inter.is_some()
        || call.object.is_some()
        || call.operation.is_some()
    {
        return 0;
    }
    let (comm, size) = (st.comm, st.size);
    let b = batch_of(st, n);
    if !b.joined {
        b.joined = true;
        b.order = mpi::world_ranks(mpi::from_bits(comm))
            .map(|ranks| Order::join(comm, crate::names::name_of(comm, size), ranks));
    }
    b.order.as_ref().map_or(0, |o| o.next())
}

/// Makes a recorded call on `comm` (`pmpi`). An error MPI raises in it
/// (a truncation: the ranks' signatures differ) first verifies the batch,
/// so that the report of the call that caused it comes before the error
/// reaches the program's handler. Not an error MPI finds in this rank's
/// own arguments (an uncommitted type): no difference causes it, and the
/// other ranks, gone on, could not join the verification.
pub fn made(comm: MPI_Comm, pmpi: impl FnOnce() -> c_int) -> c_int {
    let mpi::errhandler::Outcome { rc, err, caught } = mpi::errhandler::deferred(pmpi);
    crate::inside::leave();
    if err == 0 {
        return rc;
    }
    if !mpi::errhandler::argument_error(err) {
        if let Some(st) = mpi::known_state(comm) {
            if let Err(code) = flush(st) {
                return code;
            }
        }
    }
    mpi::errhandler::hand_on(caught, rc)
}

impl Batch {
    /// Adds a call's digest to the summary; `last`: what a repeat of the
    /// call reuses.
    fn add(&mut self, digest: &Digest, last: Option<Last>) {
        self.summary.add(digest);
        self.last = last;
    }

    /// `call`, with `key`, numbered `seq`, added to the summary if it
    /// repeats the last call (`Last::repeated_by`): its record. Its
    /// arrays become the last call's copies.
    fn repeat(
        &mut self,
        call: &mut Call,
        key: &Key,
        freed: u64,
        (seq, order): (u64, u64),
    ) -> Option<Record> {
        let last = self
            .last
            .as_mut()
            .filter(|l| l.repeated_by(call, key, freed))?;
        last.arrays.give(call);
        last.rec.seq = seq;
        last.rec.order = order;
        digest::renumber(&mut last.digest, seq, order);
        self.summary.add(&last.digest);
        Some(last.rec)
    }
}

/// At `MPI_Init`, in the batched mode with the timeout on: the helper
/// that says which call this rank is inside (`crate::inside`), opened on
/// `MPI_COMM_WORLD`'s private duplicate `world_dup`.
pub fn at_init(world_dup: MPI_Comm) {
    if size().is_some() && config().timeout.is_some() && config().mode != Mode::Off {
        crate::inside::open(world_dup);
        crate::watchdog::when_held(held);
    }
}

/// `st`'s batch, if it has one.
fn batch(st: &mut State) -> Option<&mut Batch> {
    st.batch.as_mut().and_then(|b| b.downcast_mut::<Batch>())
}

/// The batch is full: the verdict on the batch in flight taken, this
/// one's summary reduction is posted, and goes on while the next batch
/// is recorded.
fn rotate(st: &mut State) -> Result<(), c_int> {
    land(st)?;
    let place = check::place(st);
    let dup = st.dup;
    let Some(b) = batch(st) else {
        return Ok(());
    };
    let room = std::mem::take(&mut b.spare);
    let entries = std::mem::replace(&mut b.entries, room);
    let summary = std::mem::replace(&mut b.summary, Summary::EMPTY);
    match mpi::post_batch(dup, place, &summary.to_digest()) {
        Ok(reduction) => {
            b.in_flight = Some(InFlight { entries, reduction });
            Ok(())
        }
        Err(rc) => check::exchange_failed(&entries[0].args.call(), rc),
    }
}

/// Moves the batch in flight's reduction on, without waiting.
fn advance(st: &mut State) {
    let Some(f) = batch(st).and_then(|b| b.in_flight.as_mut()) else {
        return;
    };
    if let Err(rc) = f.reduction.advance() {
        // (No verdict: said once, the batch dropped.)
        let call = f.entries[0].args.call();
        let _ = check::exchange_failed(&call, rc);
        if let Some(b) = batch(st) {
            b.in_flight = None;
        }
        release_kept();
    }
}

/// Takes the verdict on the batch in flight, if any: waits for its
/// reduction (watched, as a check's), then `judge`.
fn land(st: &mut State) -> Result<(), c_int> {
    let (Some(n), Some(f)) = (size(), batch(st).and_then(|b| b.in_flight.take())) else {
        return Ok(());
    };
    let reduced = watched(st, &f.entries, || f.reduction.wait());
    let mut entries = f.entries;
    let result = judge(st, &entries, reduced, n);
    release_kept();
    if result.is_ok() {
        // No handler ran: the state is the one verified.
        entries.clear();
        if let Some(b) = batch(st) {
            b.spare = entries;
        }
    }
    result
}

/// `st`'s batch, made (and its communicator listed) on first use, with
/// room for `n` calls.
fn batch_of(st: &mut State, n: usize) -> &mut Batch {
    if st.batch.is_none() {
        let key = st as *mut State as usize;
        if let Ok(mut o) = open().lock() {
            o.push((st.id, key));
        }
        st.batch = Some(Box::new(Batch {
            entries: Vec::with_capacity(n),
            in_flight: None,
            spare: Vec::new(),
            last: None,
            summary: Summary::EMPTY,
            key,
            handler: Default::default(),
            order: None,
            joined: false,
        }));
    }
    st.batch
        .as_mut()
        .and_then(|b| b.downcast_mut::<Batch>())
        .expect("a state's batch is a Batch")
}

/// Verifies all of `st`'s recorded calls, at once: the batch in flight's
/// verdict (`land`), then the batch being recorded (`verify`); each call
/// found inconsistent takes the slow path, in order (it reports, and in
/// the default mode its error stops here).
fn flush(st: &mut State) -> Result<(), c_int> {
    land(st)?;
    let (Some(n), Some(b)) = (size(), batch(st)) else {
        return Ok(());
    };
    if b.entries.is_empty() {
        return Ok(());
    }
    // Taken out while verified: a report's error handler may make calls
    // on the communicator, recorded in a new batch.
    let mut entries = std::mem::take(&mut b.entries);
    let summary = std::mem::replace(&mut b.summary, Summary::EMPTY);
    let result = verify(st, &entries, summary, n);
    entries.clear();
    if result.is_ok() {
        // No handler ran: the state is the one verified; its next batch
        // reuses the room.
        if let Some(b) = batch(st) {
            if b.entries.is_empty() {
                b.entries = entries;
            }
        }
    }
    release_kept();
    result
}

/// Verifies a batch: its summary reduced (one digest's words), then
/// `judge`.
fn verify(st: &State, entries: &[Entry], summary: Summary, n: usize) -> Result<(), c_int> {
    let reduced = watched(st, entries, || {
        mpi::allreduce_batch(st.dup, check::place(st), &summary.to_digest())
    });
    judge(st, entries, reduced, n)
}

/// Runs `f` (the reduction of the batch of `entries`) under the hang
/// watch, as the check of the latest call recorded on the communicator:
/// a rank that MPI holds inside a call it recorded is held in its latest,
/// and the timeout compares the two (`crate::inside`, `held`).
fn watched<R>(st: &State, entries: &[Entry], f: impl FnOnce() -> R) -> R {
    let current = st.batch.as_ref().and_then(|b| b.downcast_ref::<Batch>());
    let Some(latest) = current.and_then(|b| b.entries.last()).or(entries.last()) else {
        return f();
    };
    let (call, view) = (latest.args.call(), check::view(st, latest.rec.seq));
    let _w = check::arm(&call, &view, Phase::Arguments);
    crate::waiting::made_at(latest.site);
    let code = call.coll as u64 | call.form.bits();
    crate::inside::verifying(code, view.seq, view.id, latest.site, &latest.rec);
    VERIFYING.with(|v| {
        *v.borrow_mut() = Some(Verifying {
            call,
            view,
            rec: latest.rec,
            site: latest.site,
        })
    });
    let r = f();
    VERIFYING.with(|v| v.borrow_mut().take());
    crate::inside::leave();
    r
}

/// The latest call of the batch this thread verifies.
struct Verifying {
    call: Call,
    view: State,
    rec: Record,
    site: usize,
}

thread_local! {
    static VERIFYING: std::cell::RefCell<Option<Verifying>> = const { std::cell::RefCell::new(None) };
}

/// The timeout of a verification (`crate::watchdog::when_held`) of the
/// batch whose latest call is the check `w` waits in, on the ranks
/// `members` (world ranks, by rank): when every other rank is in the
/// verification too or held by MPI inside that same call, their records
/// (read from their helpers, `crate::inside`) are compared and a
/// difference of arguments is reported (`check::held_report`).
fn held(w: &crate::waiting::Waiting, members: &[i32], last: bool) -> Option<Result<(), usize>> {
    VERIFYING.with(|v| {
        let v = v.borrow();
        let v = v
            .as_ref()
            .filter(|v| v.rec.seq == w.seq && v.view.id == w.id)?;
        let me = mpi::world_rank_cached();
        let (mut recs, mut sites, mut free) = (Vec::new(), Vec::new(), Vec::new());
        // Two seconds at most for the asking (a rank's answer takes a
        // moment; many ranks, many moments), as the timeout's own asks.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        for (r, &world) in members.iter().enumerate() {
            if std::time::Instant::now() > until {
                return None;
            }
            if world == me {
                recs.push(v.rec);
                sites.push(site::caller_site(&v.call.name(), v.site));
                free.push(r);
                continue;
            }
            let i = crate::inside::told(world).filter(|i| i.id == w.id && i.seq == w.seq)?;
            if i.verifying {
                free.push(r);
            }
            recs.push(i.rec);
            sites.push(i.site);
        }
        if free.len() == recs.len() {
            // No rank is held: the verification's own timeout.
            return None;
        }
        check::held_report(&v.call, &v.view, recs, &sites, &free, last)
    })
}

/// The verdict on a batch whose summaries reduced to `reduced`: when
/// the ranks' summaries differ, its digests reduced in full, then the
/// slow path of each inconsistent call.
fn judge(
    st: &State,
    entries: &[Entry],
    reduced: Result<Vec<u64>, c_int>,
    n: usize,
) -> Result<(), c_int> {
    let first = entries[0].args.call();
    let seq0 = entries[0].rec.seq;
    match reduced {
        Ok(r) if <&Digest>::try_from(&r[..]).is_ok_and(digest::consistent) => return Ok(()),
        Ok(_) => {}
        Err(rc) => return check::exchange_failed(&first, rc),
    }
    FULL.fetch_add(1, Ordering::Relaxed);
    let reduce = |words: &[u64]| {
        watched(st, entries, || {
            mpi::allreduce_batch(st.dup, check::place(st), words)
        })
    };
    let digests: Vec<Digest> = entries
        .iter()
        .map(|e| check::digest_of(&e.args.call(), st, &e.rec))
        .collect();
    let reduced = match reduce(&digest::batch(&digests, n)) {
        Ok(r) => r,
        Err(rc) => return check::exchange_failed(&first, rc),
    };
    for slot in digest::inconsistent_slots(&reduced) {
        let seq = seq0 + slot as u64;
        let view = check::view(st, seq);
        match entries.get(slot) {
            Some(e) => {
                let call = e.args.call();
                let at = site::caller_site(&call.name(), e.site);
                check::slow_at(&call, &view, &e.rec, &at)?
            }
            None => {
                let call = entries[entries.len() - 1].args.call();
                check::slow_at(&call, &view, &no_call(seq, st), "")?
            }
        }
    }
    Ok(())
}

/// The record of a slot this rank made no call for (call 0).
fn no_call(seq: u64, st: &State) -> Record {
    Record {
        call: 0,
        seq,
        root: -1,
        op: 0,
        commute: 0,
        in_place: IN_PLACE_NA,
        a: Sig::NONE,
        b: Sig::NONE,
        extra: 0,
        size: st.size as u64,
        group: GROUP_INTRA,
        grank: st.rank as u64,
        order: 0,
    }
}

/// Verifies the batch of `comm` before the program frees it.
pub fn flush_comm(comm: MPI_Comm) {
    if size().is_none() {
        return;
    }
    if let Some(st) = mpi::known_state(comm) {
        let _ = flush(st);
    }
}

/// Verifies every communicator's batch (at `MPI_Finalize`), in the order
/// of their identities, the same on every rank.
pub fn flush_all() {
    // A copy: the list stays whole while the batches are verified, so
    // that `release_kept` still sees what the later ones name.
    let mut all = match open().lock() {
        Ok(o) => o.clone(),
        Err(_) => return,
    };
    all.sort_unstable();
    for (_, key) in all {
        // SAFETY: a listed state is alive: its batch takes it off the
        // list when the state is freed (`Batch::drop`).
        let st = unsafe { &mut *(key as *mut State) };
        let _ = flush(st);
    }
}

/// The types the program freed while a recorded call named them: their
/// free waits for that call's verification (`keep`), by handle bits.
fn kept() -> &'static Mutex<Vec<u64>> {
    static KEPT: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    &KEPT
}

/// Whether some recorded call names the type `t`.
fn named(open: &[(u64, usize)], t: u64) -> bool {
    open.iter().any(|&(_, st)| {
        // SAFETY: a listed state is alive (see `flush_all`); one thread
        // uses a communicator's checks at a time.
        let st = unsafe { &*(st as *const State) };
        st.batch
            .as_ref()
            .and_then(|b| b.downcast_ref::<Batch>())
            .is_some_and(|b| {
                let in_flight = b.in_flight.iter().flat_map(|f| &f.entries);
                b.entries.iter().chain(in_flight).any(|e| {
                    e.args.key.stype == t || e.args.key.rtype == t || e.args.arrays.names(t)
                })
            })
    })
}

/// The program frees the derived type `t`: when a recorded call names
/// it, the free waits until that call is verified, so that its report can
/// still read the type (true: the caller does not free it). The program
/// sees the free done; MPI's handle is freed after the verification.
pub fn keep(t: MPI_Datatype) -> bool {
    let key = mpi::bits(t);
    // Only a live type the program made (never a predefined one, nor a
    // free inside the library's own operations: the library may free its
    // own types while this looks).
    if size().is_none()
        || crate::internal::active()
        || !matches!(
            crate::types::state(key),
            crate::types::State::Committed | crate::types::State::Uncommitted(_)
        )
    {
        return false;
    }
    let Ok(o) = open().lock() else {
        return false;
    };
    if !named(&o, key) {
        return false;
    }
    kept().lock().map(|mut k| k.push(key)).is_ok()
}

/// Frees the kept types no recorded call names any more.
fn release_kept() {
    let Ok(mut k) = kept().lock() else {
        return;
    };
    if k.is_empty() {
        return;
    }
    let Ok(o) = open().lock() else {
        return;
    };
    k.retain(|&t| {
        if named(&o, t) {
            return true;
        }
        mpi::free_type(mpi::from_bits(t));
        crate::sig::TYPES_FREED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        false
    });
}
