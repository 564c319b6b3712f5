//! Loss detection of Whack-a-Mole (M. Luby and J. Byers, "Whack-a-Mole: Deterministic Packet
//! Spraying Across Multiple Network Paths", arXiv:2509.18519, §5): the per-path sequence numbers,
//! kept at the sender instead of in the packet header, so that an answer on a path while earlier
//! numbers of that path are unanswered reports a loss on it; and the stall test of a path that
//! answers nothing (our addition).

use super::config::WhackAMoleConfig;
use crate::host::selector::{Feedback, FeedbackKind, SendCx};
use crate::time::{SimDuration, SimTime};

/// Packets remembered by PSN for the per-path sequence numbers (IRN's default BDP cap is 104
/// packets; an answer whose packet has left the window is not matched).
const SEQ_WINDOW: usize = 256;
/// Send times remembered per path (by per-path sequence number), for the stall test.
const SEND_TIMES: usize = 32;
/// How often the stall test runs over the paths.
const STALL_CHECK: SimDuration = SimDuration::from_ns(2_000);

/// One transmission: its PSN, send time, path and per-path sequence number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct SentRec {
    psn: u32,
    sent: SimTime,
    path: u16,
    seq: u32,
    valid: bool,
    answered: bool,
}

/// Per-path sequence numbers (paper §5), kept by the sender: each transmission on path i gets
/// the next number of path i, remembered with its PSN and send time; the receiver's answer
/// echoes PSN and send time, which name the transmission. Packets on one path arrive in the
/// order they were sent, so an answer for number k on path i while numbers below k on path i
/// are unanswered is a loss on path i. Only valid where every arrival is answered
/// ([`SendCx::every_arrival_answered`]). Allocated once per queue pair.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PathSeqs {
    window: Vec<SentRec>,
    next_seq: Vec<u32>,
    /// Per path, the first number not resolved (answered, declared lost, or hidden by a
    /// retransmission of its PSN).
    expected: Vec<u32>,
    /// Per path, bit j: number `expected + j` is resolved.
    resolved: Vec<u64>,
    /// Per path, SEND_TIMES send times by number modulo SEND_TIMES.
    send_times: Vec<SimTime>,
    /// Per path, the send time of number `expected` (exact while it is unanswered and was
    /// sent when nothing else was outstanding; else from `send_times`, or the oldest time
    /// still there, which errs towards a younger packet: never a false stall).
    oldest_sent: Vec<SimTime>,
    next_check: SimTime,
    active: bool,
    path_seq_loss: bool,
    stall_factor: f64,
    pub(super) losses: u64,
    pub(super) stalls: u64,
}

impl PathSeqs {
    pub(super) fn new(config: &WhackAMoleConfig) -> Self {
        let n = usize::try_from(config.num_paths.clamp(1, 1 << 16)).unwrap_or(1);
        PathSeqs {
            window: vec![SentRec::default(); SEQ_WINDOW],
            next_seq: vec![0; n],
            expected: vec![0; n],
            resolved: vec![0; n],
            send_times: vec![SimTime::ZERO; n * SEND_TIMES],
            oldest_sent: vec![SimTime::ZERO; n],
            next_check: SimTime::ZERO,
            active: false,
            path_seq_loss: config.path_seq_loss,
            stall_factor: config.stall_factor,
            losses: 0,
            stalls: 0,
        }
    }

    pub(super) fn sent(&mut self, cx: &SendCx, path: usize) {
        self.active = cx.every_arrival_answered && (self.path_seq_loss || self.stall_factor > 0.0);
        if !self.active || cx.retransmission {
            // Retransmissions are not numbered: IRN leaves a second copy of a SACKed packet
            // unanswered (within its NACK interval), which would read as a gap. The original's
            // record stays, so its answer, if it comes, still counts.
            return;
        }
        let Some(next) = self.next_seq.get_mut(path) else {
            return;
        };
        let seq = *next;
        *next = next.wrapping_add(1);
        if self.expected.get(path) == Some(&seq) {
            if let Some(t) = self.oldest_sent.get_mut(path) {
                *t = cx.now; // nothing was outstanding on this path
            }
        }
        if let Some(t) = self
            .send_times
            .get_mut(path * SEND_TIMES + seq as usize % SEND_TIMES)
        {
            *t = cx.now;
        }
        let slot = cx.psn.0 as usize % SEQ_WINDOW;
        let old = self.window.get(slot).copied().unwrap_or_default();
        if old.valid && !old.answered && old.psn == cx.psn.0 {
            // A new transmission of this PSN (a go-back) hides the old one's answer: resolve
            // the old one as unknown, never as a loss. (A different PSN in the slot is the
            // window wrapping, SEQ_WINDOW packets later: its number stays unresolved.)
            self.resolve(usize::from(old.path), old.seq, false);
        }
        if let Some(rec) = self.window.get_mut(slot) {
            *rec = SentRec {
                psn: cx.psn.0,
                sent: cx.now,
                path: u16::try_from(path).unwrap_or(u16::MAX),
                seq,
                valid: true,
                answered: false,
            };
        }
    }

    /// Marks number `seq` of `path` resolved; with `answer`, the numbers below it still
    /// unresolved are lost (packets on one path arrive in order). Returns how many were lost.
    fn resolve(&mut self, path: usize, seq: u32, answer: bool) -> u64 {
        let (Some(exp), Some(bits)) = (
            self.expected.get(path).copied(),
            self.resolved.get(path).copied(),
        ) else {
            return 0;
        };
        if seq < exp {
            return 0;
        }
        let mut lost = 0u64;
        let mut exp = exp;
        let mut bits = bits;
        if answer {
            // Everything below seq not yet resolved is lost.
            let below = seq - exp;
            if below >= 64 {
                lost += u64::from(below - 64) + u64::from(64 - bits.count_ones());
                exp = seq;
                bits = 0;
            } else {
                let mask = (1u64 << below) - 1;
                lost += u64::from(below - (bits & mask).count_ones());
                bits |= mask;
            }
        }
        let off = seq - exp;
        if off >= 64 {
            // Far ahead (a go-back resolving a stale number): slide the window up to it.
            exp = seq - 63;
            bits = 0;
        }
        bits |= 1u64 << (seq - exp);
        // Advance over the resolved prefix.
        let run = bits.trailing_ones();
        if run == 64 {
            exp += 64;
            bits = 0;
        } else if run > 0 {
            exp += run;
            bits >>= run;
        }
        if let (Some(e), Some(b)) = (self.expected.get_mut(path), self.resolved.get_mut(path)) {
            *e = exp;
            *b = bits;
        }
        let next = self.next_seq.get(path).copied().unwrap_or(0);
        if exp < next {
            let known = if next - exp <= SEND_TIMES as u32 {
                exp
            } else {
                next - SEND_TIMES as u32
            };
            if let (Some(o), Some(&t)) = (
                self.oldest_sent.get_mut(path),
                self.send_times
                    .get(path * SEND_TIMES + known as usize % SEND_TIMES),
            ) {
                *o = t;
            }
        }
        lost
    }

    /// The path that lost packets according to this answer, if any.
    pub(super) fn answered(&mut self, fb: &Feedback) -> Option<usize> {
        if !self.active || !matches!(fb.kind, FeedbackKind::Ack | FeedbackKind::Nack) {
            return None;
        }
        let rtt = fb.rtt?;
        let slot = fb.psn.0 as usize % SEQ_WINDOW;
        let rec = *self.window.get(slot)?;
        if !rec.valid
            || rec.answered
            || rec.psn != fb.psn.0
            || rec.sent + rtt != fb.now
            || rec.path != fb.entropy.0
        {
            return None; // another transmission of that PSN, a duplicate, or out of the window
        }
        if let Some(r) = self.window.get_mut(slot) {
            r.answered = true;
        }
        let path = usize::from(rec.path);
        let lost = self.resolve(path, rec.seq, true);
        (self.path_seq_loss && lost > 0).then(|| {
            self.losses += lost;
            path
        })
    }

    /// Paths whose oldest unanswered packet is older than `stall_factor` × `rtt_avg_ns`; each
    /// found has its outstanding numbers declared lost. Calls `lost` per path.
    pub(super) fn check_stalls(
        &mut self,
        now: SimTime,
        rtt_avg_ns: Option<f64>,
        mut lost: impl FnMut(usize),
    ) {
        if !self.active || self.stall_factor <= 0.0 || now < self.next_check {
            return;
        }
        self.next_check = now + STALL_CHECK;
        let Some(avg) = rtt_avg_ns else {
            return;
        };
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a positive RTT multiple far below 2^64 ns"
        )]
        let limit = SimDuration::from_ns((self.stall_factor * avg).round() as u64);
        for (path, (exp, &next)) in self.expected.iter_mut().zip(&self.next_seq).enumerate() {
            if *exp >= next {
                continue;
            }
            let sent = self.oldest_sent.get(path).copied().unwrap_or(now);
            if now.saturating_since(sent) > limit {
                self.stalls += 1;
                *exp = next;
                if let Some(b) = self.resolved.get_mut(path) {
                    *b = 0;
                }
                lost(path);
            }
        }
    }
}
