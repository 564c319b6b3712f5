"""The three figures; each also returns the rows of the CSV table beside it."""

import math

import numpy as np

from . import analysis
from .style import SWITCH_SCHEMES, figure, line_kwargs, ordered, save, style_for

LEGEND_COLUMNS = 4
LEGEND_ROW_IN = 0.13  # height of one legend row at legend.fontsize 6


def _legend_below(fig, axes, n_entries, height_in, title=None):
    """Lay out ``fig`` with the legend in a band under the axes (never over the data: with a
    dozen algorithms an in-axes legend hides the lines) and the optional title above.
    ``height_in`` is the figure height without the band; the figure grows by the band."""
    rows = math.ceil(n_entries / LEGEND_COLUMNS) if n_entries else 0
    band_in = rows * LEGEND_ROW_IN + (0.08 if rows else 0)
    fig.set_size_inches(fig.get_size_inches()[0], height_in + band_in)
    if title:
        axes[0].set_title(title)
    if rows:
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(LEGEND_COLUMNS, n_entries),
                   bbox_to_anchor=(0.5, 0.0), columnspacing=1.0, handlelength=2.2, handletextpad=0.4)
    fig.tight_layout(pad=0.3, rect=(0, band_in / (height_in + band_in), 1, 1))

SLOWDOWN_HEADER = ("algorithm", "runs", "kind", "bucket", "size_max_bytes", "n_flows", *analysis.STAT_NAMES)
CDF_HEADER = ("algorithm", "group", "slowdown", "cum_fraction")
CCT_HEADER = ("collective", "algorithm", "group", "cct_ns", "slowest")


def _log_size_axis(ax):
    ax.set_xscale("log")
    ax.set_xlabel("Flow size (bytes, bucket max)")
    ax.grid(True, which="major")


def slowdown_figure(prepared, out_png, n_buckets=20, bdp_bytes=analysis.DEFAULT_BDP_BYTES, stats=("avg", "p99"),
                    title=None):
    """Avg and p99 FCT slowdown per size bucket, one line per algorithm (in the canonical
    algorithm order); rows for the CSV in the same order."""
    algos = ordered(prepared)
    height_in = 1.6 * len(stats) + 0.4
    fig, axes = figure(height_in, nrows=len(stats), sharex=True)
    rows = []
    for algo in algos:
        flows, runs = prepared[algo]
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
    _legend_below(fig, axes, len(algos), height_in, title)
    return save(fig, out_png), rows


def cdf_figure(prepared, out_png, group="all", bdp_bytes=analysis.DEFAULT_BDP_BYTES, title=None):
    """CDF of FCT slowdown (log x), one line per algorithm; ``group`` all/small/large (vs BDP)."""
    algos = ordered(prepared)
    fig, (ax,) = figure(2.2)
    rows = []
    for algo in algos:
        flows, _ = prepared[algo]
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
    _legend_below(fig, [ax], len(algos), 2.2, title)
    return save(fig, out_png), rows


def cct_figure(collectives, out_png, title=None):
    """Per algorithm (canonical order): dots = each collective's CCT (its slowest group), bar =
    their mean (µs), hatched for switch-side schemes; the mean is written above each bar."""
    rows = analysis.cct_table(collectives)
    per_algo = analysis.cct_per_algorithm(rows)
    algos = ordered(per_algo)
    order = {a: i for i, a in enumerate(algos)}
    rows.sort(key=lambda r: order[r[1]])  # stable: collectives and groups keep their order
    fig, (ax,) = figure(2.0)
    top = 0.0
    for i, algo in enumerate(algos):
        colour, marker = style_for(algo)
        us = np.asarray(per_algo[algo]) / 1000
        ax.bar(i, us.mean(), color=colour, alpha=0.35, edgecolor=colour, width=0.6,
               hatch="////" if algo in SWITCH_SCHEMES else None)
        ax.plot([i] * len(us), us, linestyle="none", color=colour, marker=marker)
        ax.annotate(f"{us.mean():.0f}", (i, us.max()), textcoords="offset points", xytext=(0, 2),
                    ha="center", va="bottom", fontsize=5)
        top = max(top, float(us.max()))
    ax.set_xticks(range(len(algos)))
    ax.set_xticklabels(algos, rotation=35, ha="right")
    ax.set_ylabel("CCT (µs), slowest group")
    ax.set_ylim(0, top * 1.12 if top > 0 else 1)
    ax.grid(True, axis="y")
    if title:
        ax.set_title(title)
    fig.tight_layout(pad=0.3)
    return save(fig, out_png), rows
