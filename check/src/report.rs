//! Reports: the configuration from the environment, the text block on
//! stderr and the JSON line of `MPIX_CHECK_LOG`.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// What happens after a report (`MPIX_CHECK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Report, then the communicator's error handler (the default).
    Fatal,
    /// Report and continue (`MPIX_CHECK=warn`).
    Warn,
    /// No checks at all (`MPIX_CHECK=off`).
    Off,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    /// `MPIX_CHECK_TIMEOUT` seconds (default 60; 0: wait forever).
    pub timeout: Option<Duration>,
    /// `MPIX_CHECK_LOG`: a file that gets one JSON object per finding.
    pub log: Option<String>,
    /// `MPIX_CHECK_VERIFY`: when a collective call is verified.
    pub verify: Verify,
}

/// When the ranks verify a collective call (`MPIX_CHECK_VERIFY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Before the call is made (`immediate`).
    Immediate,
    /// In batches of this many calls (`batched`, the default;
    /// `MPIX_CHECK_BATCH`, default 64): the blocking calls on an
    /// intracommunicator are recorded, and verified together in one
    /// exchange, overlapped with the next batch when the batch is full; at
    /// once at the communicator's next call that is not batched, at its
    /// free and at `MPI_Finalize` (`crate::batch`).
    Batched(usize),
}

/// The batch size when `MPIX_CHECK_BATCH` is unset or not a number in
/// 1..=`MAX_BATCH`.
pub const DEFAULT_BATCH: usize = 64;
pub const MAX_BATCH: usize = 256;

impl Verify {
    /// From `MPIX_CHECK_VERIFY` and `MPIX_CHECK_BATCH`; None when it is
    /// unset, or neither value (said once on stderr): the default.
    fn from_env() -> Option<Verify> {
        let mode = std::env::var("MPIX_CHECK_VERIFY").unwrap_or_default();
        let mode = mode.trim();
        if mode.eq_ignore_ascii_case("immediate") {
            return Some(Verify::Immediate);
        }
        if mode.eq_ignore_ascii_case("batched") {
            return Some(Verify::Batched(batch_size()));
        }
        if !mode.is_empty() {
            eprintln!("mpix-check: MPIX_CHECK_VERIFY={mode} is neither immediate nor batched: the default");
        }
        None
    }

    /// The default with the timeout on: batched, but immediate without
    /// the point-to-point checks (`p2p`): the checker's error handler is
    /// not installed then, and an error MPI raises in a recorded call (a
    /// truncation) would end the job before the batch is verified.
    fn default_for(p2p: bool) -> Verify {
        if p2p {
            Verify::Batched(batch_size())
        } else {
            Verify::Immediate
        }
    }
}

/// `MPIX_CHECK_BATCH`, or `DEFAULT_BATCH` (said once on stderr when it is
/// set to anything but a number in 1..=`MAX_BATCH`).
fn batch_size() -> usize {
    let Ok(text) = std::env::var("MPIX_CHECK_BATCH") else {
        return DEFAULT_BATCH;
    };
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_BATCH).contains(&n) => n,
        _ => {
            eprintln!(
                "mpix-check: MPIX_CHECK_BATCH={text} is not a number from 1 to {MAX_BATCH}: {DEFAULT_BATCH}"
            );
            DEFAULT_BATCH
        }
    }
}

impl Config {
    pub fn from_env() -> Config {
        let mode = match std::env::var("MPIX_CHECK").unwrap_or_default().as_str() {
            "warn" => Mode::Warn,
            "off" | "0" | "no" => Mode::Off,
            _ => Mode::Fatal,
        };
        let secs = std::env::var("MPIX_CHECK_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(60.0);
        let timeout = (secs > 0.0).then(|| Duration::from_secs_f64(secs));
        let log = std::env::var("MPIX_CHECK_LOG")
            .ok()
            .filter(|s| !s.is_empty());
        // The batched mode finds a difference MPI hangs on only by the
        // hang watch: without a timeout it would hang without a report,
        // so each call is verified before it is made then.
        let verify = match (Verify::from_env(), timeout) {
            (_, None) => Verify::Immediate,
            (Some(v), _) => v,
            (None, _) => Verify::default_for(!off_in_env("MPIX_CHECK_P2P")),
        };
        Config {
            mode,
            timeout,
            log,
            verify,
        }
    }
}

pub fn config() -> &'static Config {
    static C: OnceLock<Config> = OnceLock::new();
    C.get_or_init(Config::from_env)
}

/// One finding, as printed and logged.
#[derive(Debug, Clone)]
pub struct Report {
    pub call: String,
    pub comm: String,
    pub seq: u64,
    /// The reporting rank in the communicator.
    pub rank: usize,
    pub size: usize,
    pub kind: &'static str,
    pub summary: String,
    pub details: Vec<String>,
    /// Extra JSON fields (already-encoded values).
    pub fields: Vec<(&'static str, String)>,
}

impl Report {
    /// The block on stderr: every line starts with `mpix-check:`.
    pub fn text(&self) -> String {
        // A point-to-point hang (seq 0) has no call number.
        let at = if self.seq == 0 {
            String::new()
        } else {
            format!(", call #{} there", self.seq)
        };
        let mut s = format!(
            "mpix-check: {} on {}{at}: {} (reported by rank {} of {})\n",
            self.call, self.comm, self.summary, self.rank, self.size
        );
        for d in &self.details {
            s.push_str("mpix-check:   ");
            s.push_str(d);
            s.push('\n');
        }
        s
    }

    /// The one line of a rank whose finding another rank reports
    /// (`reporter`, in the same numbering as `rank`).
    pub fn pointer_text(&self, reporter: usize) -> String {
        format!(
            "mpix-check: rank {} of {} is in the finding on {} on {}, call #{} there, that rank {reporter} reports\n",
            self.rank, self.size, self.call, self.comm, self.seq
        )
    }

    /// Prints `pointer_text`; the JSON line is the reporter's.
    pub fn emit_pointer(&self, reporter: usize) {
        let _ = std::io::stderr()
            .lock()
            .write_all(self.pointer_text(reporter).as_bytes());
    }

    pub fn json(&self, world_rank: i32) -> String {
        let mut s = format!(
            "{{\"tool\":\"mpix-check\",\"world_rank\":{world_rank},\"rank\":{},\"size\":{},\"call\":{},\"comm\":{},\"seq\":{},\"kind\":{},\"summary\":{},\"details\":[{}]",
            self.rank,
            self.size,
            json_str(&self.call),
            json_str(&self.comm),
            self.seq,
            json_str(self.kind),
            json_str(&self.summary),
            self.details.iter().map(|d| json_str(d)).collect::<Vec<_>>().join(",")
        );
        for (k, v) in &self.fields {
            s.push_str(&format!(",{}:{v}", json_str(k)));
        }
        s.push('}');
        s
    }

    /// Prints the block (one write) and appends the JSON line.
    pub fn emit(&self, world_rank: i32) {
        EMITTED.store(true, Ordering::Relaxed);
        let text = self.text();
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        if let Some(path) = &config().log {
            let line = self.json(world_rank) + "\n";
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
    }
}

static EMITTED: AtomicBool = AtomicBool::new(false);

/// Whether this process has printed a whole report (not only a line
/// pointing at another rank's).
pub fn emitted() -> bool {
    EMITTED.load(Ordering::Relaxed)
}

pub fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether point-to-point checks are on: by default, with the checker
/// on; `MPIX_CHECK_P2P=0` (or `off`, `no`) turns them off.
pub fn p2p_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    !crate::internal::active() && *ON.get_or_init(|| switched_on("MPIX_CHECK_P2P"))
}

/// Whether the checks of datatype arguments (`crate::datatypes`) are on:
/// by default, with the checker on; `MPIX_CHECK_TYPES=0` turns them off
/// (and the list of leaked types with them).
pub fn types_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| switched_on("MPIX_CHECK_TYPES"))
}

/// Whether the list of leaked datatypes at `MPI_Finalize` is on: by
/// default, with the datatype checks on; `MPIX_CHECK_LEAKS=0` turns it
/// off.
pub fn leaks_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| types_enabled() && switched_on("MPIX_CHECK_LEAKS"))
}

/// Whether `MPIX_CHECK_STATS=1` asks each rank to print, at
/// `MPI_Finalize`, what its collective checks cost in messages.
pub fn stats_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        config().mode != Mode::Off
            && std::env::var("MPIX_CHECK_STATS").is_ok_and(|v| v.trim() == "1")
    })
}

/// A part of the checker that is on with the checker unless the variable
/// `name` is `0`, `off`, `no` or `false`.
fn switched_on(name: &str) -> bool {
    config().mode != Mode::Off && !off_in_env(name)
}

/// Whether the variable `name` says off (`0`, `off`, `no`, `false`).
fn off_in_env(name: &str) -> bool {
    let value = std::env::var(name).unwrap_or_default();
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "0" | "off" | "no" | "false"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batched mode is the default only where the checker's error
    /// handler is installed (the point-to-point checks on).
    #[test]
    fn the_default_mode_needs_the_point_to_point_checks() {
        assert!(matches!(Verify::default_for(true), Verify::Batched(_)));
        assert_eq!(Verify::default_for(false), Verify::Immediate);
    }

    #[test]
    fn reports_start_every_line_with_the_tool_name() {
        let r = Report {
            call: "MPI_Bcast".into(),
            comm: "MPI_COMM_WORLD".into(),
            seq: 2,
            rank: 1,
            size: 4,
            kind: "root",
            summary: "the ranks passed different roots".into(),
            details: vec!["ranks 0, 2-3: root 0".into(), "rank 1: root 1".into()],
            fields: vec![],
        };
        let t = r.text();
        assert!(t.lines().all(|l| l.starts_with("mpix-check:")));
        assert!(t.starts_with("mpix-check: MPI_Bcast on MPI_COMM_WORLD, call #2 there"));
        let j = r.json(1);
        assert!(j.starts_with('{') && j.ends_with('}'));
        assert!(j.contains("\"kind\":\"root\""));
        assert_eq!(json_str("a\"b\n"), "\"a\\\"b\\n\"");
    }
}
