//! Point-to-point type-signature checks (Gropp 2000; issue 16), on by
//! default (issue 29, item 5); `MPIX_CHECK_P2P=0` turns them off.
//!
//! # Design
//!
//! *What travels.* With each user message the sender sends a 48-byte
//! **companion** (`companions::Companion`): the hash and element count of its
//! signature of (count, datatype), its count, whether the type is all
//! `MPI_PACKED`, and the type exchange's 16-byte reference to its datatype
//! (`mpix_marshal::type_reference`), or for a predefined type its portable
//! code (`mpix_marshal::predefined_code`: it needs no exchange, which is
//! most of a checked small message's cost). The companion goes to the same
//! destination with the same tag, on a private duplicate of the user's
//! communicator (the **channel**, made at a collective point: `MPI_Init`
//! for `MPI_COMM_WORLD`, the wrapped constructors for new communicators;
//! never lazily inside a point-to-point call). It is sent with
//! `MPI_Isend` *before* the user's send, so the sender never blocks on it
//! and a receiver that waits for a companion never waits for the sender's
//! program to progress. Its request and buffer are kept and reaped later.
//!
//! *Which companion belongs to which message.* MPI's non-overtaking rule
//! orders the messages of one sender on one (communicator, tag) in both
//! channels alike; on the receiving side, among the receives (posted by one
//! thread) that get messages from one (source, tag), the earlier-posted one
//! gets the earlier message (a later receive cannot take a message while an
//! earlier pending receive matches it). So companions are consumed per
//! (source, tag) in the *posting order* of the receives, not in their
//! completion order: every receive is queued when posted; when it
//! completes, the status gives the actual source and tag (wildcards
//! resolved by MPI, whatever they were) and the receive is checked once no
//! earlier queued receive could still take a message of that (source,
//! tag) — an earlier pending receive whose pattern matches defers it
//! until that one completes. The user's receive itself is never changed:
//! same arguments, same matching, and the status the user sees (the
//! checker passes its own status only where the user gave
//! `MPI_STATUS_IGNORE`).
//!
//! *What is checked.* A receive may take fewer elements than it allows,
//! so the sender's hash is compared with the hash of the first n basic
//! elements of the receive's (count, datatype), n the sender's element
//! count (`mpix_marshal::signature_prefix_summary`; the whole receive's
//! kept hash when n fills it). A message with more elements than the
//! receive allows, that MPI nevertheless delivered (e.g. 4 `MPI_BYTE`s into
//! one `MPI_INT`), is reported too. `MPI_BYTE` is a basic type like any
//! other (it matches only `MPI_BYTE`); a side that is `MPI_PACKED` is not
//! checked, as in the collective checker.
//!
//! *Reports.* At the receiving rank, as the collective checker's: the
//! call, communicator, source, tag, both (count, datatype) and the first
//! differing element with both sides' basic types and tree paths. The
//! receiver counts every reference exactly once (resolved and released,
//! or consumed; in the batched mode a type's reference is made and
//! counted once per batch, its repeats resolved uncounted): the
//! sender's description of a derived type travels once per peer and type
//! through the exchange's cache, so a correct program pays the hash and a
//! cache look-up per message (a predefined type: the hash alone). A
//! report is raised on the communicator's error handler with the
//! checker's own point-to-point error class, whose string
//! is "mpix-check: mismatched point-to-point type signature (…)" (the
//! collective checker's class is another).
//!
//! *Intercommunicators* are checked like intracommunicators: the channel
//! is a duplicate of the intercommunicator, so a companion goes to the
//! same remote-group rank as its message, and a report names the ranks
//! by group ("remote group rank 0").
//!
//! *Not sent.* `MPI_PROC_NULL` sends and receives involve no companion.
//! Communicators made by constructors the checker does not wrap
//! (`MPI_Comm_idup`, whose communicator cannot be used inside the call,
//! the dynamic-process ones, MPI 4's `…_from_group(s)`) have no channel:
//! their messages are not checked, on both sides alike.
//!
//! # Batched (`MPIX_CHECK_VERIFY=batched`, issue 31)
//!
//! In the batched mode the companions do not travel one by one: a send
//! appends its companion and tag to an outbox per (channel, destination),
//! sent as one message (`batches`) when it holds 64, when a wait lasts
//! (`crate::watchdog`'s idle hook, past 1 ms), when the receiver asks
//! (a pull: a receive MPI failed needs its report before the MPI's error
//! reaches the program), and at the channel's free (all members are in
//! it: the entries each peer sent are exchanged and all taken in) and at
//! `MPI_Finalize`. The receiver takes the batches that have come into an
//! inbox per source with one persistent wildcard receive on the channel
//! and pairs a completed receive with the first entry of its (source,
//! tag) there, in the same order as above; a receive whose entry has not
//! come stays queued, with the call site of the call that completed it
//! (`crate::site::entering`), and is checked when its batch arrives. A
//! derived receive type the program frees while a queued receive names it
//! is freed after that receive's check (`matching::keep`). Everything else
//! (wildcards, matched probes, freed and cancelled requests, the lost
//! counts) works as in the immediate mode, on entries instead of messages.
//!
//! # Failed, cancelled and freed operations
//!
//! *A send call that returns an error* (the user's communicator returns
//! errors) posted no message: its companion is cancelled (`unsent`).
//! `MPI_Sendrecv` is the exception: its error may be the receive's (a
//! truncation) with the message sent, and a message without its companion
//! would leave its receiver waiting, so the companion stays.
//!
//! *A receive that fails with a truncation* (the message is larger than
//! the receive: `MPI_ERR_TRUNCATE`, or `MPI_ERR_IN_STATUS` whose status
//! says so) was matched: its status gives the source and tag, so it is
//! checked as a completed receive (its companion taken in order), the
//! report printed and not raised; then MPI's error goes to the user's
//! handler. That needs the error back from MPI before the user's handler
//! (by default fatal) sees it: the checker's own error handler, installed
//! on each communicator with a channel, keeps the errors raised inside the
//! checked calls (`crate::mpi::errhandler`). Another failed receive
//! posted nothing (`not_posted`).
//!
//! *A cancelled send.* `MPI_Cancel` of a nonblocking send is watched; when
//! its completion (any Wait/Test form) shows MPI cancelled the message,
//! the companion is cancelled too. The companion is cancelled only after
//! the message is known to be: cancelling it first could leave a message
//! without its companion, which would make its receiver wait. When MPI
//! cannot cancel the companion any more (it was delivered; MPICH and Open
//! MPI do not cancel sends that have left, which is also why the user's
//! own cancel usually fails), it stays queued at the receiver and only a
//! *later* message of that (communicator, tag) from this rank could take
//! it in its place. That needs a transport that cancels delivered user
//! messages but not delivered companions: not the case of MPICH or Open
//! MPI (MPI 4.1 deprecates cancelling sends). A receiver cannot skip such
//! a companion by itself: it cannot tell which message a companion was
//! for, and the sender learns the outcome of its cancel only after the
//! receiver may have taken the next message. A companion can be cancelled
//! only while the sender still holds its request: until it is reaped
//! (whenever 64 are held, the completed ones go), unless its send's cancel
//! was asked before that (then it is kept until the outcome is known).
//!
//! *`MPI_Request_free` of an active receive.* MPI still completes it, but
//! the checker never sees its status. Without wildcards it keeps its
//! place: once a later-posted receive completes with a message of its
//! (source, tag), it was matched before that one (MPI gives a message to
//! the earliest pending receive that matches), so its companion is taken
//! and dropped in order, unchecked. With a wildcard, which (source, tag)
//! it took cannot be known: the channel stops checking from then on (no
//! false report, no wait for a companion) and drops the companions that
//! arrive. `MPI_Isendrecv`/`MPI_Isendrecv_replace` with a wildcard do the
//! same, since MPICH 4.0 leaves their status unset (without one, their own
//! (source, tag) stand for the status's).
//!
//! # Lost messages
//!
//! Each rank counts the companions it sends and consumes per world rank;
//! at `MPI_Finalize` the counts are exchanged and the companions no
//! receive consumed are reported as lost messages, with the nonblocking
//! sends never completed (`lost`).
//!
//! # Wrapped
//!
//! `MPI_Send`, `MPI_Ssend`, `MPI_Bsend`, `MPI_Rsend`, their `MPI_I…` and
//! `…_init` forms with `MPI_Start`/`MPI_Startall`, `MPI_Recv`,
//! `MPI_Irecv`, `MPI_Recv_init`, `MPI_Sendrecv`, `MPI_Sendrecv_replace`,
//! `MPI_Isendrecv`, `MPI_Isendrecv_replace`, `MPI_Mprobe`/`MPI_Improbe`
//! with `MPI_Mrecv`/`MPI_Imrecv`, the large-count `_c` form of each where
//! mpi.h declares it (`cfg(mpi_large_count)`), `MPI_Cancel`,
//! `MPI_Request_free`, and the completion of receives by every Wait/Test
//! form, `MPI_Comm_set_errhandler`/`MPI_Comm_get_errhandler` (the
//! user's handler, kept by `crate::mpi::errhandler`). (`MPI_Probe`/
//! `MPI_Iprobe` need no wrapper: they take no message.)
//! Not wrapped, and needing no companion: the partitioned
//! `MPI_Psend_init`/`MPI_Precv_init` (MPI 4). A partitioned send matches
//! only a partitioned receive (MPI 4.0, 4.2), so no receive the checker
//! pairs can take a partitioned message, and no companion is missing;
//! their requests' Wait/Test forms are polled as any other's (tested on a
//! checked communicator between regular messages of the same tag).
//!
//! # Threads
//!
//! At `MPI_THREAD_MULTIPLE`, threads may send on one (communicator,
//! destination, tag) and receive on one communicator at once: each
//! wrapper posts a companion with its message, and queues a receive with
//! its posting, under one lock (`crate::threads`), released before any
//! wait, so the orders the pairing relies on are the orders MPI sees.
//! At the other levels one thread calls MPI at a time: no lock.
//!
//! # Modules
//!
//! Each imports only those after it (`check/tests/layers.rs` checks that
//! there is no cycle), but `batches` (the batched mode's outboxes and
//! inboxes), which the others use and which checks at its idle hook:
//! `lifecycle` (channels made and freed, `MPI_Finalize`),
//! `lost` (the report at `MPI_Finalize`), `persistent` (what a start posts),
//! `completion` (the Wait/Test family), `matching` (posted receives and
//! their messages), `verdict` (a companion compared and reported),
//! `companions` (the companion and the sends in flight), `counts` (what
//! `lost` counts as the program runs), `channels` (a communicator's
//! channel and its queue).

mod batches;
mod channels;
mod companions;
mod completion;
mod counts;
mod lifecycle;
pub mod lost;
mod matching;
mod persistent;
mod verdict;

pub use crate::report::p2p_enabled as enabled;
pub use batches::wanted as batched;
pub use channels::channel_dup;
pub(crate) use companions::proc_null;
pub use companions::{attach_send, cancel_requested, sent, unsent};
pub use completion::{any, some, status_or, test, testall, wait, waitall};
pub use counts::send_posted;
pub use lifecycle::{finalize, setup};
pub use matching::{
    attach, keep, matched, not_posted, received, receiving, receiving_matched,
    receiving_unreported, truncated,
};
pub use persistent::{persistent_made, request_freed, started, starting, Starting};
