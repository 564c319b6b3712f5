//! The one random-number generator the algorithms use, always seeded by the caller.
//!
//! PCG-64 (MCG variant, from `rand_pcg`) is used because its output is fixed by its
//! specification, so a seed gives the same decisions on every platform and every build; the
//! `rand` crate provides range sampling on top of it.

use rand::{Rng, RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A small, fast, seeded generator. Never seeded from the OS or a clock.
#[derive(Debug, Clone)]
pub struct SimRng(Pcg64Mcg);

impl SimRng {
    /// A generator whose whole output is a function of `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        SimRng(Pcg64Mcg::seed_from_u64(seed))
    }

    /// A uniformly random `u64`.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniformly random `u16`.
    pub fn next_u16(&mut self) -> u16 {
        self.0.random()
    }

    /// A uniformly random integer in `0..n`; returns 0 when `n` is 0.
    pub fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            self.0.random_range(0..n)
        }
    }

    /// A uniformly random float in `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        self.0.random()
    }
}

/// glibc's `rand()`: the TYPE_3 additive feedback generator that `srand(seed)` / `rand()` use
/// by default (31 words of state, separation 3, 310 outputs discarded after seeding; each
/// output is the new state word shifted right by one). The reference simulator draws
/// LetFlow's paths with `rand() % n` after `srand(RANDOM_SEED)`; this reproduces that
/// sequence exactly.
#[derive(Debug, Clone)]
pub struct GlibcRand {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    /// The generator after `srand(seed)` (seed 0 acts as 1, as in glibc).
    #[must_use]
    pub fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 1 } else { seed };
        let mut state = [0_u32; 31];
        // glibc keeps the seed in an int32_t and steps it by 16807 mod 2^31 - 1 (Schrage).
        let mut word = i64::from(i32::from_ne_bytes(seed.to_ne_bytes()));
        let mut words = state.iter_mut();
        if let Some(first) = words.next() {
            *first = seed;
        }
        for s in words {
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *s = u32::try_from(word).unwrap_or(0);
        }
        let mut g = GlibcRand {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            g.next_rand();
        }
        g
    }

    /// The next `rand()` value, in `0..=0x7fff_ffff`.
    pub fn next_rand(&mut self) -> u32 {
        let rear = self.state.get(self.rear).copied().unwrap_or(0);
        let mut val = 0;
        if let Some(f) = self.state.get_mut(self.front) {
            *f = f.wrapping_add(rear);
            val = *f;
        }
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        val >> 1
    }

    /// `rand() % n`; 0 when `n` is 0.
    pub fn below(&mut self, n: u32) -> u32 {
        let r = self.next_rand();
        r.checked_rem(n).unwrap_or(0)
    }

    /// A [`GlibcRand`] after `srand(seed)` that several owners draw from in turn (the
    /// reference's one process-wide `rand()` stream).
    #[must_use]
    pub fn shared(seed: u32) -> SharedGlibcRand {
        std::sync::Arc::new(std::sync::Mutex::new(GlibcRand::new(seed)))
    }
}

/// One [`GlibcRand`] stream shared by several switches, drawn in call order.
pub type SharedGlibcRand = std::sync::Arc<std::sync::Mutex<GlibcRand>>;

/// `rand() % n` from the shared stream when there is one (quirk `glibc-rand`), else
/// `rng.below(n)`; 0 when `n` is 0.
pub fn below_or_shared(shared: Option<&SharedGlibcRand>, rng: &mut SimRng, n: u32) -> u32 {
    match shared {
        Some(s) => s.lock().map_or(0, |mut g| g.below(n)),
        None => rng.below(n),
    }
}

/// C++'s `std::mt19937` (the 32-bit Mersenne Twister, Matsumoto and Nishimura 1998, seeded
/// as the C++ standard specifies). The REPS artifact's htsim replaces `rand()` and `random()`
/// by `mt19937(seed)() & INT_MAX` on one process-wide stream; [`HtsimRand`] reproduces it.
#[derive(Debug, Clone)]
pub struct Mt19937 {
    state: Box<[u32; 624]>,
    next: usize,
}

impl Mt19937 {
    const N: usize = 624;
    const M: usize = 397;

    /// The generator after `std::mt19937 g(seed)`.
    #[must_use]
    pub fn new(seed: u32) -> Self {
        let mut state = Box::new([0_u32; 624]);
        let mut prev = seed;
        for (i, s) in state.iter_mut().enumerate() {
            if i > 0 {
                // i < 624 fits in a u32
                let i = u32::try_from(i).unwrap_or(0);
                prev = 1_812_433_253_u32
                    .wrapping_mul(prev ^ (prev >> 30))
                    .wrapping_add(i);
            }
            *s = prev;
        }
        Mt19937 {
            state,
            next: Self::N,
        }
    }

    fn twist(&mut self) {
        let s = &mut self.state;
        let word = |s: &[u32; 624], i: usize| s.get(i % Self::N).copied().unwrap_or(0);
        for k in 0..Self::N {
            let y = (word(s, k) & 0x8000_0000) | (word(s, k + 1) & 0x7fff_ffff);
            let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
            let v = word(s, k + Self::M) ^ (y >> 1) ^ mag;
            if let Some(w) = s.get_mut(k) {
                *w = v;
            }
        }
        self.next = 0;
    }

    /// The next 32-bit output.
    pub fn next_u32(&mut self) -> u32 {
        if self.next >= Self::N {
            self.twist();
        }
        let mut y = self.state.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }
}

/// htsim's `random()` as the REPS artifact builds it (its `rng.cpp`): `mt19937(seed)` masked to
/// 31 bits, one stream for the whole process, shared here by the switches that draw from it
/// in simulation order.
#[derive(Debug, Clone)]
pub struct HtsimRand(Mt19937);

impl HtsimRand {
    /// The stream after `srandom(seed)`.
    #[must_use]
    pub fn new(seed: u32) -> Self {
        HtsimRand(Mt19937::new(seed))
    }

    /// The next `random()` value, in `0..=0x7fff_ffff`.
    pub fn random(&mut self) -> u32 {
        self.0.next_u32() & 0x7fff_ffff
    }

    /// Draws and discards `n` values (the draws htsim makes that the model has no use for).
    pub fn skip(&mut self, n: u64) {
        for _ in 0..n {
            self.0.next_u32();
        }
    }
}

/// One [`HtsimRand`] stream shared by several switches, drawn in call order.
pub type SharedHtsimRand = std::sync::Arc<std::sync::Mutex<HtsimRand>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_different_seed_differs() {
        let a: Vec<u64> = (0..8)
            .scan(SimRng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..8)
            .scan(SimRng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..8)
            .scan(SimRng::new(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_handles_zero() {
        let mut r = SimRng::new(1);
        assert_eq!(r.below(0), 0);
        assert!((0..10_000).all(|_| r.below(5) < 5));
    }

    #[test]
    fn glibc_rand_reproduces_srand_rand() {
        // glibc 2.x: srand(1); rand() x5 (srand(0) is srand(1)), srand(2), srand(3).
        let first = |seed: u32| -> Vec<u32> {
            let mut g = GlibcRand::new(seed);
            (0..5).map(|_| g.next_rand()).collect()
        };
        assert_eq!(
            first(1),
            [
                1_804_289_383,
                846_930_886,
                1_681_692_777,
                1_714_636_915,
                1_957_747_793
            ]
        );
        assert_eq!(first(0), first(1));
        assert_eq!(
            first(2),
            [
                1_505_335_290,
                1_738_766_719,
                190_686_788,
                260_874_575,
                747_983_061
            ]
        );
        assert_eq!(
            first(3),
            [
                1_205_554_746,
                483_147_985,
                844_158_168,
                953_350_440,
                612_121_425
            ]
        );
        // the 100,000th value after srand(1), and the sum of the first 100,000 values mod 8
        let mut g = GlibcRand::new(1);
        let v: Vec<u32> = (0..100_000).map(|_| g.next_rand()).collect();
        assert_eq!(v.last().copied(), Some(660_658_275));
        assert_eq!(v.iter().map(|x| u64::from(x % 8)).sum::<u64>(), 351_434);
    }

    #[test]
    fn mt19937_reproduces_std_mt19937() {
        // The C++ standard ([rand.predef]): the 10,000th output of a default-constructed
        // std::mt19937 (seed 5489) is 4123659995.
        let mut g = Mt19937::new(5489);
        let v: Vec<u32> = (0..10_000).map(|_| g.next_u32()).collect();
        assert_eq!(v.first().copied(), Some(3_499_211_612));
        assert_eq!(v.last().copied(), Some(4_123_659_995));
    }

    #[test]
    fn htsim_rand_gives_the_artifacts_switch_salts() {
        // The REPS artifact (htsim_uec -seed 42, the Fig. 2 topology) salts its first three
        // switches' ECMP hashes with its first three random() values: 1608637542,
        // 1273642419, 1935803228 (printed from a debug build of the artifact).
        let mut r = HtsimRand::new(42);
        assert_eq!(
            [r.random(), r.random(), r.random()],
            [1_608_637_542, 1_273_642_419, 1_935_803_228]
        );
        let mut a = HtsimRand::new(42);
        a.skip(2);
        assert_eq!(a.random(), 1_935_803_228);
    }
}
