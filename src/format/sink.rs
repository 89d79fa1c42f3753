//! Where a stream is written: a byte buffer that only grows, with a write
//! position. Its bytes past the position are kept (zeroed once, when the
//! buffer grew) so that writing a large array costs one pass over it, not a
//! fill followed by a pass. Kept per thread and reused across calls.

#[derive(Default)]
pub struct Sink {
    buf: Vec<u8>,
    len: usize,
}

/// A sink bigger than this is dropped after use rather than kept per thread.
const KEEP_AT_MOST: usize = 1 << 20;

impl Sink {
    /// Starts a new stream.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets what was written after the first `len` bytes.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// The stream written so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Room for `n` more bytes, to be filled completely by the caller.
    pub fn room(&mut self, n: usize) -> &mut [u8] {
        let start = self.len;
        let end = start + n;
        if end > self.buf.len() {
            let mut grown = end.max(2 * self.buf.len()).max(256);
            if end <= KEEP_AT_MOST {
                // Doubling past the size `trim` keeps would make a stream
                // that fits it drop (and zero anew) its buffer every call.
                grown = grown.min(KEEP_AT_MOST);
            }
            self.buf.resize(grown, 0);
        }
        self.len = end;
        &mut self.buf[start..end]
    }

    pub fn put(&mut self, bytes: &[u8]) {
        self.room(bytes.len()).copy_from_slice(bytes);
    }

    /// Releases an unusually large buffer once the caller is done with it.
    pub fn trim(&mut self) {
        if self.buf.len() > KEEP_AT_MOST {
            *self = Sink::default();
        }
    }

    /// Overwrites bytes already written, from `at`.
    pub fn patch(&mut self, at: usize, bytes: &[u8]) {
        self.buf[..self.len][at..at + bytes.len()].copy_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream under the kept size keeps its buffer across calls, even
    /// when its last write would have doubled the buffer past that size
    /// (an indexed type of 100,000 blocks, 800 KB, was zeroing a new
    /// buffer on every marshal).
    #[test]
    fn a_stream_that_fits_keeps_its_buffer() {
        let mut sink = Sink::default();
        for round in 0..3 {
            sink.clear();
            sink.put(&[1; 12]);
            sink.room(800_000).fill(2);
            sink.put(&[3; 4]);
            assert_eq!(sink.len(), 800_016);
            assert!(sink.buf.len() <= KEEP_AT_MOST, "round {round}");
            let before = sink.buf.as_ptr();
            sink.trim();
            assert_eq!(sink.buf.as_ptr(), before, "round {round}: dropped");
        }
        // A larger stream still doubles, and is dropped afterwards.
        sink.clear();
        for _ in 0..(3 << 20) / 4096 {
            sink.put(&[4; 4096]);
        }
        assert_eq!(sink.len(), 3 << 20);
        sink.trim();
        assert_eq!(sink.buf.len(), 0);
    }
}
