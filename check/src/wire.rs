//! The status channel's words (`crate::mpi::channel`): where a rank
//! waits, as it answers a query, in bytes and back (pure).

/// Where a rank waits, as it answers a query.
#[derive(Debug, Clone, Default)]
pub struct Wait {
    /// Its count of blocking calls (a stuck rank answers the same twice).
    pub count: u64,
    /// "MPI_Recv(source 1, tag 0, MPI_COMM_WORLD)".
    pub text: String,
    /// The world ranks that could end the wait.
    pub peers: Vec<i32>,
    /// Why nothing matches, where it can tell.
    pub notes: Vec<String>,
    pub flags: u8,
    /// Where the program made the call (`crate::site::call_site`; "" for none).
    pub site: String,
}

/// A message that matches is pending: the wait ends by itself.
pub const TRANSIENT: u8 = 1;
/// It waits for something the checker cannot follow (a request it did not
/// see made, a matched message's transfer): it may end by itself.
pub const UNKNOWN: u8 = 2;
pub const FINALIZE: u8 = 4;
/// The process runs MPI_THREAD_MULTIPLE: another thread may still send.
pub const THREADS: u8 = 8;
/// A collective check (its peers: the communicator's ranks).
pub const COLLECTIVE: u8 = 16;

impl Wait {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.count.to_le_bytes());
        out.push(self.flags);
        put_str(out, &self.text);
        out.extend_from_slice(&(self.peers.len() as u32).to_le_bytes());
        for p in &self.peers {
            out.extend_from_slice(&p.to_le_bytes());
        }
        out.extend_from_slice(&(self.notes.len() as u32).to_le_bytes());
        for n in &self.notes {
            put_str(out, n);
        }
        put_str(out, &self.site);
    }

    pub fn decode(b: &[u8]) -> Option<Wait> {
        let mut r = Reader(b);
        let count = r.u64()?;
        let flags = r.u8()?;
        let text = r.str()?;
        let n = r.u32()? as usize;
        let mut peers = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            peers.push(r.u32()? as i32);
        }
        let m = r.u32()? as usize;
        let mut notes = Vec::new();
        for _ in 0..m {
            notes.push(r.str()?);
        }
        let site = r.str()?;
        Some(Wait {
            count,
            text,
            peers,
            notes,
            flags,
            site,
        })
    }
}

pub fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

pub struct Reader<'a>(pub &'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    pub fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn str(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        Some(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}
