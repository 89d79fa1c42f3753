//! What a thread waits in: the check (collective, on which communicator,
//! in which phase) it marks while it polls, for the watchdog's report and
//! the answers to other ranks' queries (thread-local, no MPI).

use crate::report::config;
use std::cell::Cell;

/// What a thread is waiting for, as the report words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Phase {
    Arguments = 0,
    Records,
    Signatures,
    Pairs,
    Type,
    Report,
}

impl Phase {
    pub(crate) fn text(self) -> &'static str {
        match self {
            Phase::Arguments => "exchanging the call's arguments",
            Phase::Records => "exchanging the ranks' records after a difference was seen",
            Phase::Signatures => "exchanging signatures",
            Phase::Pairs => "exchanging the pairs that differ",
            Phase::Type => "fetching the other rank's datatype",
            Phase::Report => "waiting for the other ranks to finish their reports",
        }
    }
}

/// The check a thread waits in.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    pub call: u64,
    /// The library operation whose collective point the call is
    /// (`Call::operation`).
    pub operation: Option<&'static str>,
    pub seq: u64,
    /// The user communicator's (window's, file's) handle bits.
    pub comm: u64,
    /// The communicator's identity, the same in all its processes.
    pub id: u64,
    /// The private communicator the check runs on (its handle bits).
    pub dup: u64,
    pub rank: usize,
    pub size: usize,
    pub phase: Phase,
    /// The program's return address from the call, when the check runs
    /// after it (a batch's verification, `crate::batch`); 0: the check
    /// runs in the call, found on this thread's stack.
    pub ra: usize,
}

thread_local! {
    static MINE: Cell<Option<Waiting>> = const { Cell::new(None) };
}

/// The mark of one check; cleared when dropped.
pub struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        MINE.with(|m| m.set(None));
    }
}

/// Marks this thread as waiting in a check until the guard drops.
pub fn arm(w: Waiting) -> Option<Guard> {
    config().timeout?;
    MINE.with(|m| m.set(Some(w)));
    Some(Guard(()))
}

/// Moves this thread's mark on to the next phase of the same check.
pub fn phase(p: Phase) {
    if config().timeout.is_some() {
        MINE.with(|m| {
            if let Some(mut w) = m.get() {
                w.phase = p;
                m.set(Some(w));
            }
        });
    }
}

/// The check this thread waits in is of a call the program made at
/// return address `ra` (`crate::site::caller`), earlier.
pub fn made_at(ra: usize) {
    MINE.with(|m| {
        if let Some(mut w) = m.get() {
            w.ra = ra;
            m.set(Some(w));
        }
    });
}

/// What this thread answers a status query with.
pub fn current() -> Option<Waiting> {
    MINE.with(|m| m.get())
}

thread_local! {
    /// The call site of the check `current` names, once asked (`site`).
    static SITE: std::cell::RefCell<Option<(Key, String)>> =
        const { std::cell::RefCell::new(None) };
}

/// Where the program made the call of the check this thread waits in
/// (`crate::site::call_site`'s form: for a nonblocking call's check, the
/// Wait or Test that completed it; for a batch's, the recorded call's
/// return address named), found once per check, when another rank asks;
/// empty when it waits in none. Finding it reads the program's debug
/// information, which can take longer than another rank waits for an
/// answer (`crate::mpi::channel::answer_queries` answers first without it).
pub fn site() -> String {
    let Some(w) = current() else {
        return String::new();
    };
    if let Some(site) = site_known() {
        return site;
    }
    let site = match w.ra {
        0 => crate::site::call_site(),
        ra => crate::site::caller_site(&crate::record::call_name(w.call), ra),
    };
    SITE.with(|s| *s.borrow_mut() = Some((key(&w), site.clone())));
    site
}

/// `site`, if it is already found for the check this thread waits in.
pub fn site_known() -> Option<String> {
    let w = current()?;
    SITE.with(|s| match &*s.borrow() {
        Some((k, site)) if *k == key(&w) => Some(site.clone()),
        _ => None,
    })
}

/// Which check a found site is of: its communicator's identity, number,
/// call and return address.
type Key = (u64, u64, u64, usize);

fn key(w: &Waiting) -> Key {
    (w.id, w.seq, w.call, w.ra)
}
