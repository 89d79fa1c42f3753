//! The compressed representation: the external stream with its words
//! turned into varints (most fields are small numbers in 4-byte XDR
//! words), written as is when small, else deflated (raw deflate, zlib's
//! algorithm through `flate2`), whichever of the varint form, its deflated
//! form and the external stream stored as is is smallest. It stays
//! portable, and is never more than 8 bytes larger than the external
//! stream. Compressor state is kept per thread and reset, not rebuilt, for
//! each call (zlib's set-up dominated the paper's compressed times for
//! small types), and the last few streams compressed on a thread are
//! remembered, so that a repeated marshal does not deflate again.
//! spec/compressed.md gives the bytes.

use crate::error::{Error, Result};
use crate::format::external;
use crate::format::sink::Sink;
use crate::scratch::with_buffer;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// Version 4's magic words ("MXC" and the form's letter), each 3 bits
/// from every magic word of version 3 ("MXD" and the same letters). A
/// version-4 stream ends with the CRC-32C of every byte before it.
/// "MXCV": the deflated varint form of a checksummed external stream
/// (without its checksum) follows the length word.
pub const MAGIC_DEFLATE: u32 = 0x4d58_4356;
/// "MXCS": the (checksummed) external stream follows the length word.
pub const MAGIC_STORED: u32 = 0x4d58_4353;
/// "MXCP": the varint form follows the magic word, with no length word.
pub const MAGIC_VARINTS: u32 = 0x4d58_4350;
/// Version 3's magic words, still read (no checksum; their external
/// stream is of version 4, "MXDT").
pub const MAGIC_DEFLATE_V3: u32 = 0x4d58_4456;
pub const MAGIC_STORED_V3: u32 = 0x4d58_4453;
pub const MAGIC_VARINTS_V3: u32 = 0x4d58_4450;
/// The checksum's length, at the end of a version-4 stream.
pub const CHECKSUM_LEN: usize = 4;
/// "MXDZ": version 1's deflated form (the external stream deflated without
/// the varint step); refused with a message that says so.
pub const MAGIC_DEFLATE_V1: u32 = 0x4d58_445a;
/// Varint forms of at most this many bytes are written as MXDP without
/// trying deflate, which costs microseconds and rarely helps there.
pub const SMALL_VARINTS: usize = 96;
pub const HEADER_LEN: usize = 8;
const MAGIC_LEN: usize = 4;
/// The largest external stream a compressed stream may expand to.
pub const MAX_EXPANDED: usize = 64 << 20;
/// A deflated stream of `n` payload bytes may expand to an external stream
/// of at most `MAX_RATIO * n + RATIO_SLACK` bytes; writers store what
/// deflate would compress further. This keeps what a reader spends
/// proportional to its input (spec/compressed.md §3).
pub const MAX_RATIO: usize = 64;
pub const RATIO_SLACK: usize = 64 << 10;

/// The external stream's header: its magic word, implied by MXDV, and its
/// version and hash, copied as they are.
const EXT_MAGIC_LEN: usize = 4;
const EXT_HEADER_LEN: usize = crate::format::external::HEADER_LEN;

/// The most bytes the varint form of an external stream of `len` bytes
/// takes: its 8 header bytes, then at most 5 bytes per word.
fn max_varint_len(len: usize) -> usize {
    EXT_HEADER_LEN - EXT_MAGIC_LEN + (len - EXT_HEADER_LEN) / 4 * 5
}

/// The largest external stream a deflated payload of `n` bytes may claim.
pub fn max_claim(n: usize) -> usize {
    MAX_EXPANDED.min(n.saturating_mul(MAX_RATIO).saturating_add(RATIO_SLACK))
}

/// The varint form of an external stream (spec/compressed.md §2): its
/// version and hash bytes, then each later big-endian word as an unsigned
/// LEB128 number. Public so that tests can build streams by hand.
pub fn to_varints(external: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&external[EXT_MAGIC_LEN..EXT_HEADER_LEN]);
    for w in external[EXT_HEADER_LEN..].chunks_exact(4) {
        let mut v = u32::from_be_bytes(w.try_into().unwrap());
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
}

/// The inverse of `to_varints`: appends the external stream of `len` bytes
/// to `out`. Errors name the offset in the varint form: for MXDP (`stored`
/// at that offset in the stream), the stream's byte; for MXDV, the offset
/// in the inflated form (the deflate data has no byte that corresponds).
fn from_varints(
    v: &[u8],
    len: usize,
    stored: Option<usize>,
    form: Form,
    out: &mut Vec<u8>,
) -> Result<()> {
    let bad = |at: usize, what: String| match stored {
        Some(base) => Err(Error::corrupt(
            base + at,
            format!("the varint form is invalid: {what}"),
        )),
        None => Err(Error::corrupt(
            HEADER_LEN,
            format!("the inflated varint form is invalid at its byte {at}: {what}"),
        )),
    };
    let head = EXT_HEADER_LEN - EXT_MAGIC_LEN;
    if v.len() < head {
        return bad(v.len(), "it ends inside the header".into());
    }
    out.reserve_exact(len + CHECKSUM_LEN);
    out.extend_from_slice(&form.external_magic().to_be_bytes());
    out.extend_from_slice(&v[..head]);
    let mut i = head;
    for _ in 0..(len - EXT_HEADER_LEN) / 4 {
        let start = i;
        let mut word: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(&b) = v.get(i) else {
                return bad(start, "it ends inside a word".into());
            };
            i += 1;
            word |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                // Canonical: no zero high byte, nothing past 32 bits.
                if (b == 0 && i - start > 1) || word > u64::from(u32::MAX) {
                    return bad(start, "a word is not in its one shortest form".into());
                }
                break;
            }
            shift += 7;
            if shift > 28 {
                return bad(start, "a word takes more than 5 bytes".into());
            }
        }
        out.extend_from_slice(&(word as u32).to_be_bytes());
    }
    if i != v.len() {
        return bad(i, format!("{} bytes follow its last word", v.len() - i));
    }
    Ok(())
}

struct Coders {
    compress: Compress,
    decompress: Decompress,
    /// The varint form, between the external stream and deflate.
    varints: Vec<u8>,
}

impl Default for Coders {
    fn default() -> Self {
        Coders {
            compress: Compress::new(Compression::best(), false),
            decompress: Decompress::new(false),
            varints: Vec::new(),
        }
    }
}

thread_local! {
    static CODERS: std::cell::RefCell<Coders> = std::cell::RefCell::new(Coders::default());
}

/// Appends the compressed form of the external stream `external` to `out`.
/// The same input always gives the same bytes; the last `MEMO` inputs of
/// up to `MEMO_AT_MOST` bytes compressed on this thread are remembered, so
/// that compressing one of them again copies its result.
pub fn compress(external: &[u8], out: &mut Sink) -> Result<()> {
    if external.len() <= EXT_MAGIC_LEN + SMALL_VARINTS {
        // A short stream: its varint form is almost always small enough to
        // be written without deflate, which is faster than a lookup.
        return compress_anew(external, out);
    }
    let hit = with_buffer(&MEMOS, |m| {
        let found = m.entries.iter().find(|(e, _)| e.as_slice() == external);
        found.map(|(_, c)| out.put(c)).is_some()
    });
    if hit {
        return Ok(());
    }
    let start = out.len();
    compress_anew(external, out)?;
    if external.len() <= MEMO_AT_MOST {
        with_buffer(&MEMOS, |m| {
            let entry = (external.to_vec(), out.bytes()[start..].to_vec());
            if m.entries.len() < MEMO {
                m.entries.push(entry);
            } else {
                m.entries[m.next] = entry;
                m.next = (m.next + 1) % MEMO;
            }
        });
    }
    Ok(())
}

const MEMO: usize = 8;
const MEMO_AT_MOST: usize = 64 << 10;

/// The last inputs compressed on a thread and their results.
#[derive(Default)]
struct Memos {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// The entry replaced next once all are used.
    next: usize,
}

thread_local! {
    static MEMOS: std::cell::RefCell<Memos> = std::cell::RefCell::new(Memos::default());
}

fn compress_anew(external: &[u8], out: &mut Sink) -> Result<()> {
    let len = u32::try_from(external.len())
        .ok()
        .filter(|&n| n as usize <= MAX_EXPANDED)
        .ok_or_else(|| {
            Error::unsupported(format!(
                "the external stream has {} bytes, more than the compressed representation's limit of {MAX_EXPANDED}",
                external.len()
            ))
        })?;
    let start = out.len();
    let stored = |out: &mut Sink| {
        out.truncate(start);
        out.put(&MAGIC_STORED.to_be_bytes());
        out.put(&len.to_be_bytes());
        out.put(external);
    };
    // Only a checksummed external stream whose checksum holds has a
    // varint form (its checksum is dropped and recomputed when it is
    // expanded); anything else is stored as is.
    let Some(body) = checksummed_body(external) else {
        stored(out);
        external::seal(out, start);
        return Ok(());
    };
    with_buffer(&CODERS, |c| {
        c.varints.clear();
        to_varints(body, &mut c.varints);
        let plain = MAGIC_LEN + c.varints.len();
        let deflated = if c.varints.len() <= SMALL_VARINTS {
            None
        } else {
            out.put(&MAGIC_DEFLATE.to_be_bytes());
            out.put(&(body.len() as u32).to_be_bytes());
            c.compress.reset();
            // Deflate into room the size of the input: if it does not fit,
            // storing is smaller anyway. Totals are counted from here
            // (whatever reset does to them).
            let base = c.compress.total_out();
            let room = out.room(external.len());
            match c.compress.compress(&c.varints, room, FlushCompress::Finish) {
                // Only what a reader accepts (the expansion limit).
                Ok(Status::StreamEnd) => Some((c.compress.total_out() - base) as usize)
                    .filter(|&n| body.len() <= max_claim(n)),
                _ => None,
            }
        };
        // The smallest form; on a tie, the earlier of deflated, varints,
        // stored.
        let stored_len = HEADER_LEN + external.len();
        match deflated {
            Some(n) if HEADER_LEN + n <= plain && HEADER_LEN + n <= stored_len => {
                out.truncate(start + HEADER_LEN + n)
            }
            _ if plain <= stored_len => {
                out.truncate(start);
                out.put(&MAGIC_VARINTS.to_be_bytes());
                out.put(&c.varints);
            }
            _ => stored(out),
        }
        if c.varints.capacity() > 1 << 20 {
            c.varints = Vec::new(); // do not keep a huge buffer per thread
        }
    });
    external::seal(out, start);
    Ok(())
}

/// A checksummed external stream without its checksum, when it has that
/// shape and its checksum holds.
fn checksummed_body(ext: &[u8]) -> Option<&[u8]> {
    if ext.len() < EXT_HEADER_LEN + CHECKSUM_LEN
        || ext.len() % 4 != 0
        || ext[..4] != external::MAGIC.to_be_bytes()
    {
        return None;
    }
    let (body, crc) = ext.split_at(ext.len() - CHECKSUM_LEN);
    (external::checksum(body).to_be_bytes() == crc).then_some(body)
}

/// Which version's forms a stream uses: version 4 ("MXC" magic words,
/// a checksum last, a version-5 external stream inside) or version 3
/// ("MXD", neither).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Checksummed,
    V3,
}

impl Form {
    /// The magic word of the external stream its varint forms expand to.
    fn external_magic(self) -> u32 {
        match self {
            Form::Checksummed => external::MAGIC,
            Form::V3 => external::MAGIC_V4,
        }
    }
}

/// The version-4 magic words, and whether `word` is one of them or one
/// bit away from one: such a stream's checksum is checked first.
const CHECKSUMMED: [u32; 3] = [MAGIC_VARINTS, MAGIC_DEFLATE, MAGIC_STORED];

/// A compressed stream opened: its checksum (if any) verified.
pub struct Opened<'a> {
    /// The stream without its checksum.
    pub body: &'a [u8],
    /// The verified checksum; None for a version-3 stream.
    pub checksum: Option<u32>,
}

/// Checks a compressed stream's checksum (if its magic word says it has
/// one, or is one bit from a word that does), before anything else.
pub fn open(bytes: &[u8]) -> Result<Opened<'_>> {
    let Some(magic) = bytes.get(..MAGIC_LEN) else {
        return Err(Error::truncated(
            "the magic word",
            0,
            MAGIC_LEN,
            bytes.len(),
        ));
    };
    let magic = u32::from_be_bytes(magic.try_into().expect("4 bytes"));
    if !CHECKSUMMED.iter().any(|&m| external::near(magic, m)) {
        return Ok(Opened {
            body: bytes,
            checksum: None,
        });
    }
    if bytes.len() < MAGIC_LEN + CHECKSUM_LEN {
        return Err(Error::truncated(
            "the checksum",
            MAGIC_LEN,
            CHECKSUM_LEN,
            bytes.len() - MAGIC_LEN,
        ));
    }
    let (body, tail) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let stored = u32::from_be_bytes(tail.try_into().expect("4 bytes"));
    let computed = external::checksum(body);
    if stored != computed {
        return Err(Error::Checksum {
            offset: body.len(),
            stored,
            computed,
        });
    }
    Ok(Opened {
        body,
        checksum: Some(stored),
    })
}

/// Expands a compressed stream and runs `f` on the external stream. The
/// checksum, if the stream has one, is checked first; the offsets of
/// `f`'s errors are moved into `bytes` (the expanded offset kept as
/// detail).
pub fn expand<R>(bytes: &[u8], f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
    let opened = open(bytes)?;
    let form = match opened.checksum {
        Some(_) => Form::Checksummed,
        None => Form::V3,
    };
    let bytes = opened.body;
    let magic = u32::from_be_bytes(bytes[..MAGIC_LEN].try_into().expect("checked by open"));
    let (varints, deflate, stored) = match form {
        Form::Checksummed => (MAGIC_VARINTS, MAGIC_DEFLATE, MAGIC_STORED),
        Form::V3 => (MAGIC_VARINTS_V3, MAGIC_DEFLATE_V3, MAGIC_STORED_V3),
    };
    if magic == varints {
        return expand_varints(&bytes[MAGIC_LEN..], form, f);
    }
    if magic != deflate && magic != stored {
        return Err(unknown_magic(magic));
    }
    if bytes.len() < HEADER_LEN {
        return Err(Error::truncated(
            "the compressed header",
            0,
            HEADER_LEN,
            bytes.len(),
        ));
    }
    let len = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let payload = &bytes[HEADER_LEN..];
    if magic == stored {
        if len != payload.len() {
            return Err(Error::corrupt(
                4,
                format!(
                    "the stored stream claims {len} bytes, {} follow",
                    payload.len()
                ),
            ));
        }
        return f(payload).map_err(|e| e.in_compressed(|at| HEADER_LEN + at));
    }
    if len > max_claim(payload.len()) {
        return Err(Error::corrupt(
            4,
            format!(
                "the stream claims to expand to {len} bytes, more than {} (the limit is {MAX_EXPANDED} bytes, and {MAX_RATIO} per compressed byte plus {RATIO_SLACK})",
                max_claim(payload.len())
            ),
        ));
    }
    if len < EXT_HEADER_LEN || len % 4 != 0 {
        return Err(Error::corrupt(
            4,
            format!("the length {len} is not that of an external stream (a multiple of 4, at least {EXT_HEADER_LEN})"),
        ));
    }
    with_buffer(&EXPANDED, |bufs| {
        let (varints, ext) = (&mut bufs.0, &mut bufs.1);
        let r = inflate(payload, max_varint_len(len), varints).and_then(|()| {
            ext.clear();
            from_varints(varints, len, None, form, ext)?;
            add_checksum(form, ext);
            // Deflate data has no byte for each expanded one: its start.
            f(ext).map_err(|e| e.in_compressed(|_| HEADER_LEN))
        });
        for buf in [varints, ext] {
            if buf.capacity() > 1 << 20 {
                *buf = Vec::new(); // do not keep a huge buffer per thread
            }
        }
        r
    })
}

/// Why a magic word is refused.
#[cold]
fn unknown_magic(magic: u32) -> Error {
    if magic == MAGIC_DEFLATE_V1 {
        return Error::corrupt(
            0,
            "a compressed stream of version 1 (\"MXDZ\"), which this library no longer reads",
        );
    }
    Error::corrupt(
        0,
        format!("not an mpix-marshal compressed stream (first word {magic:#010x})"),
    )
}

/// A version-5 external stream expanded from a checksummed form gets its
/// checksum back (the compressed stream's own covered it).
fn add_checksum(form: Form, ext: &mut Vec<u8>) {
    if form == Form::Checksummed {
        let crc = external::checksum(ext);
        ext.extend_from_slice(&crc.to_be_bytes());
    }
}

/// An MXCP or MXDP stream's varint form (after its magic word), expanded. Its
/// length is implied: every varint byte without the high bit ends a word.
fn expand_varints<R>(v: &[u8], form: Form, f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
    let head = EXT_HEADER_LEN - EXT_MAGIC_LEN;
    let words = v.iter().skip(head).filter(|&&b| b & 0x80 == 0).count();
    let len = EXT_HEADER_LEN + 4 * words;
    if len > MAX_EXPANDED {
        return Err(Error::corrupt(
            MAGIC_LEN,
            format!("the varint form holds {words} words, more than the {MAX_EXPANDED}-byte limit allows"),
        ));
    }
    with_buffer(&EXPANDED, |bufs| {
        let ext = &mut bufs.1;
        ext.clear();
        let r = from_varints(v, len, Some(MAGIC_LEN), form, ext).and_then(|()| {
            add_checksum(form, ext);
            f(ext).map_err(|e| e.in_compressed(|at| MAGIC_LEN + varint_offset(v, at)))
        });
        if ext.capacity() > 1 << 20 {
            *ext = Vec::new(); // do not keep a huge buffer per thread
        }
        r
    })
}

/// Where the byte `at` of the expanded external stream comes from in the
/// varint form `v`: its implied magic word at 0, its header bytes as they
/// are, a word's varint; past the last word, the end of `v`.
fn varint_offset(v: &[u8], at: usize) -> usize {
    let head = EXT_HEADER_LEN - EXT_MAGIC_LEN;
    if at < EXT_MAGIC_LEN {
        return 0;
    }
    if at < EXT_HEADER_LEN {
        return at - EXT_MAGIC_LEN;
    }
    let word = (at - EXT_HEADER_LEN) / 4;
    let ends = v
        .iter()
        .enumerate()
        .skip(head)
        .filter(|(_, &b)| b & 0x80 == 0);
    match word.checked_sub(1) {
        None => head.min(v.len()),
        Some(prev) => ends.map(|(i, _)| i + 1).nth(prev).unwrap_or(v.len()),
    }
}

thread_local! {
    /// The inflated varint form and the external stream it becomes.
    static EXPANDED: std::cell::RefCell<(Vec<u8>, Vec<u8>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Inflates `payload` into `out`, which may hold at most `len` bytes.
/// Memory grows with the output actually produced, never past `len` + 1.
fn inflate(payload: &[u8], len: usize, out: &mut Vec<u8>) -> Result<()> {
    with_buffer(&CODERS, |c| {
        let d = &mut c.decompress;
        d.reset(false);
        let base = d.total_in();
        let consumed = |d: &Decompress| (d.total_in() - base) as usize;
        out.clear();
        // One byte more than claimed, to notice a stream that expands further.
        let limit = len + 1;
        let mut pos = 0;
        loop {
            let before_in = consumed(d);
            let before_out = d.total_out();
            // The output window grows by doubling from 4 KiB, up to `limit`:
            // it depends on the output so far, never on the buffer's
            // capacity from earlier calls. (Inflating into all the spare
            // capacity made the error, bad data or too long, depend on
            // what the thread had decoded before: found by fuzzing, issue 5,
            // tests/fuzz_regressions.rs.)
            let end = (pos + pos.max(4096)).min(limit);
            // reserve_exact, not reserve: reserve may double the capacity
            // past `limit`, so that a bomb claiming `len` bytes cost up to
            // 2 * len (issue 5, tests/limits.rs).
            out.reserve_exact(end - out.len());
            out.resize(end, 0);
            let status = d
                // Not `Finish`: that promises room for all the output at once.
                .decompress(
                    &payload[before_in..],
                    &mut out[pos..end],
                    FlushDecompress::None,
                )
                .map_err(|e| {
                    Error::corrupt(HEADER_LEN + before_in, format!("bad deflate data: {e}"))
                })?;
            let produced = (d.total_out() - before_out) as usize;
            pos += produced;
            if pos > len {
                return Err(Error::corrupt(
                    4,
                    format!("the stream expands to more than the {len} bytes its length allows (of varint form)"),
                ));
            }
            match status {
                Status::StreamEnd => break,
                _ if consumed(d) == before_in && produced == 0 && pos < end => {
                    return Err(Error::truncated(
                        "the deflate data",
                        HEADER_LEN + payload.len(),
                        1,
                        0,
                    ));
                }
                _ => {}
            }
        }
        out.truncate(pos);
        let used = consumed(d);
        if used != payload.len() {
            return Err(Error::corrupt(
                HEADER_LEN + used,
                format!(
                    "{} bytes follow the end of the deflate data",
                    payload.len() - used
                ),
            ));
        }
        Ok(())
    })
}
