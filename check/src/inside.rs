//! Where this rank is inside MPI's own call, told without MPI.
//!
//! The batched mode (`crate::batch`) makes a recorded collective call at
//! once, unverified, and MPI may hang in it on a difference the batch's
//! verification has not seen yet (`MPI_Barrier` on one rank, `MPI_Bcast`
//! on another). The rank's thread cannot answer the status channel from
//! inside MPI, and another thread may not call MPI below
//! `MPI_THREAD_MULTIPLE`; so the call (its code, number and
//! communicator's identity) is published in atomics around it (`enter`,
//! `leave`), and a helper thread, which makes no MPI call, answers for
//! the rank over TCP. A rank whose check times out asks the ranks that did
//! not answer the status channel (`ask`), and its report names the call
//! each of them is inside.
//!
//! A rank verifying a batch publishes the latest call it recorded there
//! the same way (`verifying`), and each answer carries the call's record:
//! when MPI holds some ranks inside a call whose arguments differ (MPICH
//! 5's `MPI_Gather` with counts that differ), the ranks in the
//! verification read every rank's record here and report the difference
//! itself (`crate::batch`), not only where each rank is.
//!
//! Opened at `MPI_Init` in the batched mode with the timeout on (`open`):
//! one listening socket and one thread, blocked in `accept`, per process;
//! every rank's port and host name are gathered there, on the checker's
//! duplicate of `MPI_COMM_WORLD`. A rank on this host is asked on the
//! loopback address, one on another host at its host name's address.

use crate::mpi::{self, State};
use crate::record::{Record, WORDS};
use crate::sys::MPI_Comm;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The call this rank is inside (`0`: none), its number and its
/// communicator's identity.
static CALL: AtomicU64 = AtomicU64::new(0);
static SEQ: AtomicU64 = AtomicU64::new(0);
static ID: AtomicU64 = AtomicU64::new(0);
/// The program's return address from the call (`crate::site::caller`).
static RA: AtomicU64 = AtomicU64::new(0);
/// What the rank does in the call (`INSIDE`, `VERIFYING`).
static KIND: AtomicU64 = AtomicU64::new(0);
/// The call's record, and the generation that guards it (a seqlock: odd
/// while the rank writes it, so that the helper never answers with half
/// of one record and half of the next).
static REC: [AtomicU64; WORDS] = [const { AtomicU64::new(0) }; WORDS];
static GEN: AtomicU64 = AtomicU64::new(0);

/// The rank is inside MPI's own call.
const INSIDE: u64 = 1;
/// The rank verifies the batch whose latest call this is (it answers the
/// status channel too; its record is what the helper adds).
const VERIFYING: u64 = 2;
/// The answer's words before the site: call, number, identity, kind, and
/// the record.
const HEAD: usize = 4 + WORDS;

/// Every world rank's address, once gathered.
static PEERS: OnceLock<Vec<Peer>> = OnceLock::new();

/// A rank's entry in the gathered table: its port (0: no helper) and
/// host name, NUL-padded.
const ENTRY: usize = 64;
/// How long an answer may take; its call site, which the helper names
/// from the return address (reading the program's debug information
/// the first time), a while longer.
const PATIENCE: Duration = Duration::from_millis(500);
const SITE_PATIENCE: Duration = Duration::from_millis(1500);
/// The longest call site an answer carries (as in the records).
const SITE_BYTES: u64 = 255;

/// A call another rank is inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inside {
    /// The call's code with its form (`Waiting::call`).
    pub call: u64,
    pub seq: u64,
    /// Its communicator's identity (`State::id`).
    pub id: u64,
    /// Where the program made it (`crate::site::call_site`'s form; empty:
    /// not known).
    pub site: String,
    /// The call's record, as the rank made it.
    pub rec: Record,
    /// The rank is verifying a batch whose latest call this is, not
    /// inside MPI's call.
    pub verifying: bool,
}

struct Peer {
    port: u16,
    host: String,
}

/// This rank enters MPI's own call `call` (code and form), number `seq` on
/// `st`'s communicator, made by the program at return address `ra`, with
/// record `rec`. Plain stores: the hot path of a batched call.
pub fn enter(call: u64, st: &State, ra: usize, rec: &Record) {
    publish(call, st.seq, st.id, ra, rec, INSIDE);
}

/// This rank verifies the batch on the communicator of identity `id`
/// whose latest call, number `seq`, is `call` with record `rec`, made at
/// return address `ra`; until `leave`.
pub fn verifying(call: u64, seq: u64, id: u64, ra: usize, rec: &Record) {
    publish(call, seq, id, ra, rec, VERIFYING);
}

fn publish(call: u64, seq: u64, id: u64, ra: usize, rec: &Record, kind: u64) {
    written(|| {
        for (slot, w) in REC.iter().zip(rec.to_words()) {
            slot.store(w, Ordering::Relaxed);
        }
        SEQ.store(seq, Ordering::Relaxed);
        ID.store(id, Ordering::Relaxed);
        RA.store(ra as u64, Ordering::Relaxed);
        KIND.store(kind, Ordering::Relaxed);
        CALL.store(call, Ordering::Relaxed);
    });
}

/// Makes the stores of `write` (the seqlock's writer): the generation odd
/// while they are made, even and one step on once they are.
fn written(write: impl FnOnce()) {
    let g = GEN.load(Ordering::Relaxed);
    GEN.store(g.wrapping_add(1), Ordering::Relaxed);
    fence(Ordering::Release);
    write();
    GEN.store(g.wrapping_add(2), Ordering::Release);
}

/// What is published, read whole (the seqlock's reader): the head words
/// and the return address; None while nothing is.
fn read() -> Option<([u64; HEAD], usize)> {
    loop {
        let g = GEN.load(Ordering::Acquire);
        if g % 2 == 1 {
            std::thread::yield_now();
            continue;
        }
        let mut w = [0u64; HEAD];
        w[0] = CALL.load(Ordering::Relaxed);
        w[1] = SEQ.load(Ordering::Relaxed);
        w[2] = ID.load(Ordering::Relaxed);
        w[3] = KIND.load(Ordering::Relaxed);
        for (o, slot) in w[4..].iter_mut().zip(&REC) {
            *o = slot.load(Ordering::Relaxed);
        }
        let ra = RA.load(Ordering::Relaxed) as usize;
        fence(Ordering::Acquire);
        if GEN.load(Ordering::Relaxed) == g {
            return (w[0] != 0).then_some((w, ra));
        }
    }
}

/// This rank left the call (or the verification).
pub fn leave() {
    written(|| CALL.store(0, Ordering::Relaxed));
}

/// Opens the helper (a collective of `MPI_COMM_WORLD`'s private
/// duplicate `world_dup`, made by every rank at `MPI_Init`).
pub fn open(world_dup: MPI_Comm) {
    let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).ok();
    let port = listener
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map_or(0, |a| a.port());
    let mut mine = [0u8; ENTRY];
    mine[..2].copy_from_slice(&port.to_le_bytes());
    let host = mpi::host_name();
    let n = host.len().min(ENTRY - 3);
    mine[2..2 + n].copy_from_slice(&host.as_bytes()[..n]);
    let Some(all) = mpi::allgather_bytes(world_dup, &mine) else {
        return;
    };
    let _ = PEERS.set(all.chunks(ENTRY).map(peer).collect());
    if let Some(l) = listener {
        spawn(l);
    }
}

fn spawn(listener: TcpListener) {
    let _ = std::thread::Builder::new()
        .name("mpix-check-inside".into())
        .spawn(move || serve(listener));
}

fn peer(entry: &[u8]) -> Peer {
    let name = &entry[2..];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Peer {
        port: u16::from_le_bytes([entry[0], entry[1]]),
        host: String::from_utf8_lossy(&name[..end]).into_owned(),
    }
}

/// The helper: answers each connection with what this rank publishes
/// (`HEAD` words, none but a zero word when nothing is), then where the
/// program made the call (text, to the end of the stream).
fn serve(listener: TcpListener) {
    for stream in listener.incoming() {
        let Ok(mut s) = stream else { continue };
        let (words, ra) = read().unwrap_or(([0; HEAD], 0));
        let mut out = [0u8; 8 * HEAD];
        for (i, w) in words.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        let _ = s.set_write_timeout(Some(PATIENCE));
        if s.write_all(&out).is_err() || words[0] == 0 || ra == 0 {
            continue;
        }
        let site = crate::site::caller_site(&crate::record::call_name(words[0]), ra);
        let _ = s.write_all(&site.as_bytes()[..site.len().min(SITE_BYTES as usize)]);
    }
}

/// The call world rank `world` is inside, if it says one within a moment.
pub fn ask(world: i32) -> Option<Inside> {
    told(world).filter(|i| !i.verifying)
}

/// What world rank `world` publishes, if it says within a moment: the
/// call it is inside, or the latest of the batch it verifies.
pub fn told(world: i32) -> Option<Inside> {
    let peers = PEERS.get()?;
    let p = peers.get(usize::try_from(world).ok()?)?;
    if p.port == 0 {
        return None;
    }
    ask_at(
        p,
        peers.get(usize::try_from(mpi::world_rank_cached()).ok()?)?,
    )
}

/// `told` by the rank at `p`, from the rank at `me`.
fn ask_at(p: &Peer, me: &Peer) -> Option<Inside> {
    let addr = if p.host == me.host {
        SocketAddr::from((Ipv4Addr::LOCALHOST, p.port))
    } else {
        (p.host.as_str(), p.port).to_socket_addrs().ok()?.next()?
    };
    let mut s = TcpStream::connect_timeout(&addr, PATIENCE).ok()?;
    s.set_read_timeout(Some(PATIENCE)).ok()?;
    let mut b = [0u8; 8 * HEAD];
    s.read_exact(&mut b[..8]).ok()?;
    if b[..8] == [0; 8] {
        return None;
    }
    s.read_exact(&mut b[8..]).ok()?;
    let word = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
    let words: Vec<u64> = (0..HEAD).map(word).collect();
    if !matches!(words[3], INSIDE | VERIFYING) {
        return None;
    }
    let mut site = Vec::new();
    let whole = s.set_read_timeout(Some(SITE_PATIENCE)).is_ok()
        && s.take(SITE_BYTES).read_to_end(&mut site).is_ok();
    Some(Inside {
        call: words[0],
        seq: words[1],
        id: words[2],
        site: if whole {
            String::from_utf8_lossy(&site).into_owned()
        } else {
            String::new()
        },
        rec: Record::from_words(&words[4..]),
        verifying: words[3] == VERIFYING,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank's helper answers with the call published, and with none
    /// once it is left.
    #[test]
    fn helper_answers() {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        spawn(l);
        let here = |port| Peer {
            port,
            host: "here".into(),
        };
        let rec = Record::from_words(&(100..100 + WORDS as u64).collect::<Vec<_>>());
        let i = Inside {
            call: 7,
            seq: 42,
            id: 9,
            site: String::new(),
            rec,
            verifying: false,
        };
        publish(7, 42, 9, 0, &rec, INSIDE);
        assert_eq!(ask_at(&here(port), &here(0)), Some(i.clone()));
        // With the program's return address, the helper names the call
        // and its site, as this process names them.
        let ra = serve as fn(TcpListener) as usize + 1;
        publish(7, 42, 9, ra, &rec, INSIDE);
        let site = ask_at(&here(port), &here(0)).unwrap().site;
        let name = crate::record::call_name(7);
        assert!(site.starts_with(&format!("{name}\t")), "{site}");
        assert_eq!(site, crate::site::caller_site(&name, ra));
        // A rank verifying a batch tells its latest call, marked so.
        verifying(7, 42, 9, 0, &rec);
        let v = ask_at(&here(port), &here(0)).unwrap();
        assert!(v.verifying);
        assert_eq!(v.rec, rec);
        leave();
        assert_eq!(ask_at(&here(port), &here(0)), None);
    }

    /// A peer's entry reads back as written.
    #[test]
    fn entry_round_trip() {
        let mut e = [0u8; ENTRY];
        e[..2].copy_from_slice(&4321u16.to_le_bytes());
        e[2..6].copy_from_slice(b"node");
        let p = peer(&e);
        assert_eq!((p.port, p.host.as_str()), (4321, "node"));
    }
}
