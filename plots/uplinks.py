"""Per-ToR uplink balance from ConWeave's uplink monitor (``python -m plots uplinks``).

The trace (``uplink.txt``; the reference's ``*_out_uplink.txt``, ours with the queue trace on) has
lines ``time_ns,tor_id,port,cumulative_tx_bytes``, one per ToR uplink every monitor interval
(10 us in ConWeave's runs). For each ToR and each window of ``window_ns`` the bytes a port sent are
the difference of its counter at the window's two ends (both must be samples); over the ToR's
uplinks:

* ``mean`` = mean bytes per uplink, ``max_over_mean`` = max / mean (1 = perfectly balanced,
  k = all on one of k uplinks), ``cv`` = population standard deviation / mean;
* a window whose mean is at most ``min_mean_bytes`` (default 0: only windows with no bytes at all)
  is idle and left out of the statistics (counted).

A trace's summary is the mean, median, p90 and p99 (interpolated) of ``max_over_mean`` and ``cv``
over all its (ToR, window) pairs; per ToR and per ``group_ns`` time slot (default 1 ms) the mean
``cv`` and the total uplink bytes. Several traces (e.g. the reference's seeds and ours) are
reported side by side, restricted to the windows all of them cover.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .io import _numbered_lines, _num
from .tables import markdown

UPLINK_COLUMNS = ("time_ns", "tor_id", "port", "tx_bytes")
SUMMARY_STATS = ("mean", "p50", "p90", "p99")


@dataclass
class UplinkTrace:
    """One uplink trace: sample times (ascending) and per ToR its ports and counters."""

    times: np.ndarray  # int64, the sample times, ascending, each present for every (ToR, port)
    tors: dict  # tor_id -> (ports tuple ascending, int64 array [n_ports, n_times] of cumulative bytes)


def read_uplink_txt(path):
    """``uplink.txt`` as an :class:`UplinkTrace`. Every (ToR, port) must have a sample at every
    sample time, and its counter must never decrease; blank lines are skipped, ``.gz`` is read
    compressed. Errors name ``file:line``."""
    path = Path(path)
    samples = {}  # (tor, port) -> {time: bytes}
    last = {}  # (tor, port) -> (time, bytes, lineno)
    for lineno, line in _numbered_lines(path):
        text = line.strip()
        if not text:
            continue
        parts = text.split(",")
        if len(parts) != len(UPLINK_COLUMNS):
            raise InputError(path, lineno, f"expected {len(UPLINK_COLUMNS)} comma-separated columns "
                                           f"({','.join(UPLINK_COLUMNS)}), got {len(parts)}")
        t, tor, port, tx = (int(_num(path, lineno, n, v.strip(), integer=True)) for n, v in zip(UPLINK_COLUMNS, parts))
        if min(t, tor, port, tx) < 0:
            raise InputError(path, lineno, "negative value")
        key = (tor, port)
        prev = last.get(key)
        if prev is not None:
            if t <= prev[0]:
                raise InputError(path, lineno, f"ToR {tor} port {port}: time {t} not after {prev[0]} (line {prev[2]})")
            if tx < prev[1]:
                raise InputError(path, lineno, f"ToR {tor} port {port}: counter decreases ({prev[1]} -> {tx})")
        last[key] = (t, tx, lineno)
        samples.setdefault(key, {})[t] = tx
    if not samples:
        raise InputError(path, None, "no samples")
    times = sorted({t for s in samples.values() for t in s})
    tors = {}
    for tor in sorted({k[0] for k in samples}):
        ports = tuple(sorted(p for (t_, p) in samples if t_ == tor))
        rows = []
        for p in ports:
            s = samples[(tor, p)]
            if len(s) != len(times):
                missing = next(t for t in times if t not in s)
                raise InputError(path, None, f"ToR {tor} port {p} has no sample at time {missing}")
            rows.append([s[t] for t in times])
        tors[tor] = (ports, np.array(rows, dtype=np.int64))
    return UplinkTrace(np.array(times, dtype=np.int64), tors)


@dataclass
class Window:
    """One (ToR, window) of one trace."""

    tor: int
    start_ns: int
    mean: float  # bytes per uplink
    max_over_mean: float
    cv: float
    total: int  # bytes over all uplinks


def boundaries(trace, window_ns, start_ns=None, end_ns=None):
    """The window edges: start (default the first sample), start + window, ... up to end (default
    the last sample); each must be a sample time."""
    if window_ns <= 0:
        raise InputError("--window-ns", None, "must be > 0")
    lo = int(trace.times[0]) if start_ns is None else int(start_ns)
    hi = int(trace.times[-1]) if end_ns is None else int(end_ns)
    edges = np.arange(lo, hi + 1, int(window_ns), dtype=np.int64)
    if len(edges) < 2:
        return edges[:0]
    idx = np.searchsorted(trace.times, edges)
    ok = (idx < len(trace.times)) & (trace.times[np.minimum(idx, len(trace.times) - 1)] == edges)
    if not ok.all():
        bad = int(edges[~ok][0])
        raise InputError("--window-ns", None, f"window edge {bad} ns is not a sample time of the trace "
                                              "(the window must be a multiple of the monitor interval, "
                                              "start and end within the trace)")
    return idx


def windows(trace, window_ns, start_ns=None, end_ns=None):
    """Every (ToR, window) of the trace as a :class:`Window`, idle ones included (mean 0: ratios nan)."""
    idx = boundaries(trace, window_ns, start_ns, end_ns)
    out = []
    for tor, (ports, cum) in trace.tors.items():
        if len(idx) < 2:
            continue
        sent = np.diff(cum[:, idx], axis=1)  # [n_ports, n_windows]
        mean = sent.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mom = sent.max(axis=0) / mean
            cv = sent.std(axis=0) / mean
        for k in range(sent.shape[1]):
            out.append(Window(tor, int(trace.times[idx[k]]), float(mean[k]), float(mom[k]), float(cv[k]),
                              int(sent[:, k].sum())))
    return out


def _stats(values):
    v = np.asarray(values, dtype=float)
    if not len(v):
        return dict.fromkeys(SUMMARY_STATS, float("nan"))
    return {"mean": float(v.mean()), "p50": float(np.percentile(v, 50)), "p90": float(np.percentile(v, 90)),
            "p99": float(np.percentile(v, 99))}


@dataclass
class Balance:
    """One trace's balance statistics."""

    label: str
    n_windows: int  # (ToR, window) pairs considered
    n_idle: int  # of those, idle
    max_over_mean: dict  # SUMMARY_STATS -> value over the busy windows
    cv: dict
    per_tor: dict  # tor -> (mean cv, total bytes)
    per_slot: dict  # slot start ns -> (mean cv, total bytes)


def balance(label, wins, min_mean_bytes=0.0, group_ns=1_000_000):
    """Summary of :func:`windows`' output; busy = mean > ``min_mean_bytes``."""
    busy = [w for w in wins if w.mean > min_mean_bytes]
    per_tor, per_slot = {}, {}
    for key, sel in ((lambda w: w.tor, per_tor), (lambda w: w.start_ns // group_ns * group_ns, per_slot)):
        groups = {}
        for w in wins:
            groups.setdefault(key(w), []).append(w)
        for k in sorted(groups):
            cvs = [w.cv for w in groups[k] if w.mean > min_mean_bytes]
            sel[k] = (float(np.mean(cvs)) if cvs else float("nan"), sum(w.total for w in groups[k]))
    return Balance(label, len(wins), len(wins) - len(busy), _stats([w.max_over_mean for w in busy]),
                   _stats([w.cv for w in busy]), per_tor, per_slot)


def common_span(traces):
    """(start, end) covered by every trace."""
    return max(int(t.times[0]) for t in traces), min(int(t.times[-1]) for t in traces)


def _f(v):
    return "nan" if v != v else f"{v:.3f}"


def report(balances, window_ns, span, min_mean_bytes, group_ns):
    """What ``python -m plots uplinks`` prints."""
    lines = [
        f"uplink balance per ToR and {window_ns} ns window, {span[0]} .. {span[1]} ns "
        f"(the span every trace covers); busy = mean bytes per uplink > {min_mean_bytes:g}",
        "max/mean = busiest uplink's bytes / mean; cv = std / mean over the ToR's uplinks (population std); "
        "interpolated percentiles over the busy (ToR, window) pairs",
        "",
        markdown([{"trace": b.label, "windows": b.n_windows, "idle": b.n_idle,
                   **{f"max/mean {s}": _f(b.max_over_mean[s]) for s in SUMMARY_STATS},
                   **{f"cv {s}": _f(b.cv[s]) for s in SUMMARY_STATS}} for b in balances]),
        "",
        "mean cv per ToR (total uplink MB in brackets)",
    ]
    tors = sorted({t for b in balances for t in b.per_tor})
    lines.append(markdown([{"tor": t, **{b.label: _cell(b.per_tor.get(t)) for b in balances}} for t in tors]))
    lines += ["", f"mean cv per {group_ns} ns slot (total uplink MB in brackets)"]
    slots = sorted({s for b in balances for s in b.per_slot})
    lines.append(markdown([{"slot_start_ns": s, **{b.label: _cell(b.per_slot.get(s)) for b in balances}}
                           for s in slots]))
    return "\n".join(lines)


def _cell(v):
    if v is None:
        return "-"
    return f"{_f(v[0])} ({v[1] / 1e6:.1f})"


CSV_HEADER = ("trace", "tor", "window_start_ns", "mean_bytes", "max_over_mean", "cv", "total_bytes")


def csv_rows(label, wins):
    return [{"trace": label, "tor": w.tor, "window_start_ns": w.start_ns, "mean_bytes": w.mean,
             "max_over_mean": w.max_over_mean, "cv": w.cv, "total_bytes": w.total} for w in wins]
