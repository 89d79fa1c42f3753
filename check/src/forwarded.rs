//! Waits, before the checker ends the job, until the lines it wrote to
//! stderr have left this process. Under `mpiexec` a rank's stderr is a
//! pipe that the process manager reads and forwards to the user, and an
//! abort ends the forwarding: what the manager has not read yet is lost
//! (MPICH's Hydra drops it). A fixed sleep of 500 ms served before; it
//! was too long on an idle machine (half of each erroneous test run) and
//! not known to be long enough on a loaded one. Reading the pipe's fill
//! level instead waits exactly as long as the manager takes, up to a bound.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// The longest wait for the manager to read the pipe (a manager that
/// does not read for this long is not forwarding).
const MAX: Duration = Duration::from_secs(2);
/// After the pipe is empty: the manager sends what it read to `mpiexec`
/// before it handles this rank's abort (both go through it in order);
/// a moment more for a manager that does not keep that order.
const SETTLE: Duration = Duration::from_millis(50);
/// Where stderr is neither a pipe, a socket nor a file (a terminal):
/// the fixed wait of before.
const UNKNOWN: Duration = Duration::from_millis(500);
/// How often the fill level is read.
const POLL: Duration = Duration::from_millis(1);

/// What this process wrote to stderr has been read by whoever forwards
/// it (or `MAX` passed).
pub fn wait_for_stderr() {
    wait_for(2, MAX);
}

/// What stderr is, as far as waiting for it goes.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// A regular file or nothing: written when `write` returned.
    Written,
    /// A pipe (FIONREAD: bytes not read yet) or a socket (TIOCOUTQ:
    /// bytes not sent yet).
    Queue(libc::Ioctl),
    Unknown,
}

fn kind(fd: RawFd) -> Kind {
    // SAFETY: `stat` is plain integers, for which all zeros is a value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one `stat` through the pointer; fd is only read.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Kind::Written; // closed: nothing to wait for
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => Kind::Written,
        libc::S_IFIFO => Kind::Queue(libc::FIONREAD),
        libc::S_IFSOCK => Kind::Queue(libc::TIOCOUTQ),
        _ => Kind::Unknown,
    }
}

/// Bytes queued on `fd`, or `None` where the kernel does not say.
fn queued(fd: RawFd, request: libc::Ioctl) -> Option<libc::c_int> {
    let mut n: libc::c_int = 0;
    // SAFETY: both requests write one int through the pointer.
    (unsafe { libc::ioctl(fd, request, &mut n) } == 0).then_some(n)
}

fn wait_for(fd: RawFd, max: Duration) {
    let request = match kind(fd) {
        Kind::Written => return,
        Kind::Unknown => return std::thread::sleep(UNKNOWN),
        Kind::Queue(request) => request,
    };
    let until = Instant::now() + max;
    while Instant::now() < until {
        match queued(fd, request) {
            Some(0) => break,
            Some(_) => std::thread::sleep(POLL),
            None => return std::thread::sleep(UNKNOWN),
        }
    }
    std::thread::sleep(SETTLE);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd};

    fn pipe() -> (std::fs::File, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into the array of two.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the descriptors are new and owned by nothing else.
        unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    }

    #[test]
    fn waits_until_the_reader_has_read_the_pipe() {
        let (mut reader, mut writer) = pipe();
        writer.write_all(b"mpix-check: a report\n").unwrap();
        assert_eq!(kind(writer.as_raw_fd()), Kind::Queue(libc::FIONREAD));
        assert_eq!(queued(writer.as_raw_fd(), libc::FIONREAD), Some(21));
        let read_after = Duration::from_millis(300);
        let start = Instant::now();
        let reading = std::thread::spawn(move || {
            std::thread::sleep(read_after);
            let mut line = [0u8; 21];
            reader.read_exact(&mut line).unwrap();
            reader // kept open until joined
        });
        wait_for(writer.as_raw_fd(), Duration::from_secs(10));
        let waited = start.elapsed();
        let _reader = reading.join().unwrap();
        assert!(
            waited >= read_after,
            "returned after {waited:?}, before the read"
        );
        assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    }

    #[test]
    fn an_empty_pipe_waits_only_the_settling_moment() {
        let (_reader, writer) = pipe();
        let start = Instant::now();
        wait_for(writer.as_raw_fd(), Duration::from_secs(10));
        assert!(start.elapsed() < UNKNOWN, "waited {:?}", start.elapsed());
    }

    #[test]
    fn a_pipe_nobody_reads_waits_at_most_the_bound() {
        let (_reader, mut writer) = pipe();
        writer.write_all(b"unread").unwrap();
        let start = Instant::now();
        wait_for(writer.as_raw_fd(), Duration::from_millis(200));
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(200) && waited < Duration::from_secs(5),
            "waited {waited:?}"
        );
    }

    #[test]
    fn a_file_is_written_when_write_returns() {
        let path = std::env::temp_dir().join(format!("mpix-forwarded-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(kind(file.as_raw_fd()), Kind::Written);
        let start = Instant::now();
        wait_for(file.as_raw_fd(), MAX);
        assert!(start.elapsed() < SETTLE);
    }
}
