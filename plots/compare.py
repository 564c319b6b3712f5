"""Our fct.txt against the reference simulator's, flow for flow (``python -m plots compare``).

* Flows are matched by (src, dst, size, start_ns), not by ports (the simulators may number ports
  differently); flows sharing a key are paired in each side's file order.
* Each side is summarised as its own fctAnalysis.py run would summarise it: the window
  start > sT and start + fct < fT, size order with fctAnalysis's tie order, the largest flow
  dropped (its quirk), "<1BDP" / ">=1BDP" groups with interpolated percentiles and 20 equal-count
  size buckets with the index percentile ``a[int(n·p)]``.
* Per-flow FCT ratios ours / reference are taken over the matched flows whose reference record is
  in the window (no flow dropped there).
* Beside the FCTs, optional whole-run counts (PFC pauses, CNPs) of each side and their ratio; and
  agreement bounds (``--bounds``) checked against all of these by :func:`evaluate_bounds`.
"""

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from . import analysis
from .errors import InputError
from .tables import markdown

NS_PER_MS = 1_000_000
WINDOW_START_MS = 5  # run.py: fctAnalysis -sT = start + 5 ms
WINDOW_END_MS = 50  # run.py: fctAnalysis -fT = stop + 50 ms
N_BUCKETS = 20
RATIO_BANDS = (0.01, 0.05)  # "within ±1 %" and "within ±5 %" of the per-flow FCT ratio
# (group, stat) rows of the summary table; ">=1BDP" is what fct_summary.txt calls ">1BDP".
GROUP_ROWS = (("all", "avg"), ("<1BDP", "avg"), ("<1BDP", "p99"), (">=1BDP", "avg"), (">=1BDP", "p99"))
# --bounds names (in the order they are reported) -> (kind, the whole-run count they need or None):
# "max" bounds |ours/ref - 1| from above, "min" bounds a share of matched flows from below.
BOUNDS = {
    "overall_avg": ("max", None),  # the overall ("all") average slowdown
    "bucket_avg": ("max", None),  # worst of the 20 buckets' average slowdown
    "bucket_p99": ("max", None),  # worst of the 20 buckets' p99 slowdown
    "median": ("max", None),  # the median per-flow FCT ratio
    "within5": ("min", None),  # share of per-flow FCT ratios within ±5 %
    "within1": ("min", None),  # share within ±1 %
    "pfc": ("max", "pfc"),  # PFC pauses
    "cnp": ("max", "cnp"),  # CNPs
}
COUNT_OPTIONS = {"pfc": "--ref-pfc and --ours-pfc", "cnp": "--ref-cnp and --ours-summary"}
# A measured value this close beyond its bound still passes: 103 / 100 - 1 is 0.030000000000000027
# in floating point, and a bound of 0.03 is meant to pass it.
BOUND_SLACK = 1e-12


@dataclass
class Side:
    """One simulator's flows as its fctAnalysis run sees them."""

    n_flows: int  # in the file
    n_window: int  # in the window
    n_analysed: int  # in the window, minus the largest flow
    groups: dict  # label -> analysis.Stats
    buckets: list  # analysis.Stats per size bucket, labels "1".."20"


@dataclass
class Comparison:
    window: tuple  # (start_after_ns, finish_before_ns)
    bdp_bytes: int
    ref: Side
    ours: Side
    n_matched: int
    n_only_ref: int
    n_only_ours: int
    ratios: np.ndarray  # per-flow fct_ours / fct_ref, matched flows with the reference record in the window


def window(ref, start_ns=None, end_ns=None):
    """The analysis window; a missing bound is run.py's, from the reference's flow starts:
    sT = min start floored to the ms + 5 ms, fT = max start ceiled to the ms + 50 ms
    (2.005 s / 2.06 s for flows starting 2.000-2.010 s)."""
    if start_ns is None:
        start_ns = (math.floor(float(ref.start_ns.min()) / NS_PER_MS) + WINDOW_START_MS) * NS_PER_MS
    if end_ns is None:
        end_ns = (math.ceil(float(ref.start_ns.max()) / NS_PER_MS) + WINDOW_END_MS) * NS_PER_MS
    if end_ns <= start_ns:
        raise InputError("--end-ns", None, f"window end {end_ns:.0f} ns must exceed its start {start_ns:.0f} ns")
    return start_ns, end_ns


def _keys(flows):
    return zip(flows.src.tolist(), flows.dst.tolist(), flows.size.tolist(), flows.start_ns.tolist())


def match_flows(ref, ours):
    """(ref_index, ours_index) arrays of the flows paired by (src, dst, size, start_ns): the k-th
    reference flow with a key (file order) pairs with our k-th flow with that key."""
    waiting = {}
    for i, key in enumerate(_keys(ref)):
        waiting.setdefault(key, deque()).append(i)
    ref_idx, ours_idx = [], []
    for j, key in enumerate(_keys(ours)):
        queue = waiting.get(key)
        if queue:
            ref_idx.append(queue.popleft())
            ours_idx.append(j)
    return np.array(ref_idx, dtype=np.int64), np.array(ours_idx, dtype=np.int64)


def side_stats(flows, win, bdp_bytes, n_buckets=N_BUCKETS):
    """fctAnalysis's view of one side: windowed, size-sorted, largest flow dropped."""
    kept = analysis.filter_flows(flows, *win)
    ranked = analysis.sort_by_size(kept, drop_largest=True, ties="reference")
    groups = {g.label: g for g in analysis.group_stats(ranked, bdp_bytes)}
    return Side(len(flows), len(kept), len(ranked), groups, analysis.bucket_stats(ranked, n_buckets))


def flow_ratios(ref, ours, ref_idx, ours_idx, win):
    """fct_ours / fct_ref of the matched pairs whose reference record is in the window."""
    in_window = analysis.window_mask(ref, *win)[ref_idx]
    return ours.fct_ns[ours_idx[in_window]] / ref.fct_ns[ref_idx[in_window]]


def compare(ref, ours, start_ns=None, end_ns=None, bdp_bytes=analysis.DEFAULT_BDP_BYTES):
    """The whole comparison of two Flows (``ref`` non-empty when a window bound is defaulted)."""
    win = window(ref, start_ns, end_ns)
    ref_idx, ours_idx = match_flows(ref, ours)
    n = len(ref_idx)
    return Comparison(win, bdp_bytes, side_stats(ref, win, bdp_bytes), side_stats(ours, win, bdp_bytes),
                      n, len(ref) - n, len(ours) - n, flow_ratios(ref, ours, ref_idx, ours_idx, win))


def _ratio(ours, ref):
    return ours / ref if ref > 0 else float("nan")


def ratio_summary(ratios):
    """Median, p10, p90 (interpolated) and the shares within ±1 % / ±5 % of per-flow FCT ratios."""
    if len(ratios) == 0:
        return {"n": 0, "median": math.nan, "p10": math.nan, "p90": math.nan,
                **{band: math.nan for band in RATIO_BANDS}}
    p10, median, p90 = (float(v) for v in np.percentile(ratios, [10, 50, 90]))
    shares = {band: float(np.mean(np.abs(ratios - 1) <= band)) for band in RATIO_BANDS}
    return {"n": len(ratios), "median": median, "p10": p10, "p90": p90, **shares}


def group_rows(cmp):
    """Rows (dicts) of the overall table: avg of all flows, avg and p99 of <1BDP and >=1BDP."""
    rows = []
    for label, stat in GROUP_ROWS:
        ref, ours = (getattr(s.groups[label], stat) for s in (cmp.ref, cmp.ours))
        rows.append({"group": label, "stat": stat, "reference": ref, "ours": ours, "ours/ref": _ratio(ours, ref)})
    return rows


def bucket_rows(cmp):
    """Rows (dicts) of the per-bucket table, paired by bucket number; a bucket one side lacks
    (fewer flows than buckets) has NaN statistics."""
    empty = analysis.Stats("", 0, 0, *([math.nan] * 5))
    ref = {b.label: b for b in cmp.ref.buckets}
    ours = {b.label: b for b in cmp.ours.buckets}
    rows = []
    for label in sorted(set(ref) | set(ours), key=int):
        r, o = ref.get(label, empty), ours.get(label, empty)
        rows.append({"bucket": int(label), "size_max_ref": r.size_max, "size_max_ours": o.size_max,
                     "n_ref": r.n, "n_ours": o.n, "avg_ref": r.avg, "avg_ours": o.avg,
                     "avg_ratio": _ratio(o.avg, r.avg), "p99_ref": r.p99, "p99_ours": o.p99,
                     "p99_ratio": _ratio(o.p99, r.p99)})
    return rows


def ratio_extremes(rows, column):
    """((min, bucket), (max, bucket)) of ``column`` over rows with a finite value, else None."""
    finite = [(r[column], r["bucket"]) for r in rows if math.isfinite(r[column])]
    if not finite:
        return None
    return min(finite), max(finite)


def parse_bounds(spec):
    """``--bounds`` "name=value,..." -> {name: value} in :data:`BOUNDS` order. Names as in
    :data:`BOUNDS`, each at most once; values numbers >= 0, shares (within5, within1) at most 1."""
    bounds = {}
    for item in spec.split(","):
        item = item.strip()
        name, sep, text = (part.strip() for part in item.partition("="))
        if not sep or not name:
            raise InputError("--bounds", None, f"bad item {item!r}: expected name=value "
                             f"(names: {', '.join(BOUNDS)})")
        if name not in BOUNDS:
            raise InputError("--bounds", None, f"bad item {item!r}: unknown name {name!r} "
                             f"(names: {', '.join(BOUNDS)})")
        if name in bounds:
            raise InputError("--bounds", None, f"bad item {item!r}: {name} given twice")
        try:
            value = float(text)
        except ValueError:
            raise InputError("--bounds", None, f"bad item {item!r}: not a number: {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise InputError("--bounds", None, f"bad item {item!r}: must be a finite number >= 0")
        if BOUNDS[name][0] == "min" and value > 1:
            raise InputError("--bounds", None, f"bad item {item!r}: a share of flows, at most 1")
        bounds[name] = value
    return {name: bounds[name] for name in BOUNDS if name in bounds}


def check_bound_inputs(bounds, counts):
    """InputError unless every bound's whole-run count is among ``counts`` (names, e.g. {"pfc"})."""
    for name in bounds:
        need = BOUNDS[name][1]
        if need is not None and need not in counts:
            raise InputError("--bounds", None, f"{name} needs {COUNT_OPTIONS[need]}")


def _worst_bucket(rows, column):
    """(max |ratio - 1|, "bucket N" of the first such bucket) over the bucket rows; NaN if any
    bucket's ratio is not finite (a bucket one side lacks, or a zero reference) or there are none."""
    if not rows or not all(math.isfinite(r[column]) for r in rows):
        return math.nan, ""
    worst = max(rows, key=lambda r: abs(r[column] - 1))
    return abs(worst[column] - 1), f"bucket {worst['bucket']}"


def evaluate_bounds(cmp, bounds, pauses=None, cnps=None):
    """One row per bound (dicts: bound, measured, limit as "<= x" / ">= x", result PASS/FAIL,
    where). ``bounds`` as :func:`parse_bounds` returns it; ``pauses`` and ``cnps`` are the
    (reference, ours) whole-run counts, needed by the pfc and cnp bounds. A max bound passes when
    |ours/ref - 1| <= its value, a min bound when the share >= its value; a value that cannot be
    measured (NaN: no flows, a zero reference) fails."""
    counts = {"pfc": pauses, "cnp": cnps}
    check_bound_inputs(bounds, {k for k, v in counts.items() if v is not None})
    buckets = bucket_rows(cmp)
    shares = ratio_summary(cmp.ratios)
    rows = []
    for name, limit in bounds.items():
        kind, need = BOUNDS[name]
        where = ""
        if name == "overall_avg":
            measured = abs(_ratio(cmp.ours.groups["all"].avg, cmp.ref.groups["all"].avg) - 1)
        elif name in ("bucket_avg", "bucket_p99"):
            measured, where = _worst_bucket(buckets, name.replace("bucket_", "") + "_ratio")
        elif name == "median":
            measured = abs(shares["median"] - 1)
        elif name in ("within5", "within1"):
            measured = shares[0.05 if name == "within5" else 0.01]
        else:
            ref, ours = counts[need]
            measured = abs(_ratio(ours, ref) - 1)
        if kind == "max":
            passed = measured <= limit + BOUND_SLACK
        else:
            passed = measured >= limit - BOUND_SLACK
        rows.append({"bound": name, "measured": float(measured),
                     "limit": f"{'<=' if kind == 'max' else '>='} {limit:g}",
                     "result": "PASS" if passed else "FAIL", "where": where})
    return rows


def _text(v):
    """3 decimals for floats (as fct_summary.txt prints them), integers as they are."""
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _pct(share):
    return f"{100 * share:.1f} %"


def _table(rows):
    if not rows:
        return "(no flows in the window)"
    return markdown([{k: _text(v) for k, v in r.items()} for r in rows])


def _count_line(what, counts):
    ref, ours = counts
    return f"{what}: reference {ref}, ours {ours}, ours/ref {_ratio(ours, ref):.3f}"


def report(cmp, ref_name, ours_name, pauses=None, cnps=None, bounds=None):
    """What ``python -m plots compare`` prints; ``pauses`` / ``cnps`` are (reference, ours) counts,
    ``bounds`` the rows of :func:`evaluate_bounds` (each section printed when given)."""
    sT, fT = cmp.window
    ref, ours = cmp.ref, cmp.ours
    buckets = bucket_rows(cmp)
    lines = [
        f"reference: {ref_name} ({ref.n_flows} flows)",
        f"ours:      {ours_name} ({ours.n_flows} flows)",
        f"matched by (src, dst, size, start_ns): {cmp.n_matched}; only in reference: {cmp.n_only_ref}; "
        f"only in ours: {cmp.n_only_ours}",
        f"window (fctAnalysis): start > {sT:.0f} ns and start + fct < {fT:.0f} ns: reference {ref.n_window} "
        f"flows, ours {ours.n_window}",
        f"summary statistics drop each side's largest flow in the window (fctAnalysis quirk): "
        f"reference {ref.n_analysed}, ours {ours.n_analysed}",
        "",
        f"slowdown = max(1, fct / ideal); <1BDP = size < {cmp.bdp_bytes} B, >=1BDP (fct_summary's \">1BDP\") "
        "the rest; interpolated percentiles",
        _table(group_rows(cmp) if ref.n_analysed or ours.n_analysed else []),
        "",
        f"{N_BUCKETS} equal-count size buckets (fctAnalysis order; index percentile a[int(n*p)])",
        _table(buckets),
    ]
    for column in ("avg_ratio", "p99_ratio"):
        ext = ratio_extremes(buckets, column)
        if ext:
            (lo, lo_b), (hi, hi_b) = ext
            lines.append(f"bucket {column} ours/ref: min {lo:.3f} (bucket {lo_b}), max {hi:.3f} (bucket {hi_b})")
    s = ratio_summary(cmp.ratios)
    lines += [
        "",
        f"per-flow FCT ratio ours/ref over {s['n']} matched flows with the reference record in the window:",
        f"median {s['median']:.3f}, p10 {s['p10']:.3f}, p90 {s['p90']:.3f}; "
        + "; ".join(f"within ±{100 * band:.0f} %: {_pct(s[band])}" for band in RATIO_BANDS),
    ]
    if pauses is not None or cnps is not None:
        lines.append("")
    if pauses is not None:
        lines.append(_count_line("PFC pauses (pfc.txt lines of type 1)", pauses))
    if cnps is not None:
        lines.append(_count_line("CNPs sent by receivers (reference: cnp.txt's cnp_total summed; ours: summary.json's counters.cnps_sent)",
                                 cnps))
    if bounds:
        failed = [r["bound"] for r in bounds if r["result"] == "FAIL"]
        lines += [
            "",
            "bounds: |ours/ref - 1| (or a share of the matched flows) against --bounds",
            markdown([{**r, "measured": f"{r['measured']:.4f}"} for r in bounds]),
            f"bounds: {len(bounds) - len(failed)} of {len(bounds)} PASS"
            + (f"; FAIL: {', '.join(failed)}" if failed else ""),
        ]
    return "\n".join(lines)
