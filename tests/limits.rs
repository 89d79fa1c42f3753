//! Resource limits are enforced before memory is spent (issue 5):
//!
//! * (a) a stream claiming 10^6 nesting levels is refused at the depth
//!   limit, on an ordinary 2 MiB thread stack (the test harness's default);
//! * (b) ~100-byte streams claiming 2^40 blocks (and other huge array
//!   lengths and counts) are refused at the length field;
//! * (c) zlib bombs in the compressed representation are refused, and cost
//!   at most the length they claim;
//! * (d) a memory bound: a counting global allocator tracks the peak live
//!   bytes of the decoding thread, and decoding (`api::read` and
//!   `api::unmarshal`, all three representations) any of a set of hostile
//!   inputs of `n` bytes peaks below `MEM_PER_BYTE * n + MEM_CONST`.
//!
//! The bound. spec/external.md §8 promises that "a reader holds no more
//! memory than the stream could describe": every array is allocated only
//! after its length was checked against the bytes left. The costliest
//! descriptions are a DUP node and a NAMED node, one word each: 4 bytes of
//! stream for one `tree::Node` (184 bytes on x86-64), so the parsed tree can
//! take about 46 bytes per input byte; parsed arrays take 2 to 4 (an int
//! field is an i64, copied once when the node is assembled). MEM_PER_BYTE = 64 covers that
//! with room; MEM_CONST = 1 MiB covers what a thread allocates the first
//! time it decodes (the per-thread zlib state, scratch buffers). For the
//! compressed representation the bound applies to the expanded length `L`
//! (what the stream claims, at most 64 MiB and 64 times the payload plus
//! 64 KiB, spec/compressed.md), plus `L` and 1.25 `L` for the expanded
//! buffers (the external stream and its varint form): relative to a
//! compressed input of `n` bytes, at most about 67 * (64 n + 64 KiB) + 1 MiB
//! (`bound_for_input`).
//!
//! Only Rust allocations are counted: what MPI allocates inside a
//! constructor is not (every hostile input here is refused before any
//! constructor runs).

mod common;

use common::*;
use flate2::{Compress, Compression, FlushCompress};
// The hand-made streams here are of the versions without a checksum
// (external 4, compressed 3): a checksummed stream is refused by its
// checksum before the parser's limits, which are the same code for both.
use mpix_marshal::testing::compressed::{
    max_claim, to_varints, MAGIC_DEFLATE_V3 as MAGIC_DEFLATE, MAGIC_STORED_V3 as MAGIC_STORED,
    MAX_EXPANDED, MAX_RATIO, RATIO_SLACK,
};
use mpix_marshal::testing::external::{Encoding, HEADER_LEN};
use mpix_marshal::testing::signature::{signature_hash, HashKind};
use mpix_marshal::testing::tree::{MAX_DEPTH, MAX_NAME_LEN};
use mpix_marshal::testing::{external, internal};
use mpix_marshal::{read, unmarshal, Error, Representation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

// ---------------------------------------------------------------------------
// A counting allocator: live and peak bytes, per thread, so that tests
// running in parallel do not disturb each other's measurements.

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    // try_with: a thread being torn down may still free memory.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| {
            if now > peak.get() {
                peak.set(now);
            }
        });
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            account(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            account(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        account(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Counted as a free and an allocation at once (glibc moves
            // large blocks with mremap, without holding both).
            account(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `f` and returns its result and the peak of live bytes above what
/// was live when it started (allocations of this thread only).
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(|p| p.get()) - base;
    (r, peak.max(0) as usize)
}

/// Runs `f` on a new thread with the standard 2 MiB stack (so cold
/// per-thread state is part of the measurement, and the stack is the
/// default whatever RUST_MIN_STACK says).
fn on_fresh_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .expect("the decoding thread panicked (or overflowed its stack)")
}

/// Bytes of memory allowed per byte of (expanded) input, and in all.
const MEM_PER_BYTE: usize = 64;
const MEM_CONST: usize = 1 << 20;

fn bound(n: usize) -> usize {
    MEM_PER_BYTE * n + MEM_CONST
}

// ---------------------------------------------------------------------------
// Streams written by hand, in every representation.

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

/// An item of the node grammar.
#[derive(Clone)]
enum It {
    /// A uint or int field (4 bytes).
    W(u32),
    /// A hyper (8 bytes, a WIDE node's int field).
    H(i64),
    /// An opaque: length and bytes (padded to 4 in XDR only).
    O(Vec<u8>),
    /// A length word followed by nothing (for claimed lengths).
    Len(u32),
}

use It::*;

const NAMED: u32 = 101;
const DUP: u32 = 102;
const CONTIGUOUS: u32 = 103;
const VECTOR: u32 = 104;
const INDEXED: u32 = 106;
const HINDEXED: u32 = 107;
const INDEXED_BLOCK: u32 = 108;
const HINDEXED_BLOCK: u32 = 109;
const STRUCT: u32 = 110;
const SUBARRAY: u32 = 111;
const DARRAY: u32 = 112;
const HINDEXED_INTEGER: u32 = 119;
const STRUCT_INTEGER: u32 = 120;
const F_NAME: u32 = 1 << 16;
const F_WIDE: u32 = 1 << 17;
const F_ATTRS: u32 = 1 << 19;
const INT: u32 = 0x209;

/// MPI_INT: a NAMED node is one word, the datatype code in its high half.
fn int() -> Vec<It> {
    vec![W(INT << 16 | NAMED)]
}

/// The node grammar in XDR (external) or native order without padding
/// (internal).
fn body(items: &[It], xdr: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for it in items {
        match it {
            W(v) | Len(v) => out.extend(if xdr {
                v.to_be_bytes()
            } else {
                v.to_ne_bytes()
            }),
            H(v) => out.extend(if xdr {
                v.to_be_bytes()
            } else {
                v.to_ne_bytes()
            }),
            O(b) => {
                let len = b.len() as u32;
                out.extend(if xdr {
                    len.to_be_bytes()
                } else {
                    len.to_ne_bytes()
                });
                out.extend_from_slice(b);
                if xdr {
                    out.resize(out.len().div_ceil(4) * 4, 0);
                }
            }
        }
    }
    out
}

/// A version-4 header ("MXDT", no checksum follows the nodes).
fn header_v4(hash: u64) -> [u8; HEADER_LEN] {
    let mut h = mpix_marshal::testing::external::header(hash);
    h[..4].copy_from_slice(b"MXDT");
    h[4] = h[4] & 0x1f | 4 << 5;
    h
}

/// The external stream. One that parses carries its tree's signature hash
/// in the header, so that only what a test breaks on purpose is refused.
fn external_stream(items: &[It]) -> Vec<u8> {
    let mut bytes = [&header_v4(0)[..], &body(items, true)].concat();
    if let Ok(tree) = external::read_nodes(&bytes, HEADER_LEN, Encoding::Xdr) {
        if let Ok(hash) = signature_hash(&tree, HashKind::DEFAULT) {
            bytes[..HEADER_LEN].copy_from_slice(&header_v4(hash));
        }
    }
    bytes
}

/// Raw deflate at the fast level (test inputs are large and repetitive;
/// the debug build of the compressor is slow at the best level).
fn deflate(data: &[u8]) -> Vec<u8> {
    let mut c = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(data.len() / 2 + 1024);
    loop {
        let consumed = c.total_in() as usize;
        if out.capacity() - out.len() < 1024 {
            out.reserve(out.capacity());
        }
        let st = c
            .compress_vec(&data[consumed..], &mut out, FlushCompress::Finish)
            .unwrap();
        if st == flate2::Status::StreamEnd {
            return out;
        }
    }
}

fn compressed(magic: u32, claim: u32, payload: &[u8]) -> Vec<u8> {
    [&magic.to_be_bytes()[..], &claim.to_be_bytes(), payload].concat()
}

/// The stream in `rep` (compressed: deflated, claiming its true length).
fn stream(rep: Representation, items: &[It]) -> Vec<u8> {
    match rep {
        Representation::External => external_stream(items),
        Representation::Internal => [
            &internal::header(mpix_marshal::testing::marshal::build_id())[..],
            &body(items, false),
        ]
        .concat(),
        Representation::Compressed => compressed_form(&external_stream(items)),
    }
}

/// The compressed stream a writer makes of `ext`: its varint form,
/// deflated, or `ext` stored when the deflated form would claim more than
/// a reader accepts (spec/compressed.md §3).
fn compressed_form(ext: &[u8]) -> Vec<u8> {
    let d = deflate(&varints(ext));
    if ext.len() <= max_claim(d.len()) {
        compressed(MAGIC_DEFLATE, ext.len() as u32, &d)
    } else {
        compressed(MAGIC_STORED, ext.len() as u32, ext)
    }
}

fn varints(ext: &[u8]) -> Vec<u8> {
    let mut form = Vec::new();
    to_varints(ext, &mut form);
    form
}

/// The most bytes of varint form an external stream of `len` bytes has.
fn varint_len(len: usize) -> usize {
    8 + (len - 12) / 4 * 5
}

/// The length the stream expands to (the external stream, for compressed).
fn expanded_len(rep: Representation, bytes: &[u8]) -> usize {
    match rep {
        Representation::Compressed => u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize,
        _ => bytes.len(),
    }
}

/// The memory bound of a stream in `rep`: per expanded byte, plus the
/// expanded buffers of a compressed stream (its varint form and the
/// external stream).
fn bound_for(rep: Representation, bytes: &[u8]) -> usize {
    let l = expanded_len(rep, bytes);
    bound(l)
        + if rep == Representation::Compressed {
            l + varint_len(l)
        } else {
            0
        }
}

/// The same bound relative to the compressed input of `n` bytes: what it
/// can claim is at most `max_claim(n)` (deflated) or `n - 8` (stored).
fn bound_for_input(n: usize) -> usize {
    let l = max_claim(n).max(n);
    bound(l) + l + varint_len(l.max(12))
}

fn is_refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::Corrupt { .. } | Error::Truncated { .. } | Error::InvalidArgument(_)
    )
}

/// Decodes `bytes` with `read` and with `unmarshal` on fresh 2 MiB
/// threads; both must refuse it, with a message containing `expect`,
/// within `limit` bytes of memory. Returns the peaks.
fn refuse_within(
    what: &str,
    rep: Representation,
    bytes: &[u8],
    expect: &str,
    limit: usize,
) -> [usize; 2] {
    decode_within(what, rep, bytes, expect, limit, false)
}

/// As `refuse_within`; with `parses`, the stream breaks only a validation
/// rule (spec/external.md §9): `unmarshal` refuses it, and `read` either
/// returns its tree (measured until the tree is dropped) or refuses it in
/// the same words (reading an external stream computes the tree's signature
/// hash, which needs a valid tree).
fn decode_within(
    what: &str,
    rep: Representation,
    bytes: &[u8],
    expect: &str,
    limit: usize,
    parses: bool,
) -> [usize; 2] {
    let mut peaks = [0; 2];
    for (i, op) in ["read", "unmarshal"].into_iter().enumerate() {
        let input = bytes.to_vec();
        let (result, peak) = on_fresh_thread(move || {
            peak_of(|| {
                if op == "read" {
                    read(rep, &input).map(drop)
                } else {
                    unmarshal(rep, &input)
                        .map(|t| panic!("{op} built a type ({t:?}) from a hostile stream"))
                }
            })
        });
        assert!(
            peak <= limit,
            "{what} {rep:?} {op}: {} input bytes peaked at {peak} bytes, above the bound {limit}",
            bytes.len()
        );
        peaks[i] = peak;
        if parses && op == "read" && result.is_ok() {
            continue;
        }
        let err = result.expect_err(what);
        assert!(
            is_refusal(&err),
            "{what} {rep:?} {op}: not a refusal: {err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(expect),
            "{what} {rep:?} {op}: error {msg:?} does not say {expect:?}"
        );
    }
    peaks
}

// ---------------------------------------------------------------------------
// (a) Nesting.

/// `levels` levels of a one-child constructor around MPI_INT.
fn nest(levels: usize, level: &[It]) -> Vec<It> {
    let mut v = Vec::with_capacity(levels * level.len() + 2);
    for _ in 0..levels {
        v.extend_from_slice(level);
    }
    v.extend(int());
    v
}

/// The one-child levels used for deep nesting, with their stream sizes.
fn levels() -> Vec<(&'static str, Vec<It>, usize)> {
    vec![
        ("dup", vec![W(DUP)], 4),
        ("contiguous(1)", vec![W(CONTIGUOUS), W(1)], 8),
        // A struct of one member: count, blocklength, displacement, child.
        ("struct{1}", vec![W(STRUCT), W(1), W(1), W(0)], 16),
        // A named vector: the name is read before the depth of its child.
        (
            "named vector",
            vec![W(VECTOR | F_NAME), O(b"v".to_vec()), W(1), W(1), W(1)],
            24,
        ),
    ]
}

/// Streams of a million levels: (what, representation, bytes, offset of
/// the node at depth MAX_DEPTH in the external stream).
type Deep = (&'static str, Representation, Vec<u8>, usize);

/// The streams of one kind of level (one at a time: they are large).
fn million_levels(what: &'static str, level: &[It], per: usize) -> Vec<Deep> {
    let mut v = Vec::new();
    {
        // The level's bytes, repeated (the stream is refused long before
        // its end, so its header's hash is not looked at).
        let nested = |xdr: bool| [body(level, xdr).repeat(1_000_000), body(&int(), xdr)].concat();
        let ext = [&header_v4(0)[..], &nested(true)].concat();
        let int = [
            &internal::header(mpix_marshal::testing::marshal::build_id())[..],
            &nested(false),
        ]
        .concat();
        let comp = compressed_form(&ext);
        assert_eq!(
            comp[..4],
            MAGIC_STORED.to_be_bytes(),
            "too regular to deflate"
        );
        // (In the internal stream names are not padded: only the offset
        // of the XDR streams is checked.)
        let at = HEADER_LEN + MAX_DEPTH * per;
        v.push((what, Representation::External, ext, at));
        v.push((what, Representation::Internal, int, at));
        v.push((what, Representation::Compressed, comp, at));
    }
    v
}

fn million_levels_are_refused(streams: &[Deep]) {
    for (what, rep, bytes, at) in streams {
        let (what, rep, at) = (*what, *rep, *at);
        {
            let expect = format!("types nest deeper than {MAX_DEPTH} levels");
            for result in [
                read(rep, bytes).map(|_| ()),
                unmarshal(rep, bytes).map(|_| ()),
            ] {
                let err = result.expect_err(what);
                assert!(
                    matches!(err, Error::Corrupt { .. }),
                    "{what} {rep:?}: {err:?}"
                );
                let msg = err.to_string();
                assert!(msg.contains(&expect), "{what} {rep:?}: {msg}");
                if rep == Representation::External {
                    assert!(
                        msg.contains(&format!("at byte {at}:")),
                        "{what}: {msg} (expected byte {at})"
                    );
                }
            }
        }
    }
}

/// (a) On the test harness's own thread (2 MiB unless RUST_MIN_STACK says
/// otherwise) and on an explicit 2 MiB thread.
#[test]
fn a_million_nesting_levels_are_refused_on_the_default_stack() {
    init();
    for (what, level, per) in levels() {
        let streams = std::sync::Arc::new(million_levels(what, &level, per));
        million_levels_are_refused(&streams);
        let shared = streams.clone();
        on_fresh_thread(move || million_levels_are_refused(&shared));
    }
}

/// (a) The limit is exact: MAX_DEPTH levels (root at depth 0, the innermost
/// NAMED at depth MAX_DEPTH - 1) parse; one more is refused. Parsing alone
/// fits the default stack (rebuilding at the limit needs more in a debug
/// build: docs/limits.md).
#[test]
fn the_depth_limit_is_exact() {
    init();
    on_fresh_thread(|| {
        for (what, level, _) in levels() {
            for rep in REPS {
                let ok = stream(rep, &nest(MAX_DEPTH - 1, &level));
                let tree = read(rep, &ok).unwrap_or_else(|e| panic!("{what} {rep:?}: {e}"));
                let mut depth = 0;
                let mut node = &tree;
                while let Some(child) = node.children().first() {
                    node = child;
                    depth += 1;
                }
                assert_eq!(depth, MAX_DEPTH - 1, "{what}");
                let deep = stream(rep, &nest(MAX_DEPTH, &level));
                let err = read(rep, &deep).unwrap_err().to_string();
                assert!(err.contains("deeper than"), "{what} {rep:?}: {err}");
            }
        }
    });
}

// ---------------------------------------------------------------------------
// (b) Huge counts and array lengths in small streams.

/// Pads a hostile stream's items to about 100 bytes (external form).
fn padded(mut items: Vec<It>) -> Vec<It> {
    let len = body(&items, true).len() + HEADER_LEN;
    items.extend(std::iter::repeat(W(0)).take(100usize.saturating_sub(len) / 4));
    items
}

/// A hostile stream: what it is, its items, the message expected, and
/// whether it parses (only validation refuses it).
type Hostile = (&'static str, Vec<It>, &'static str, bool);

/// Hostile ~100-byte streams.
fn huge_claims() -> Vec<Hostile> {
    let parse_errors: Vec<(&'static str, Vec<It>, &'static str)> = huge_parse_errors();
    let mut v: Vec<Hostile> = parse_errors
        .into_iter()
        .map(|(w, i, e)| (w, i, e, false))
        .collect();
    let t40: i64 = 1 << 40;
    let wide = |c: u32| W(c | F_WIDE);
    // Counts that size no array are refused by validation when they
    // exceed what the constructor takes (a LARGE node may hold them: MPI
    // builds such a type in constant memory).
    v.push((
        "contiguous of 2^40 without the large flag",
        [vec![wide(CONTIGUOUS), H(t40)], int()].concat(),
        "count 1099511627776 is out of range",
        true,
    ));
    v.push((
        "vector of 2^40 blocks of 2^40 without the large flag",
        [vec![wide(VECTOR), H(t40), H(t40), H(1)], int()].concat(),
        "is out of range",
        true,
    ));
    v
}

fn huge_parse_errors() -> Vec<(&'static str, Vec<It>, &'static str)> {
    let t40: i64 = 1 << 40;
    let wide = |c: u32| W(c | F_WIDE);
    vec![
        (
            "indexed, 2^40 blocks",
            vec![wide(INDEXED), H(t40)],
            "a count 1099511627776 needs at least 17592186044416 more bytes",
        ),
        (
            "hindexed, 2^40 blocks",
            vec![wide(HINDEXED), H(t40)],
            "needs at least",
        ),
        (
            "struct, 2^40 members",
            vec![wide(STRUCT), H(t40)],
            "needs at least",
        ),
        (
            "indexed_block, 2^40 blocks",
            vec![wide(INDEXED_BLOCK), H(t40)],
            "needs at least",
        ),
        (
            "hindexed_block, 2^40 blocks",
            vec![wide(HINDEXED_BLOCK), H(t40)],
            "needs at least",
        ),
        (
            "subarray, 2^40 dimensions",
            vec![wide(SUBARRAY), H(t40)],
            "ndims 1099511627776 needs at least",
        ),
        (
            "darray, 2^40 dimensions",
            vec![wide(DARRAY), H(4), H(0), H(t40)],
            "ndims 1099511627776 needs at least",
        ),
        (
            "indexed, i64::MAX blocks",
            vec![wide(INDEXED), H(i64::MAX)],
            "needs at least",
        ),
        (
            "indexed, -2^62 blocks",
            vec![wide(INDEXED), H(-(1 << 62))],
            "is negative",
        ),
        (
            "struct, 2^31-1 members",
            vec![W(STRUCT), W(i32::MAX as u32)],
            "needs at least",
        ),
        (
            "MPI-1 struct, 2^31-1 members",
            vec![W(STRUCT_INTEGER), W(i32::MAX as u32)],
            "needs at least",
        ),
        (
            "MPI-1 hindexed, 2^31-1 blocks",
            vec![W(HINDEXED_INTEGER), W(i32::MAX as u32)],
            "needs at least",
        ),
        (
            "2^32-1 attributes",
            vec![W(DUP | F_ATTRS), Len(u32::MAX)],
            "attribute count 4294967295 is zero or more than",
        ),
        (
            "an attribute value of 2^30-1 bytes",
            vec![W(DUP | F_ATTRS), W(1), O(b"a".to_vec()), Len((1 << 30) - 1)],
            "truncated stream: an attribute's value",
        ),
        (
            "an attribute value of 2^32-1 bytes",
            vec![W(DUP | F_ATTRS), W(1), O(b"a".to_vec()), Len(u32::MAX)],
            "the length 4294967295 of an attribute's value is not in 0..=1073741823",
        ),
        (
            "a name of 2^32-1 bytes",
            vec![W(DUP | F_NAME), Len(u32::MAX)],
            "the length 4294967295 of a name is not in 1..=127",
        ),
        (
            "a name of 128 bytes",
            vec![W(DUP | F_NAME), Len(MAX_NAME_LEN as u32 + 1)],
            "of a name is not in 1..=127",
        ),
    ]
}

#[test]
fn huge_counts_in_small_streams_are_refused_before_allocating() {
    init();
    for (what, items, expect, parses) in huge_claims() {
        // (A stream that parses is complete: padding would be trailing bytes.)
        let items = if parses { items } else { padded(items) };
        for rep in REPS {
            let bytes = stream(rep, &items);
            if rep == Representation::External {
                assert!(bytes.len() <= 116, "{what}: {} bytes", bytes.len());
            }
            // Whatever is claimed, nothing near it is allocated: the
            // constant alone bounds the decoding.
            let peaks = decode_within(what, rep, &bytes, expect, MEM_CONST, parses);
            if rep != Representation::Compressed {
                // No per-thread zlib state here: a few KiB at most.
                assert!(
                    peaks.iter().all(|&p| p < 64 << 10),
                    "{what} {rep:?}: peaks {peaks:?}"
                );
            }
        }
        // Stored in the compressed representation, as well.
        let ext = external_stream(&items);
        let stored = compressed(MAGIC_STORED, ext.len() as u32, &ext);
        decode_within(
            what,
            Representation::Compressed,
            &stored,
            expect,
            MEM_CONST,
            parses,
        );
    }
}

// ---------------------------------------------------------------------------
// (c) Zlib bombs.

/// A raw deflate stream of `mib` MiB of zeros, about 1 KiB per MiB, built
/// without deflating it all: after a sync flush every block starts on a
/// byte boundary, and a block deflating 1 MiB of zeros after zeros only
/// refers back into zeros, so it can be repeated.
fn zero_bomb(mib: usize) -> Vec<u8> {
    assert!(mib >= 2);
    let chunk = vec![0u8; 1 << 20];
    let mut c = Compress::new(Compression::best(), false);
    let mut out = Vec::new();
    let run = |c: &mut Compress, data: &[u8], flush: FlushCompress, out: &mut Vec<u8>| {
        let start_in = c.total_in();
        loop {
            out.reserve(64 << 10);
            let used = (c.total_in() - start_in) as usize;
            let before = c.total_out();
            c.compress_vec(&data[used..], out, flush).unwrap();
            let done = (c.total_in() - start_in) as usize == data.len();
            if done && c.total_out() == before {
                break;
            }
            if done && out.capacity() > out.len() {
                break;
            }
        }
    };
    run(&mut c, &chunk, FlushCompress::Sync, &mut out);
    let first = out.len();
    run(&mut c, &chunk, FlushCompress::Sync, &mut out);
    let block = out[first..].to_vec();
    for _ in 2..mib {
        out.extend_from_slice(&block);
    }
    run(&mut c, &[], FlushCompress::Finish, &mut out);
    out
}

#[test]
fn zlib_bombs_are_refused_within_their_claim() {
    use std::io::Read;
    init();
    // The construction is sound: 4 MiB of zeros.
    let small = zero_bomb(4);
    let mut all = Vec::new();
    flate2::read::DeflateDecoder::new(&small[..])
        .read_to_end(&mut all)
        .unwrap();
    assert_eq!(all.len(), 4 << 20);
    assert!(all.iter().all(|&b| b == 0));

    // 1 GiB of zeros in about 1 MB.
    let bomb = zero_bomb(1024);
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    let c = Representation::Compressed;

    // Claiming 1 MiB: inflation stops right after the varint form of a
    // 1 MiB stream could end (8 + 5 bytes per word).
    let claim = 1 << 20;
    refuse_within(
        "1 GiB bomb claiming 1 MiB",
        c,
        &compressed(MAGIC_DEFLATE, claim, &bomb),
        &format!(
            "expands to more than the {} bytes its length allows",
            varint_len(claim as usize)
        ),
        bound(0) + varint_len(claim as usize),
    );
    // Claiming more than 64 MiB, or more than 64 bytes per payload
    // byte plus 64 KiB: refused unread, whatever the payload.
    for (claim, payload) in [
        (u32::MAX, &bomb[..]),
        (MAX_EXPANDED as u32 + 1, &bomb[..]),
        ((MAX_RATIO * 1000 + RATIO_SLACK + 4) as u32, &bomb[..1000]),
    ] {
        let [p, _] = refuse_within(
            "a bomb claiming too much",
            c,
            &compressed(MAGIC_DEFLATE, claim, payload),
            "claims to expand",
            MEM_CONST,
        );
        assert!(p < 64 << 10, "claim {claim}: {p} bytes spent on a refusal");
    }
    // Claiming 16 MiB (its ~1 MB payload may claim up to 64 MiB): it costs
    // the varint form of the claim, then is refused.
    let claim = 16 << 20;
    refuse_within(
        "1 GiB bomb claiming 16 MiB",
        c,
        &compressed(MAGIC_DEFLATE, claim, &bomb),
        "expands to more than",
        bound(0) + varint_len(claim as usize),
    );
    // The truth about zeros is always too much: 2 MiB of zeros claimed as
    // the stream they encode (about 8 MiB) is over 64 per payload byte.
    let two = zero_bomb(2);
    let truth = 12 + ((2 << 20) - 8) * 4;
    assert!(truth > max_claim(two.len()));
    refuse_within(
        "2 MiB of zeros, claimed truthfully",
        c,
        &compressed(MAGIC_DEFLATE, truth as u32, &two),
        "claims to expand",
        MEM_CONST,
    );
    // Within the ratio, zeros expand, then are no stream: 1000 zero bytes
    // are the varint form of a stream of version 0.
    refuse_within(
        "1000 zeros, claimed",
        c,
        &compressed(MAGIC_DEFLATE, 12 + 992 * 4, &deflate(&[0; 1000])),
        "unsupported format version 0",
        bound(0) + 12 + 992 * 4 + 1000,
    );
}

// ---------------------------------------------------------------------------
// (d) The memory bound over a set of hostile inputs.

/// Hostile inputs that parse far before they fail: (what, items, message).
/// Each is refused at its very end (a trailing word, or a validation rule
/// broken by its last element), so the whole tree is in memory first.
fn late_failures() -> Vec<Hostile> {
    let mut v: Vec<Hostile> = Vec::new();
    let trailing = W(0xdead_beef);

    // A million nested dups: refused at the depth limit.
    v.push((
        "10^6 nested dups",
        nest(1_000_000, &[W(DUP)]),
        "deeper than",
        false,
    ));

    // The costliest description: struct members that are chains of dups
    // (4 bytes of stream per 184-byte node), then a trailing word.
    {
        let members = 5_000;
        let chain = 16;
        let mut it = vec![W(STRUCT), W(members)];
        it.extend((0..2 * members).map(|_| W(0)));
        for _ in 0..members {
            it.extend((0..chain).map(|_| W(DUP)));
            it.extend(int());
        }
        it.push(trailing.clone());
        v.push(("struct of 5000 dup chains", it, "follow the end", false));
    }
    // A wide struct of many predefined members (a node per 24 bytes).
    {
        let members = 50_000u32;
        let mut it = vec![W(STRUCT | F_WIDE), H(members as i64)];
        it.extend((0..members).map(|_| H(1)));
        it.extend((0..members).map(|i| H((i as i64) << 33)));
        for _ in 0..members {
            it.extend(int());
        }
        it.push(trailing.clone());
        v.push(("wide struct of 50000 members", it, "follow the end", false));
    }
    // Long arrays: indexed, subarray and darray whose last element breaks
    // a validation rule.
    {
        let n = 200_000u32;
        let mut it = vec![W(INDEXED), W(n)];
        it.extend((0..n).map(|_| W(1)));
        it.extend((0..n).map(|i| W(if i + 1 == n { 0xffff_fff0 } else { i })));
        it.extend(int());
        it.push(trailing.clone());
        v.push(("indexed of 200000 blocks", it, "follow the end", false));
    }
    {
        let n = 50_000u32;
        let mut it = vec![W(SUBARRAY), W(n)];
        it.extend((0..n).map(|_| W(2)));
        it.extend((0..n).map(|_| W(1)));
        it.extend((0..n).map(|i| W(if i + 1 == n { 2 } else { 0 })));
        it.push(W(0));
        it.extend(int());
        v.push(("subarray of 50000 dimensions", it, "not in 1..=1024", true));
    }
    {
        let n = 40_000u32;
        let mut it = vec![W(DARRAY), W(1), W(0), W(n)];
        it.extend((0..n).map(|_| W(4)));
        it.extend((0..n).map(|_| W(2))); // MPI_DISTRIBUTE_NONE
        it.extend((0..n).map(|_| W(0xffff_ffff))); // default darg
        it.extend((0..n).map(|i| W(if i + 1 == n { 2 } else { 1 })));
        it.push(W(0));
        it.extend(int());
        v.push(("darray of 40000 dimensions", it, "not in 1..=1024", true));
    }
    // Many attributes on one node.
    {
        let n = 20_000u32;
        let mut it = vec![W(DUP | F_ATTRS), W(n)];
        for i in 0..n {
            it.push(O(format!("k{i:08}").into_bytes()));
            it.push(O(vec![7; 5]));
        }
        it.extend(int());
        it.push(trailing.clone());
        v.push(("20000 attributes", it, "follow the end", false));
    }
    // A struct of many members whose last member is at the depth limit.
    {
        let members = 2_000u32;
        let mut it = vec![W(STRUCT), W(members)];
        it.extend((0..2 * members).map(|_| W(1)));
        for _ in 0..members - 1 {
            it.extend([W(CONTIGUOUS), W(3)]);
            it.extend(int());
        }
        it.extend(nest(MAX_DEPTH, &[W(DUP)]));
        v.push((
            "struct whose last member nests too deep",
            it,
            "deeper than",
            false,
        ));
    }
    v
}

#[test]
fn decoding_hostile_inputs_stays_within_the_memory_bound() {
    init();
    let mut report = Vec::new();
    for (what, items, expect, parses) in late_failures() {
        for rep in REPS {
            let bytes = stream(rep, &items);
            let limit = bound_for(rep, &bytes);
            if rep == Representation::Compressed {
                // And relative to the compressed input itself.
                assert!(limit <= bound_for_input(bytes.len()), "{what}");
            }
            let [read_peak, unmarshal_peak] =
                decode_within(what, rep, &bytes, expect, limit, parses);
            report.push(format!(
                "{what:45} {rep:10?} {:>8} bytes (expands to {:>8}): read {:>9}, unmarshal {:>9} bytes, {:5.1} per byte",
                bytes.len(),
                expanded_len(rep, &bytes),
                read_peak,
                unmarshal_peak,
                read_peak.max(unmarshal_peak) as f64 / bytes.len() as f64
            ));
        }
    }
    // Shown with --nocapture.
    for line in report {
        println!("{line}");
    }
}

/// Amplification is bounded relative to the compressed input: a struct of
/// 200,000 members deflates to a few KiB, which may not claim its 2.4 MB
/// external stream (over 64 bytes per payload byte plus 64 KiB), so it is
/// refused unread; a writer stores such a stream instead, and the stored
/// form is read within the bound on its own length.
#[test]
fn compressed_amplification_is_bounded_by_the_input() {
    init();
    let members = 200_000u32;
    let mut it = vec![W(STRUCT), W(members)];
    it.extend((0..2 * members).map(|_| W(0)));
    for _ in 0..members {
        it.extend(int());
    }
    it.push(W(0));
    let ext = external_stream(&it);
    let deflated = deflate(&varints(&ext));
    let [p, _] = refuse_within(
        "deflated struct of 200000 members",
        Representation::Compressed,
        &compressed(MAGIC_DEFLATE, ext.len() as u32, &deflated),
        "claims to expand",
        MEM_CONST,
    );
    assert!(p < 64 << 10, "{p} bytes spent on a refusal");
    let bytes = stream(Representation::Compressed, &it);
    assert_eq!(bytes[..4], MAGIC_STORED.to_be_bytes());
    let [peak, _] = refuse_within(
        "compressed struct of 200000 members",
        Representation::Compressed,
        &bytes,
        "follow the end",
        bound_for(Representation::Compressed, &bytes),
    );
    println!(
        "compressed struct of {members} members: {} bytes, expands to {}, peak {peak} bytes ({:.0} per input byte)",
        bytes.len(),
        expanded_len(Representation::Compressed, &bytes),
        peak as f64 / bytes.len() as f64
    );
}
