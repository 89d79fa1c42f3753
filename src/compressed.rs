//! The compressed representation: the external stream, deflated (zlib's
//! raw deflate through `flate2`), or stored as is when deflate does not
//! make it smaller. It stays portable, and is never more than 8 bytes
//! larger than the external stream. Compressor state is kept per thread
//! and reset, not rebuilt, for each call: zlib's set-up dominated the
//! paper's compressed times for small types.

use crate::error::{Error, Result};
use crate::scratch::with_buffer;
use crate::sink::Sink;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// "MXDZ": a deflated external stream follows the length word.
pub const MAGIC_DEFLATE: u32 = 0x4d58_445a;
/// "MXDS": the external stream follows the length word, stored.
pub const MAGIC_STORED: u32 = 0x4d58_4453;
pub const HEADER_LEN: usize = 8;
/// The largest external stream a compressed stream may expand to.
pub const MAX_EXPANDED: usize = 64 << 20;
/// Deflate never expands a byte of input to more than this many bytes of
/// output (a 258-byte match in at least 2 bits), so a stream whose length
/// word claims more than this times its payload is refused unread.
pub const MAX_RATIO: usize = 1032;

struct Coders {
    compress: Compress,
    decompress: Decompress,
}

impl Default for Coders {
    fn default() -> Self {
        Coders {
            compress: Compress::new(Compression::best(), false),
            decompress: Decompress::new(false),
        }
    }
}

thread_local! {
    static CODERS: std::cell::RefCell<Coders> = std::cell::RefCell::new(Coders::default());
}

/// Appends the compressed form of the external stream `external` to `out`.
pub fn compress(external: &[u8], out: &mut Sink) -> Result<()> {
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
    out.put(&MAGIC_DEFLATE.to_be_bytes());
    out.put(&len.to_be_bytes());
    // Deflate into room the size of the input: if it does not fit, storing
    // is smaller anyway.
    let deflated = with_buffer(&CODERS, |c| {
        c.compress.reset();
        // Totals are counted from here (whatever reset does to them).
        let base = c.compress.total_out();
        let room = out.room(external.len());
        match c.compress.compress(external, room, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => Some((c.compress.total_out() - base) as usize),
            _ => None,
        }
    });
    match deflated {
        Some(n) if n < external.len() => out.truncate(start + HEADER_LEN + n),
        _ => {
            out.truncate(start);
            out.put(&MAGIC_STORED.to_be_bytes());
            out.put(&len.to_be_bytes());
            out.put(external);
        }
    }
    Ok(())
}

/// Expands a compressed stream and runs `f` on the external stream.
pub fn expand<R>(bytes: &[u8], f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
    if bytes.len() < HEADER_LEN {
        return Err(Error::Truncated {
            what: "the compressed header",
            offset: 0,
            needed: HEADER_LEN,
            left: bytes.len(),
        });
    }
    let magic = u32::from_be_bytes(bytes[..4].try_into().unwrap());
    let len = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let payload = &bytes[HEADER_LEN..];
    match magic {
        MAGIC_STORED => {
            if len != payload.len() {
                return Err(Error::corrupt(
                    4,
                    format!(
                        "the stored stream claims {len} bytes, {} follow",
                        payload.len()
                    ),
                ));
            }
            f(payload)
        }
        MAGIC_DEFLATE => {
            if len > MAX_EXPANDED || len > payload.len().saturating_mul(MAX_RATIO) {
                return Err(Error::corrupt(
                    4,
                    format!(
                        "the stream claims to expand to {len} bytes, more than {} (the limit is {MAX_EXPANDED} bytes, and {MAX_RATIO} per compressed byte)",
                        MAX_EXPANDED.min(payload.len().saturating_mul(MAX_RATIO))
                    ),
                ));
            }
            with_buffer(&EXPANDED, |buf| {
                inflate(payload, len, buf)?;
                let r = f(buf);
                if buf.capacity() > 1 << 20 {
                    *buf = Vec::new(); // do not keep a huge buffer per thread
                }
                r
            })
        }
        _ => Err(Error::corrupt(
            0,
            format!("not an mpix-marshal compressed stream (first word {magic:#010x})"),
        )),
    }
}

thread_local! {
    static EXPANDED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Inflates `payload` into `out`, which ends up exactly `len` bytes long.
/// Memory grows with the output actually produced, never past `len`.
fn inflate(payload: &[u8], len: usize, out: &mut Vec<u8>) -> Result<()> {
    with_buffer(&CODERS, |c| {
        let d = &mut c.decompress;
        d.reset(false);
        let base = d.total_in();
        let consumed = |d: &Decompress| (d.total_in() - base) as usize;
        out.clear();
        // One byte more than claimed, to notice a stream that expands further.
        let limit = len + 1;
        loop {
            let before_in = consumed(d);
            let before_out = out.len();
            if out.capacity() == out.len() {
                // reserve_exact, not reserve: reserve may double the
                // capacity past `limit`, so that a bomb claiming `len`
                // bytes cost up to 2 * len (issue 5, tests/limits.rs).
                out.reserve_exact((out.len().max(4096)).min(limit - out.len()));
            }
            let status = d
                // Not `Finish`: that promises room for all the output at once.
                .decompress_vec(&payload[before_in..], out, FlushDecompress::None)
                .map_err(|e| {
                    Error::corrupt(HEADER_LEN + before_in, format!("bad deflate data: {e}"))
                })?;
            if out.len() > len {
                return Err(Error::corrupt(
                    4,
                    format!("the stream expands to more than the {len} bytes it claims"),
                ));
            }
            match status {
                Status::StreamEnd => break,
                _ if consumed(d) == before_in
                    && out.len() == before_out
                    && out.len() < out.capacity() =>
                {
                    return Err(Error::Truncated {
                        what: "the deflate data",
                        offset: HEADER_LEN + payload.len(),
                        needed: 1,
                        left: 0,
                    });
                }
                _ => {}
            }
        }
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
        if out.len() != len {
            return Err(Error::corrupt(
                4,
                format!("the stream claims {len} bytes but expands to {}", out.len()),
            ));
        }
        Ok(())
    })
}
