//! The checks: a call's record built from its arguments, exchanged on the
//! private duplicate, evaluated, and on a finding the report (with, for
//! datatypes, the other rank's type fetched marshalled to locate the first
//! differing element).

pub use crate::arrays::{Counts, Types};
use crate::digest::{self, Digest};
use crate::mpi::{self, State};
use crate::record::*;
use crate::report::{config, Mode, Report};
use crate::sig::*;
use crate::site;
use crate::sys::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use crate::types::TypeArg;
use crate::waiting::{Phase, Waiting};
use crate::watchdog;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A (count, datatype) argument pair, when it takes part.
type Part = Option<(i64, MPI_Datatype)>;

/// A collective call's arguments, as far as the checks need them.
pub struct Call {
    pub coll: Coll,
    pub form: Form,
    /// The large-count (`_c`) form: named so, checked as the classic one
    /// (the two are the same operation and match each other).
    pub large: bool,
    pub comm: MPI_Comm,
    pub root: c_int,
    pub op: Option<MPI_Op>,
    /// The buffer the standard's in-place option is given in is MPI_IN_PLACE.
    pub in_place: bool,
    pub scount: i64,
    pub stype: MPI_Datatype,
    pub rcount: i64,
    pub rtype: MPI_Datatype,
    pub scounts: Counts,
    pub rcounts: Counts,
    pub stypes: Types,
    pub rtypes: Types,
    pub extra: u64,
    /// The communicator's neighborhood (neighborhood collectives only).
    pub topo: Option<Arc<mpi::Topo>>,
    /// The window or file a window or file call is on; its checks run on
    /// its own private duplicate.
    pub object: Option<mpi::Object>,
    /// The library operation the program called, when this is its
    /// collective point (`Coll::ExchangeSetup`).
    pub operation: Option<&'static str>,
}

impl Call {
    pub fn new(coll: Coll, comm: MPI_Comm) -> Call {
        Call {
            coll,
            form: Form::Blocking,
            large: false,
            comm,
            root: -1,
            op: None,
            in_place: false,
            scount: 0,
            stype: mpi::byte(),
            rcount: 0,
            rtype: mpi::byte(),
            scounts: Counts::None,
            rcounts: Counts::None,
            stypes: Types::None,
            rtypes: Types::None,
            extra: 0,
            topo: None,
            object: None,
            operation: None,
        }
    }

    pub(crate) fn name(&self) -> String {
        if let Some(op) = self.operation {
            return crate::record::operation_name(op);
        }
        let name = self.coll.name(self.form);
        if self.large {
            name + "_c"
        } else {
            name
        }
    }

    /// The buffer this rank (`rank` of an intracommunicator of `size`)
    /// receives into, as one (count, datatype), for the calls whose
    /// receive buffer is one (`receive_rule`). None for the others (their
    /// counts or types differ by block) and for the ranks that receive
    /// nothing.
    pub(crate) fn receive_buffer(&self, rank: i64, size: i64) -> Option<(i64, MPI_Datatype)> {
        let (who, what) = receive_rule(self.coll)?;
        let root = i64::from(self.root) == rank;
        let receives = match who {
            Receiver::Root => root,
            Receiver::NonRoots => !root,
            Receiver::AllButInPlaceRoot => !(root && self.in_place),
            Receiver::All => true,
        };
        receives.then(|| match what {
            Buffer::Send => (self.scount, self.stype),
            Buffer::Recv => (self.rcount, self.rtype),
            Buffer::RecvPerRank => (size.saturating_mul(self.rcount), self.rtype),
        })
    }

    /// The datatype some rank's `receive_buffer` is described with, if
    /// the call has one.
    pub(crate) fn receive_type(&self) -> Option<MPI_Datatype> {
        receive_rule(self.coll).map(|(_, what)| match what {
            Buffer::Send => self.stype,
            Buffer::Recv | Buffer::RecvPerRank => self.rtype,
        })
    }

    /// The datatype arguments MPI reads on this rank (`me` of an
    /// intracommunicator of `size`), by parameter name, with their counts:
    /// the significant ones only (a gather's receive type at its root, no
    /// send type given MPI_IN_PLACE).
    pub(crate) fn type_arguments(&self, me: usize, size: usize) -> Vec<TypeArg> {
        let one = matches!(
            self.coll,
            Coll::Bcast
                | Coll::Reduce
                | Coll::Allreduce
                | Coll::Scan
                | Coll::Exscan
                | Coll::ReduceScatter
                | Coll::ReduceScatterBlock
        );
        let arrays = !self.stypes.is_none() || !self.rtypes.is_none();
        let name = |send: bool, j: Option<usize>| match (one, send, arrays, j) {
            (true, ..) => "datatype".to_string(),
            (_, true, true, Some(j)) => format!("sendtypes[{j}]"),
            (_, false, true, Some(j)) => format!("recvtypes[{j}]"),
            (_, true, ..) => "sendtype".to_string(),
            (_, false, ..) => "recvtype".to_string(),
        };
        let mut out = Vec::new();
        let mut add = |send: bool, j: Option<usize>, part: Part| {
            if let Some((count, datatype)) = part {
                let name = name(send, j);
                out.push(TypeArg {
                    name: name.into(),
                    count,
                    datatype,
                });
            }
        };
        if let Some(t) = &self.topo {
            (0..t.dests.len()).for_each(|k| add(true, Some(k), Some(self.send_slot(k))));
            (0..t.sources.len()).for_each(|k| add(false, Some(k), Some(self.recv_slot(k))));
            return out;
        }
        match self.coll {
            Coll::Gatherv
            | Coll::Scatterv
            | Coll::Allgatherv
            | Coll::Alltoallv
            | Coll::Alltoallw => {
                for j in 0..size {
                    let (send, recv) = self.pair(me, j);
                    // In place, the send part is the receive buffer's.
                    add(true, Some(j), send.filter(|_| !self.in_place));
                    add(false, Some(j), recv);
                }
            }
            _ => {
                let (send, recv) = self.sides(me);
                add(true, None, send);
                add(false, None, recv);
            }
        }
        out
    }

    /// Side A (send) and B (receive) of a uniform call on this rank.
    fn sides(&self, rank: usize) -> (Part, Part) {
        let is_root = self.root >= 0 && rank == self.root as usize;
        let send = Some((self.scount, self.stype));
        let recv = Some((self.rcount, self.rtype));
        match self.coll {
            Coll::Bcast
            | Coll::Reduce
            | Coll::Allreduce
            | Coll::Scan
            | Coll::Exscan
            | Coll::ReduceScatterBlock
            | Coll::ReduceScatter
            | Coll::FileSetView => (send, None),
            Coll::Gather => (
                send.filter(|_| !(is_root && self.in_place)),
                recv.filter(|_| is_root),
            ),
            Coll::Scatter => (
                send.filter(|_| is_root),
                recv.filter(|_| !(is_root && self.in_place)),
            ),
            Coll::Allgather | Coll::Alltoall => (send.filter(|_| !self.in_place), recv),
            _ => (None, None),
        }
    }

    /// What a neighborhood collective sends in block `k` (to `dests[k]`).
    fn send_slot(&self, k: usize) -> (i64, MPI_Datatype) {
        match self.coll {
            Coll::NeighborAlltoallv => (self.scounts.at(k), self.stype),
            Coll::NeighborAlltoallw => (self.scounts.at(k), self.stypes.at(k)),
            _ => (self.scount, self.stype),
        }
    }

    /// What a neighborhood collective receives in block `k` (from `sources[k]`).
    fn recv_slot(&self, k: usize) -> (i64, MPI_Datatype) {
        match self.coll {
            Coll::NeighborAllgatherv | Coll::NeighborAlltoallv => (self.rcounts.at(k), self.rtype),
            Coll::NeighborAlltoallw => (self.rcounts.at(k), self.rtypes.at(k)),
            _ => (self.rcount, self.rtype),
        }
    }

    /// What this rank sends to and expects from rank `j` (pairwise calls;
    /// for a neighborhood collective, the first edge to and from `j`).
    fn pair(&self, me: usize, j: usize) -> (Part, Part) {
        if let Some(t) = &self.topo {
            let first = |list: &[Option<usize>]| list.iter().position(|&r| r == Some(j));
            return (
                first(&t.dests).map(|k| self.send_slot(k)),
                first(&t.sources).map(|k| self.recv_slot(k)),
            );
        }
        let root = self.root.max(0) as usize;
        let ip = self.in_place;
        match self.coll {
            Coll::Gatherv => (
                (j == root && !(me == root && ip)).then_some((self.scount, self.stype)),
                (me == root && !(j == me && ip)).then(|| (self.rcounts.at(j), self.rtype)),
            ),
            Coll::Scatterv => (
                (me == root && !(j == me && ip)).then(|| (self.scounts.at(j), self.stype)),
                (j == root && !(me == root && ip)).then_some((self.rcount, self.rtype)),
            ),
            Coll::Allgatherv => (
                Some(if ip {
                    (self.rcounts.at(me), self.rtype)
                } else {
                    (self.scount, self.stype)
                }),
                Some((self.rcounts.at(j), self.rtype)),
            ),
            Coll::Alltoallv => (
                Some(if ip {
                    (self.rcounts.at(j), self.rtype)
                } else {
                    (self.scounts.at(j), self.stype)
                }),
                Some((self.rcounts.at(j), self.rtype)),
            ),
            Coll::Alltoallw => (
                Some(if ip {
                    (self.rcounts.at(j), self.rtypes.at(j))
                } else {
                    (self.scounts.at(j), self.stypes.at(j))
                }),
                Some((self.rcounts.at(j), self.rtypes.at(j))),
            ),
            _ => (None, None),
        }
    }

    /// What this rank sends to and expects from merged rank `j` of an
    /// intercommunicator: data moves only between the two groups, by the
    /// standard's intercommunicator rules (the root group's MPI_ROOT rank
    /// sends to or receives from every rank of the other group, which names
    /// it by its rank; MPI_PROC_NULL ranks move nothing). A reduction's
    /// pairs carry the whole vector each side reduces.
    fn inter_pair(&self, x: &mpi::Inter, j: usize) -> (Part, Part) {
        let Some(&(false, jr)) = x.who.get(j) else {
            return (None, None);
        };
        let is_root = self.root == mpi::root_constant();
        let to_root = self.root >= 0 && jr == self.root as usize;
        let send = (self.scount, self.stype);
        let recv = (self.rcount, self.rtype);
        let from = |counts: &Counts, t| (counts.at(jr), t);
        match self.coll {
            Coll::Bcast | Coll::Scatter => (
                is_root.then_some(send),
                to_root.then_some(if self.coll == Coll::Bcast { send } else { recv }),
            ),
            Coll::Scatterv => (
                is_root.then(|| from(&self.scounts, self.stype)),
                to_root.then_some(recv),
            ),
            Coll::Gather => (to_root.then_some(send), is_root.then_some(recv)),
            Coll::Gatherv => (
                to_root.then_some(send),
                is_root.then(|| from(&self.rcounts, self.rtype)),
            ),
            Coll::Reduce => (to_root.then_some(send), is_root.then_some(send)),
            Coll::Allgather | Coll::Alltoall => (Some(send), Some(recv)),
            Coll::Allgatherv => (Some(send), Some(from(&self.rcounts, self.rtype))),
            Coll::Alltoallv => (
                Some(from(&self.scounts, self.stype)),
                Some(from(&self.rcounts, self.rtype)),
            ),
            Coll::Alltoallw => (
                Some(from(&self.scounts, self.stypes.at(jr))),
                Some(from(&self.rcounts, self.rtypes.at(jr))),
            ),
            Coll::Allreduce => (Some(send), Some(send)),
            // Each group reduces a vector of n × recvcount (or the sum of
            // recvcounts) elements of its own group's n: the two must agree.
            Coll::ReduceScatterBlock => {
                let total = (self.scount.saturating_mul(x.local.len() as i64), self.stype);
                (Some(total), Some(total))
            }
            Coll::ReduceScatter => {
                let n: i64 = (0..x.local.len()).map(|i| self.rcounts.at(i)).sum();
                (Some((n, self.stype)), Some((n, self.stype)))
            }
            _ => (None, None),
        }
    }

    /// An intercommunicator root argument as records hold it.
    fn inter_root(&self) -> i64 {
        if self.root == mpi::root_constant() {
            ROOT_ARG
        } else if self.root == mpi::proc_null() {
            PROC_NULL_ARG
        } else {
            self.root as i64
        }
    }

    fn pair_names(&self) -> (&'static str, &'static str) {
        match self.coll {
            Coll::Bcast | Coll::Reduce | Coll::Allreduce => {
                ("(count, datatype)", "(count, datatype)")
            }
            Coll::Gather | Coll::Scatter | Coll::Allgather | Coll::Alltoall => {
                ("(sendcount, sendtype)", "(recvcount, recvtype)")
            }
            Coll::ReduceScatter | Coll::ReduceScatterBlock => (
                "(its group's vector, datatype)",
                "(its group's vector, datatype)",
            ),
            Coll::Gatherv => ("(sendcount, sendtype)", "(recvcounts[i], recvtype)"),
            Coll::Scatterv => ("(sendcounts[i], sendtype)", "(recvcount, recvtype)"),
            Coll::Allgatherv => ("(sendcount, sendtype)", "(recvcounts[i], recvtype)"),
            Coll::Alltoallv => ("(sendcounts[i], sendtype)", "(recvcounts[i], recvtype)"),
            Coll::NeighborAllgather | Coll::NeighborAlltoall => {
                ("(sendcount, sendtype)", "(recvcount, recvtype)")
            }
            Coll::NeighborAllgatherv => ("(sendcount, sendtype)", "(recvcounts[k], recvtype)"),
            Coll::NeighborAlltoallv => ("(sendcounts[k], sendtype)", "(recvcounts[k], recvtype)"),
            Coll::NeighborAlltoallw => (
                "(sendcounts[k], sendtypes[k])",
                "(recvcounts[k], recvtypes[k])",
            ),
            _ => (
                "(sendcounts[i], sendtypes[i])",
                "(recvcounts[i], recvtypes[i])",
            ),
        }
    }

    /// Its record, as the call `st` numbered last (`number`).
    pub(crate) fn record(&self, st: &State) -> Record {
        let (op, commute) = self.op.map(mpi::op_identity).unwrap_or((0, 0));
        if let Some(x) = &st.inter {
            // Signatures go pair by pair; MPI_IN_PLACE has no
            // intercommunicator form.
            return Record {
                call: self.coll as u64 | self.form.bits(),
                seq: st.seq,
                root: if self.coll.rooted() {
                    self.inter_root()
                } else {
                    -1
                },
                op,
                commute,
                in_place: IN_PLACE_NA,
                a: Sig::NONE,
                b: Sig::NONE,
                extra: self.extra_word(st),
                size: st.size as u64,
                group: x.group_of(x.local.get(st.rank).copied().unwrap_or(0)),
                grank: st.rank as u64,
                order: 0,
            };
        }
        let (a, b) = self.sides(st.rank);
        Record {
            call: self.coll as u64 | self.form.bits(),
            seq: st.seq,
            root: if self.coll.rooted() {
                self.root as i64
            } else {
                -1
            },
            op,
            commute,
            in_place: if self.coll.in_place_all_or_none() {
                self.in_place as u64
            } else {
                IN_PLACE_NA
            },
            a: a.map_or(Sig::NONE, |(c, t)| sig_of(c, t)),
            b: b.map_or(Sig::NONE, |(c, t)| sig_of(c, t)),
            extra: self.extra_word(st),
            size: st.size as u64,
            group: GROUP_INTRA,
            grank: st.rank as u64,
            order: if self.form == crate::record::Form::Blocking {
                st.before
            } else {
                0
            },
        }
    }

    /// Whether this is a call whose arrays `keep_arrays` can copy: the
    /// "v" and "w" calls, the neighborhood ones among them. Not
    /// `MPI_Reduce_scatter`: ranks whose recvcounts differ make the MPI
    /// fail or hang inside the call (measured: MPICH 5 truncates, Open
    /// MPI 4.1 hangs at 4 ranks), so its check stays before the call.
    pub(crate) fn arrays_keepable(&self) -> bool {
        matches!(
            self.coll,
            Coll::Gatherv
                | Coll::Scatterv
                | Coll::Allgatherv
                | Coll::Alltoallv
                | Coll::Alltoallw
                | Coll::NeighborAllgatherv
                | Coll::NeighborAlltoallv
                | Coll::NeighborAlltoallw
        )
    }

    /// Copies the arrays this rank's call reads (`pair`: only the
    /// significant ones), on a communicator of `size` ranks or the
    /// call's neighborhood; the others become `None`. A batched call's
    /// report reads them after the program may have changed them.
    pub(crate) fn keep_arrays(&mut self, me: usize, size: usize) {
        let root = i64::from(self.root) == me as i64;
        let (send, recv) = match self.coll {
            Coll::Gatherv => (false, root),
            Coll::Scatterv => (root, false),
            Coll::Allgatherv | Coll::NeighborAllgatherv => (false, true),
            Coll::Alltoallv
            | Coll::Alltoallw
            | Coll::NeighborAlltoallv
            | Coll::NeighborAlltoallw => (!self.in_place, true),
            _ => (false, false),
        };
        let (out, inn) = match &self.topo {
            Some(t) => (t.dests.len(), t.sources.len()),
            None => (size, size),
        };
        let counts = |c: &Counts, read: bool, n| if read { c.kept(n) } else { Counts::None };
        let types = |t: &Types, read: bool, n| match t {
            Types::None => Types::None,
            _ if read => t.kept(n),
            _ => Types::None,
        };
        self.scounts = counts(&self.scounts, send, out);
        self.rcounts = counts(&self.rcounts, recv, inn);
        self.stypes = types(&self.stypes, send, out);
        self.rtypes = types(&self.rtypes, recv, inn);
    }

    fn extra_word(&self, st: &State) -> u64 {
        if self.coll == Coll::ReduceScatter {
            hash_words((0..st.size).map(|i| self.rcounts.at(i) as u64))
        } else {
            self.extra
        }
    }
}

fn rank_role(call: &Call, r: usize) -> String {
    if call.coll.rooted() && call.root >= 0 && r == call.root as usize {
        format!("rank {r} (root)")
    } else {
        format!("rank {r}")
    }
}

/// This rank's place in the checks' exchanges (its merged rank on an
/// intercommunicator) and the number of ranks that take part.
pub(crate) fn place(st: &State) -> (usize, usize) {
    match &st.inter {
        Some(x) => (x.local.get(st.rank).copied().unwrap_or(0), x.who.len()),
        None => (st.rank, st.size),
    }
}

/// What this rank sends to and expects from exchange rank `j`.
fn pair_at(call: &Call, st: &State, j: usize) -> (Part, Part) {
    match &st.inter {
        Some(x) => call.inter_pair(x, j),
        None => call.pair(st.rank, j),
    }
}

/// Exchange rank `m` as the user knows it: its rank in its group.
fn user_rank(st: &State, m: usize) -> usize {
    match &st.inter {
        Some(x) => x.who.get(m).map_or(m, |w| w.1),
        None => m,
    }
}

/// "rank 3", or on an intercommunicator "local group rank 0" / "remote
/// group rank 1" (as the reporting rank sees the groups).
fn label(st: &State, m: usize) -> String {
    match &st.inter {
        Some(x) => {
            let (local, r) = x.who.get(m).copied().unwrap_or((true, m));
            let g = if local { "local" } else { "remote" };
            format!("{g} group rank {r}")
        }
        None => format!("rank {m}"),
    }
}

/// "ranks 0-2, 5" (with their world ranks where they differ), or per
/// group on an intercommunicator. Slow path only: it asks MPI for the
/// groups.
fn rank_set(st: &State, ranks: &[usize]) -> String {
    let text = |r: &[usize]| rank_group(r, &[]);
    let Some(x) = &st.inter else {
        return rank_group(ranks, &mpi::channel::members(mpi::bits(st.dup)));
    };
    let side = |local: bool| -> Vec<usize> {
        let mut v: Vec<usize> = ranks
            .iter()
            .filter_map(|&m| x.who.get(m).filter(|w| w.0 == local).map(|w| w.1))
            .collect();
        v.sort_unstable();
        v
    };
    [(true, "local"), (false, "remote")]
        .iter()
        .map(|&(l, g)| (side(l), g))
        .filter(|(v, _)| !v.is_empty())
        .map(|(v, g)| format!("{g} group {}", text(&v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn base_report(call: &Call, st: &State, kind: &'static str, summary: String) -> Report {
    Report {
        call: call.name(),
        comm: st.label.clone().unwrap_or_else(|| match st.inter {
            Some(_) => mpi::inter_name(call.comm),
            None => mpi::comm_name(call.comm, st.size),
        }),
        seq: st.seq,
        rank: st.rank,
        size: st.size,
        kind,
        summary,
        details: vec![],
        fields: vec![],
    }
}

/// The report lines of a finding every rank sees in the records.
fn group_lines(call: &Call, st: &State, recs: &[Record], f: &Finding) -> (String, Vec<String>) {
    let ranks = |r: &[usize]| rank_set(st, r);
    match f {
        Finding::Call(g) => (
            "the ranks are in different collective calls".into(),
            g.iter()
                .map(|((code, seq), r)| {
                    let name = call_name(*code);
                    format!("{}: {name} (call #{seq} on this communicator)", ranks(r))
                })
                .collect(),
        ),
        Finding::Order(g) => (
            order_summary(st),
            g.iter()
                .map(|(n, r)| {
                    let s = if *n == 1 { "" } else { "s" };
                    format!("{}: after {n} blocking call{s} on them", ranks(r))
                })
                .collect(),
        ),
        Finding::Root(g) => (
            if call.coll == Coll::IntercommCreate {
                "the ranks passed different local leaders".into()
            } else {
                "the ranks passed different roots".into()
            },
            g.iter()
                .map(|(v, r)| format!("{}: root {v}", ranks(r)))
                .collect(),
        ),
        Finding::InterRoot(g) => (
            "the roots break the intercommunicator rule (in one group one rank passes MPI_ROOT and the others MPI_PROC_NULL; the other group passes the root's rank)".into(),
            g.iter()
                .map(|((_, v), r)| {
                    let what = match *v {
                        ROOT_ARG => "MPI_ROOT".to_string(),
                        PROC_NULL_ARG => "MPI_PROC_NULL".to_string(),
                        v => format!("root {v}"),
                    };
                    format!("{}: {what}", ranks(r))
                })
                .collect(),
        ),
        Finding::Op(g) => (
            "the ranks passed different ops".into(),
            g.iter()
                .map(|((op, c), r)| format!("{}: {}", ranks(r), mpi::op_text(*op, *c)))
                .collect(),
        ),
        Finding::InPlace(g) => (
            "MPI_IN_PLACE must be given on all ranks or on none".into(),
            g.iter()
                .map(|(v, r)| {
                    let what = if *v == 1 { "MPI_IN_PLACE" } else { "a buffer" };
                    format!("{}: {what}", ranks(r))
                })
                .collect(),
        ),
        Finding::Extra(g) => {
            let what = call.coll.extra_name().unwrap_or("arguments");
            (
                format!("the ranks passed different {what}"),
                g.iter()
                    .map(|(v, r)| {
                        if call.coll.extra_is_scalar() {
                            format!("{}: {what} {}", ranks(r), *v as i64)
                        } else {
                            format!("{}: {what} hashing to {v:#018x}", ranks(r))
                        }
                    })
                    .collect(),
            )
        }
        Finding::Signature { .. } => {
            let _ = recs;
            (String::new(), vec![])
        }
    }
}

/// What an order finding says (`crate::order`): the communicators
/// whose calls the ranks made this one among in different orders.
fn order_summary(st: &State) -> String {
    let names: Vec<String> = crate::order::wider_of(st.comm)
        .into_iter()
        .map(|(comm, first)| crate::names::name(comm).unwrap_or(first))
        .collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => "communicators since freed".into(),
    };
    format!(
        "the ranks made this call at different points among their blocking collective calls on {list}, which hold all its ranks (MPI may make each such call wait for all of its ranks: the ranks would wait for each other)"
    )
}

/// Reports a finding (the ranks that print it print it) and returns
/// whether this rank printed. Datatype findings fetch the reference
/// rank's type, point to point on the private duplicate.
fn report_finding(call: &Call, st: &State, recs: &[Record], f: &Finding) {
    match f {
        Finding::Signature {
            reference,
            differing,
        } => report_signature(call, st, recs, *reference, differing),
        _ => report_group(call, st, recs, f),
    }
}

/// A signature mismatch: the reference rank sends its type to each rank
/// that differs from it, and each of those reports its sides that differ,
/// with the first differing element in both types.
fn report_signature(
    call: &Call,
    st: &State,
    recs: &[Record],
    reference: (usize, Side),
    differing: &[(usize, Side)],
) {
    let me = st.rank;
    let t = tag(st.seq, Phase::Type);
    if reference.0 == me {
        let mut sent = Vec::new();
        for &(r, _) in differing {
            if r != me && !sent.contains(&r) {
                sent.push(r);
                if let Some((c, ty)) = side_of(call, me, reference.1) {
                    let _ = mpi::send_bytes(st.dup, r, t, pack_type(c, ty));
                }
            }
        }
    }
    let my_sides: Vec<Side> = differing
        .iter()
        .filter(|d| d.0 == me)
        .map(|d| d.1)
        .collect();
    if my_sides.is_empty() {
        return;
    }
    let remote = if reference.0 == me {
        side_of(call, me, reference.1).map(|(c, ty)| (c, ty, false))
    } else {
        crate::waiting::phase(Phase::Type);
        mpi::recv_bytes(st.dup, reference.0, t).and_then(|b| unpack_type(&b))
    };
    for s in my_sides {
        if let Some(mine) = side_of(call, me, s) {
            let r = signature_report(call, st, recs, reference, (s, mine), remote);
            r.emit(mpi::world_rank());
        }
    }
    if let Some((_, rt, true)) = remote {
        if reference.0 != me {
            mpi::free_type(rt);
        }
    }
}

/// "rank 0 (root) (recvcount, recvtype)": rank `rank`'s side `s` of the
/// call, as a report names it.
fn side_label(call: &Call, rank: usize, s: Side) -> String {
    let names = call.coll.side_names();
    let name = match s {
        Side::A => names.0,
        Side::B => names.1,
    };
    format!("{} {name}", rank_role(call, rank))
}

/// This rank's side `s` of the call: its (count, datatype).
fn side_of(call: &Call, rank: usize, s: Side) -> Part {
    let (a, b) = call.sides(rank);
    match s {
        Side::A => a,
        Side::B => b,
    }
}

/// The report of one of this rank's sides against the reference's type
/// (`remote`: fetched, or None when it could not be).
fn signature_report(
    call: &Call,
    st: &State,
    recs: &[Record],
    reference: (usize, Side),
    (s, (c, ty)): (Side, (i64, MPI_Datatype)),
    remote: Option<(i64, MPI_Datatype, bool)>,
) -> Report {
    let me = st.rank;
    let refsig = recs[reference.0].sig(reference.1);
    let mysig = recs[me].sig(s);
    let summary = "the type signatures do not match".into();
    let mut r = base_report(call, st, "datatype", summary);
    let ref_label = side_label(call, reference.0, reference.1);
    let my_label = side_label(call, me, s);
    match remote {
        Some((rc, rt, _)) => {
            r.details
                .push(format!("{ref_label} = {}", sig_text(rc, rt, &refsig)));
            r.details
                .push(format!("{my_label} = {}", sig_text(c, ty, &mysig)));
            let (lines, fields) = difference_lines(
                (&rank_role(call, reference.0), rc, rt),
                (&rank_role(call, me), c, ty),
            );
            r.details.extend(lines);
            r.fields.extend(fields);
        }
        None => {
            r.details
                .push(format!("{ref_label} = {}", sig_text_remote(&refsig)));
            r.details
                .push(format!("{my_label} = {}", sig_text(c, ty, &mysig)));
            r.details
                .push("(the other rank's type could not be fetched)".into());
        }
    }
    r.details.extend(site_lines());
    r
}

/// Any other finding: one report (every rank's call site is in it), by
/// its first group's first rank; each other group's first rank points at
/// it in one line.
fn report_group(call: &Call, st: &State, recs: &[Record], f: &Finding) {
    let reporters = f.reporters();
    if !reporters.contains(&place(st).0) {
        return;
    }
    if reporters[0] != place(st).0 {
        let mut r = base_report(call, st, f.kind(), String::new());
        (r.rank, r.size) = place(st);
        r.emit_pointer(reporters[0]);
        return;
    }
    let (summary, details) = group_lines(call, st, recs, f);
    let mut r = base_report(call, st, f.kind(), summary);
    r.details = details;
    r.details.extend(site_lines());
    r.emit(mpi::world_rank());
}

/// After a report: the communicator's error handler, unless in warn mode.
fn conclude(call: &Call) -> Result<(), c_int> {
    if config().mode == Mode::Warn {
        return Ok(());
    }
    Err(mpi::raise(call.comm, call.object))
}

/// The state of the call's communicator when the call is checked; a
/// neighborhood collective gets the communicator's neighborhood.
pub(crate) fn enabled(call: &mut Call) -> Option<&'static mut State> {
    mpi::watch_with(watchdog::poll_dyn);
    if config().mode == Mode::Off || crate::internal::active() {
        return None;
    }
    let st = match call.object {
        Some(object) => mpi::object_state(object),
        None => mpi::state(call.comm),
    }
    .filter(|st| !st.unchecked)?;
    if call.coll.neighborhood() {
        if st.topo.is_none() {
            st.topo = mpi::topology(call.comm).map(Arc::new);
        }
        // Without a topology the call is erroneous and MPI reports it.
        call.topo = Some(st.topo.clone()?);
    }
    Some(st)
}

/// The watchdog's mark while this rank waits in the check of `call`.
pub(crate) fn arm(call: &Call, st: &State, phase: Phase) -> Option<crate::waiting::Guard> {
    crate::waiting::arm(Waiting {
        call: call.coll as u64 | call.form.bits(),
        operation: call.operation,
        seq: st.seq,
        comm: st.comm,
        id: st.id,
        dup: mpi::bits(st.dup),
        rank: st.rank,
        size: st.size,
        phase,
        ra: 0,
    })
}

/// The check's own MPI exchange failed: no conclusion is drawn, the user's
/// call goes ahead, and the first such failure is said once.
pub(crate) fn exchange_failed(call: &Call, rc: c_int) -> Result<(), c_int> {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "mpix-check: the check of {} could not exchange its data (MPI error {rc}); calls whose exchange fails go unchecked",
            call.name()
        )
    });
    Ok(())
}

/// One rank's digest of a call (the fast path's contribution).
pub(crate) fn digest_of(call: &Call, st: &State, rec: &Record) -> Digest {
    let mut b = digest::Builder::new(rec);
    if let Some(x) = &st.inter {
        let me = place(st).0;
        if call.coll.rooted() {
            b.root_claim(match rec.root {
                ROOT_ARG => Some(me as u64),
                PROC_NULL_ARG => None,
                // A rank outside the remote group claims a root nobody is.
                r => Some(
                    usize::try_from(r)
                        .ok()
                        .and_then(|r| x.remote.get(r).copied())
                        .map_or(u64::MAX - 1, |m| m as u64),
                ),
            });
            if call.coll.has_op() && rec.root == PROC_NULL_ARG {
                b.no_op();
            }
        }
        for j in 0..x.who.len() {
            let (s, r) = call.inter_pair(x, j);
            if let Some((c, t)) = s {
                b.pair(me, j, 0, sig_of(c, t), true);
            }
            if let Some((c, t)) = r {
                b.pair(j, me, 0, sig_of(c, t), false);
            }
        }
    } else if let Some(t) = &call.topo {
        // Each edge with its occurrence among the edges between the same
        // two ranks: MPI pairs repeated edges in order.
        let occurrence =
            |list: &[Option<usize>], k: usize| list[..k].iter().filter(|&&r| r == list[k]).count();
        for (k, d) in t.dests.iter().enumerate() {
            if let Some(j) = *d {
                let (c, ty) = call.send_slot(k);
                b.pair(st.rank, j, occurrence(&t.dests, k), sig_of(c, ty), true);
            }
        }
        for (k, s) in t.sources.iter().enumerate() {
            if let Some(i) = *s {
                let (c, ty) = call.recv_slot(k);
                b.pair(i, st.rank, occurrence(&t.sources, k), sig_of(c, ty), false);
            }
        }
    } else if call.coll.pairwise() {
        for j in 0..st.size {
            let (s, r) = call.pair(st.rank, j);
            if let Some((c, t)) = s {
                b.pair(st.rank, j, 0, sig_of(c, t), true);
            }
            if let Some((c, t)) = r {
                b.pair(j, st.rank, 0, sig_of(c, t), false);
            }
        }
    }
    b.finish()
}

/// The collective calls checked on this process (`MPIX_CHECK_STATS`).
pub static CHECKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The check of a blocking call, before the call itself. Err(code): the
/// code the wrapper returns instead of making the call.
pub fn blocking(call: &mut Call) -> Result<(), c_int> {
    let Some(st) = enabled(call) else {
        return Ok(());
    };
    verify_now(call, st)
}

/// The next call on `st`'s communicator, recorded: its number, record and
/// digest.
pub(crate) fn recorded(call: &Call, st: &mut State) -> (Record, Digest) {
    number(st);
    let rec = call.record(st);
    let mine = digest_of(call, st, &rec);
    (rec, mine)
}

/// Numbers the next call on `st`'s communicator (`State::seq`).
pub(crate) fn number(st: &mut State) {
    // (Counted only when printed: an atomic add is a tenth of a batched
    // call's check.)
    if crate::report::stats_enabled() {
        CHECKED.fetch_add(1, Ordering::Relaxed);
    }
    st.seq += 1;
}

/// The check of a blocking call as `blocking`, on its state (`enabled`).
pub(crate) fn verify_now(call: &Call, st: &mut State) -> Result<(), c_int> {
    let (rec, mine) = recorded(call, st);
    let reduced = {
        let _w = arm(call, st, Phase::Arguments);
        mpi::allreduce_digest(st.dup, place(st), &mine)
    };
    match reduced {
        Ok(r) if digest::consistent(&r) => Ok(()),
        Ok(_) => slow(call, st, &rec),
        Err(rc) => exchange_failed(call, rc),
    }
}

/// The tags of the slow path's messages on the private duplicate: one
/// per phase of one check (the fast path is collective and uses none).
fn tag(seq: u64, phase: Phase) -> c_int {
    1 + ((seq % 6000) * 5) as c_int + phase as c_int
}

/// The slow path, taken by every rank when the digests disagree: the full
/// records, then the pairs of a "v"/"w" call; a finding is reported. A
/// disagreement the exact rules accept (`MPI_PACKED`) ends here with none.
fn slow(call: &Call, st: &State, rec: &Record) -> Result<(), c_int> {
    slow_at(call, st, rec, &site::call_site())
}

/// The slow path of a call made at `site` (`site::call_site`'s form): the
/// current call's, or a batched call's, verified later.
pub(crate) fn slow_at(call: &Call, st: &State, rec: &Record, site: &str) -> Result<(), c_int> {
    let _w = arm(call, st, Phase::Records);
    let mut words = rec.to_words().to_vec();
    words.extend(site::site_words(site));
    let (me, n) = place(st);
    let per = WORDS + site::SITE_WORDS;
    let all = match mpi::exchange(st.dup, tag(st.seq, Phase::Records), me, n, per, |_| {
        words.clone()
    }) {
        Ok(a) => a,
        Err(rc) => return exchange_failed(call, rc),
    };
    let mut recs: Vec<Record> = all
        .chunks(per)
        .map(|c| Record::from_words(&c[..WORDS]))
        .collect();
    if crate::order::retired(st.comm) {
        recs.iter_mut().for_each(|r| r.order = 0);
    }
    let lines: Vec<String> = all
        .chunks(per)
        .enumerate()
        .map(|(i, c)| {
            let name = call_name(recs[i].call);
            site::site_line(&label(st, i), &name, &site::site_text(&c[WORDS..]))
        })
        .collect();
    SITES.with(|s| *s.borrow_mut() = lines);
    if let Some(f) = evaluate(&recs) {
        if matches!(f, Finding::Order(_)) {
            crate::order::retire(st.comm);
        }
        report_finding(call, st, &recs, &f);
        settle(call, st);
        return conclude(call);
    }
    if call.coll.pairwise() || st.inter.is_some() {
        return pairwise(call, st);
    }
    Ok(())
}

/// The finding in the records of a call MPI holds some ranks inside,
/// read from each rank's helper (`crate::inside`) by a rank whose batch
/// verification timed out: `recs` and `sites` (`site::call_site`'s form)
/// by rank, `free` the ranks in the verification (they can print). No
/// message is exchanged (the held ranks could not take part): a datatype
/// finding names the signatures from the records, without the first
/// differing element. None: no finding here (or a difference of calls,
/// which the timeout report names); Ok: this rank reported; Err(r): rank
/// `r` reports (this one, unless `last`, only points at it).
pub(crate) fn held_report(
    call: &Call,
    st: &State,
    mut recs: Vec<Record>,
    sites: &[String],
    free: &[usize],
    last: bool,
) -> Option<Result<(), usize>> {
    if crate::order::retired(st.comm) {
        recs.iter_mut().for_each(|r| r.order = 0);
    }
    let f = evaluate(&recs)?;
    if matches!(f, Finding::Call(_)) {
        return None;
    }
    let me = place(st).0;
    let reporter = f
        .reporters()
        .into_iter()
        .find(|r| free.contains(r))
        .or_else(|| free.iter().min().copied())?;
    if reporter != me && !last {
        return Some(Err(reporter));
    }
    let lines = sites
        .iter()
        .enumerate()
        .map(|(i, at)| site::site_line(&label(st, i), &call_name(recs[i].call), at));
    SITES.with(|s| *s.borrow_mut() = lines.collect());
    if matches!(f, Finding::Order(_)) {
        crate::order::retire(st.comm);
    }
    let held: Vec<usize> = (0..recs.len()).filter(|r| !free.contains(r)).collect();
    let r = match &f {
        Finding::Signature {
            reference,
            differing,
        } => held_signature(call, st, &recs, *reference, differing),
        _ => {
            let (summary, details) = group_lines(call, st, &recs, &f);
            let mut r = base_report(call, st, f.kind(), summary);
            r.details = details;
            r
        }
    };
    held_emit(r, st, &held);
    Some(Ok(()))
}

/// A held call's report, with its call sites and the ranks MPI holds.
fn held_emit(mut r: Report, st: &State, held: &[usize]) {
    r.details.extend(site_lines());
    r.details.push(format!(
        "{} {} inside this call by MPI, which hangs on the difference (found at the timeout: the batched mode verifies calls after they are made)",
        rank_set(st, held),
        if held.len() == 1 { "is held" } else { "are held" }
    ));
    r.emit(mpi::world_rank());
}

/// A signature mismatch seen in the records alone: the reference rank's
/// side and a differing rank's (this rank's where it differs), each
/// with its count and type where this rank holds it.
fn held_signature(
    call: &Call,
    st: &State,
    recs: &[Record],
    reference: (usize, Side),
    differing: &[(usize, Side)],
) -> Report {
    let me = st.rank;
    let (d, s) = differing
        .iter()
        .find(|d| d.0 == me)
        .or(differing.first())
        .copied()
        .unwrap_or(reference);
    let text = |rank: usize, side: Side| {
        let sig = recs[rank].sig(side);
        match side_of(call, me, side).filter(|_| rank == me) {
            Some((c, ty)) => sig_text(c, ty, &sig),
            None => sig_text_remote(&sig),
        }
    };
    let mut r = base_report(
        call,
        st,
        "datatype",
        "the type signatures do not match".into(),
    );
    for (rank, side) in [reference, (d, s)] {
        r.details.push(format!(
            "{} = {}",
            side_label(call, rank, side),
            text(rank, side)
        ));
    }
    let others: Vec<usize> = differing.iter().map(|x| x.0).filter(|&x| x != d).collect();
    if !others.is_empty() {
        r.details.push(format!(
            "{} also differ from {}",
            rank_set(st, &others),
            rank_role(call, reference.0)
        ));
    }
    r
}

thread_local! {
    /// Each rank's call site, as report lines, from the slow path's records.
    static SITES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The report lines naming each rank's call site (the current slow path's).
fn site_lines() -> Vec<String> {
    SITES.with(|s| s.borrow().clone())
}

/// Every rank has printed before any rank's error handler may end the job.
fn settle(call: &Call, st: &State) {
    crate::waiting::phase(Phase::Report);
    let (me, n) = place(st);
    let _ = mpi::exchange(st.dup, tag(st.seq, Phase::Report), me, n, 0, |_| vec![]);
    let _ = call;
}

/// What this rank sends to each rank, as signatures in words, and what it
/// expects from each.
fn pair_rows(call: &Call, st: &State) -> (Vec<u64>, Vec<Sig>) {
    let n = place(st).1;
    let mut send = Vec::with_capacity(4 * n);
    let mut expect = Vec::with_capacity(n);
    for j in 0..n {
        let (s, r) = pair_at(call, st, j);
        send.extend_from_slice(&s.map_or(Sig::NONE, |(c, t)| sig_of(c, t)).to_words());
        expect.push(r.map_or(Sig::NONE, |(c, t)| sig_of(c, t)));
    }
    (send, expect)
}

/// The first rank whose incoming signature does not match what this rank
/// expects from it.
fn first_bad(incoming: &[u64], expect: &[Sig]) -> Option<usize> {
    (0..expect.len()).find(|&i| {
        let got = Sig::from_words(&incoming[4 * i..4 * i + 4]);
        got.defined() && expect[i].defined() && !got.matches(&expect[i])
    })
}

/// The pairwise signature check of the "v" and "w" calls (slow path):
/// each rank gets the signature every rank sends it, compares it with what
/// it expects, and all ranks learn which pairs differ.
fn pairwise(call: &Call, st: &State) -> Result<(), c_int> {
    let (send, expect) = pair_rows(call, st);
    let (me, n) = place(st);
    crate::waiting::phase(Phase::Signatures);
    let incoming = match mpi::exchange(st.dup, tag(st.seq, Phase::Signatures), me, n, 4, |j| {
        send[4 * j..4 * j + 4].to_vec()
    }) {
        Ok(v) => v,
        Err(rc) => return exchange_failed(call, rc),
    };
    let bad = first_bad(&incoming, &expect);
    let mine = bad.map_or(u64::MAX, |b| b as u64);
    crate::waiting::phase(Phase::Pairs);
    let all = match mpi::exchange(st.dup, tag(st.seq, Phase::Pairs), me, n, 1, |_| vec![mine]) {
        Ok(v) => v,
        Err(rc) => return exchange_failed(call, rc),
    };
    if all.iter().all(|&b| b == u64::MAX) {
        return Ok(());
    }
    let t = tag(st.seq, Phase::Type);
    // Senders of differing pairs send their (count, type).
    for (j, &i) in all.iter().enumerate() {
        if i == me as u64 && j != me {
            if let (Some((c, ty)), _) = pair_at(call, st, j) {
                let _ = mpi::send_bytes(st.dup, j, t, pack_type(c, ty));
            }
        }
    }
    if let Some(i) = bad {
        let got = Sig::from_words(&incoming[4 * i..4 * i + 4]);
        report_pair(call, st, i, got, expect[i], t);
    }
    settle(call, st);
    conclude(call)
}

fn report_pair(call: &Call, st: &State, i: usize, got: Sig, want: Sig, t: c_int) {
    let me = place(st).0;
    let (sname, rname) = call.pair_names();
    let (li, lme) = (label(st, i), label(st, me));
    let mut r = base_report(
        call,
        st,
        "datatype",
        format!("the type signatures of the data {li} sends to {lme} do not match"),
    );
    let remote = if i == me {
        pair_at(call, st, me).0.map(|(c, ty)| (c, ty, false))
    } else {
        crate::waiting::phase(Phase::Type);
        mpi::recv_bytes(st.dup, i, t).and_then(|b| unpack_type(&b))
    };
    let sname = sname.replace("[i]", &format!("[{}]", user_rank(st, me)));
    let rname = rname.replace("[i]", &format!("[{}]", user_rank(st, i)));
    let (_, mine) = pair_at(call, st, i);
    let Some((mc, mt)) = mine else { return };
    match remote {
        Some((c, ty, owned)) => {
            r.details
                .push(format!("{li} sends {sname} = {}", sig_text(c, ty, &got)));
            r.details.push(format!(
                "{lme} receives {rname} = {}",
                sig_text(mc, mt, &want)
            ));
            let (lines, fields) = difference_lines((&li, c, ty), (&lme, mc, mt));
            r.details.extend(lines);
            r.fields.extend(fields);
            if owned && i != me {
                mpi::free_type(ty);
            }
        }
        None => {
            r.details
                .push(format!("{li} sends {sname} = {}", sig_text_remote(&got)));
            r.details.push(format!(
                "{lme} receives {rname} = {}",
                sig_text(mc, mt, &want)
            ));
            r.details
                .push("(the other rank's type could not be fetched)".into());
        }
    }
    r.details.extend(site_lines());
    r.emit(mpi::world_rank());
}

/// A nonblocking call's check in flight: its reduction, its part in the
/// blocking checks' messages (`mpi::post_digest_shape`), and the record
/// the slow path needs if the reduction disagrees.
pub struct Pending {
    call: Call,
    st: *mut State,
    seq: u64,
    rec: Record,
    mine: Box<Digest>,
    reduced: Box<Digest>,
    req: MPI_Request,
    /// The digests the blocking checks' partners send (unread).
    got: Vec<Digest>,
    shape: Vec<MPI_Request>,
    /// When it started, and the Test calls that found it waiting: a Test
    /// loop past the timeout asks where the ranks are, once (`due`).
    since: std::time::Instant,
    tests: u32,
}

impl Pending {
    /// Whether a Test loop has waited past the timeout, once. Looked at
    /// on the 2^k-th Test and every 256th (a clock read costs as much as
    /// a test; a loop that tests seldom is looked at soon enough).
    fn due(&mut self) -> bool {
        if self.tests == u32::MAX {
            return false;
        }
        self.tests += 1;
        if !self.tests.is_power_of_two() && self.tests % 256 != 0 {
            return false;
        }
        let late = config().timeout.is_some_and(|t| self.since.elapsed() >= t);
        if late {
            self.tests = u32::MAX;
        }
        late
    }
}

// SAFETY: a Pending is used by one thread at a time (under the map's lock
// or after removal from it); the handles it holds are plain values.
unsafe impl Send for Pending {}

type PendingMap = Mutex<Vec<(u64, Box<Pending>)>>;

fn pending() -> &'static PendingMap {
    static P: OnceLock<PendingMap> = OnceLock::new();
    P.get_or_init(Default::default)
}

static PENDING: AtomicUsize = AtomicUsize::new(0);

/// Whether any nonblocking check is in flight (a quick test for the
/// Wait/Test wrappers: one atomic load).
pub fn any_pending() -> bool {
    PENDING.load(Ordering::Acquire) != 0
}

/// Starts a nonblocking call's check: posts its reduction without waiting.
pub fn start(mut call: Call) -> Option<Box<Pending>> {
    let st = enabled(&mut call)?;
    let (rec, mine) = recorded(&call, st);
    let mut p = Box::new(Pending {
        mine: Box::new(mine),
        reduced: Box::new([0; digest::WORDS]),
        call,
        st: st as *mut State,
        seq: st.seq,
        rec,
        req: mpi::request_null(),
        got: Vec::new(),
        shape: Vec::new(),
        since: std::time::Instant::now(),
        tests: 0,
    });
    let Pending {
        mine,
        reduced,
        req,
        got,
        shape,
        ..
    } = &mut *p;
    // SAFETY: the digests are boxed and `got`'s buffer is on the heap
    // (never moved, never resized again), and all live until the requests
    // complete in `complete`.
    match unsafe { mpi::post_digest_shape(st.dup, place(st), mine, got) } {
        Ok(r) => *shape = r,
        Err(rc) => {
            let _ = exchange_failed(&p.call, rc);
            return None;
        }
    }
    // SAFETY: as above.
    match unsafe { mpi::iallreduce_digest(st.dup, mine, reduced) } {
        Ok(r) => *req = r,
        Err(rc) => {
            let _ = mpi::wait_requests(shape);
            let _ = exchange_failed(&p.call, rc);
            return None;
        }
    }
    Some(p)
}

/// `st` as a call made earlier saw it: its own sequence number, for the
/// reports of a check completed later.
pub(crate) fn view(st: &State, seq: u64) -> State {
    State {
        dup: st.dup,
        seq,
        rank: st.rank,
        size: st.size,
        unchecked: false,
        inter: st.inter.clone(),
        id: st.id,
        comm: st.comm,
        topo: st.topo.clone(),
        label: st.label.clone(),
        batch: None,
        before: 0,
    }
}

/// How far a nonblocking call's check has come.
enum Progress {
    Waiting,
    /// The reduction and the messages completed.
    Reduced,
    /// Another rank took the slow path for this check: a rank whose check
    /// is blocking (it met this rank's messages, not the reduction, which
    /// then never completes), or one whose reduction completed first.
    Joined,
}

/// One look at a nonblocking check: its requests, then whether another
/// rank's slow path has begun for it.
fn progress(p: &mut Pending, dup: MPI_Comm) -> Result<Progress, c_int> {
    if mpi::test_request(&mut p.req)? {
        mpi::wait_requests(&mut p.shape)?;
        return Ok(Progress::Reduced);
    }
    if mpi::probe_tag(dup, tag(p.seq, Phase::Records))? {
        // The messages of every rank are posted by now (the blocking
        // checks' have all been sent when those ranks left the doubling).
        mpi::wait_requests(&mut p.shape)?;
        return Ok(Progress::Joined);
    }
    Ok(Progress::Waiting)
}

/// One Test of a nonblocking check. A check the program's Test loop has
/// kept waiting past the timeout asks where the ranks are and reports,
/// as a Wait's would (the others may be inside MPI's own call).
fn tested(p: &mut Pending, st: &State, view: &State) -> Result<Progress, c_int> {
    let out = progress(p, st.dup)?;
    if !matches!(out, Progress::Waiting) || !p.due() {
        return Ok(out);
    }
    let _w = arm(&p.call, view, Phase::Arguments);
    let mut last = Progress::Waiting;
    watchdog::late(|| {
        last = progress(p, st.dup)?;
        Ok(!matches!(last, Progress::Waiting))
    })?;
    Ok(last)
}

/// Keeps a started check under the user's request.
pub fn attach(request: MPI_Request, p: Box<Pending>) {
    if let Ok(mut map) = pending().lock() {
        map.push((mpi::bits(request), p));
        PENDING.store(map.len(), Ordering::Release);
    }
}

/// Completes the check of the user's request, if it has one: waits for it
/// (`block`) or tests it. Ok(false): not complete yet (Test only).
pub fn complete(request: MPI_Request, block: bool) -> Result<bool, c_int> {
    mpi::watch_with(watchdog::poll_dyn);
    let key = mpi::bits(request);
    let mut p = {
        let Ok(mut map) = pending().lock() else {
            return Ok(true);
        };
        let Some(i) = map.iter().position(|(k, _)| *k == key) else {
            return Ok(true);
        };
        let p = map.swap_remove(i).1;
        PENDING.store(map.len(), Ordering::Release);
        p
    };
    // SAFETY: the state outlives its communicator's requests.
    let st = unsafe { &*p.st };
    let view = view(st, p.seq);
    let done = if block {
        let _w = arm(&p.call, &view, Phase::Arguments);
        let mut out = Progress::Waiting;
        watchdog::poll(|| {
            out = progress(&mut p, st.dup)?;
            Ok(!matches!(out, Progress::Waiting))
        })
        .map(|_| out)
    } else {
        tested(&mut p, st, &view)
    };
    match done {
        Err(rc) => exchange_failed(&p.call, rc).map(|_| true),
        Ok(Progress::Waiting) => {
            attach(request, p);
            Ok(false)
        }
        Ok(Progress::Reduced) if digest::consistent(&p.reduced) => Ok(true),
        Ok(Progress::Reduced) => slow(&p.call, &view, &p.rec).map(|_| true),
        Ok(Progress::Joined) => {
            // The reduction may never complete: its buffers stay.
            Box::leak(std::mem::replace(&mut p.mine, Box::new([0; digest::WORDS])));
            Box::leak(std::mem::replace(
                &mut p.reduced,
                Box::new([0; digest::WORDS]),
            ));
            slow(&p.call, &view, &p.rec).map(|_| true)
        }
    }
}

/// Which ranks of a collective receive into one (count, datatype).
enum Receiver {
    Root,
    NonRoots,
    AllButInPlaceRoot,
    All,
}

/// Which of a call's (count, datatype) pairs describes that buffer.
enum Buffer {
    /// The send pair (calls with one pair: broadcast, reductions).
    Send,
    Recv,
    /// The receive pair once per rank of the communicator.
    RecvPerRank,
}

/// The one table of the collectives whose receive buffer is one (count,
/// datatype) on the ranks that receive: who they are and which pair.
fn receive_rule(coll: Coll) -> Option<(Receiver, Buffer)> {
    Some(match coll {
        Coll::Bcast => (Receiver::NonRoots, Buffer::Send),
        Coll::Gather => (Receiver::Root, Buffer::RecvPerRank),
        Coll::Scatter => (Receiver::AllButInPlaceRoot, Buffer::Recv),
        Coll::Allgather | Coll::Alltoall => (Receiver::All, Buffer::RecvPerRank),
        Coll::Reduce => (Receiver::Root, Buffer::Send),
        Coll::Allreduce | Coll::Scan | Coll::Exscan | Coll::ReduceScatterBlock => {
            (Receiver::All, Buffer::Send)
        }
        _ => return None,
    })
}
