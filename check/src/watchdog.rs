//! Hangs become reports. A check's waits are nonblocking MPI requests
//! polled by the waiting thread itself (`poll`), so a wait can end: each
//! thread marks the check it waits in (a thread-local store per call), and
//! a wait that has not completed after `MPIX_CHECK_TIMEOUT` seconds asks
//! the ranks of the check's communicator where they are, on a private
//! status channel (the checker's duplicate of `MPI_COMM_WORLD`). Ranks that
//! are waiting in a check themselves (on any communicator) answer from
//! their own poll loops; ranks that do not answer within a short grace are
//! in no checked call. The report names, for each missing rank, the call
//! and communicator it waits in, or says it is in none. Under the default
//! mode the job is then ended (`MPI_Abort`, after a grace in which this
//! rank still answers the others); under `MPIX_CHECK=warn` the report is
//! printed once and the rank goes on waiting.
//!
//! A correct program never reaches the timeout: its waits are the polls of
//! requests that complete, with a clock read every few hundred polls.

use crate::mpi::channel::{self, Answer};
use crate::names::name_of;
use crate::record::{call_name, rank_group, ranks_text};
use crate::report::{config, Mode, Report};
use crate::waiting::{current, Waiting};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// `poll` for the MPI edge's own waits (`crate::mpi::watch_with`).
pub fn poll_dyn(step: &mut dyn FnMut() -> Result<bool, c_int>) -> Result<(), c_int> {
    poll(step)
}

static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// Records whether this node runs more ranks than it has cores (asked at
/// `MPI_Init`): the polls then yield past a short spin.
pub fn set_oversubscribed(yes: bool) {
    OVERSUBSCRIBED.store(yes, Ordering::Relaxed);
}

/// Polls between clock reads (a clock read costs about as much as a poll).
const POLLS: u32 = 256;

/// What a wait does while it lasts, set by a layer above (the batched
/// point-to-point checks send the companions they keep, `crate::p2p`).
static IDLE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what a wait does while it lasts (once).
pub fn when_idle(f: fn()) {
    let _ = IDLE.set(f);
}

/// What a layer above makes of a timeout before its report: the batched
/// mode compares the records of a call MPI holds ranks inside
/// (`crate::batch`). Given the check, its members (world ranks by rank)
/// and whether this rank must report; None: nothing found; Ok: reported;
/// Err(r): rank `r` reports.
type Held = fn(&Waiting, &[i32], bool) -> Option<Result<(), usize>>;
static HELD: std::sync::OnceLock<Held> = std::sync::OnceLock::new();

/// Sets what a timeout looks at before its report (once).
pub fn when_held(f: Held) {
    let _ = HELD.set(f);
}

fn idle() {
    if let Some(f) = IDLE.get() {
        f();
    }
}

/// Waits until `step` says done (Ok(true)), polling it. Past the timeout
/// the wait asks the ranks where they are and reports; while it waits
/// longer than a moment it answers the others' queries.
pub fn poll(mut step: impl FnMut() -> Result<bool, c_int>) -> Result<(), c_int> {
    // At MPI_THREAD_MULTIPLE other threads of this rank need the core
    // (and MPI's lock) to make the progress this wait is for, and with
    // more ranks than cores the rank this wait is for may need this
    // one's core: past a short spin, each poll yields.
    let yields = crate::threads::multiple() || OVERSUBSCRIBED.load(Ordering::Relaxed);
    let mut spins = 0u32;
    let mut step = move || {
        if yields {
            spins = spins.saturating_add(1);
            if spins > 64 {
                std::thread::yield_now();
            }
        }
        step()
    };
    // Most waits are over at the first poll: no clock read for them.
    if step()? {
        return Ok(());
    }
    let start = Instant::now();
    let Some(timeout) = config().timeout else {
        let mut n = 0u32;
        while !step()? {
            n = n.wrapping_add(1);
            if n % POLLS == 0 && start.elapsed() >= Duration::from_millis(1) {
                idle();
            }
        }
        return Ok(());
    };
    let mut reported = false;
    let mut next = timeout;
    let mut n = 0u32;
    loop {
        if step()? {
            return Ok(());
        }
        n = n.wrapping_add(1);
        if n % POLLS != 0 {
            continue;
        }
        let waited = start.elapsed();
        if waited < Duration::from_millis(1) {
            continue;
        }
        channel::answer_queries(crate::hang::describe);
        // The batched point-to-point companions kept here go now.
        idle();
        if !reported && waited >= timeout && current().is_some() {
            reported = true;
            if timed_out(timeout, &mut step, Waiter::Wait)? {
                return Ok(());
            }
        } else if waited >= next && current().is_none() && crate::hang::marked() {
            // A point-to-point wait (crate::hang): looked at each timeout
            // until it ends or is reported.
            match crate::hang::timed_out(timeout, waited, &mut step)? {
                crate::hang::After::Done => return Ok(()),
                crate::hang::After::Again => next = start.elapsed() + timeout,
                crate::hang::After::Quiet => next = Duration::MAX,
            }
        }
    }
}

/// A wait the program drives itself (its Test loop on a nonblocking
/// check) that has passed the timeout: the timeout's query and report,
/// as `poll` makes them (with this thread's mark set).
pub fn late(mut step: impl FnMut() -> Result<bool, c_int>) -> Result<(), c_int> {
    match config().timeout {
        Some(timeout) => timed_out(timeout, &mut step, Waiter::Test).map(|_| ()),
        None => Ok(()),
    }
}

/// Who asks, and so what the answers make a report of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Waiter {
    /// A wait: any answers (the lowest rank reports a difference of calls).
    Wait,
    /// The program's Test loop, which may overlap long work correctly:
    /// only a difference of calls.
    Test,
    /// A rank another was to report for, still waiting: any answers.
    Last,
}

/// What `report` did.
enum Told {
    Reported,
    /// Another rank in a check reports this difference.
    Deferred,
    /// No difference of calls, asked from a Test loop.
    Nothing,
}

/// The grace other ranks get to answer (and to report themselves).
fn grace(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(500), Duration::from_secs(5))
}

/// The timeout's query and report. Ok(true): the wait completed meanwhile
/// (no report: the others were only slow).
fn timed_out(
    timeout: Duration,
    step: &mut impl FnMut() -> Result<bool, c_int>,
    waiter: Waiter,
) -> Result<bool, c_int> {
    let Some(w) = current() else {
        return Ok(false);
    };
    let members = channel::members(w.dup);
    let serial = channel::ask(&members);
    let mut answers: HashMap<i32, Answer> = HashMap::new();
    let until = Instant::now() + grace(timeout);
    while Instant::now() < until {
        for _ in 0..POLLS {
            if step()? {
                return Ok(true);
            }
        }
        channel::answer_queries(crate::hang::describe);
        for a in channel::collect(serial) {
            answers.insert(a.world, a);
        }
    }
    match report(&w, timeout, &members, &answers, waiter) {
        Told::Reported => {}
        Told::Nothing => return Ok(false),
        Told::Deferred => {
            // Another rank reports the finding and ends the job; should it
            // not within another timeout, this rank reports it.
            if waited_out(timeout, step)? {
                return Ok(true);
            }
            report(&w, timeout, &members, &answers, Waiter::Last);
        }
    }
    if config().mode == Mode::Fatal {
        // Answer the ranks that time out a moment later, then end the job.
        let until = Instant::now() + grace(timeout);
        while Instant::now() < until {
            let _ = step();
            channel::answer_queries(crate::hang::describe);
        }
        crate::mpi::abort_job();
    }
    Ok(false)
}

/// Waits `span` more, answering queries: Ok(true) if the wait completed.
fn waited_out(
    span: Duration,
    step: &mut impl FnMut() -> Result<bool, c_int>,
) -> Result<bool, c_int> {
    let until = Instant::now() + span;
    while Instant::now() < until {
        for _ in 0..POLLS {
            if step()? {
                return Ok(true);
            }
        }
        channel::answer_queries(crate::hang::describe);
    }
    Ok(false)
}

/// "rank 1 (world rank 1)", "ranks 2, 3 (world ranks 2, 3)".
fn who(ranks: &[(usize, i32)]) -> String {
    let r: Vec<usize> = ranks.iter().map(|x| x.0).collect();
    let s = if r.len() == 1 { "" } else { "s" };
    if ranks.iter().any(|x| x.1 < 0) {
        return format!("rank{s} {}", ranks_text(&r));
    }
    let w: Vec<usize> = ranks.iter().map(|x| x.1 as usize).collect();
    format!(
        "rank{s} {} (world rank{s} {})",
        ranks_text(&r),
        ranks_text(&w)
    )
}

/// A rank inside MPI's own call (`crate::inside`), as a report says it.
fn inside_text(i: &crate::inside::Inside, w: &Waiting, comm: &str) -> String {
    format!(
        "not arrived: inside {} (call #{} on {}), MPI's own call: recorded by the batched mode, not yet verified",
        call_name(i.call),
        i.seq,
        inside_comm(i, w, comm)
    )
}

/// The communicator of the call a rank is inside: the check's (`comm`),
/// or another (its name is not told).
fn inside_comm<'a>(i: &crate::inside::Inside, w: &Waiting, comm: &'a str) -> &'a str {
    if i.id == w.id {
        comm
    } else {
        "another communicator"
    }
}

/// "call #2 on comm1" for a call (communicator identity `id`, number
/// `seq`, on `on`) that is not the check's own; None for the check's.
fn elsewhere(w: &Waiting, id: u64, seq: u64, on: &str) -> Option<String> {
    (id != w.id || seq != w.seq).then(|| format!("call #{seq} on {on}"))
}

/// What the other ranks answered, sorted for a report.
#[derive(Default)]
struct Sorted {
    /// The members by what they answered, in rank order of the private
    /// communicator (an intercommunicator's merged groups).
    groups: Vec<(String, Vec<(usize, i32)>)>,
    /// The world ranks not in this check.
    missing: Vec<i32>,
    /// A rank is in another call at this rank's number (in a check, or
    /// inside MPI's own call).
    differs: bool,
    /// The world ranks in a check on this communicator at this number
    /// (they time out and find the same).
    in_checks: Vec<i32>,
    /// The calls made at this number on this communicator, where known
    /// (this rank's, those in a check, those inside MPI's own call): each
    /// call's code and its ranks.
    calls: Vec<(u64, Vec<usize>)>,
    /// Where each rank made its call, where known.
    sites: Vec<Site>,
}

/// Where a rank made the call it waits in or is inside.
struct Site {
    rank: usize,
    world: i32,
    call: u64,
    /// `crate::site::call_site`'s form (empty: not known).
    at: String,
    /// "call #2 on comm1" when the call is not this check's (another
    /// number, another communicator).
    elsewhere: Option<String>,
}

impl Site {
    /// The report line: "rank 1 called MPI_Bcast from main at a.c:9",
    /// with the call's place when it is another (`elsewhere`). `full`:
    /// the check's members are the communicator's ranks (not an
    /// intercommunicator's merged groups), named by their ranks alone.
    fn line(&self, full: bool) -> String {
        let label = if full {
            format!("rank {}", self.rank)
        } else {
            who(&[(self.rank, self.world)])
        };
        let line = crate::site::site_line(&label, &call_name(self.call), &self.at);
        match &self.elsewhere {
            Some(e) => format!("{line} ({e})"),
            None => line,
        }
    }
}

impl Sorted {
    /// Rank `r` is in the call `code` at this number.
    fn at_number(&mut self, code: u64, r: usize) {
        match self.calls.iter_mut().find(|c| c.0 == code) {
            Some(c) => c.1.push(r),
            None => self.calls.push((code, vec![r])),
        }
    }
}

fn sort_answers(
    w: &Waiting,
    members: &[i32],
    answers: &HashMap<i32, Answer>,
    comm: &str,
) -> Sorted {
    let me = crate::mpi::world_rank_cached();
    let mut out = Sorted::default();
    // The helpers of the ranks that did not answer, asked one by one
    // (each at most a second) for two seconds at most.
    let ask_until = Instant::now() + Duration::from_secs(2);
    for (r, &world) in members.iter().enumerate() {
        if world == me {
            out.at_number(w.call, r);
            out.sites.push(Site {
                rank: r,
                world,
                call: w.call,
                at: crate::waiting::site(),
                elsewhere: None,
            });
            continue;
        }
        if let Some(a) = answers.get(&world).filter(|a| a.wait.is_none()) {
            out.sites.push(Site {
                rank: r,
                world,
                call: a.call,
                at: a.site.clone(),
                elsewhere: elsewhere(w, a.id, a.seq, &a.name),
            });
        }
        let text = match answers.get(&world) {
            // A process of another job (spawned or connected): not asked.
            None if world < 0 => {
                "not asked (a process outside this job's MPI_COMM_WORLD)".to_string()
            }
            Some(a) if a.wait.is_none() && a.id == w.id && a.call == w.call && a.seq == w.seq => {
                out.in_checks.push(world);
                out.at_number(w.call, r);
                "in this check too (arrived)".to_string()
            }
            Some(Answer { wait: Some(p), .. }) => {
                out.missing.push(world);
                format!("not arrived: waiting in {}", p.text)
            }
            Some(a) => {
                out.missing.push(world);
                if a.wait.is_none() && a.id == w.id && a.seq == w.seq {
                    out.differs = true;
                    out.in_checks.push(world);
                    out.at_number(a.call, r);
                }
                format!(
                    "not arrived: waiting in {} (call #{} on {})",
                    call_name(a.call),
                    a.seq,
                    a.name
                )
            }
            None => {
                out.missing.push(world);
                let inside = (Instant::now() < ask_until).then(|| crate::inside::ask(world));
                match inside.flatten() {
                    Some(i) => {
                        out.sites.push(Site {
                            rank: r,
                            world,
                            call: i.call,
                            at: i.site.clone(),
                            elsewhere: elsewhere(w, i.id, i.seq, inside_comm(&i, w, comm)),
                        });
                        if i.id == w.id && i.seq == w.seq {
                            out.differs |= i.call != w.call;
                            out.at_number(i.call, r);
                        }
                        inside_text(&i, w, comm)
                    }
                    None => "not arrived: not in any checked call (busy, or blocked outside MPI collectives)"
                        .to_string(),
                }
            }
        };
        match out.groups.iter_mut().find(|g| g.0 == text) {
            Some(g) => g.1.push((r, world)),
            None => out.groups.push((text, vec![(r, world)])),
        }
    }
    out
}

/// This rank's line pointing at the report world rank `first` makes.
fn point_at(w: &Waiting, call: &str, comm: &str, first: i32) -> Told {
    let line = format!(
        "mpix-check: rank {} waits in {call} (call #{} on {comm}): part of the finding that world rank {first} reports\n",
        w.rank, w.seq
    );
    // One write, so that the ranks' lines do not interleave.
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    Told::Deferred
}

/// The timeout's report, from the answers (`Told`: whether it was this
/// rank's to make).
fn report(
    w: &Waiting,
    timeout: Duration,
    members: &[i32],
    answers: &HashMap<i32, Answer>,
    waiter: Waiter,
) -> Told {
    let call = match w.operation {
        Some(op) => crate::record::operation_name(op),
        None => call_name(w.call),
    };
    let comm = name_of(w.comm, w.size);
    let me = crate::mpi::world_rank_cached();
    let sorted = sort_answers(w, members, answers, &comm);
    if waiter == Waiter::Test && !sorted.differs {
        return Told::Nothing;
    }
    // Every rank in a check at this number finds the same difference:
    // the lowest world rank reports it, the others say so in one line.
    if let Some(&first) = sorted
        .in_checks
        .iter()
        .min()
        .filter(|&&r| sorted.differs && r < me && waiter != Waiter::Last)
    {
        return point_at(w, &call, &comm, first);
    }
    // The same call everywhere, MPI holding some ranks inside it: a
    // difference of its arguments, from the records.
    let full = members.len() == w.size;
    if !sorted.differs && full && waiter != Waiter::Test {
        if let Some(held) = HELD
            .get()
            .and_then(|f| f(w, members, waiter == Waiter::Last))
        {
            return match held {
                Ok(()) => Told::Reported,
                Err(r) => point_at(w, &call, &comm, members[r]),
            };
        }
    }
    let mut details = Vec::new();
    // The ranks' calls as an immediate check names them (on an
    // intercommunicator, whose check runs on its merged groups, the
    // lines below say it).
    if sorted.differs && members.len() == w.size {
        details.extend(sorted.calls.iter().map(|(code, ranks)| {
            format!(
                "{}: {} (call #{} on this communicator)",
                rank_group(ranks, members),
                call_name(*code),
                w.seq
            )
        }));
    }
    // Each rank's call site, where known, as the immediate report gives it.
    let known = sorted.sites.iter().filter(|s| !s.at.is_empty());
    details.extend(known.map(|s| s.line(full)));
    details.push(format!(
        "rank {} is waiting in {call} (call #{} on {comm})",
        w.rank, w.seq
    ));
    if members.is_empty() {
        details.push("(the other ranks could not be asked where they are)".into());
    }
    for (text, ranks) in &sorted.groups {
        details.push(format!("{}: {text}", who(ranks)));
    }
    let (differs, missing) = (sorted.differs, sorted.missing);
    let r = Report {
        call,
        comm,
        seq: w.seq,
        rank: w.rank,
        size: w.size,
        kind: "timeout",
        summary: if differs {
            format!(
                "the ranks are in different collective calls (MPI hangs on them: found after {} s)",
                timeout.as_secs_f64()
            )
        } else {
            format!(
                "no matching check from the other ranks after {} s ({})",
                timeout.as_secs_f64(),
                w.phase.text()
            )
        },
        details,
        fields: vec![(
            "not_arrived_world_ranks",
            format!(
                "[{}]",
                missing
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        )],
    };
    r.emit(me);
    Told::Reported
}
