"""The three figures; each also returns the rows of the CSV table beside it."""

import numpy as np

from . import analysis
from .style import figure, line_kwargs, save, style_for

SLOWDOWN_HEADER = ("algorithm", "runs", "kind", "bucket", "size_max_bytes", "n_flows", *analysis.STAT_NAMES)
CDF_HEADER = ("algorithm", "group", "slowdown", "cum_fraction")
CCT_HEADER = ("collective", "algorithm", "group", "cct_ns", "slowest")


def _log_size_axis(ax):
    ax.set_xscale("log")
    ax.set_xlabel("Flow size (bytes, bucket max)")
    ax.grid(True, which="major")


def slowdown_figure(prepared, out_png, n_buckets=20, bdp_bytes=analysis.DEFAULT_BDP_BYTES, stats=("avg", "p99")):
    """Avg and p99 FCT slowdown per size bucket, one line per algorithm; rows for the CSV."""
    for algo in prepared:
        style_for(algo)
    fig, axes = figure(1.6 * len(stats) + 0.4, nrows=len(stats), sharex=True)
    rows = []
    for algo, (flows, runs) in prepared.items():
        buckets = analysis.bucket_stats(flows, n_buckets)
        groups = analysis.group_stats(flows, bdp_bytes)
        nruns = len(runs)
        for b in buckets:
            rows.append((algo, nruns, "bucket", b.label, b.size_max, b.n, b.avg, b.p50, b.p95, b.p99, b.p999))
        for g in groups:
            rows.append((algo, nruns, "group", g.label, g.size_max, g.n, g.avg, g.p50, g.p95, g.p99, g.p999))
        x = [b.size_max for b in buckets]
        for ax, stat in zip(axes, stats):
            ax.plot(x, [getattr(b, stat) for b in buckets], **line_kwargs(algo))
    for ax, stat in zip(axes, stats):
        ax.set_ylabel(f"{'Avg' if stat == 'avg' else stat} FCT slowdown")
        ax.set_ylim(bottom=1)
        ax.grid(True, which="major")
        ax.set_xscale("log")
    _log_size_axis(axes[-1])
    if prepared:
        axes[0].legend(ncol=3, loc="upper left")
    fig.tight_layout(pad=0.3)
    return save(fig, out_png), rows


def cdf_figure(prepared, out_png, group="all", bdp_bytes=analysis.DEFAULT_BDP_BYTES):
    """CDF of FCT slowdown (log x), one line per algorithm; ``group`` all/small/large (vs BDP)."""
    for algo in prepared:
        style_for(algo)
    fig, (ax,) = figure(2.2)
    rows = []
    for algo, (flows, _) in prepared.items():
        sd = flows.slowdown if len(flows) else np.array([])
        if group == "small":
            sd = sd[flows.size < bdp_bytes]
        elif group == "large":
            sd = sd[flows.size >= bdp_bytes]
        x, F = analysis.cdf_points(sd)
        rows.extend((algo, group, float(a), float(b)) for a, b in zip(x, F))
        kw = line_kwargs(algo)
        ax.plot(x, F, drawstyle="steps-post", markevery=max(1, len(x) // 8), **kw)
    ax.set_xscale("log")
    ax.set_xlabel("FCT slowdown" + {"all": "", "small": f" (flows < {bdp_bytes} B)", "large": f" (flows >= {bdp_bytes} B)"}[group])
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="major")
    if prepared:
        ax.legend(ncol=2, loc="lower right")
    fig.tight_layout(pad=0.3)
    return save(fig, out_png), rows


def cct_figure(collectives, out_png):
    """Per algorithm: dots = each collective's CCT (its slowest group), bar = their mean (µs)."""
    rows = analysis.cct_table(collectives)
    per_algo = analysis.cct_per_algorithm(rows)
    for algo in per_algo:
        style_for(algo)
    fig, (ax,) = figure(2.0)
    for i, (algo, ccts) in enumerate(per_algo.items()):
        colour, marker = style_for(algo)
        us = np.asarray(ccts) / 1000
        ax.bar(i, us.mean(), color=colour, alpha=0.35, edgecolor=colour, width=0.6)
        ax.plot([i] * len(us), us, linestyle="none", color=colour, marker=marker)
    ax.set_xticks(range(len(per_algo)))
    ax.set_xticklabels(list(per_algo), rotation=30, ha="right")
    ax.set_ylabel("CCT (µs), slowest group")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y")
    fig.tight_layout(pad=0.3)
    return save(fig, out_png), rows
