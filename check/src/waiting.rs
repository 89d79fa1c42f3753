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

/// What this thread answers a status query with.
pub fn current() -> Option<Waiting> {
    MINE.with(|m| m.get())
}
