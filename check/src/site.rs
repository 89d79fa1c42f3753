//! Where the program made a call: its call site from this thread's
//! stack, the report line naming it, and its fixed-size form in the
//! records the ranks exchange (pure: no MPI).

/// "rank 1 called MPI_Irecv; its check ran in MPI_Wait, called from main
/// at a.c:12", or "rank 1 called MPI_Recv from main at a.c:9": the line
/// of `who`'s call `name` whose check ran at `site` (`call_site`).
pub fn site_line(who: &str, name: &str, site: &str) -> String {
    match site.split_once('\t') {
        Some((entry, place)) if !entry.starts_with(name) => {
            format!("{who} called {name}; its check ran in {entry}, called from {place}")
        }
        Some((_, place)) => format!("{who} called {name} from {place}"),
        None => format!("{who} called {name} from {site}"),
    }
}

/// The words of a call site in the slow path's records (256 bytes).
pub const SITE_WORDS: usize = 32;

/// Where the program called the checked MPI function: the outermost
/// `MPI_`/`PMPI_` frame of this thread's stack (the call the check runs in:
/// for a nonblocking call's check, the Wait or Test that completed it) and
/// the frame below it, symbolized ("MPI_Bcast\tmain at errors.c:42" with
/// debug information, the function alone without). Slow path only: a
/// correct call never captures a stack.
pub fn call_site() -> String {
    let text = std::backtrace::Backtrace::force_capture().to_string();
    // Frames: "  N: symbol" then optionally "      at file:line:col".
    let mut frames: Vec<(String, Option<String>)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(loc) = t.strip_prefix("at ") {
            if let Some(f) = frames.last_mut() {
                if f.1.is_none() {
                    f.1 = Some(loc.to_string());
                }
            }
        } else if let Some((num, sym)) = t.split_once(": ") {
            if num.chars().all(|c| c.is_ascii_digit()) {
                frames.push((sym.to_string(), None));
            }
        }
    }
    site_of(&frames)
}

/// The call site among `frames` (innermost first; each a symbol and its
/// "file:line:col"): the outermost `MPI_`/`PMPI_` frame and the one below
/// it, as `call_site` gives it.
fn site_of(frames: &[(String, Option<String>)]) -> String {
    let entry = frames
        .iter()
        .rposition(|(s, _)| s.starts_with("MPI_") || s.starts_with("PMPI_"));
    let Some((sym, loc)) = entry.and_then(|i| frames.get(i + 1)) else {
        return "an unknown place".into();
    };
    let entry = entry.map_or("", |i| frames[i].0.as_str());
    format!("{entry}\t{}", place_text(sym, loc.as_deref()))
}

/// "main at a.c:12" from a symbol and its "file:line:col".
fn place_text(sym: &str, loc: Option<&str>) -> String {
    match loc {
        Some(loc) => {
            // file:line:col, the file without its directories.
            let mut parts = loc.rsplitn(3, ':');
            let (_col, line, file) = (parts.next(), parts.next(), parts.next());
            match (file, line) {
                (Some(f), Some(l)) => {
                    let base = f.rsplit('/').next().unwrap_or(f);
                    format!("{sym} at {base}:{l}")
                }
                _ => format!("{sym} at {loc}"),
            }
        }
        None => sym.to_string(),
    }
}

/// The symbol and "file:line:col" of the instruction at `ip`.
fn symbolize(ip: usize) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    backtrace::resolve(ip as *mut std::ffi::c_void, |s| {
        let name = s.name().map(|n| format!("{n:#}")).unwrap_or_default();
        let loc = s
            .filename()
            .zip(s.lineno())
            .map(|(f, l)| format!("{}:{l}:0", f.display()));
        out.push((name, loc));
    });
    out
}

/// The call sites of the calls recorded to be verified later
/// (`crate::batch`), which must cost next to nothing: the program's
/// return address from the MPI function it called, read from the stack in
/// one load. Where it lies above this function's frame is fixed for a
/// given path through the checker (the wrapper of one MPI function, `key`
/// below `KEYS`), so it is learned from the first two calls of each path
/// (a full capture, symbolized: the return address is the word below the
/// wrapper frame's canonical frame address) and used once both agree and
/// hold the return address; any other path is captured in full every
/// time. 0 when the caller is not found.
#[inline(never)]
pub fn caller(key: usize) -> usize {
    use std::sync::atomic::Ordering::Relaxed;
    let marker = 0usize;
    let base = std::hint::black_box(&marker) as *const usize as usize;
    let Some(slot) = OFFSETS.get(key) else {
        return caller_slowly().map_or(0, |c| c.0);
    };
    let off = slot.load(Relaxed);
    if off > 0 {
        // SAFETY: a word of this thread's stack above this frame, inside
        // the live frames of the MPI call being made: the same path held
        // the return address there on both calls it was learned from.
        return unsafe { *((base + off as usize) as *const usize) };
    }
    let Some((ra, at)) = caller_slowly() else {
        return 0;
    };
    if off != NO_FAST_PATH {
        learn(slot, &FIRST[key], base, ra, at);
    }
    ra
}

thread_local! {
    /// The program's call this thread is in, as `entering` kept it.
    static AT: std::cell::Cell<(&'static str, usize)> = const { std::cell::Cell::new(("", 0)) };
}

/// Keeps the program's call this thread is in (`name`, and its return
/// address by `caller`) until the guard drops, for a check that runs
/// later (the batched point-to-point checks: `entered`). Inlined into the
/// entry function of `name`, so that the path to `caller` is fixed for
/// each name.
#[inline(always)]
pub fn entering(name: &'static str) -> Entered {
    let ra = caller(key_of(name));
    AT.with(|a| a.set((name, ra)));
    Entered
}

/// The call `entering` keeps on this thread while it runs ("", 0: none).
pub fn entered() -> (&'static str, usize) {
    AT.with(|a| a.get())
}

/// While it lives, `entered` names its call.
#[must_use]
pub struct Entered;

impl Drop for Entered {
    fn drop(&mut self) {
        AT.with(|a| a.set(("", 0)));
    }
}

/// The keys of `entering`'s paths: one per name (by its address), after
/// the collective calls' keys.
const NAMED_KEYS: usize = 48;
const FIRST_NAMED_KEY: usize = KEYS - NAMED_KEYS;
#[allow(clippy::declare_interior_mutable_const)] // the array's initializer
const NO_NAME: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static NAMES: [std::sync::atomic::AtomicUsize; NAMED_KEYS] = [NO_NAME; NAMED_KEYS];

/// The path key of `name` (KEYS, no fast path, once all are taken).
fn key_of(name: &'static str) -> usize {
    use std::sync::atomic::Ordering::Relaxed;
    let p = name.as_ptr() as usize;
    for (i, slot) in NAMES.iter().enumerate() {
        let mut q = slot.load(Relaxed);
        if q == 0 {
            // A name seen first: this slot is its, unless another thread
            // took it meanwhile.
            q = match slot.compare_exchange(0, p, Relaxed, Relaxed) {
                Ok(_) => p,
                Err(other) => other,
            };
        }
        if q == p {
            return FIRST_NAMED_KEY + i;
        }
    }
    KEYS
}

/// The paths `caller` knows.
const KEYS: usize = 256;
const NO_FAST_PATH: isize = isize::MIN;
#[allow(clippy::declare_interior_mutable_const)] // the arrays' initializer
const UNSEEN: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);
/// Per path: the return address's offset above `caller`'s frame, once
/// learned (`NO_FAST_PATH`: never); its first measurement.
static OFFSETS: [std::sync::atomic::AtomicIsize; KEYS] = [UNSEEN; KEYS];
static FIRST: [std::sync::atomic::AtomicIsize; KEYS] = [UNSEEN; KEYS];

/// One measurement: the return address `ra` lies at `at` (a stack
/// address above `base`). The first is kept, the second confirms it (or
/// turns the fast path off for this path).
fn learn(
    slot: &std::sync::atomic::AtomicIsize,
    first: &std::sync::atomic::AtomicIsize,
    base: usize,
    ra: usize,
    at: usize,
) {
    use std::sync::atomic::Ordering::Relaxed;
    // SAFETY: `at` is a word of this thread's stack, in the frame of the
    // MPI function being called (the unwinder's frame address).
    let holds = at > base && at % 8 == 0 && unsafe { *(at as *const usize) } == ra;
    let Some(off) = holds.then(|| (at - base) as isize) else {
        slot.store(NO_FAST_PATH, Relaxed);
        return;
    };
    match first.load(Relaxed) {
        0 => first.store(off, Relaxed),
        f if f == off => slot.store(off, Relaxed),
        _ => slot.store(NO_FAST_PATH, Relaxed),
    }
}

/// The return address into the program from the outermost `MPI_`/`PMPI_`
/// frame of this thread's stack, and where it lies on the stack (the word
/// below that frame's canonical frame address, on x86-64; elsewhere the
/// check in `learn` finds no return address there and turns the fast
/// path off).
fn caller_slowly() -> Option<(usize, usize)> {
    let mut frames: Vec<(usize, usize)> = Vec::with_capacity(FRAMES);
    backtrace::trace(|f| {
        frames.push((f.ip() as usize, f.sp() as usize));
        frames.len() < FRAMES
    });
    let outer = frames.iter().rposition(|&(ip, _)| {
        symbolize(ip.saturating_sub(1))
            .iter()
            .any(|(s, _)| s.starts_with("MPI_") || s.starts_with("PMPI_"))
    })?;
    // The caller's stack pointer after the return is the MPI function's
    // canonical frame address: the return address is the word below it.
    let (ra, sp) = *frames.get(outer + 1)?;
    Some((ra, sp.wrapping_sub(8)))
}

/// The call site of a call recorded by `caller`, as `call_site` gives it:
/// the MPI function `name`, a tab, the program's place that called it.
pub fn caller_site(name: &str, ra: usize) -> String {
    let frames = symbolize(ra.saturating_sub(1));
    match frames.last() {
        Some((sym, loc)) if ra != 0 => format!("{name}\t{}", place_text(sym, loc.as_deref())),
        _ => format!("{name}\tan unknown place"),
    }
}

/// How many return addresses `Frames` keeps: the capture's own frames,
/// the wrapper's, and the program's caller, with room for a library
/// between them.
const FRAMES: usize = 24;

/// A call site captured cheaply (return addresses, no symbols) and named
/// only when told (`Frames::site`): for what is kept long and seldom
/// reported, as where each datatype was built.
#[derive(Clone, Debug, Default)]
pub struct Frames(Vec<usize>);

impl Frames {
    pub fn capture() -> Frames {
        let mut ips = Vec::with_capacity(FRAMES);
        backtrace::trace(|f| {
            ips.push(f.ip() as usize);
            ips.len() < FRAMES
        });
        Frames(ips)
    }

    /// Whether nothing was captured (`Frames::default()`: a call the
    /// checker did not trace, as the marshalling library's own).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The call site, as `call_site` gives it (the wrapper's name, a tab,
    /// the caller "main at a.c:12").
    pub fn site(&self) -> String {
        let mut frames: Vec<(String, Option<String>)> = Vec::new();
        for (i, &ip) in self.0.iter().enumerate() {
            // A return address names the instruction after the call.
            let ip = if i == 0 { ip } else { ip.saturating_sub(1) };
            frames.extend(symbolize(ip));
        }
        site_of(&frames)
    }
}

pub fn site_words(site: &str) -> Vec<u64> {
    let mut bytes = site.as_bytes().to_vec();
    bytes.truncate(SITE_WORDS * 8 - 1);
    bytes.resize(SITE_WORDS * 8, 0);
    bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

pub fn site_text(words: &[u64]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}
