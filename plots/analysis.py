"""Slowdown statistics as ConWeave's fctAnalysis.py computes them, and CCT.

Defaults reproduce the reference; each quirk has a switch (see plots/README.md):
* flows are kept when start > start_after and start + fct < finish_before (both optional here);
* flows are sorted by size (ties keep file order, or with ``ties="reference"`` fctAnalysis's
  order, which makes the buckets independent of file order) and the single largest is dropped
  per run (``drop_largest=True``, the reference's ``split('\\n')[:-2]``);
* 20 buckets of 5 % of the flows each, by count in size order: bucket i holds sorted flows
  [i*n//20, (i+1)*n//20); its label is the largest size in it; its percentiles are index-based,
  ``a[int(len(a) * p)]`` on the sorted slowdowns (the reference's get_pctl);
* overall groups ("all", "<1BDP" = size < bdp, ">=1BDP") use numpy's linearly interpolated
  percentiles, BDP 104000 B (leaf-spine) by default.
"""

from dataclasses import dataclass

import numpy as np

from .io import Flows
from .slowdown import ideal_fct_ns

PERCENTILES = (0.50, 0.95, 0.99, 0.999)
STAT_NAMES = ("avg", "p50", "p95", "p99", "p999")
DEFAULT_BDP_BYTES = 104_000


def recompute_ideal(flows, variant, hosts_per_tor, link_delay_ns=1000, bw_gbps=100.0):
    """Replace the recorded ideal FCTs by :func:`plots.slowdown.ideal_fct_ns` of ``variant`` on a
    2-tier leaf-spine: hosts are nodes 0.. with ``hosts_per_tor`` per ToR (ConWeave numbering);
    same ToR = 2 links, else 4."""
    same_tor = (flows.src // hosts_per_tor) == (flows.dst // hosts_per_tor)
    ideal = np.array([ideal_fct_ns(int(s), 2 if same else 4, link_delay_ns, bw_gbps, variant)
                      for s, same in zip(flows.size, same_tor)], dtype=float)
    return Flows(flows.size, flows.start_ns, flows.fct_ns, ideal, flows.src, flows.dst)


def window_mask(flows, start_after_ns=None, finish_before_ns=None):
    """True for the flows fctAnalysis keeps: start > start_after and start + fct < finish_before."""
    mask = np.ones(len(flows), dtype=bool)
    if start_after_ns is not None:
        mask &= flows.start_ns > start_after_ns
    if finish_before_ns is not None:
        mask &= flows.start_ns + flows.fct_ns < finish_before_ns
    return mask


def filter_flows(flows, start_after_ns=None, finish_before_ns=None):
    return flows.select(window_mask(flows, start_after_ns, finish_before_ns))


SIZE_TIES = ("file", "reference")


def sort_by_size(flows, drop_largest=True, ties="file"):
    """Flows in ascending size order; without the largest one if ``drop_largest``.

    Equal sizes keep file order (``ties="file"``) or take fctAnalysis's order (``"reference"``):
    its ``sort -n -k 2`` of awk's ``"slowdown size"`` lines breaks ties by comparing whole lines
    byte by byte, i.e. by the slowdown as awk prints it (``%.6g``) compared as text ("10.5" <
    "2"). That order reproduces the reference's bucket rows exactly and does not depend on the
    order in which a simulator writes its flows."""
    if ties not in SIZE_TIES:
        raise ValueError(f"ties must be one of {SIZE_TIES}, got {ties!r}")
    if ties == "reference" and len(flows):
        printed = np.array(["%.6g" % v for v in flows.slowdown])
        order = np.lexsort((printed, flows.size))
    else:
        order = np.argsort(flows.size, kind="stable")
    if drop_largest and len(order):
        order = order[:-1]
    return flows.select(order)


def index_percentile(sorted_values, p):
    """The reference's percentile: ``a[int(len(a) * p)]`` of an ascending array."""
    return float(sorted_values[int(len(sorted_values) * p)])


@dataclass
class Stats:
    label: str  # bucket number ("1".."20") or group name
    size_max: int  # largest flow size in the set (bytes)
    n: int
    avg: float
    p50: float
    p95: float
    p99: float
    p999: float


def _stats(label, sizes, values, interpolated):
    if len(values) == 0:
        return Stats(label, 0, 0, *([float("nan")] * 5))
    v = np.sort(values)
    if interpolated:
        pct = [float(np.percentile(v, p * 100)) for p in PERCENTILES]
    else:
        pct = [index_percentile(v, p) for p in PERCENTILES]
    return Stats(label, int(np.max(sizes)), len(v), float(np.mean(v)), *pct)


def bucket_stats(sorted_flows, n_buckets=20):
    """Per-bucket slowdown stats of size-sorted flows (count-quantile buckets, reference style).
    Empty buckets (fewer flows than buckets) are omitted."""
    n = len(sorted_flows)
    sd = sorted_flows.slowdown if n else np.array([])
    out = []
    for i in range(n_buckets):
        lo, hi = i * n // n_buckets, (i + 1) * n // n_buckets
        if hi > lo:
            out.append(_stats(str(i + 1), sorted_flows.size[lo:hi], sd[lo:hi], interpolated=False))
    return out


def group_stats(flows, bdp_bytes=DEFAULT_BDP_BYTES):
    """"all", "<1BDP" and ">=1BDP" slowdown stats (interpolated percentiles)."""
    sd = flows.slowdown if len(flows) else np.array([])
    small = flows.size < bdp_bytes
    return [
        _stats("all", flows.size, sd, True),
        _stats("<1BDP", flows.size[small], sd[small], True),
        _stats(">=1BDP", flows.size[~small], sd[~small], True),
    ]


def cdf_points(values, max_points=3000):
    """(x, F) of the empirical CDF, F(x_k) = (k+1)/n on sorted x. Down-sampled for large n:
    evenly spaced ranks plus every rank of the top 1 % (to keep the tail exact up to max_points)."""
    v = np.sort(np.asarray(values, dtype=float))
    n = len(v)
    if n == 0:
        return v, v
    if n <= max_points:
        idx = np.arange(n)
    else:
        body = np.linspace(0, n - 1, max_points // 2).astype(int)
        tail_start = int(n * 0.99)
        tail = np.linspace(tail_start, n - 1, min(n - tail_start, max_points // 2)).astype(int)
        idx = np.unique(np.concatenate([body, tail, [n - 1]]))
    return v[idx], (idx + 1) / n


@dataclass(frozen=True)
class PreparedRun:
    """One run and its flows as the pooled statistics read them (filtered, size-sorted)."""
    run: object
    flows: Flows


def prepare_runs(runs, start_after_ns=None, finish_before_ns=None, drop_largest=True, ideal=None):
    """Filter and size-sort each run, then pool runs by algorithm (order of first appearance).
    ``ideal`` = None keeps the recorded ideal FCTs, else a dict of :func:`recompute_ideal`'s
    keyword arguments. Returns {algorithm: (Flows sorted by size, [PreparedRun])}: the pooled
    flows give the figures' lines, each run's own flows their seed spread."""
    pooled = {}
    for run in runs:
        flows = run.flows if ideal is None else recompute_ideal(run.flows, **ideal)
        f = sort_by_size(filter_flows(flows, start_after_ns, finish_before_ns), drop_largest)
        pooled.setdefault(run.algorithm, []).append((f, run))
    out = {}
    for algo, items in pooled.items():
        merged = Flows.concat(f for f, _ in items)
        out[algo] = (sort_by_size(merged, drop_largest=False), [PreparedRun(r, f) for f, r in items])
    return out


def bucket_spread(prepared_runs, stat, n_buckets=20):
    """Seed spread of a per-bucket statistic: (min, max) over the runs, bucket by bucket, each
    run bucketed on its own flows (equal-count buckets line up across runs of one workload).
    None with fewer than two runs or a run with fewer flows than buckets."""
    per_run = [bucket_stats(p.flows, n_buckets) for p in prepared_runs]
    if len(per_run) < 2 or any(len(b) != n_buckets for b in per_run):
        return None
    values = np.array([[getattr(b, stat) for b in buckets] for buckets in per_run])
    return values.min(axis=0), values.max(axis=0)


def group_spread(prepared_runs, stat, bdp_bytes=DEFAULT_BDP_BYTES, group="all"):
    """Seed spread of a group statistic: (min, max) over the runs, or None with fewer than two."""
    if len(prepared_runs) < 2:
        return None
    values = [getattr(next(g for g in group_stats(p.flows, bdp_bytes) if g.label == group), stat)
              for p in prepared_runs]
    return min(values), max(values)


def cct_table(collectives):
    """Rows (collective, algorithm, group, cct_ns, slowest): a collective is one input file; the
    CCT of a collective under an algorithm is its slowest group's finish - start, flagged
    slowest = 1 (the first such row on ties). Order of first appearance."""
    by_key = {}
    for c in collectives:
        by_key.setdefault((c.collective, c.algorithm), []).append(c)
    rows = []
    for (coll, algo), items in by_key.items():
        worst = max(range(len(items)), key=lambda i: (items[i].cct_ns, -i))
        for i, c in enumerate(items):
            rows.append((coll, algo, c.group, c.cct_ns, int(i == worst)))
    return rows


def cct_per_algorithm(rows):
    """{algorithm: [CCT of each collective (its slowest group)]} from :func:`cct_table` rows."""
    out = {}
    for coll, algo, _group, cct, slowest in rows:
        if slowest:
            out.setdefault(algo, []).append(cct)
    return out
