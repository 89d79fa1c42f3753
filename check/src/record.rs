//! The record each rank contributes to a check, and the evaluation of all
//! ranks' records: pure functions, no MPI (unit-tested below).

/// A type signature as the check sees it: its hash (the library's default
/// family), element count, size in bytes and flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sig {
    pub hash: u64,
    pub count: u64,
    pub bytes: u64,
    pub flags: u64,
}

/// The side takes part in the call.
pub const DEFINED: u64 = 1;
/// The signature is made of `MPI_PACKED` only: it matches any signature of
/// the same size in bytes.
pub const PACKED: u64 = 2;
/// The signature could not be computed (the library refused the type):
/// no conclusion is drawn from it.
pub const UNKNOWN: u64 = 4;

impl Sig {
    pub const NONE: Sig = Sig {
        hash: 0,
        count: 0,
        bytes: 0,
        flags: 0,
    };

    pub fn defined(&self) -> bool {
        self.flags & DEFINED != 0
    }

    /// Whether two defined signatures match by the standard's rules: equal
    /// signatures (equal hash and count); `MPI_PACKED` on either side
    /// matches anything of the same byte count. `MPI_BYTE` is a basic type
    /// like any other, so it matches only `MPI_BYTE`.
    pub fn matches(&self, other: &Sig) -> bool {
        if (self.flags | other.flags) & UNKNOWN != 0 {
            return true;
        }
        if self.hash == other.hash && self.count == other.count {
            return true;
        }
        (self.flags | other.flags) & PACKED != 0 && self.bytes == other.bytes
    }

    pub fn to_words(self) -> [u64; 4] {
        [self.hash, self.count, self.bytes, self.flags]
    }

    pub fn from_words(w: &[u64]) -> Sig {
        Sig {
            hash: w[0],
            count: w[1],
            bytes: w[2],
            flags: w[3],
        }
    }
}

/// The collective calls the checker knows. The number is the call's code in
/// the record; a nonblocking form adds `NONBLOCKING`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Coll {
    Barrier = 1,
    Bcast,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Alltoallw,
    Reduce,
    Allreduce,
    ReduceScatter,
    ReduceScatterBlock,
    Scan,
    Exscan,
    CommDup,
    CommCreate,
    CommSplit,
    CartCreate,
    CartMap,
    GraphCreate,
    GraphMap,
    IntercommCreate,
    NeighborAllgather,
    NeighborAllgatherv,
    NeighborAlltoall,
    NeighborAlltoallv,
    NeighborAlltoallw,
    WinCreate,
    WinAllocate,
    WinAllocateShared,
    WinCreateDynamic,
    WinFence,
    WinFree,
    FileOpen,
    FileClose,
    FileSetSize,
    FilePreallocate,
    FileSetView,
    FileSetAtomicity,
    FileReadAllBegin,
    FileReadAllEnd,
    FileWriteAllBegin,
    FileWriteAllEnd,
    FileReadAtAllBegin,
    FileReadAtAllEnd,
    FileWriteAtAllBegin,
    FileWriteAtAllEnd,
    FileReadOrderedBegin,
    FileReadOrderedEnd,
    FileWriteOrderedBegin,
    FileWriteOrderedEnd,
    IntercommMerge,
    /// The type exchange's first call on a communicator, which duplicates
    /// it (`MPIX_Type_send`, …: `mpix_marshal::library_collective_point`).
    ExchangeSetup,
}

/// Added to a call's code for its nonblocking form.
pub const NONBLOCKING: u64 = 0x100;
/// Added to a call's code for its persistent form (MPI 4: `MPI_Bcast_init`).
pub const PERSISTENT: u64 = 0x200;

/// A collective's three forms, which never match one another (MPI 4.0
/// §6.12, §6.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Blocking,
    Nonblocking,
    Persistent,
}

impl Form {
    pub fn bits(self) -> u64 {
        match self {
            Form::Blocking => 0,
            Form::Nonblocking => NONBLOCKING,
            Form::Persistent => PERSISTENT,
        }
    }
}

/// Which rank's signature the others are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// No uniform signature.
    None,
    /// The root's send side (A).
    RootA,
    /// The root's receive side (B).
    RootB,
    /// The first rank's send side.
    FirstA,
    /// The first rank's receive side.
    FirstB,
}

impl Coll {
    pub const ALL: [Coll; 56] = [
        Coll::Barrier,
        Coll::Bcast,
        Coll::Gather,
        Coll::Gatherv,
        Coll::Scatter,
        Coll::Scatterv,
        Coll::Allgather,
        Coll::Allgatherv,
        Coll::Alltoall,
        Coll::Alltoallv,
        Coll::Alltoallw,
        Coll::Reduce,
        Coll::Allreduce,
        Coll::ReduceScatter,
        Coll::ReduceScatterBlock,
        Coll::Scan,
        Coll::Exscan,
        Coll::CommDup,
        Coll::CommCreate,
        Coll::CommSplit,
        Coll::CartCreate,
        Coll::CartMap,
        Coll::GraphCreate,
        Coll::GraphMap,
        Coll::IntercommCreate,
        Coll::NeighborAllgather,
        Coll::NeighborAllgatherv,
        Coll::NeighborAlltoall,
        Coll::NeighborAlltoallv,
        Coll::NeighborAlltoallw,
        Coll::WinCreate,
        Coll::WinAllocate,
        Coll::WinAllocateShared,
        Coll::WinCreateDynamic,
        Coll::WinFence,
        Coll::WinFree,
        Coll::FileOpen,
        Coll::FileClose,
        Coll::FileSetSize,
        Coll::FilePreallocate,
        Coll::FileSetView,
        Coll::FileSetAtomicity,
        Coll::FileReadAllBegin,
        Coll::FileReadAllEnd,
        Coll::FileWriteAllBegin,
        Coll::FileWriteAllEnd,
        Coll::FileReadAtAllBegin,
        Coll::FileReadAtAllEnd,
        Coll::FileWriteAtAllBegin,
        Coll::FileWriteAtAllEnd,
        Coll::FileReadOrderedBegin,
        Coll::FileReadOrderedEnd,
        Coll::FileWriteOrderedBegin,
        Coll::FileWriteOrderedEnd,
        Coll::IntercommMerge,
        Coll::ExchangeSetup,
    ];

    pub fn from_code(code: u64) -> Option<(Coll, Form)> {
        let form = match code & (NONBLOCKING | PERSISTENT) {
            0 => Form::Blocking,
            NONBLOCKING => Form::Nonblocking,
            PERSISTENT => Form::Persistent,
            _ => return None,
        };
        let base = code & !(NONBLOCKING | PERSISTENT);
        Coll::ALL
            .iter()
            .copied()
            .find(|c| *c as u64 == base)
            .map(|c| (c, form))
    }

    /// The name after `MPI_`, as the blocking form is spelled.
    pub fn base_name(self) -> &'static str {
        match self {
            Coll::Barrier => "Barrier",
            Coll::Bcast => "Bcast",
            Coll::Gather => "Gather",
            Coll::Gatherv => "Gatherv",
            Coll::Scatter => "Scatter",
            Coll::Scatterv => "Scatterv",
            Coll::Allgather => "Allgather",
            Coll::Allgatherv => "Allgatherv",
            Coll::Alltoall => "Alltoall",
            Coll::Alltoallv => "Alltoallv",
            Coll::Alltoallw => "Alltoallw",
            Coll::Reduce => "Reduce",
            Coll::Allreduce => "Allreduce",
            Coll::ReduceScatter => "Reduce_scatter",
            Coll::ReduceScatterBlock => "Reduce_scatter_block",
            Coll::Scan => "Scan",
            Coll::Exscan => "Exscan",
            Coll::CommDup => "Comm_dup",
            Coll::CommCreate => "Comm_create",
            Coll::CommSplit => "Comm_split",
            Coll::CartCreate => "Cart_create",
            Coll::CartMap => "Cart_map",
            Coll::GraphCreate => "Graph_create",
            Coll::GraphMap => "Graph_map",
            Coll::IntercommCreate => "Intercomm_create",
            Coll::NeighborAllgather => "Neighbor_allgather",
            Coll::NeighborAllgatherv => "Neighbor_allgatherv",
            Coll::NeighborAlltoall => "Neighbor_alltoall",
            Coll::NeighborAlltoallv => "Neighbor_alltoallv",
            Coll::NeighborAlltoallw => "Neighbor_alltoallw",
            Coll::WinCreate => "Win_create",
            Coll::WinAllocate => "Win_allocate",
            Coll::WinAllocateShared => "Win_allocate_shared",
            Coll::WinCreateDynamic => "Win_create_dynamic",
            Coll::WinFence => "Win_fence",
            Coll::WinFree => "Win_free",
            Coll::FileOpen => "File_open",
            Coll::FileClose => "File_close",
            Coll::FileSetSize => "File_set_size",
            Coll::FilePreallocate => "File_preallocate",
            Coll::FileSetView => "File_set_view",
            Coll::FileSetAtomicity => "File_set_atomicity",
            Coll::FileReadAllBegin => "File_read_all_begin",
            Coll::FileReadAllEnd => "File_read_all_end",
            Coll::FileWriteAllBegin => "File_write_all_begin",
            Coll::FileWriteAllEnd => "File_write_all_end",
            Coll::FileReadAtAllBegin => "File_read_at_all_begin",
            Coll::FileReadAtAllEnd => "File_read_at_all_end",
            Coll::FileWriteAtAllBegin => "File_write_at_all_begin",
            Coll::FileWriteAtAllEnd => "File_write_at_all_end",
            Coll::FileReadOrderedBegin => "File_read_ordered_begin",
            Coll::FileReadOrderedEnd => "File_read_ordered_end",
            Coll::FileWriteOrderedBegin => "File_write_ordered_begin",
            Coll::FileWriteOrderedEnd => "File_write_ordered_end",
            Coll::IntercommMerge => "Intercomm_merge",
            Coll::ExchangeSetup => "Comm_dup",
        }
    }

    /// `MPI_Bcast`, `MPI_Ibcast` or `MPI_Bcast_init`.
    pub fn name(self, form: Form) -> String {
        if self == Coll::ExchangeSetup {
            return "a first type exchange call (MPIX_Type_send, _recv, _bcast, _reference, \
                    _resolve or _exchange_setup: collective)"
                .into();
        }
        let base = self.base_name();
        match form {
            Form::Blocking => format!("MPI_{base}"),
            Form::Nonblocking => {
                format!("MPI_I{}{}", base[..1].to_ascii_lowercase(), &base[1..])
            }
            Form::Persistent => format!("MPI_{base}_init"),
        }
    }

    /// A neighborhood collective: the pairs are the topology's edges.
    pub fn neighborhood(self) -> bool {
        matches!(
            self,
            Coll::NeighborAllgather
                | Coll::NeighborAllgatherv
                | Coll::NeighborAlltoall
                | Coll::NeighborAlltoallv
                | Coll::NeighborAlltoallw
        )
    }

    /// The root argument takes part (for Intercomm_create: the local leader).
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Coll::Bcast
                | Coll::Gather
                | Coll::Gatherv
                | Coll::Scatter
                | Coll::Scatterv
                | Coll::Reduce
                | Coll::IntercommCreate
        )
    }

    pub fn has_op(self) -> bool {
        matches!(
            self,
            Coll::Reduce
                | Coll::Allreduce
                | Coll::ReduceScatter
                | Coll::ReduceScatterBlock
                | Coll::Scan
                | Coll::Exscan
        )
    }

    /// `MPI_IN_PLACE` must be given on all ranks or on none.
    pub fn in_place_all_or_none(self) -> bool {
        matches!(
            self,
            Coll::Allgather
                | Coll::Allgatherv
                | Coll::Alltoall
                | Coll::Alltoallv
                | Coll::Alltoallw
                | Coll::Allreduce
                | Coll::ReduceScatter
                | Coll::ReduceScatterBlock
        )
    }

    /// The signatures are checked pair by pair (the "v" and "w" forms).
    pub fn pairwise(self) -> bool {
        matches!(
            self,
            Coll::Gatherv | Coll::Scatterv | Coll::Allgatherv | Coll::Alltoallv | Coll::Alltoallw
        ) || self.neighborhood()
    }

    pub fn reference(self) -> Reference {
        match self {
            Coll::Bcast | Coll::Scatter | Coll::Reduce => Reference::RootA,
            Coll::Gather => Reference::RootB,
            Coll::Allgather | Coll::Alltoall => Reference::FirstB,
            Coll::Allreduce
            | Coll::ReduceScatter
            | Coll::ReduceScatterBlock
            | Coll::Scan
            | Coll::Exscan
            | Coll::FileSetView => Reference::FirstA,
            _ => Reference::None,
        }
    }

    /// What the arguments of side A and B are called.
    pub fn side_names(self) -> (&'static str, &'static str) {
        match self {
            Coll::Bcast => ("(count, datatype)", ""),
            Coll::Reduce | Coll::Allreduce | Coll::Scan | Coll::Exscan => ("(count, datatype)", ""),
            Coll::ReduceScatterBlock => ("(recvcount, datatype)", ""),
            Coll::ReduceScatter => ("one datatype", ""),
            Coll::FileSetView => ("etype", ""),
            _ => ("(sendcount, sendtype)", "(recvcount, recvtype)"),
        }
    }

    /// The `extra` word is the value itself (a tag, an assert, a size, a
    /// flag), not a hash of arrays.
    pub fn extra_is_scalar(self) -> bool {
        matches!(
            self,
            Coll::IntercommCreate
                | Coll::IntercommMerge
                | Coll::WinFence
                | Coll::FileSetSize
                | Coll::FilePreallocate
                | Coll::FileSetAtomicity
        )
    }

    /// What the record's `extra` word stands for, when it must agree.
    pub fn extra_name(self) -> Option<&'static str> {
        match self {
            Coll::ReduceScatter => Some("recvcounts"),
            Coll::CartCreate | Coll::CartMap => Some("dims and periods"),
            Coll::GraphCreate | Coll::GraphMap => Some("graph (index and edges)"),
            Coll::IntercommCreate => Some("tag"),
            Coll::IntercommMerge => Some("high"),
            Coll::WinFence => Some("assert"),
            Coll::FileOpen => Some("filename and amode"),
            Coll::FileSetSize | Coll::FilePreallocate => Some("size"),
            Coll::FileSetView => Some("datarep"),
            Coll::FileSetAtomicity => Some("flag"),
            _ => None,
        }
    }
}

/// Whether and how this rank used `MPI_IN_PLACE`.
pub const IN_PLACE_NA: u64 = 2;

/// One rank's record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Record {
    pub call: u64,
    pub seq: u64,
    /// -1 when the call has no root.
    pub root: i64,
    /// 0: no op; 1..: a predefined op's index; else a user op's identity.
    pub op: u64,
    pub commute: u64,
    /// 0 or 1, or `IN_PLACE_NA`.
    pub in_place: u64,
    pub a: Sig,
    pub b: Sig,
    /// A hash of array arguments that must agree (recvcounts, dims, graph),
    /// or a scalar such as a tag.
    pub extra: u64,
    pub size: u64,
    /// The rank's group on an intercommunicator (`GROUP_LOW`, `GROUP_HIGH`;
    /// `GROUP_INTRA` on an intracommunicator) and its rank in that group.
    pub group: u64,
    pub grank: u64,
    /// The blocking calls this rank made before this one on the
    /// communicators whose group holds this one's ranks (`crate::order`;
    /// 0 but in the batched mode).
    pub order: u64,
}

pub const WORDS: usize = 19;

/// An intracommunicator's records.
pub const GROUP_INTRA: u64 = 0;
/// On an intercommunicator: the group that holds rank 0 of the checker's
/// merged communicator, and the other.
pub const GROUP_LOW: u64 = 1;
pub const GROUP_HIGH: u64 = 2;

/// An intercommunicator's root argument in a record: MPI_ROOT and
/// MPI_PROC_NULL (whose values are the MPI's own) as these, a rank of the
/// remote group as itself.
pub const ROOT_ARG: i64 = -2;
pub const PROC_NULL_ARG: i64 = -3;

impl Record {
    pub fn to_words(&self) -> [u64; WORDS] {
        let mut w = [0u64; WORDS];
        w[0] = self.call;
        w[1] = self.seq;
        w[2] = self.root as u64;
        w[3] = self.op;
        w[4] = self.commute;
        w[5] = self.in_place;
        w[6..10].copy_from_slice(&self.a.to_words());
        w[10..14].copy_from_slice(&self.b.to_words());
        w[14] = self.extra;
        w[15] = self.size;
        w[16] = self.group;
        w[17] = self.grank;
        w[18] = self.order;
        w
    }

    pub fn from_words(w: &[u64]) -> Record {
        Record {
            call: w[0],
            seq: w[1],
            root: w[2] as i64,
            op: w[3],
            commute: w[4],
            in_place: w[5],
            a: Sig::from_words(&w[6..10]),
            b: Sig::from_words(&w[10..14]),
            extra: w[14],
            size: w[15],
            group: w[16],
            grank: w[17],
            order: w[18],
        }
    }

    pub fn coll(&self) -> Option<(Coll, Form)> {
        Coll::from_code(self.call)
    }
}

/// Side A (send) or B (receive) of a rank's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Record {
    pub fn sig(&self, side: Side) -> Sig {
        match side {
            Side::A => self.a,
            Side::B => self.b,
        }
    }
}

/// The first inconsistency among the ranks' records, each kind with the
/// ranks grouped by the value they passed (groups in order of their first
/// rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Different calls (or the same call at different positions).
    Call(Vec<((u64, u64), Vec<usize>)>),
    /// The same call at different places in the order of blocking calls
    /// across communicators (`crate::order`).
    Order(Vec<(u64, Vec<usize>)>),
    Root(Vec<(i64, Vec<usize>)>),
    /// (op, commute).
    Op(Vec<((u64, u64), Vec<usize>)>),
    InPlace(Vec<(u64, Vec<usize>)>),
    Extra(Vec<(u64, Vec<usize>)>),
    /// An intercommunicator's roots break its rule (one group passes
    /// MPI_ROOT once and MPI_PROC_NULL elsewhere, the other the root's
    /// rank): the ranks grouped by (group, root argument).
    InterRoot(Vec<((u64, i64), Vec<usize>)>),
    /// The reference side and every rank's side that differs from it.
    Signature {
        reference: (usize, Side),
        differing: Vec<(usize, Side)>,
    },
}

impl Finding {
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::Call(_) => "call",
            Finding::Order(_) => "order",
            Finding::Root(_) | Finding::InterRoot(_) => "root",
            Finding::Op(_) => "op",
            Finding::InPlace(_) => "in_place",
            Finding::Extra(_) => "argument",
            Finding::Signature { .. } => "datatype",
        }
    }

    /// The ranks that print the report: the first of each group, or every
    /// rank whose signature differs.
    pub fn reporters(&self) -> Vec<usize> {
        fn firsts<T>(g: &[(T, Vec<usize>)]) -> Vec<usize> {
            g.iter().map(|(_, r)| r[0]).collect()
        }
        let mut v = match self {
            Finding::Call(g) => firsts(g),
            Finding::Order(g) => firsts(g),
            Finding::Root(g) => firsts(g),
            Finding::InterRoot(g) => firsts(g),
            Finding::Op(g) => firsts(g),
            Finding::InPlace(g) => firsts(g),
            Finding::Extra(g) => firsts(g),
            Finding::Signature { differing, .. } => differing.iter().map(|d| d.0).collect(),
        };
        v.dedup();
        v
    }
}

/// Ranks grouped by a value, groups in order of first appearance.
pub fn group<T: PartialEq + Copy>(values: impl Iterator<Item = T>) -> Vec<(T, Vec<usize>)> {
    let mut groups: Vec<(T, Vec<usize>)> = Vec::new();
    for (rank, v) in values.enumerate() {
        match groups.iter_mut().find(|(g, _)| *g == v) {
            Some((_, ranks)) => ranks.push(rank),
            None => groups.push((v, vec![rank])),
        }
    }
    groups
}

/// The first inconsistency among all ranks' records, or None. Every rank
/// evaluates the same records, so every rank reaches the same verdict.
pub fn evaluate(recs: &[Record]) -> Option<Finding> {
    let calls = group(recs.iter().map(|r| (r.call, r.seq)));
    if calls.len() > 1 {
        return Some(Finding::Call(calls));
    }
    let orders = group(recs.iter().map(|r| r.order));
    if orders.len() > 1 {
        return Some(Finding::Order(orders));
    }
    let (coll, _) = recs.first()?.coll()?;
    if recs[0].group != GROUP_INTRA {
        return evaluate_inter(coll, recs);
    }
    if coll.rooted() {
        let roots = group(recs.iter().map(|r| r.root));
        if roots.len() > 1 {
            return Some(Finding::Root(roots));
        }
    }
    if coll.has_op() {
        let ops = group(recs.iter().map(|r| (r.op, r.commute)));
        if ops.len() > 1 {
            return Some(Finding::Op(ops));
        }
    }
    if coll.in_place_all_or_none() {
        let ip = group(recs.iter().map(|r| r.in_place));
        if ip.len() > 1 {
            return Some(Finding::InPlace(ip));
        }
    }
    if coll.extra_name().is_some() {
        let ex = group(recs.iter().map(|r| r.extra));
        if ex.len() > 1 {
            return Some(Finding::Extra(ex));
        }
    }
    signature_finding(coll, recs)
}

/// Whether an intercommunicator's roots follow the standard's rule: in
/// one group exactly one rank passes MPI_ROOT and the others
/// MPI_PROC_NULL, and every rank of the other group passes that rank.
fn inter_roots_valid(recs: &[Record]) -> bool {
    [GROUP_LOW, GROUP_HIGH].iter().any(|&g| {
        let (mine, other): (Vec<&Record>, Vec<&Record>) = recs.iter().partition(|r| r.group == g);
        let roots: Vec<&&Record> = mine.iter().filter(|r| r.root == ROOT_ARG).collect();
        roots.len() == 1
            && mine
                .iter()
                .all(|r| r.root == ROOT_ARG || r.root == PROC_NULL_ARG)
            && other.iter().all(|r| r.root == roots[0].grank as i64)
    })
}

/// The intercommunicator's evaluation (the call already agrees): roots by
/// the intercommunicator rule, the op among the ranks it matters to, the
/// `extra` argument within each group (`high` of `MPI_Intercomm_merge`).
/// Signatures are checked pair by pair across the groups (`check`).
fn evaluate_inter(coll: Coll, recs: &[Record]) -> Option<Finding> {
    if coll.rooted() && !inter_roots_valid(recs) {
        return Some(Finding::InterRoot(group(
            recs.iter().map(|r| (r.group, r.root)),
        )));
    }
    if coll.has_op() {
        // The root group's MPI_PROC_NULL ranks take no part.
        let takes_part = |r: &&Record| !(coll.rooted() && r.root == PROC_NULL_ARG);
        let first = recs.iter().find(takes_part).map(|r| (r.op, r.commute));
        let ops = group(recs.iter().map(|r| {
            if takes_part(&r) {
                (r.op, r.commute)
            } else {
                first.unwrap_or((r.op, r.commute))
            }
        }));
        if ops.len() > 1 {
            return Some(Finding::Op(ops));
        }
    }
    if coll.extra_name().is_some() {
        let ex = group(recs.iter().map(|r| (r.group, r.extra)));
        let groups_of = |g: u64| ex.iter().filter(|((x, _), _)| *x == g).count();
        if groups_of(GROUP_LOW) > 1 || groups_of(GROUP_HIGH) > 1 {
            return Some(Finding::Extra(
                ex.into_iter().map(|((_, v), r)| (v, r)).collect(),
            ));
        }
    }
    None
}

fn signature_finding(coll: Coll, recs: &[Record]) -> Option<Finding> {
    let root = usize::try_from(recs[0].root).ok();
    let preferred = match coll.reference() {
        Reference::None => return None,
        Reference::RootA => root.map(|r| (r, Side::A)),
        Reference::RootB => root.map(|r| (r, Side::B)),
        Reference::FirstA => Some((0, Side::A)),
        Reference::FirstB => Some((0, Side::B)),
    };
    let all = (0..recs.len()).flat_map(|r| [(r, Side::A), (r, Side::B)]);
    let defined = |&(r, s): &(usize, Side)| recs.get(r).is_some_and(|x| x.sig(s).defined());
    let reference = preferred
        .filter(defined)
        .or_else(|| all.clone().find(defined))?;
    let refsig = recs[reference.0].sig(reference.1);
    let differing: Vec<(usize, Side)> = all
        .filter(defined)
        .filter(|&(r, s)| !recs[r].sig(s).matches(&refsig))
        .collect();
    if differing.is_empty() {
        None
    } else {
        Some(Finding::Signature {
            reference,
            differing,
        })
    }
}

/// A record's call (its code with its form, `Coll::from_code`), as a
/// report names it. Call 0 is a batched rank's "no call": it verified its
/// batch (`crate::batch`) where the others made one more.
pub fn call_name(code: u64) -> String {
    match Coll::from_code(code) {
        Some((c, form)) => c.name(form),
        None if code == 0 => "no call (it verified its batch of calls there)".into(),
        None => format!("an unknown call ({code})"),
    }
}

/// The type exchange's operation `op` at its collective point, as a
/// report names the call.
pub fn operation_name(op: &str) -> String {
    format!("{op} (the first type exchange call on a communicator is collective)")
}

/// "rank 1" or "ranks 0-2", with " (world ranks 4-6)" when the world
/// ranks of the communicator's members (`world`, by rank; empty: not
/// known) are not the ranks themselves.
pub fn rank_group(ranks: &[usize], world: &[i32]) -> String {
    let s = if ranks.len() == 1 { "" } else { "s" };
    let text = format!("rank{s} {}", ranks_text(ranks));
    if world.is_empty() || world.iter().enumerate().all(|(i, &w)| w == i as i32) {
        return text;
    }
    let mut w: Vec<usize> = ranks
        .iter()
        .filter_map(|&r| world.get(r).copied())
        .filter_map(|w| usize::try_from(w).ok())
        .collect();
    w.sort_unstable();
    let s = if w.len() == 1 { "" } else { "s" };
    format!("{text} (world rank{s} {})", ranks_text(&w))
}

/// "0", "1, 3" or "0-2, 5".
pub fn ranks_text(ranks: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            parts.push(format!("{}-{}", ranks[i], ranks[j]));
        } else {
            for r in &ranks[i..=j] {
                parts.push(r.to_string());
            }
        }
        i = j + 1;
    }
    parts.join(", ")
}

/// FNV-1a over 64-bit words: the `extra` hash of array arguments.
pub fn hash_words(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(hash: u64, count: u64, bytes: u64) -> Sig {
        Sig {
            hash,
            count,
            bytes,
            flags: DEFINED,
        }
    }

    fn rec(coll: Coll, root: i64, a: Sig, b: Sig) -> Record {
        Record {
            call: coll as u64,
            seq: 1,
            root,
            in_place: IN_PLACE_NA,
            a,
            b,
            size: 4,
            ..Record::default()
        }
    }

    /// An intercommunicator of two groups of two: (group, grank, root).
    fn inter(coll: Coll, roots: [(u64, u64, i64); 4]) -> Vec<Record> {
        roots
            .iter()
            .map(|&(group, grank, root)| Record {
                group,
                grank,
                ..rec(coll, root, Sig::NONE, Sig::NONE)
            })
            .collect()
    }

    #[test]
    fn intercommunicator_roots_follow_the_rule() {
        let (l, h) = (GROUP_LOW, GROUP_HIGH);
        let good = inter(
            Coll::Bcast,
            [
                (l, 0, PROC_NULL_ARG),
                (l, 1, ROOT_ARG),
                (h, 0, 1),
                (h, 1, 1),
            ],
        );
        assert_eq!(evaluate(&good), None);
        let two_roots = inter(
            Coll::Bcast,
            [(l, 0, ROOT_ARG), (l, 1, ROOT_ARG), (h, 0, 1), (h, 1, 1)],
        );
        assert!(matches!(evaluate(&two_roots), Some(Finding::InterRoot(_))));
        let wrong_rank = inter(
            Coll::Reduce,
            [
                (l, 0, PROC_NULL_ARG),
                (l, 1, ROOT_ARG),
                (h, 0, 0),
                (h, 1, 0),
            ],
        );
        assert!(matches!(evaluate(&wrong_rank), Some(Finding::InterRoot(_))));
        let no_root = inter(
            Coll::Gather,
            [
                (l, 0, PROC_NULL_ARG),
                (l, 1, PROC_NULL_ARG),
                (h, 0, 0),
                (h, 1, 0),
            ],
        );
        assert!(matches!(evaluate(&no_root), Some(Finding::InterRoot(_))));
    }

    #[test]
    fn intercommunicator_extra_agrees_within_each_group() {
        let (l, h) = (GROUP_LOW, GROUP_HIGH);
        let mut recs = inter(
            Coll::IntercommMerge,
            [(l, 0, -1), (l, 1, -1), (h, 0, -1), (h, 1, -1)],
        );
        recs[2].extra = 1;
        recs[3].extra = 1;
        assert_eq!(evaluate(&recs), None);
        recs[1].extra = 1;
        assert_eq!(
            evaluate(&recs),
            Some(Finding::Extra(vec![
                (0, vec![0]),
                (1, vec![1]),
                (1, vec![2, 3])
            ]))
        );
    }

    #[test]
    fn words_round_trip() {
        let r = Record {
            root: -1,
            op: 7,
            extra: 99,
            ..rec(Coll::Bcast, -1, sig(1, 2, 3), Sig::NONE)
        };
        assert_eq!(Record::from_words(&r.to_words()), r);
    }

    #[test]
    fn agreeing_records_are_no_finding() {
        let s = sig(5, 1, 4);
        let recs = vec![rec(Coll::Bcast, 0, s, Sig::NONE); 4];
        assert_eq!(evaluate(&recs), None);
    }

    /// The same call at different places in the order across
    /// communicators is an order finding; a different call comes first.
    #[test]
    fn different_places_in_the_order_are_grouped_after_the_call() {
        let mut recs = vec![rec(Coll::Bcast, 0, sig(5, 1, 4), Sig::NONE); 4];
        recs[2].order = 1;
        recs[3].order = 1;
        assert_eq!(
            evaluate(&recs),
            Some(Finding::Order(vec![(0, vec![0, 1]), (1, vec![2, 3])]))
        );
        recs[3].call = Coll::Barrier as u64;
        assert!(matches!(evaluate(&recs), Some(Finding::Call(_))));
    }

    #[test]
    fn different_calls_are_grouped() {
        let mut recs = vec![rec(Coll::Bcast, 0, sig(5, 1, 4), Sig::NONE); 4];
        recs[2].call = Coll::Barrier as u64;
        let f = evaluate(&recs).unwrap();
        assert_eq!(
            f,
            Finding::Call(vec![
                ((Coll::Bcast as u64, 1), vec![0, 1, 3]),
                ((Coll::Barrier as u64, 1), vec![2])
            ])
        );
        assert_eq!(f.reporters(), vec![0, 2]);
    }

    #[test]
    fn a_different_root_is_found_before_signatures() {
        let mut recs = vec![rec(Coll::Bcast, 0, sig(5, 1, 4), Sig::NONE); 3];
        recs[1].root = 1;
        recs[1].a = sig(6, 4, 4);
        assert_eq!(
            evaluate(&recs),
            Some(Finding::Root(vec![(0, vec![0, 2]), (1, vec![1])]))
        );
    }

    #[test]
    fn signatures_are_compared_with_the_roots() {
        let mut recs = vec![rec(Coll::Bcast, 1, sig(5, 1, 4), Sig::NONE); 3];
        recs[1].a = sig(6, 4, 4); // the root differs from everyone
        assert_eq!(
            evaluate(&recs),
            Some(Finding::Signature {
                reference: (1, Side::A),
                differing: vec![(0, Side::A), (2, Side::A)]
            })
        );
    }

    #[test]
    fn packed_matches_the_same_byte_count() {
        let mut recs = vec![rec(Coll::Bcast, 0, sig(5, 2, 8), Sig::NONE); 2];
        recs[1].a = Sig {
            flags: DEFINED | PACKED,
            ..sig(9, 8, 8)
        };
        assert_eq!(evaluate(&recs), None);
        recs[1].a.bytes = 7;
        assert!(matches!(evaluate(&recs), Some(Finding::Signature { .. })));
    }

    #[test]
    fn gather_compares_sends_with_the_roots_receive_side() {
        let s = sig(5, 1, 4);
        let mut recs = vec![rec(Coll::Gather, 0, s, Sig::NONE); 3];
        recs[0].b = s;
        recs[0].a = Sig::NONE; // MPI_IN_PLACE at the root
        assert_eq!(evaluate(&recs), None);
        recs[2].a = sig(7, 4, 4);
        assert_eq!(
            evaluate(&recs),
            Some(Finding::Signature {
                reference: (0, Side::B),
                differing: vec![(2, Side::A)]
            })
        );
    }

    #[test]
    fn in_place_must_be_all_or_none_where_required() {
        let mut recs = vec![rec(Coll::Allreduce, -1, sig(5, 1, 4), Sig::NONE); 2];
        recs[0].in_place = 1;
        recs[1].in_place = 0;
        assert!(matches!(evaluate(&recs), Some(Finding::InPlace(_))));
        let mut recs = vec![rec(Coll::Reduce, 0, sig(5, 1, 4), Sig::NONE); 2];
        recs[0].in_place = 1;
        recs[1].in_place = 0;
        assert_eq!(evaluate(&recs), None);
    }

    #[test]
    fn ops_differ_by_identity_and_commutativity() {
        let mut recs = vec![rec(Coll::Allreduce, -1, sig(5, 1, 4), Sig::NONE); 2];
        recs[0].op = 3;
        recs[1].op = 3;
        recs[1].commute = 1;
        assert!(matches!(evaluate(&recs), Some(Finding::Op(_))));
    }

    #[test]
    fn names_and_rank_lists() {
        assert_eq!(
            Coll::ReduceScatterBlock.name(Form::Nonblocking),
            "MPI_Ireduce_scatter_block"
        );
        assert_eq!(Coll::Bcast.name(Form::Blocking), "MPI_Bcast");
        assert_eq!(Coll::Bcast.name(Form::Persistent), "MPI_Bcast_init");
        assert_eq!(
            Coll::NeighborAlltoallw.name(Form::Nonblocking),
            "MPI_Ineighbor_alltoallw"
        );
        assert_eq!(
            Coll::from_code(Coll::Scan as u64 | PERSISTENT),
            Some((Coll::Scan, Form::Persistent))
        );
        assert_eq!(ranks_text(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7, 8");
    }
}
