"""The figures: slowdown, CDF and CCT (each also returns the rows of the CSV table beside it), and
the reference-vs-ours comparison."""

import math

import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter

from . import analysis
from .compare import RATIO_BANDS
from .style import (COLUMN_WIDTH_IN, SIMULATOR_STYLE, SWITCH_SCHEMES, figure, figure_grid, line_kwargs, ordered,
                    save, simulator_kwargs, style_for)

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


PANELS = ("one", "side")
BASELINE = "ecmp"  # drawn in both side panels (and as the reference line of the ranking)


def side_groups(algos):
    """(title, algorithms) per panel of ``--panels side``: the host-side schemes and the
    switch-side ones (:data:`plots.style.SWITCH_SCHEMES`), ECMP (the per-flow baseline) in both.
    One group when either side is empty."""
    host = [a for a in algos if a not in SWITCH_SCHEMES]
    switch = [a for a in algos if a in SWITCH_SCHEMES]
    if not host or not switch:
        return [(None, list(algos))]
    if BASELINE in algos:
        switch = [BASELINE] + switch
    return [("host-side schemes", host), ("switch-side schemes" + (" (+ ecmp)" if BASELINE in algos else ""), switch)]


def slowdown_figure(prepared, out_png, n_buckets=20, bdp_bytes=analysis.DEFAULT_BDP_BYTES, stats=("avg", "p99"),
                    title=None, panels="one"):
    """Avg and p99 FCT slowdown per size bucket, one line per algorithm (in the canonical
    algorithm order; the runs of an algorithm pooled), with the seed spread as a band (min to max
    of the runs, each bucketed on its own flows) where an algorithm has several runs; rows for the
    CSV in the same order. ``panels="side"`` draws the host-side and
    the switch-side schemes in two columns (ECMP in both; each row shares its y axis), each column
    with its own legend."""
    if panels not in PANELS:
        raise ValueError(f"panels must be one of {PANELS}, got {panels!r}")
    algos = ordered(prepared)
    rows = []
    series = {}
    spread = {}
    for algo in algos:
        flows, runs = prepared[algo]
        buckets = analysis.bucket_stats(flows, n_buckets)
        groups = analysis.group_stats(flows, bdp_bytes)
        nruns = len(runs)
        for b in buckets:
            rows.append((algo, nruns, "bucket", b.label, b.size_max, b.n, b.avg, b.p50, b.p95, b.p99, b.p999))
        for g in groups:
            rows.append((algo, nruns, "group", g.label, g.size_max, g.n, g.avg, g.p50, g.p95, g.p99, g.p999))
        series[algo] = buckets
        spread[algo] = {stat: analysis.bucket_spread(runs, stat, n_buckets) for stat in stats}
    columns = side_groups(algos) if panels == "side" else [(None, algos)]
    height_in = 1.6 * len(stats) + 0.4
    fig, grid = figure_grid(height_in, nrows=len(stats), ncols=len(columns), sharex=True, sharey="row")
    for col, (col_title, names) in enumerate(columns):
        axes = [grid[r][col] for r in range(len(stats))]
        for algo in names:
            x = [b.size_max for b in series[algo]]
            for ax, stat in zip(axes, stats):
                kw = line_kwargs(algo)
                ax.plot(x, [getattr(b, stat) for b in series[algo]], **kw)
                band = spread[algo][stat]
                if band is not None and len(band[0]) == len(x):
                    ax.fill_between(x, band[0], band[1], color=kw["color"], alpha=0.15, linewidth=0)
        for ax, stat in zip(axes, stats):
            if col == 0:
                ax.set_ylabel(f"{'Avg' if stat == 'avg' else stat} FCT slowdown")
            ax.grid(True, which="major")
            ax.set_xscale("log")
        _log_size_axis(axes[-1])
        if col_title:
            axes[0].set_title(col_title)
    for row in grid:  # after every column is drawn: a row's shared y axis spans all of them
        row[0].set_ylim(bottom=1)
    if len(columns) == 1:
        _legend_below(fig, [grid[r][0] for r in range(len(stats))], len(algos), height_in, title)
    else:
        _legends_below_columns(fig, grid, [len(names) for _, names in columns], height_in, title)
    return save(fig, out_png), rows


def _legends_below_columns(fig, grid, n_entries, height_in, title=None, ncol=3):
    """One legend band under each column of ``grid`` (the entries of that column's first axes),
    the title over the whole figure."""
    rows = max(math.ceil(n / ncol) for n in n_entries)
    band_in = rows * LEGEND_ROW_IN + 0.08
    fig.set_size_inches(fig.get_size_inches()[0], height_in + band_in + (0.15 if title else 0))
    total = height_in + band_in + (0.15 if title else 0)
    if title:
        fig.suptitle(title)
    ncols = len(grid[0])
    for col in range(ncols):
        handles, labels = grid[0][col].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", ncol=ncol,
                   bbox_to_anchor=((col + 0.5) / ncols, band_in / total),
                   columnspacing=1.0, handlelength=2.2, handletextpad=0.4)
    fig.tight_layout(pad=0.3, rect=(0, band_in / total, 1, 1 - (0.15 / total if title else 0)))


RANKING_HEADER = ("rank", "algorithm", "side", "runs", "n_flows", "avg", "p99", "avg_vs_ecmp", "p99_vs_ecmp",
                  "cct_mean_ns", "cct_vs_ecmp")


def ranking_rows(prepared, collectives=None, bdp_bytes=analysis.DEFAULT_BDP_BYTES):
    """One row per algorithm (:data:`RANKING_HEADER`), best first: by average slowdown of all
    flows, then p99, then the canonical order. ``*_vs_ecmp`` = the value over ECMP's (nan without
    an ECMP run); the CCT is the mean over the collectives of their slowest group (nan without
    collectives for that algorithm)."""
    cct = analysis.cct_per_algorithm(analysis.cct_table(collectives)) if collectives else {}
    stats = {}
    for algo in ordered(prepared):
        flows, runs = prepared[algo]
        g = analysis.group_stats(flows, bdp_bytes)[0]
        c = float(np.mean(cct[algo])) if cct.get(algo) else float("nan")
        stats[algo] = (len(runs), g.n, g.avg, g.p99, c)
    canon = {a: i for i, a in enumerate(ordered(prepared))}

    def key(a):
        _, _, avg, p99, _ = stats[a]
        return (math.isnan(avg), avg if not math.isnan(avg) else 0.0, p99 if not math.isnan(p99) else 0.0, canon[a])

    base = stats.get(BASELINE)

    def vs(v, i):
        return v / base[i] if base and base[i] and not math.isnan(base[i]) else float("nan")

    rows = []
    for rank, algo in enumerate(sorted(stats, key=key), 1):
        nruns, n, avg, p99, c = stats[algo]
        rows.append((rank, algo, "switch" if algo in SWITCH_SCHEMES else "host", nruns, n, avg, p99,
                     vs(avg, 2), vs(p99, 3), c, vs(c, 4)))
    return rows


def ranking_figure(prepared, out_png, collectives=None, bdp_bytes=analysis.DEFAULT_BDP_BYTES, title=None):
    """The algorithms ranked at a glance: horizontal bars of the average and p99 FCT slowdown of
    all flows (and the mean CCT when ``collectives`` are given), best at the top, one row per
    algorithm in its colour (hatched: switch-side), the seed spread of an algorithm with several
    runs as a whisker (min to max of the runs), the value right of the bar and its whisker, and
    ECMP's value as a dotted line in every panel. Returns ((png, pdf), rows of
    :func:`ranking_rows`)."""
    rows = ranking_rows(prepared, collectives, bdp_bytes)
    whiskers = {(r[1], stat): analysis.group_spread(prepared[r[1]][1], stat, bdp_bytes)
                for r in rows for stat in ("avg", "p99")}
    panels = [("avg", "Avg FCT slowdown", 5, 1.0), ("p99", "p99 FCT slowdown", 6, 1.0)]
    if any(not math.isnan(r[9]) for r in rows):
        panels.append(("cct", "CCT (µs), mean of slowest groups", 9, 0.0))
    n = len(rows)
    height_in = 0.16 * n + 0.55
    fig, (axes,) = figure_grid(height_in, ncols=len(panels), sharey="row", width_in=COLUMN_WIDTH_IN * 2)
    y = np.arange(n)
    for ax, (name, label, col, floor) in zip(axes, panels):
        scale = 1000.0 if name == "cct" else 1.0
        vals = [r[col] / scale for r in rows]
        finite = [v for v in vals if not math.isnan(v)]
        finite += [w[1] for (a, stat), w in whiskers.items() if stat == name and w is not None]
        top = max(finite) if finite else floor + 1
        for i, (r, v) in enumerate(zip(rows, vals)):
            if math.isnan(v):
                continue
            colour, _ = style_for(r[1])
            ax.barh(i, v - floor, left=floor, color=colour, alpha=0.45, edgecolor=colour, height=0.7,
                    hatch="////" if r[1] in SWITCH_SCHEMES else None, linewidth=0.6)
            whisker = whiskers.get((r[1], name))
            end = v
            if whisker is not None:
                ax.plot(whisker, [i, i], color="k", linewidth=0.7)
                end = max(v, whisker[1])
            # The value right of the bar and of its whisker, never over them.
            ax.annotate(f"{v:.0f}" if name == "cct" else f"{v:.2f}", (end, i), textcoords="offset points",
                        xytext=(2, 0), ha="left", va="center", fontsize=5)
        base = [v for r, v in zip(rows, vals) if r[1] == BASELINE and not math.isnan(v)]
        if base:
            ax.axvline(base[0], color=style_for(BASELINE)[0], linestyle=":", linewidth=0.8)
        ax.set_xlim(floor, floor + (top - floor) * 1.18 if top > floor else floor + 1)
        ax.set_xlabel(label)
        ax.grid(True, axis="x")
    axes[0].set_yticks(y)
    axes[0].set_yticklabels([r[1] for r in rows])
    axes[0].invert_yaxis()
    for t, r in zip(axes[0].get_yticklabels(), rows):
        t.set_color(style_for(r[1])[0])
    if title:
        fig.suptitle(title)
    fig.tight_layout(pad=0.3)
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


COMPARE_LINESTYLE = {"avg": "-", "p99": "--"}


def compare_figure(cmp, out_png, title=None):
    """Top: avg (solid) and p99 (dashed) FCT slowdown per size bucket of the reference and ours
    (:class:`plots.compare.Comparison`). Bottom: CDF of the per-flow FCT ratio ours/ref (log x)
    with the ±5 % band shaded. Returns the PNG and PDF paths."""
    height_in = 3.6
    fig, (top, bottom) = figure(height_in, nrows=2)
    for name, side in (("reference", cmp.ref), ("ours", cmp.ours)):
        x = [b.size_max for b in side.buckets]
        for stat, ls in COMPARE_LINESTYLE.items():
            top.plot(x, [getattr(b, stat) for b in side.buckets], linestyle=ls, label=f"{name} {stat}",
                     **simulator_kwargs(name))
    top.set_ylabel("FCT slowdown")
    top.set_ylim(bottom=1)
    _log_size_axis(top)
    _ratio_cdf(bottom, cmp.ratios, max(RATIO_BANDS))
    _legend_below(fig, [top, bottom], 2 * len(COMPARE_LINESTYLE), height_in, title)
    return save(fig, out_png)


def _ratio_cdf(ax, ratios, band):
    colour, _ = SIMULATOR_STYLE["ours"]
    ax.axvspan(1 - band, 1 + band, color=colour, alpha=0.15, linewidth=0)
    x, F = analysis.cdf_points(ratios)
    if len(x):
        ax.plot(x, F, drawstyle="steps-post", color=colour)
    lo = min(float(x[0]), 1 - 2 * band) if len(x) else 1 - 2 * band
    hi = max(float(x[-1]), 1 + 2 * band) if len(x) else 1 + 2 * band
    lo, hi = lo / 1.05, hi * 1.05
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xticks(_ratio_ticks(lo, hi))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"Per-flow FCT ours / reference (shaded: ±{100 * band:.0f} %)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="major")


RATIO_TICKS = (0.2, 0.5, 0.8, 0.9, 0.95, 1.05, 1.1, 1.25, 2, 5)


def _ratio_ticks(lo, hi, n=6):
    """Ticks for a log ratio axis [lo, hi]: the decades if it spans one or more, else 1 and,
    outwards from it, RATIO_TICKS at least 1/n of the log range apart (readable labels for
    ratios within a few % of 1)."""
    if hi / lo >= 10:
        return [10.0**k for k in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)]
    gap = math.log10(hi / lo) / n
    ticks = [1.0]
    above = sorted(t for t in RATIO_TICKS if 1 < t <= hi)
    below = sorted((t for t in RATIO_TICKS if lo <= t < 1), reverse=True)
    for side in (above, below):
        last = 1.0
        for t in side:
            if abs(math.log10(t / last)) >= gap:
                ticks.append(t)
                last = t
    return sorted(ticks)


def uplinks_figure(labels, wins, min_mean_bytes, out_png, title=None):
    """Top: per trace, the mean over ToRs of the uplinks' cv in each window (busy windows) against
    time. Bottom: CDF of max/mean over the busy (ToR, window) pairs. Returns the PNG and PDF paths."""
    height_in = 3.6
    fig, (top, bottom) = figure(height_in, nrows=2)
    for label, ws in zip(labels, wins):
        busy = [w for w in ws if w.mean > min_mean_bytes]
        by_t = {}
        for w in busy:
            by_t.setdefault(w.start_ns, []).append(w.cv)
        t = sorted(by_t)
        line, = top.plot([(x - t[0]) / 1e6 if t else 0 for x in t], [float(np.mean(by_t[x])) for x in t],
                         linewidth=0.8, label=label)
        x, F = analysis.cdf_points(np.array([w.max_over_mean for w in busy], dtype=float))
        if len(x):
            bottom.plot(x, F, drawstyle="steps-post", color=line.get_color())
    top.set_xlabel("Time from the first window (ms)")
    top.set_ylabel("Uplink cv (mean over ToRs)")
    top.grid(True, which="major")
    bottom.set_xlabel("Busiest uplink / mean (per ToR and window)")
    bottom.set_ylabel("CDF")
    bottom.set_ylim(0, 1.01)
    bottom.grid(True, which="major")
    _legend_below(fig, [top, bottom], len(labels), height_in, title)
    return save(fig, out_png)
