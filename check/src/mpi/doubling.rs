//! The checks' reduction of digests by recursive doubling (MPI's classic
//! small-message allreduce) on the private duplicate, as one schedule of
//! point-to-point steps per rank: run at once (`run`), or posted and
//! advanced while the program goes on (`Posted`: a batch's summary). Both
//! send the same messages in the same order, so a rank running one pairs
//! with a rank running the other.
//!
//! With p the largest power of two not above n, the first 2(n - p) ranks
//! fold in pairs (odd ranks keep the pair's digest), the p remaining ranks
//! exchange with partners at distances 1, 2, 4 …, and the folded ranks
//! get the result back. `digest::combine_all` is commutative and
//! associative, so every rank ends with the same digest.

use super::{ok, post_step, request_null, swap, test_all, wait_all};
use crate::digest;
use crate::sys::*;
use std::ffi::c_int;

/// One step of a rank's doubling, with its peer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    /// Send the words so far (a folded even rank's first step, a folded
    /// odd rank's last).
    Send(usize),
    /// Receive the peer's words and combine them in (a folded odd rank's
    /// first step).
    Gather(usize),
    /// Exchange with the partner and combine (a round of the doubling).
    Swap(usize),
    /// Receive the result (a folded even rank's last step).
    Result(usize),
}

/// Rank `me` of `n`'s steps, in order.
fn schedule(me: usize, n: usize) -> Vec<Step> {
    if n <= 1 {
        return Vec::new();
    }
    let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let rem = n - p;
    let folded = me < 2 * rem;
    if folded && me % 2 == 0 {
        return vec![Step::Send(me + 1), Step::Result(me + 1)];
    }
    let mut steps = Vec::new();
    if folded {
        steps.push(Step::Gather(me - 1));
    }
    let nr = if folded { me / 2 } else { me - rem };
    let mut mask = 1;
    while mask < p {
        let pn = nr ^ mask;
        steps.push(Step::Swap(if pn < rem { 2 * pn + 1 } else { pn + rem }));
        mask <<= 1;
    }
    if folded {
        steps.push(Step::Send(me - 1));
    }
    steps
}

/// The doubling's partners of rank `me` of `n`: the ranks it sends to and
/// the ranks it receives from, one message each per check.
pub(super) fn partners(me: usize, n: usize) -> (Vec<usize>, Vec<usize>) {
    let (mut to, mut from) = (Vec::new(), Vec::new());
    for s in schedule(me, n) {
        match s {
            Step::Send(p) => to.push(p),
            Step::Gather(p) | Step::Result(p) => from.push(p),
            Step::Swap(p) => {
                to.push(p);
                from.push(p);
            }
        }
    }
    (to, from)
}

/// What a completed step leaves in `acc`: the peer's words combined in,
/// or (the result received) this rank's own equality words ANDed in,
/// which a true reduction already holds; from a nonblocking check's rank
/// the result is that rank's own digest, which need not hold this one's.
fn apply(step: Step, mine: &[u64], acc: &mut [u64], got: &[u64]) {
    match step {
        Step::Send(_) => {}
        Step::Gather(_) | Step::Swap(_) => digest::combine_all(got, acc),
        Step::Result(_) => digest::and_in_all(mine, acc),
    }
}

/// The doubling of `mine` (one digest, or a batch: whole digests,
/// combined digest by digest) among the `n` ranks of `dup`, this one
/// `me`, into `acc` (which starts as `mine`; `got` is as long, for the
/// partners' words), each step waited for.
pub(super) fn run(
    dup: MPI_Comm,
    (me, n): (usize, usize),
    tag: c_int,
    mine: &[u64],
    acc: &mut [u64],
    got: &mut [u64],
) -> Result<(), c_int> {
    for step in schedule(me, n) {
        match step {
            Step::Send(p) => swap(dup, p, tag, Some(acc), None)?,
            Step::Gather(p) => swap(dup, p, tag, None, Some(got))?,
            Step::Swap(p) => swap(dup, p, tag, Some(acc), Some(got))?,
            Step::Result(p) => swap(dup, p, tag, None, Some(acc))?,
        }
        apply(step, mine, acc, got);
    }
    Ok(())
}

/// A doubling posted step by step: each step's messages are posted when
/// the one before completes (`advance`, `wait`). Its buffers are on the
/// heap, unmoved while a step is in flight.
pub struct Posted {
    dup: MPI_Comm,
    tag: c_int,
    steps: Vec<Step>,
    /// The step in flight (`steps.len()`: done).
    next: usize,
    mine: Vec<u64>,
    acc: Vec<u64>,
    got: Vec<u64>,
    reqs: [MPI_Request; 2],
}

impl Posted {
    /// Posts the first step of the doubling of `mine` (as `run`).
    pub(super) fn start(
        dup: MPI_Comm,
        (me, n): (usize, usize),
        tag: c_int,
        mine: &[u64],
    ) -> Result<Posted, c_int> {
        let mut p = Posted {
            dup,
            tag,
            steps: schedule(me, n),
            next: 0,
            mine: mine.to_vec(),
            acc: mine.to_vec(),
            got: vec![0; mine.len()],
            reqs: [request_null(), request_null()],
        };
        p.post()?;
        Ok(p)
    }

    /// Posts the messages of the step in flight, if any.
    fn post(&mut self) -> Result<(), c_int> {
        let Some(&step) = self.steps.get(self.next) else {
            return Ok(());
        };
        let (peer, send, recv) = match step {
            Step::Send(p) => (p, Some(&self.acc[..]), None),
            Step::Gather(p) => (p, None, Some(&mut self.got[..])),
            Step::Swap(p) => (p, Some(&self.acc[..]), Some(&mut self.got[..])),
            Step::Result(p) => (p, None, Some(&mut self.acc[..])),
        };
        // SAFETY: the buffers are `self`'s, on the heap, unmoved and
        // untouched until the requests complete (`advance`, `wait`, or
        // left to MPI on drop).
        let rc = unsafe { post_step(self.dup, peer, self.tag, send, recv, &mut self.reqs) };
        ok(rc)
    }

    /// The step in flight completed: its words applied, the next posted.
    fn step_done(&mut self) -> Result<(), c_int> {
        let step = self.steps[self.next];
        apply(step, &self.mine, &mut self.acc, &self.got);
        self.next += 1;
        self.post()
    }

    /// Advances without waiting: true when the doubling is done.
    pub fn advance(&mut self) -> Result<bool, c_int> {
        while self.next < self.steps.len() {
            if !test_all(&mut self.reqs)? {
                return Ok(false);
            }
            self.step_done()?;
        }
        Ok(true)
    }

    /// Waits for the rest (polled when waits are watched): the reduced
    /// words.
    pub fn wait(mut self) -> Result<Vec<u64>, c_int> {
        while self.next < self.steps.len() {
            ok(wait_all(&mut self.reqs))?;
            self.step_done()?;
        }
        Ok(std::mem::take(&mut self.acc))
    }
}

impl Drop for Posted {
    /// Dropped with a step in flight (its wait failed, or the job ends):
    /// MPI may still write or read the buffers, which are left to it.
    fn drop(&mut self) {
        let null = super::bits(request_null());
        if self.reqs.iter().any(|&r| super::bits(r) != null) {
            std::mem::forget(std::mem::take(&mut self.acc));
            std::mem::forget(std::mem::take(&mut self.got));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message is received where it is sent: for each step of one
    /// rank that sends to a peer, that peer has a step that receives from
    /// it, in the same order.
    #[test]
    fn every_send_has_its_receive() {
        for n in 1..=13 {
            for me in 0..n {
                let (to, _) = partners(me, n);
                for peer in to {
                    let (_, from) = partners(peer, n);
                    assert!(from.contains(&me), "n {n}: {me} sends to {peer}");
                }
            }
        }
    }

    /// The doubling of n ranks' words, each rank's schedule played
    /// against mailboxes (sends are buffered, as small messages are),
    /// leaves every rank with the sum of all (the pair-sum word).
    #[test]
    fn every_rank_ends_with_the_whole_reduction() {
        use crate::digest::{AND_WORDS, WORDS};
        for n in 1..=13usize {
            let mine: Vec<Vec<u64>> = (0..n)
                .map(|r| {
                    let mut d = vec![u64::MAX; WORDS];
                    d[AND_WORDS] = 1 << r;
                    d
                })
                .collect();
            let mut acc = mine.clone();
            let steps: Vec<Vec<Step>> = (0..n).map(|r| schedule(r, n)).collect();
            let (mut at, mut sent) = (vec![0usize; n], vec![false; n]);
            let mut mailbox: Vec<Vec<(usize, Vec<u64>)>> = vec![Vec::new(); n];
            for _ in 0..4 * n + 4 {
                for r in 0..n {
                    let Some(&step) = steps[r].get(at[r]) else {
                        continue;
                    };
                    let (peer, sends, receives) = match step {
                        Step::Send(p) => (p, true, false),
                        Step::Swap(p) => (p, true, true),
                        Step::Gather(p) | Step::Result(p) => (p, false, true),
                    };
                    if sends && !sent[r] {
                        mailbox[peer].push((r, acc[r].clone()));
                        sent[r] = true;
                    }
                    let got = if receives {
                        let Some(i) = mailbox[r].iter().position(|(f, _)| *f == peer) else {
                            continue;
                        };
                        mailbox[r].remove(i).1
                    } else {
                        vec![0; WORDS]
                    };
                    if step == Step::Result(peer) {
                        acc[r] = got.clone();
                    }
                    apply(step, &mine[r], &mut acc[r], &got);
                    (at[r], sent[r]) = (at[r] + 1, false);
                }
            }
            for r in 0..n {
                assert_eq!(at[r], steps[r].len(), "n {n}: rank {r} finished");
                assert_eq!(acc[r][AND_WORDS], (1u64 << n) - 1, "n {n}: rank {r}");
            }
        }
    }
}
