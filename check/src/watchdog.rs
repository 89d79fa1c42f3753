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
use crate::record::{ranks_text, Coll};
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
    let Some(timeout) = config().timeout else {
        while !step()? {}
        return Ok(());
    };
    let start = Instant::now();
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
        if !reported && waited >= timeout && current().is_some() {
            reported = true;
            if timed_out(timeout, &mut step)? {
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

/// The grace other ranks get to answer (and to report themselves).
fn grace(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(500), Duration::from_secs(5))
}

/// The timeout's query and report. Ok(true): the wait completed meanwhile
/// (no report: the others were only slow).
fn timed_out(
    timeout: Duration,
    step: &mut impl FnMut() -> Result<bool, c_int>,
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
    report(&w, timeout, &members, &answers);
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

fn call_name(code: u64) -> String {
    Coll::from_code(code)
        .map(|(c, nb)| c.name(nb))
        .unwrap_or_else(|| "an MPI call".into())
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

fn report(w: &Waiting, timeout: Duration, members: &[i32], answers: &HashMap<i32, Answer>) {
    let call = call_name(w.call);
    let comm = name_of(w.comm, w.size);
    let me = crate::mpi::world_rank_cached();
    let mut details = vec![format!(
        "rank {} is waiting in {call} (call #{} on {comm})",
        w.rank, w.seq
    )];
    // The members by what they answered, in rank order of the private
    // communicator (an intercommunicator's merged groups).
    let mut groups: Vec<(String, Vec<(usize, i32)>)> = Vec::new();
    let mut missing = Vec::new();
    for (r, &world) in members.iter().enumerate() {
        if world == me {
            continue;
        }
        let text = match answers.get(&world) {
            // A process of another job (spawned or connected): not asked.
            None if world < 0 => {
                "not asked (a process outside this job's MPI_COMM_WORLD)".to_string()
            }
            Some(a) if a.wait.is_none() && a.id == w.id && a.call == w.call && a.seq == w.seq => {
                "in this check too (arrived)".to_string()
            }
            Some(Answer { wait: Some(p), .. }) => {
                missing.push(world);
                format!("not arrived: waiting in {}", p.text)
            }
            Some(a) => {
                missing.push(world);
                format!(
                    "not arrived: waiting in {} (call #{} on {})",
                    call_name(a.call),
                    a.seq,
                    a.name
                )
            }
            None => {
                missing.push(world);
                "not arrived: not in any checked call (busy, or blocked outside MPI collectives)"
                    .to_string()
            }
        };
        match groups.iter_mut().find(|g| g.0 == text) {
            Some(g) => g.1.push((r, world)),
            None => groups.push((text, vec![(r, world)])),
        }
    }
    if members.is_empty() {
        details.push("(the other ranks could not be asked where they are)".into());
    }
    for (text, ranks) in &groups {
        details.push(format!("{}: {text}", who(ranks)));
    }
    let r = Report {
        call,
        comm,
        seq: w.seq,
        rank: w.rank,
        size: w.size,
        kind: "timeout",
        summary: format!(
            "no matching check from the other ranks after {} s ({})",
            timeout.as_secs_f64(),
            w.phase.text()
        ),
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
}
