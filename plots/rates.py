"""Sending rate and retransmissions over time, from a run's ``rate.txt`` and ``retx.txt``
(``[run] rate_trace``), as Themis ("Enabling Packet Spraying over Commodity RNICs with
In-Network Support", section 2.2, Fig. 1) draws them: the per-flow DCQCN sending rate of the
active flows and the cumulative retransmission ratio of the whole run.
"""

import json
from pathlib import Path

import numpy as np

from .errors import InputError
from .io import _numbered_lines
from .style import figure, line_kwargs, save

RATE_HEADER = ["run", "algorithm", "time_us", "active_flows", "rate_mean_gbps", "rate_min_gbps",
               "rate_max_gbps", "retx_ratio"]


def _csv_ints(path, header):
    """Rows of a comma-separated file of integers with the given header; InputError otherwise."""
    rows = []
    for lineno, line in _numbered_lines(path):
        line = line.strip()
        if lineno == 1:
            if line != ",".join(header):
                raise InputError(path, 1, f"expected the header {','.join(header)}")
            continue
        if not line:
            continue
        parts = line.split(",")
        if len(parts) != len(header):
            raise InputError(path, lineno, f"expected {len(header)} columns, got {len(parts)}")
        try:
            rows.append([int(p) for p in parts])
        except ValueError:
            raise InputError(path, lineno, "not an integer") from None
    return rows


def read_rate_run(run_dir):
    """{label, algorithm, time_ns, mean/min/max rate (bit/s), active, retx_ratio} per sample
    time of a run directory, over its active flows."""
    d = Path(run_dir)
    for name in ("rate.txt", "retx.txt"):
        if not (d / name).exists():
            raise InputError(d / name, None, "missing (run the scenario with [run] rate_trace)")
    try:
        algo = json.loads((d / "summary.json").read_text()).get("algorithm", d.name)
    except (OSError, ValueError):
        algo = d.name
    per_t = {}
    for t, _flow, bps in _csv_ints(d / "rate.txt", ["time_ns", "flow", "rate_bps"]):
        per_t.setdefault(t, []).append(bps)
    retx = {t: (r / n if n else 0.0) for t, n, r in _csv_ints(d / "retx.txt", ["time_ns", "data_pkts", "retx_pkts"])}
    times = sorted(retx)
    if not times:
        raise InputError(d / "retx.txt", None, "no samples")
    rate = [np.asarray(per_t.get(t, [0]), dtype=float) for t in times]
    return {
        "label": d.name, "algorithm": algo, "time_ns": np.asarray(times, dtype=float),
        "active": np.asarray([len(per_t.get(t, [])) for t in times]),
        "mean": np.asarray([r.mean() for r in rate]), "min": np.asarray([r.min() for r in rate]),
        "max": np.asarray([r.max() for r in rate]), "retx_ratio": np.asarray([retx[t] for t in times]),
    }


def rate_rows(runs):
    return [[r["label"], r["algorithm"], f"{t / 1000:.3f}", int(n), f"{m / 1e9:.3f}", f"{lo / 1e9:.3f}",
             f"{hi / 1e9:.3f}", f"{x:.6f}"]
            for r in runs
            for t, n, m, lo, hi, x in zip(r["time_ns"], r["active"], r["mean"], r["min"], r["max"], r["retx_ratio"])]


def rates_figure(runs, out_png, title=None):
    """Two panels: the active flows' sending rate (mean line, min-max band) and the cumulative
    retransmission ratio, one colour per algorithm."""
    fig, (ax_rate, ax_retx) = figure(3.4, nrows=2, sharex=True)
    for r in runs:
        kw = line_kwargs(r["algorithm"])
        kw.update(marker=None, label=r["algorithm"])
        us = r["time_ns"] / 1000
        live = r["active"] > 0
        ax_rate.plot(us[live], r["mean"][live] / 1e9, **kw)
        ax_rate.fill_between(us[live], r["min"][live] / 1e9, r["max"][live] / 1e9, color=kw["color"], alpha=0.15,
                             linewidth=0)
        ax_retx.plot(us, 100 * r["retx_ratio"], **kw)
    ax_rate.set_ylabel("rate (Gb/s), mean and range")
    ax_rate.set_ylim(bottom=0)
    ax_retx.set_xlabel("time (µs)")
    ax_retx.set_ylabel("cum. retx ratio (%)")
    ax_retx.set_ylim(bottom=0)
    for ax in (ax_rate, ax_retx):
        ax.grid(True)
    ax_retx.legend(loc="best")
    if title:
        fig.suptitle(title)
    fig.tight_layout(pad=0.3)
    return save(fig, out_png)
