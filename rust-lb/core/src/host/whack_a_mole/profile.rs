//! The discrete path profile of Whack-a-Mole (M. Luby and J. Byers, "Whack-a-Mole: Deterministic
//! Packet Spraying Across Multiple Network Paths", arXiv:2509.18519): n bins sharing m = 2^ℓ balls
//! with their cumulative counts (§3), the four update embodiments that spread whacked balls with a
//! persistent residual index ρ (§7), the rounding of a schedule step's weights to balls (§8), and
//! the relaxation toward a target used by recovery and the emptying of dead bins (our
//! additions).

use super::config::Redistribution;

/// `weights` rounded to `m` balls: ⌊m·w/Σw⌋ each, then one more for the bins with the largest
/// remainders (ties to the lower index).
#[must_use]
pub fn balls_from_weights(weights: &[f64], log2_m: u32) -> Vec<u32> {
    let m = 1u32 << log2_m.clamp(0, 31);
    let sum: f64 = weights.iter().map(|w| w.max(0.0)).sum();
    if weights.is_empty() || sum <= 0.0 {
        return Profile::uniform(weights.len(), log2_m).balls().to_vec();
    }
    let exact: Vec<f64> = weights
        .iter()
        .map(|w| f64::from(m) * w.max(0.0) / sum)
        .collect();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "each share lies in [0, m] and m ≤ 2^31"
    )]
    let mut balls: Vec<u32> = exact.iter().map(|e| e.floor() as u32).collect();
    let given: u64 = balls.iter().map(|&b| u64::from(b)).sum();
    let mut order: Vec<usize> = (0..balls.len()).collect();
    let rem = |i: usize| exact.get(i).map_or(0.0, |e| e - e.floor());
    order.sort_by(|&a, &b| rem(b).total_cmp(&rem(a)).then(a.cmp(&b)));
    let short = usize::try_from(u64::from(m).saturating_sub(given)).unwrap_or(0);
    for &i in order.iter().take(short) {
        if let Some(b) = balls.get_mut(i) {
            *b += 1;
        }
    }
    balls
}

/// A discrete path profile: n bins sharing m = 2^ℓ balls, with the cumulative counts and the
/// persistent residual index ρ (paper §3 and §7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    balls: Vec<u32>,
    cum: Vec<u32>,
    m: u32,
    residual: usize,
}

impl Profile {
    /// m = 2^`log2_m` balls over `n` bins as evenly as possible: ⌊m/n⌋ each, one more for
    /// each of the first m mod n bins.
    #[must_use]
    pub fn uniform(n: usize, log2_m: u32) -> Self {
        let n = n.max(1);
        let m = 1u32 << log2_m.clamp(0, 31);
        let n32 = u32::try_from(n).unwrap_or(u32::MAX);
        let (q, rem) = (m / n32, m % n32);
        let balls = (0..n32).map(|i| q + u32::from(i < rem)).collect();
        Profile::from_balls(balls, log2_m).unwrap_or_else(|| Profile {
            balls: vec![m],
            cum: vec![m],
            m,
            residual: 0,
        })
    }

    /// A profile with the given counts, or `None` if there are none or they do not sum to
    /// 2^`log2_m`.
    #[must_use]
    pub fn from_balls(balls: Vec<u32>, log2_m: u32) -> Option<Self> {
        let m = 1u32.checked_shl(log2_m)?;
        if balls.is_empty() || balls.iter().map(|&b| u64::from(b)).sum::<u64>() != u64::from(m) {
            return None;
        }
        let mut p = Profile {
            cum: vec![0; balls.len()],
            balls,
            m,
            residual: 0,
        };
        p.recompute();
        Some(p)
    }

    /// b(i) for every bin.
    #[must_use]
    pub fn balls(&self) -> &[u32] {
        &self.balls
    }

    /// c(i) = b(0) + … + b(i) for every bin.
    #[must_use]
    pub fn cumulative(&self) -> &[u32] {
        &self.cum
    }

    /// m.
    #[must_use]
    pub fn total(&self) -> u32 {
        self.m
    }

    /// ρ, the next bin to receive a leftover ball.
    #[must_use]
    pub fn residual_index(&self) -> usize {
        self.residual
    }

    /// The smallest i with c(i−1) ≤ x < c(i).
    #[must_use]
    pub fn path_of(&self, x: u32) -> usize {
        self.cum
            .partition_point(|&c| c <= x)
            .min(self.balls.len().saturating_sub(1))
    }

    /// Replaces the counts by `balls` (same length, summing to m) without allocating;
    /// returns whether it did (false leaves the profile as it was). ρ restarts at 0.
    pub fn set_balls(&mut self, balls: &[u32]) -> bool {
        let sum: u64 = balls.iter().map(|&b| u64::from(b)).sum();
        if balls.len() != self.balls.len() || sum != u64::from(self.m) {
            return false;
        }
        self.balls.copy_from_slice(balls);
        self.residual = 0;
        self.recompute();
        true
    }

    fn recompute(&mut self) {
        let mut acc = 0u32;
        for (c, &b) in self.cum.iter_mut().zip(&self.balls) {
            acc = acc.saturating_add(b);
            *c = acc;
        }
    }

    /// Removes `r` balls (at most all) from bin `i`; returns how many were removed.
    fn take_one(&mut self, i: usize, r: u32) -> u64 {
        self.balls.get_mut(i).map_or(0, |b| {
            let r = r.min(*b);
            *b -= r;
            u64::from(r)
        })
    }

    /// Removes `removal[i]` (at most all) from every bin; returns the total removed.
    pub(super) fn take(&mut self, removal: &[u32]) -> u64 {
        self.balls
            .iter_mut()
            .zip(removal)
            .map(|(b, &r)| {
                let r = r.min(*b);
                *b -= r;
                u64::from(r)
            })
            .sum()
    }

    /// Gives `left` balls one at a time to bins round-robin from ρ, skipping bins for which
    /// `eligible(index, current count)` is false; ρ ends after the last bin served.
    fn round_robin(&mut self, mut left: u64, mut eligible: impl FnMut(usize, u32) -> bool) {
        let n = self.balls.len();
        if n == 0 {
            return;
        }
        // Callers guarantee enough eligible room; the step bound only rules out a hang.
        let mut steps = (left + 1).saturating_mul(n as u64);
        while left > 0 && steps > 0 {
            let i = self.residual % n;
            if let Some(b) = self.balls.get_mut(i) {
                if eligible(i, *b) {
                    *b += 1;
                    left -= 1;
                }
            }
            self.residual = (i + 1) % n;
            steps -= 1;
        }
        if left > 0 {
            debug_assert!(false, "whack-a-mole: {left} balls found no bin");
            if let Some(b) = self.balls.get_mut(self.residual % n) {
                *b += u32::try_from(left).unwrap_or(0);
            }
        }
    }

    /// Spreads `total` balls evenly over the bins `eligible(i)` selects (over all bins if it
    /// selects none): the quotient to each, the remainder round-robin from ρ.
    pub(super) fn spread_even(&mut self, total: u64, eligible: impl Fn(usize) -> bool) {
        let k = (0..self.balls.len()).filter(|&i| eligible(i)).count() as u64;
        let all = k == 0;
        let k = if all { self.balls.len() as u64 } else { k };
        if k == 0 {
            return;
        }
        let q = u32::try_from(total / k).unwrap_or(0);
        for (i, b) in self.balls.iter_mut().enumerate() {
            if all || eligible(i) {
                *b += q;
            }
        }
        self.round_robin(total % k, |i, _| all || eligible(i));
    }

    /// Removes `removal[i]` balls from each bin i (at most all it has) and redistributes them
    /// by embodiment `how`. Keeps Σ b = m; bins only lose what `removal` says.
    pub fn apply(&mut self, removal: &[u32], how: Redistribution) {
        let r_of = |i: usize| removal.get(i).copied().unwrap_or(0);
        match how {
            Redistribution::EvenEach => {
                for (i, &r) in removal.iter().enumerate() {
                    if r > 0 {
                        let taken = self.take_one(i, r);
                        self.spread_even(taken, |_| true);
                    }
                }
            }
            Redistribution::EvenAll => {
                let total = self.take(removal);
                self.spread_even(total, |_| true);
            }
            Redistribution::EvenOthers => {
                let total = self.take(removal);
                self.spread_even(total, |j| r_of(j) == 0);
            }
            Redistribution::Proportional => {
                let total = self.take(removal);
                // m − R balls remain; if none do, nothing is proportional: all go evenly.
                let rest = u64::from(self.m).saturating_sub(total);
                let mut given = 0u64;
                for b in &mut self.balls {
                    let add = (total * u64::from(*b)).checked_div(rest).unwrap_or(0);
                    given += add;
                    *b += u32::try_from(add).unwrap_or(0);
                }
                let none_left = rest == 0;
                self.spread_even(total.saturating_sub(given), |j| !none_left && r_of(j) == 0);
            }
        }
        self.recompute();
    }

    /// Moves every ball of the bins `dead` marks to the others, evenly (the quotient to each,
    /// the remainder round-robin from ρ). Nothing moves if every bin is marked. Returns
    /// whether anything moved.
    pub fn empty_bins(&mut self, dead: &[bool]) -> bool {
        let is_dead = |i: usize| dead.get(i).copied().unwrap_or(false);
        let live = (0..self.balls.len()).any(|i| !is_dead(i));
        let held: u64 = (0..self.balls.len())
            .filter(|&i| is_dead(i))
            .map(|i| u64::from(self.balls.get(i).copied().unwrap_or(0)))
            .sum();
        if !live || held == 0 {
            return false;
        }
        for (i, b) in self.balls.iter_mut().enumerate() {
            if is_dead(i) {
                *b = 0;
            }
        }
        self.spread_even(held, |i| !is_dead(i));
        self.recompute();
        true
    }

    /// Moves `k` balls (at most all it has) from bin `from` to bin `to`.
    pub fn move_balls(&mut self, from: usize, to: usize, k: u32) {
        if to >= self.balls.len() {
            return;
        }
        let k = self.take_one(from, k);
        if let Some(b) = self.balls.get_mut(to) {
            *b += u32::try_from(k).unwrap_or(0);
        }
        self.recompute();
    }

    /// One recovery step toward `target` (same length and total): every bin above target
    /// gives ⌈gain·excess⌉ balls, which go to the bins below target in proportion to their
    /// deficit, never past the target. Returns whether anything moved.
    pub fn relax_toward(&mut self, target: &[u32], gain: f64) -> bool {
        self.relax_toward_where(target, gain, |_| true)
    }

    /// [`Profile::relax_toward`] giving only to the bins `receives(i)` selects: the bins above
    /// target give ⌈gain·excess⌉ each (in index order, at most the selected bins' total
    /// deficit), spread over the selected bins below target in proportion to their deficit.
    pub fn relax_toward_where(
        &mut self,
        target: &[u32],
        gain: f64,
        receives: impl Fn(usize) -> bool,
    ) -> bool {
        let gain = gain.clamp(0.0, 1.0);
        let give_of = |b: u32, t: u32| -> u32 {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "gain in [0, 1] keeps the product in [0, excess]"
            )]
            let g = ((gain * f64::from(b - t)).ceil() as u32).min(b - t);
            g
        };
        let mut deficit = 0u64;
        for (i, (&b, &t)) in self.balls.iter().zip(target).enumerate() {
            if b < t && receives(i) {
                deficit += u64::from(t - b);
            }
        }
        let mut budget = deficit;
        let mut moved = 0u64;
        for (b, &t) in self.balls.iter_mut().zip(target) {
            if *b > t && budget > 0 {
                let give = u64::from(give_of(*b, t)).min(budget);
                *b -= u32::try_from(give).unwrap_or(0);
                budget -= give;
                moved += give;
            }
        }
        if moved == 0 {
            return false;
        }
        let mut given = 0u64;
        for (i, (b, &t)) in self.balls.iter_mut().zip(target).enumerate() {
            if *b < t && receives(i) {
                let room = u64::from(t - *b);
                let add = (moved * room).checked_div(deficit).unwrap_or(0).min(room);
                given += add;
                *b += u32::try_from(add).unwrap_or(0);
            }
        }
        self.round_robin(moved.saturating_sub(given), |i, b| {
            receives(i) && target.get(i).is_some_and(|&t| b < t)
        });
        self.recompute();
        true
    }
}
