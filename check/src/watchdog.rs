//! Hangs become reports: the checks' exchanges are blocking MPI calls, so
//! a rank whose partners never arrive would wait forever. Each thread
//! marks the check it is waiting in (a few atomic stores, no lock, no
//! clock read per call); a watchdog thread, started with the first check,
//! looks at the marks a few times per timeout and reports a check that
//! has not moved for `MPIX_CHECK_TIMEOUT` seconds. Under the default mode
//! the job is then ended (`MPI_Abort`: the waiting thread is inside MPI and
//! cannot return an error); under `MPIX_CHECK=warn` the report is printed
//! once and the rank goes on waiting.

use crate::record::Coll;
use crate::report::{config, Mode, Report};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

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
    fn text(self) -> &'static str {
        match self {
            Phase::Arguments => "exchanging the call's arguments",
            Phase::Records => "exchanging the ranks' records after a difference was seen",
            Phase::Signatures => "exchanging signatures",
            Phase::Pairs => "exchanging the pairs that differ",
            Phase::Type => "fetching the other rank's datatype",
            Phase::Report => "waiting for the other ranks to finish their reports",
        }
    }

    fn from_word(w: u64) -> Phase {
        [
            Phase::Arguments,
            Phase::Records,
            Phase::Signatures,
            Phase::Pairs,
            Phase::Type,
            Phase::Report,
        ]
        .get(w as usize)
        .copied()
        .unwrap_or(Phase::Arguments)
    }
}

/// One thread's mark. `gen` is odd while the thread waits in a check (a
/// seqlock: the watchdog trusts the other words only when `gen` did not
/// change while it read them).
#[derive(Default)]
struct Slot {
    gen: AtomicU64,
    call: AtomicU64,
    seq: AtomicU64,
    comm: AtomicU64,
    /// rank << 32 | size
    place: AtomicU64,
    phase: AtomicU64,
}

fn slots() -> &'static Mutex<Vec<Arc<Slot>>> {
    static S: OnceLock<Mutex<Vec<Arc<Slot>>>> = OnceLock::new();
    S.get_or_init(Default::default)
}

thread_local! {
    static MINE: Arc<Slot> = {
        let s = Arc::new(Slot::default());
        slots().lock().unwrap_or_else(|e| e.into_inner()).push(s.clone());
        start();
        s
    };
}

/// The names of the communicators the checker knows, for the watchdog's
/// reports (it must not call MPI to ask: the waiting thread is inside MPI).
fn names() -> &'static Mutex<HashMap<u64, String>> {
    static N: OnceLock<Mutex<HashMap<u64, String>>> = OnceLock::new();
    N.get_or_init(Default::default)
}

pub fn set_name(comm: u64, name: String) {
    names()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(comm, name);
}

pub fn forget_name(comm: u64) {
    names()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&comm);
}

/// What the waiting thread was checking (copied out of its slot).
pub struct Waiting {
    pub call: u64,
    pub seq: u64,
    pub comm: u64,
    pub rank: usize,
    pub size: usize,
    pub phase: Phase,
}

/// The mark of one check; cleared when dropped.
pub struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        MINE.with(|s| s.gen.fetch_add(1, Ordering::Release));
    }
}

/// Marks this thread as waiting in a check until the guard drops.
pub fn arm(w: Waiting) -> Option<Guard> {
    config().timeout?;
    MINE.with(|s| {
        s.call.store(w.call, Ordering::Relaxed);
        s.seq.store(w.seq, Ordering::Relaxed);
        s.comm.store(w.comm, Ordering::Relaxed);
        s.place
            .store((w.rank as u64) << 32 | w.size as u64, Ordering::Relaxed);
        s.phase.store(w.phase as u64, Ordering::Relaxed);
        s.gen.fetch_add(1, Ordering::Release);
    });
    Some(Guard(()))
}

/// Moves this thread's mark on to the next phase of the same check.
pub fn phase(p: Phase) {
    if config().timeout.is_some() {
        MINE.with(|s| s.phase.store(p as u64, Ordering::Relaxed));
    }
}

fn read(s: &Slot) -> Option<(u64, Waiting)> {
    let g = s.gen.load(Ordering::Acquire);
    if g % 2 == 0 {
        return None;
    }
    let place = s.place.load(Ordering::Relaxed);
    let w = Waiting {
        call: s.call.load(Ordering::Relaxed),
        seq: s.seq.load(Ordering::Relaxed),
        comm: s.comm.load(Ordering::Relaxed),
        rank: (place >> 32) as usize,
        size: (place & 0xffff_ffff) as usize,
        phase: Phase::from_word(s.phase.load(Ordering::Relaxed)),
    };
    (s.gen.load(Ordering::Acquire) == g).then_some((g, w))
}

fn start() {
    static STARTED: OnceLock<()> = OnceLock::new();
    let Some(timeout) = config().timeout else {
        return;
    };
    STARTED.get_or_init(|| {
        let tick = (timeout / 8).clamp(Duration::from_millis(10), Duration::from_secs(1));
        let spawned = std::thread::Builder::new()
            .name("mpix-check watchdog".into())
            .spawn(move || watch(timeout, tick));
        if let Err(e) = spawned {
            eprintln!("mpix-check: no watchdog thread ({e}): a hang will not be reported");
        }
    });
}

fn watch(timeout: Duration, tick: Duration) {
    // Per slot: the generation first seen waiting, since when, and whether
    // it was reported.
    let mut seen: HashMap<usize, (u64, Instant, bool)> = HashMap::new();
    loop {
        std::thread::sleep(tick);
        let all: Vec<Arc<Slot>> = slots().lock().unwrap_or_else(|e| e.into_inner()).clone();
        for s in &all {
            let key = Arc::as_ptr(s) as usize;
            let Some((g, w)) = read(s) else {
                seen.remove(&key);
                continue;
            };
            let e = seen.entry(key).or_insert((g, Instant::now(), false));
            if e.0 != g {
                *e = (g, Instant::now(), false);
            }
            if !e.2 && e.1.elapsed() >= timeout {
                e.2 = true;
                report(&w, timeout);
                if config().mode == Mode::Fatal {
                    // Ranks that wait in the same hang time out within a
                    // tick or two of each other: let them print first.
                    std::thread::sleep((2 * tick).max(Duration::from_millis(200)));
                    crate::mpi::abort_job();
                }
            }
        }
    }
}

fn report(w: &Waiting, timeout: Duration) {
    let call = Coll::from_code(w.call)
        .map(|(c, nb)| c.name(nb))
        .unwrap_or_else(|| "an MPI call".into());
    let comm = names()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&w.comm)
        .cloned()
        .unwrap_or_else(|| format!("an unnamed communicator of {} ranks", w.size));
    let r = Report {
        call: call.clone(),
        comm: comm.clone(),
        seq: w.seq,
        rank: w.rank,
        size: w.size,
        kind: "timeout",
        summary: format!(
            "no matching check from the other ranks after {} s ({})",
            timeout.as_secs_f64(),
            w.phase.text()
        ),
        details: vec![format!(
            "rank {} is waiting in {call} (call #{} on {comm}); the other ranks are in another collective call, perhaps on another communicator, do not make this call, or are held up elsewhere (in the program or inside MPI); which ranks have not arrived cannot be known here",
            w.rank, w.seq
        )],
        fields: vec![],
    };
    r.emit(crate::mpi::world_rank_cached());
}
