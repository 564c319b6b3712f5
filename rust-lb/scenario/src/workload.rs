//! Seeded workload generation: Poisson background traffic (as ConWeave's `traffic_gen.py`) and
//! collectives expanded into flows with `after` dependencies (the Themis paper's §5 for the
//! placement).
//!
//! Everything here is a pure function of its arguments and an explicit seed (PCG-64 MCG from
//! `rand_pcg`, as `rdma_lb_core::rng`), so the same inputs give the same flows on every
//! platform.
//!
//! Poisson generator, following ConWeave's `traffic_gen.py`:
//! * each host is an independent Poisson source with mean inter-arrival
//!   `mean_size · 8 / (host_rate · load)` (exponential draws truncated to whole ns), so the
//!   offered load is `load × host rate` per host, i.e. `load × Σ host rates` in total;
//! * the first arrival is `start + Exp`; destinations are uniform over all other hosts (same
//!   rack allowed, as the reference); sizes are drawn by inverse CDF ([`Cdf::sample`]);
//! * flows are sorted by (start, src).
//!
//! Deviations: every arrival with `start_ns < start + duration` is kept (the reference keeps
//! an arrival only if the *next* one also falls in the window, which drops each host's last
//! flow); each host draws from its own stream derived from (seed, host position), instead of
//! one shared stream interleaved through a heap — same distribution, and adding a host does
//! not reshuffle the others.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::cdf::Cdf;
use crate::model::{Collective, CollectiveKind, Flow, Topology};

/// Derives independent stream seeds from one seed (SplitMix64 finaliser).
#[must_use]
pub fn derive_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15_u64.wrapping_mul(stream.wrapping_add(1)));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Parameters of the Poisson generator.
#[derive(Debug, Clone, PartialEq)]
pub struct PoissonSpec {
    /// Sending/receiving hosts with their NIC rate (bits/s).
    pub hosts: Vec<(u32, u64)>,
    /// Offered load per host NIC, as a fraction of its rate (ConWeave's "host load";
    /// fabric load = host load × oversubscription).
    pub load: f64,
    /// First instant of the window, ns.
    pub start_ns: u64,
    /// Window length, ns.
    pub duration_ns: u64,
    /// Priority group of the flows (3 as in ConWeave).
    pub pg: u32,
    /// Seed of the generator.
    pub seed: u64,
}

/// Generates Poisson flows (ids `0..n` in output order; `after` empty).
/// Returns no flows when there are fewer than two hosts or the load is not positive.
#[must_use]
pub fn poisson_flows(spec: &PoissonSpec, cdf: &Cdf) -> Vec<Flow> {
    let n = spec.hosts.len();
    if n < 2 || spec.load.is_nan() || spec.load <= 0.0 {
        return Vec::new();
    }
    let mean_bits = cdf.mean_bytes() * 8.0;
    let end_ns = spec.start_ns.saturating_add(spec.duration_ns);
    let mut flows = Vec::new();
    for (i, &(src, rate_bps)) in spec.hosts.iter().enumerate() {
        let mut rng = Pcg64Mcg::seed_from_u64(derive_seed(spec.seed, i as u64));
        #[allow(
            clippy::cast_precision_loss,
            reason = "rates are far below 2^53 bits/s"
        )]
        let mean_gap_ns = mean_bits / (rate_bps as f64 * spec.load) * 1e9;
        let mut t_ns = spec.start_ns;
        loop {
            let u: f64 = rng.random();
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "exponential draws are non-negative; truncation to ns as the reference"
            )]
            let gap = (-(1.0 - u).ln() * mean_gap_ns) as u64;
            t_ns = t_ns.saturating_add(gap);
            if t_ns >= end_ns {
                break;
            }
            let k = rng.random_range(0..n - 1);
            let k = if k >= i { k + 1 } else { k };
            let dst = spec.hosts.get(k).map_or(src, |h| h.0);
            let size_bytes = cdf.sample(rng.random());
            flows.push(Flow {
                id: 0,
                src,
                dst,
                pg: spec.pg,
                size_bytes,
                start_ns: t_ns,
                after: Vec::new(),
                compute_after: Vec::new(),
                compute_ns: 0,
                latency_ns: 0,
                after_completion: false,
                after_sent: Vec::new(),
                after_ready: Vec::new(),
                send_latency_ns: 0,
            });
        }
    }
    flows.sort_by_key(|f| (f.start_ns, f.src));
    for (id, f) in flows.iter_mut().enumerate() {
        f.id = u32::try_from(id).unwrap_or(u32::MAX);
    }
    flows
}

/// How ranks of collective groups are placed on hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The Themis paper's §5: each group has one rank under every ToR — rank `t` of group `g` is
    /// the `g`-th host (by id) of the `t`-th ToR (by id).
    OnePerTor,
    /// Group `g` is hosts `g·N .. (g+1)·N` in id order.
    Consecutive,
}

impl Placement {
    /// The placement's name in configs.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Placement::OnePerTor => "one-per-tor",
            Placement::Consecutive => "consecutive",
        }
    }

    /// Parses [`Placement::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Placement::OnePerTor, Placement::Consecutive]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// Assigns `groups` groups of `ranks` hosts each; `Err` says why it does not fit.
///
/// # Errors
/// Not enough hosts (or ToRs, or hosts per ToR) for the request.
pub fn place_ranks(
    topology: &Topology,
    placement: Placement,
    groups: u32,
    ranks: u32,
) -> Result<Vec<Vec<u32>>, String> {
    let hosts = topology.hosts();
    match placement {
        Placement::Consecutive => {
            let need = u64::from(groups) * u64::from(ranks);
            if need > hosts.len() as u64 {
                return Err(format!(
                    "{groups} groups × {ranks} ranks need {need} hosts, the topology has {}",
                    hosts.len()
                ));
            }
            Ok(hosts
                .chunks(ranks.max(1) as usize)
                .take(groups as usize)
                .map(<[u32]>::to_vec)
                .collect())
        }
        Placement::OnePerTor => {
            let mut tors: Vec<(u32, Vec<u32>)> = Vec::new();
            for h in hosts {
                let Some(t) = topology.tor_of(h) else {
                    return Err(format!("host {h} has no link"));
                };
                match tors.iter_mut().find(|(id, _)| *id == t) {
                    Some((_, v)) => v.push(h),
                    None => tors.push((t, vec![h])),
                }
            }
            tors.sort_by_key(|(id, _)| *id);
            if (ranks as usize) > tors.len() {
                return Err(format!(
                    "one-per-tor placement of {ranks} ranks needs {ranks} ToRs, the topology has {}",
                    tors.len()
                ));
            }
            let mut out = Vec::with_capacity(groups as usize);
            for g in 0..groups as usize {
                let mut group = Vec::with_capacity(ranks as usize);
                for (tor, hs) in tors.iter().take(ranks as usize) {
                    let Some(&h) = hs.get(g) else {
                        return Err(format!(
                            "one-per-tor placement of {groups} groups needs {groups} hosts under \
                             every ToR; ToR {tor} has {}",
                            hs.len()
                        ));
                    };
                    group.push(h);
                }
                out.push(group);
            }
            Ok(out)
        }
    }
}

/// One collective operation to expand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveSpec {
    /// Pattern.
    pub kind: CollectiveKind,
    /// Hosts in rank order (at least 2).
    pub ranks: Vec<u32>,
    /// Message size per rank (AllReduce buffer, AlltoAll send buffer, permutation/incast
    /// flow size).
    pub size_bytes: u64,
    /// When the first step may start.
    pub start_ns: u64,
    /// Priority group of the flows.
    pub pg: u32,
    /// Seed (the permutation draws its cycle from it).
    pub seed: u64,
    /// Ring kinds: a rank's steps leave in order (its step-`k` flow also waits for the start
    /// of its own step-`k−1` flow, [`Flow::after_ready`]), as one connection per ring
    /// neighbour carries them in a collective library; off, a step whose input came early may
    /// leave before the rank's step before it.
    pub in_order: bool,
}

/// Expands a collective into flows with ids `first_id..` and its [`Collective`] record.
///
/// * `allreduce-ring`: 2(N−1) steps (reduce-scatter, then all-gather); in each step every rank
///   `r` sends `ceil(size/N)` bytes to rank `(r+1) mod N`; the step-`k` flow of rank `r` lists
///   the step-`k−1` flow *into* rank `r` (from rank `r−1`) in `after`.
///   With [`CollectiveSpec::in_order`] it also lists the rank's own step-`k−1` flow in
///   `after_ready`: its steps leave in order.
/// * `allgather-ring`, `reducescatter-ring`: the same in N−1 steps.
/// * `alltoall`: every rank sends `ceil(size/N)` bytes to each of the other N−1 ranks at once.
/// * `alltoall-pairwise`: the same bytes in N−1 steps; in step `i` (1-based) rank `r` sends to
///   rank `(r+i) mod N`; its step-`i` flow lists its own step-`i−1` flow and the step-`i−1`
///   flow *into* rank `r` (from rank `r−i+1`) in `after`: a step starts once the rank's send
///   and receive of the step before are done, as a pairwise exchange with blocking
///   send/receive pairs does.
/// * `permutation`: every rank sends `size` bytes to its image under a random cyclic
///   permutation (Sattolo's algorithm: no rank sends to itself, every rank receives once).
/// * `incast`: ranks 1..N each send `size` bytes to rank 0.
///
/// Returns `None` if there are fewer than 2 ranks or the kind is not
/// [`CollectiveKind::generated`].
#[must_use]
pub fn expand_collective(
    spec: &CollectiveSpec,
    group: u32,
    first_id: u32,
) -> Option<(Vec<Flow>, Collective)> {
    let n = spec.ranks.len();
    if n < 2 {
        return None;
    }
    let n64 = n as u64;
    let chunk = spec.size_bytes.div_ceil(n64).max(1);
    let mut flows: Vec<Flow> = Vec::new();
    let push = |flows: &mut Vec<Flow>, src: u32, dst: u32, size: u64, after: Vec<u32>| {
        let id = first_id.saturating_add(u32::try_from(flows.len()).unwrap_or(u32::MAX));
        flows.push(Flow {
            id,
            src,
            dst,
            pg: spec.pg,
            size_bytes: size.max(1),
            start_ns: spec.start_ns,
            after,
            compute_after: Vec::new(),
            compute_ns: 0,
            latency_ns: 0,
            after_completion: false,
            after_sent: Vec::new(),
            after_ready: Vec::new(),
            send_latency_ns: 0,
        });
    };
    let rank = |r: usize| spec.ranks.get(r % n).copied().unwrap_or(0);
    match spec.kind {
        CollectiveKind::AllreduceRing
        | CollectiveKind::AllgatherRing
        | CollectiveKind::ReducescatterRing => {
            let steps = if spec.kind == CollectiveKind::AllreduceRing {
                2 * (n - 1)
            } else {
                n - 1
            };
            let id_of = |k: usize, r: usize| {
                first_id.saturating_add(u32::try_from(k * n + r).unwrap_or(u32::MAX))
            };
            for k in 0..steps {
                for r in 0..n {
                    let after = if k == 0 {
                        Vec::new()
                    } else {
                        vec![id_of(k - 1, (r + n - 1) % n)]
                    };
                    push(&mut flows, rank(r), rank(r + 1), chunk, after);
                    if spec.in_order && k > 0 {
                        if let Some(f) = flows.last_mut() {
                            f.after_ready = vec![id_of(k - 1, r)];
                        }
                    }
                }
            }
        }
        CollectiveKind::Alltoall => {
            for r in 0..n {
                for i in 1..n {
                    push(&mut flows, rank(r), rank(r + i), chunk, Vec::new());
                }
            }
        }
        CollectiveKind::AlltoallPairwise => {
            // Flow of step `i` (1-based) from rank `r`: index (i−1)·N + r.
            let id_of = |i: usize, r: usize| {
                first_id.saturating_add(u32::try_from((i - 1) * n + r).unwrap_or(u32::MAX))
            };
            for i in 1..n {
                for r in 0..n {
                    let after = if i == 1 {
                        Vec::new()
                    } else {
                        let from = (r + n - (i - 1)) % n;
                        vec![id_of(i - 1, r), id_of(i - 1, from)]
                    };
                    push(&mut flows, rank(r), rank(r + i), chunk, after);
                }
            }
        }
        CollectiveKind::Permutation => {
            let mut perm: Vec<usize> = (0..n).collect();
            let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
            // Sattolo: a uniformly random n-cycle.
            for i in (1..n).rev() {
                let j = rng.random_range(0..i);
                perm.swap(i, j);
            }
            for (r, &p) in perm.iter().enumerate() {
                push(&mut flows, rank(r), rank(p), spec.size_bytes, Vec::new());
            }
        }
        CollectiveKind::Incast => {
            for r in 1..n {
                push(&mut flows, rank(r), rank(0), spec.size_bytes, Vec::new());
            }
        }
        CollectiveKind::AllreduceNvls => return None,
    }
    let collective = Collective {
        group,
        kind: spec.kind,
        flow_ids: flows.iter().map(|f| f.id).collect(),
    };
    Some((flows, collective))
}
