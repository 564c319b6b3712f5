"""Themis ("Enabling Packet Spraying over Commodity RNICs with In-Network Support", section 5,
Fig. 5) metrics from rdma-lb-scenario run directories.

Usage: python analyze.py OUT_ROOT RESULTS_CSV FIG_DIR

Per run (collective kind x size x DCQCN setting x algorithm): the slowest group's CCT (summary.json
``collectives.cct_max_ns``; CCT = last delivery - first start of a group's flows), the mean
group CCT, the no-contention bound and the counters. Bound (no queueing, no reordering, ACK
bytes not counted), with W(b) = b + ceil(b / 1000) x 48 wire bytes, B = 400 Gbps, d = 1 us:
* allreduce-ring: 2(N-1) x (W(size/N) x 8/B + 3 x 1048 x 8/B + 4d) (steps are serialised by
  their dependencies; the formula the rdma-lb-scenario test suite checks to 0.1 %);
* alltoall: (N-1) x W(size/N) x 8/B + 3 x 1048 x 8/B + 4d (a host's N-1 flows share its port).

The grid may be partial (the sweep spans sittings): a table cell without a finished run prints
as "—" (ECMP and spraying are not run at every setting), a claim without data as "pending", and
a claim's verdict uses only the settings where both algorithms finished.
Rows of ``RESULTS_CSV`` whose point (collective, size, DCQCN setting, algorithm, seed) has no
run directory under OUT_ROOT are kept (raw outputs are not committed, so a partial re-run adds
its points to the committed ones); runs with PFC off go to ``results_nopfc.csv`` beside it.
Prints the README tables (the 300 MB grid with Themis' cut against AR and ECMP beside the
paper's, the verdicts, the counters, the size sweep), writes RESULTS_CSV, the size-sweep figure
one ``python -m plots cct`` figure (+ its CSV table) per collective kind at 300 MB and the
recommended DCQCN setting, and one
``python -m plots rates`` figure (Fig. 1's time series) per traced point of 16 MiB or more into
FIG_DIR.
"""

import csv
import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

N = 16
RATE_BPS = 400e9
DELAY_S = 1e-6
PAYLOAD = 1000
HDR = 48
ALGOS = ["ecmp", "adaptive", "spray", "themis"]
KINDS = ["allreduce", "alltoall"]
MAIN_SIZE = 300_000_000
RECOMMENDED = (900.0, 4.0)  # DCQCN (T_I, T_D) in us: the paper's recommended setting
# Themis' CCT reduction against AR across the paper's DCQCN settings (section 5), in %.
PAPER = {"allreduce": (15.6, 75.3), "alltoall": (11.5, 40.7)}
UNITS = {"B": 1, "KB": 1000, "MB": 10**6, "GB": 10**9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def parse_size(s):
    if isinstance(s, int):
        return s
    for u in sorted(UNITS, key=len, reverse=True):
        if s.endswith(u):
            return int(float(s[: -len(u)]) * UNITS[u])
    return int(s)


def size_label(b):
    for u, m in (("MiB", 1024**2), ("MB", 10**6)):
        if b % m == 0:
            return f"{b // m} {u}"
    return f"{b} B"


def wire(b):
    return b + math.ceil(b / PAYLOAD) * HDR


def bound_s(kind, size):
    chunk = math.ceil(size / N)
    hop = 3 * (PAYLOAD + HDR) * 8 / RATE_BPS + 4 * DELAY_S
    if kind == "allreduce":
        return 2 * (N - 1) * (wire(chunk) * 8 / RATE_BPS + hop)
    return (N - 1) * wire(chunk) * 8 / RATE_BPS + hop


def read_runs(out_root):
    """The runs under OUT_ROOT: (PFC-on rows, PFC-off rows)."""
    rows, nopfc = [], []
    for s in sorted(out_root.glob("*/summary.json")):
        summ = json.loads(s.read_text())
        cfg = tomllib.loads(Path(summ["config"]["path"]).read_text())
        coll = cfg["workload"]["collective"][0]
        kind = "allreduce" if coll["kind"] == "allreduce-ring" else coll["kind"]
        size = parse_size(coll["size"])
        t = summ["config"]["transport"]
        col = summ["collectives"]
        if col["complete"] != col["groups"]:
            sys.exit(f"{s}: only {col['complete']} of {col['groups']} groups completed")
        c = summ["counters"]
        b = bound_s(kind, size)
        (rows if t["pfc_enabled"] else nopfc).append({
            "collective": kind,
            "size_bytes": size,
            "t_i_us": t["rp_timer_ns"] / 1000,
            "t_d_us": t["rate_decrease_interval_ns"] / 1000,
            "algorithm": summ["algorithm"],
            "seed": summ["seed"],
            "slowest_cct_us": col["cct_max_ns"] / 1000,
            "mean_cct_us": col["cct_mean_ns"] / 1000,
            "bound_us": b * 1e6,
            "slowest_over_bound": col["cct_max_ns"] * 1e-9 / b,
            "retx_pkts": c["retx_pkts"],
            "nacks": c["nacks"],
            "rate_cuts": c["rate_cuts"],
            "ecn_marks": c["ecn_marks"],
            "pfc_pauses": c["pfc_pauses_sent"],
            "drops": c["mmu_drops"] + c["link_down_losses"] + c["error_model_drops"],
            "timeouts": c["timeouts"],
            "cpu_s": summ.get("cpu_time_s", ""),
            "peak_mib": summ.get("peak_rss_mib", ""),
            "run": s.parent.name,
        })
    return sort_rows(rows), nopfc


def sort_rows(rows):
    return sorted(rows, key=lambda r: (KINDS.index(r["collective"]), r["size_bytes"], -r["t_i_us"], r["t_d_us"],
                                       ALGOS.index(r["algorithm"]), r["seed"]))


INT_COLS = ("size_bytes", "seed", "retx_pkts", "nacks", "rate_cuts", "ecn_marks", "pfc_pauses", "drops", "timeouts")


def merge_committed(rows, results_csv):
    """``rows`` plus the committed rows of ``results_csv`` for the points not re-run here (a
    point = collective, size, DCQCN setting, algorithm, seed; a re-run replaces its row): raw run
    directories are not kept, so a partial re-run must not drop the others' rows. Committed rows
    carry no CPU time or peak memory."""
    if not results_csv.is_file():
        return rows
    key = lambda r: (r["collective"], r["size_bytes"], r["t_i_us"], r["t_d_us"], r["algorithm"], r["seed"])
    have = {key(r) for r in rows}
    merged = list(rows)
    with open(results_csv) as f:
        for r in csv.DictReader(f):
            typed = {c: (int(v) if c in INT_COLS else v if c in ("collective", "algorithm", "run") else float(v))
                     for c, v in r.items()}
            typed.update(cpu_s="", peak_mib="")
            if key(typed) not in have:
                merged.append(typed)
    return sort_rows(merged)


def paired_cuts(rs, a, b):
    """Themis-style reductions of ``a``'s slowest CCT against ``b``'s, in % (positive = a
    faster), one per seed both ran."""
    if a not in rs or b not in rs:
        return []
    x, y = rs[a]["by_seed"], rs[b]["by_seed"]
    return [100 * (1 - x[s] / y[s]) for s in sorted(x) if s in y]


def mean(xs):
    return sum(xs) / len(xs)


def fmt_cut(cs, spread=True):
    """``paired_cuts`` as their mean, with their range (``spread``) when more than one seed ran."""
    if not cs:
        return "—"
    if spread and len(cs) > 1:
        return f"{mean(cs):+.1f} % ({min(cs):+.1f} … {max(cs):+.1f}, {len(cs)} seeds)"
    return f"{mean(cs):+.1f} %"


def aggregate(runs):
    """One cell's runs (one per seed) as a row: seed 1's counters, the slowest CCT's mean over
    seeds, and ``by_seed`` (seed -> slowest CCT)."""
    row = dict(runs[0])
    row["by_seed"] = {r["seed"]: r["slowest_cct_us"] for r in runs}
    row["slowest_cct_us"] = mean(list(row["by_seed"].values()))
    row["slowest_over_bound"] = row["slowest_cct_us"] / row["bound_us"]
    return row


def fmt_cct(r):
    txt = f"{r['slowest_cct_us'] / 1000:.2f} ms ({r['slowest_over_bound']:.2f}×)"
    if len(r["by_seed"]) > 1:
        v = r["by_seed"].values()
        txt += f", {len(v)} seeds {min(v) / 1000:.2f}–{max(v) / 1000:.2f}"
    return txt


def verdict(kind, cuts):
    """reproduced: every measured setting cuts CCT and our range overlaps the paper's;
    direction only: Themis ahead everywhere but outside the paper's range; not reproduced
    otherwise."""
    if not cuts:
        return "pending"
    lo, hi = PAPER[kind]
    if min(cuts) <= 0:
        return "not reproduced"
    if max(cuts) >= lo and min(cuts) <= hi:
        return "reproduced"
    return "direction only"


def per_setting(kind, by_setting):
    """'900/4: +33.3, 55/50: +17.6 % (1 of 2 settings inside the paper's range)', one mean per
    setting over its paired seeds."""
    lo, hi = PAPER[kind]
    means = {st: mean(cs) for st, cs in by_setting.items() if cs}
    inside = sum(lo <= m <= hi for m in means.values())
    vals = ", ".join(f"{ti:g}/{td:g}: {m:+.1f}" for (ti, td), m in means.items())
    return f"{vals} % ({inside} of {len(means)} settings inside the paper's range)"


def claims(cells):
    """Each section-5 claim at 300 MB: (claim, what we measured, verdict). ``cells``: kind ->
    (T_I, T_D) -> algorithm -> aggregated row."""
    out = []
    for k in KINDS:
        vs_ar = {st: paired_cuts(rs, "themis", "adaptive") for st, rs in cells[k].items()}
        got = [c for cs in vs_ar.values() for c in cs]
        lo, hi = PAPER[k]
        out.append((f"{k}: Themis {lo}–{hi} % below AR", per_setting(k, vs_ar) if got else "pending",
                    verdict(k, got)))
    # "Themis consistently outperforms ECMP and Adaptive Routing" (Fig. 5a, 5b).
    for k in KINDS:
        vs = [c for rs in cells[k].values() for other in ("adaptive", "ecmp") for c in paired_cuts(rs, "themis", other)]
        v = "pending" if not vs else ("reproduced" if min(vs) > 0 else "not reproduced")
        out.append((f"{k}: Themis below ECMP and AR at every setting",
                    f"{sum(x > 0 for x in vs)} of {len(vs)} paired runs below" if vs else "pending", v))
    # "With the recommended parameters (T_I 900, T_D 4) AR performs poorly ... smaller T_I and
    # larger T_D improve AR ... extreme values ... degrade" it.
    for k in KINDS:
        ar = {st: rs["adaptive"]["slowest_cct_us"] for st, rs in cells[k].items() if "adaptive" in rs}
        if RECOMMENDED not in ar or len(ar) < 2:
            out.append((f"{k}: AR slowest at the recommended T_I 900 / T_D 4", "pending", "pending"))
            continue
        worst = max(ar, key=ar.get)
        got = ", ".join(f"{ti:g}/{td:g}: {ar[(ti, td)] / 1000:.2f} ms" for ti, td in sorted(ar, key=lambda x: -x[0]))
        out.append((f"{k}: AR slowest at the recommended T_I 900 / T_D 4", got,
                    "reproduced" if worst == RECOMMENDED else "not reproduced"))
        tuned = [x for x in ar if x != RECOMMENDED and x[0] > 10]
        extreme = sorted((x for x in ar if x[0] <= 10), key=lambda x: (-x[0], x[1]))
        if tuned and extreme:
            best = min(ar[x] for x in tuned)
            worse = [x for x in extreme if ar[x] > best]
            got = ", ".join(f"{ti:g}/{td:g}: {ar[(ti, td)] / 1000:.2f} ms" for ti, td in extreme)
            out.append((f"{k}: an extreme setting (T_I ≤ 10 µs) degrades AR against moderate tuning",
                        f"extreme {got}; best moderate {best / 1000:.2f} ms ({len(worse)} of {len(extreme)} "
                        "extreme points slower)",
                        "reproduced" if worse else "not reproduced"))
    return out


def main():
    out_root, results_csv, fig_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    rows, nopfc = read_runs(out_root)
    rows = merge_committed(rows, results_csv)
    if not rows:
        sys.exit(f"{out_root}: no finished runs")
    if nopfc:
        nopfc.sort(key=lambda r: (KINDS.index(r["collective"]), -r["t_i_us"], r["t_d_us"], r["algorithm"], r["seed"]))
        with open(results_csv.with_name("results_nopfc.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            ncols = [c for c in nopfc[0] if c not in ("cpu_s", "peak_mib")]
            w.writerow(ncols)
            for r in nopfc:
                w.writerow([f"{r[c]:.3f}" if isinstance(r[c], float) else r[c] for c in ncols])
    cols = list(rows[0].keys())
    cols.remove("cpu_s")  # machine-dependent: printed, not in results.csv
    cols.remove("peak_mib")
    with open(results_csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([f"{r[c]:.3f}" if isinstance(r[c], float) else r[c] for c in cols])

    def cell_rows(kind, size, ti, td):
        runs = {}
        for r in rows:
            if (r["collective"], r["size_bytes"], r["t_i_us"], r["t_d_us"]) == (kind, size, ti, td):
                runs.setdefault(r["algorithm"], []).append(r)
        return {a: aggregate(rs) for a, rs in runs.items()}

    main_settings = sorted({(r["collective"], r["t_i_us"], r["t_d_us"]) for r in rows
                            if r["size_bytes"] == MAIN_SIZE},
                           key=lambda x: (KINDS.index(x[0]), -x[1], x[2]))
    print("### 300 MB per rank: slowest group's CCT (× the no-contention bound)\n")
    print("| collective | DCQCN | ECMP | AR (adaptive) | spray | Themis | Themis vs AR | Themis vs ECMP "
          "| paper: Themis vs AR |")
    print("|---|---|---|---|---|---|---|---|---|")
    cells = {k: {} for k in KINDS}  # kind -> (T_I, T_D) -> algorithm -> aggregated row
    for k, ti, td in main_settings:
        rs = cells[k][(ti, td)] = cell_rows(k, MAIN_SIZE, ti, td)
        cell = {a: fmt_cct(rs[a]) if a in rs else "—" for a in ALGOS}
        lo, hi = PAPER[k]
        print(f"| {k} | T_I {ti:g} µs, T_D {td:g} µs | {cell['ecmp']} | {cell['adaptive']} | "
              f"{cell['spray']} | {cell['themis']} | {fmt_cut(paired_cuts(rs, 'themis', 'adaptive'))} | "
              f"{fmt_cut(paired_cuts(rs, 'themis', 'ecmp'))} | "
              f"+{lo} % … +{hi} % |")
    print("\n(+x % = Themis' slowest CCT x % below the other's.)\n")
    print("| claim (section 5) | ours, over the DCQCN settings run | verdict |")
    print("|---|---|---|")
    for claim, got, v in claims(cells):
        print(f"| {claim} | {got} | {v} |")

    if nopfc:
        print("\n### PFC off, 300 MB per rank (results_nopfc.csv): slowest CCT beside the PFC-on run\n")
        print("| collective | DCQCN | algorithm | seed | PFC off | PFC on | retx pkts | rate cuts | ECN marks "
              "| drops | timeouts |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in nopfc:
            on = [x for x in rows if (x["collective"], x["size_bytes"], x["t_i_us"], x["t_d_us"], x["algorithm"],
                                      x["seed"]) == (r["collective"], MAIN_SIZE, r["t_i_us"], r["t_d_us"],
                                                     r["algorithm"], r["seed"])]
            on_txt = f"{on[0]['slowest_cct_us'] / 1000:.2f} ms" if on else "—"
            counts = " | ".join(f"{r[c]:,}" for c in ("retx_pkts", "rate_cuts", "ecn_marks", "drops", "timeouts"))
            print(f"| {r['collective']} | T_I {r['t_i_us']:g}, T_D {r['t_d_us']:g} | {r['algorithm']} | {r['seed']} "
                  f"| {r['slowest_cct_us'] / 1000:.2f} ms | {on_txt} | {counts} |")

    print("\n### Counters (whole run)\n")
    print("| collective | size | DCQCN | algorithm | seed | retx pkts | NACKs | rate cuts | ECN marks | PFC pauses "
          "| drops | CPU s | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cpu = f"{r['cpu_s']:,.0f}" if isinstance(r["cpu_s"], (int, float)) else "not recorded"
        counts = " | ".join(f"{r[c]:,}" for c in ("retx_pkts", "nacks", "rate_cuts", "ecn_marks", "pfc_pauses", "drops"))
        print(f"| {r['collective']} | {size_label(r['size_bytes'])} | T_I {r['t_i_us']:g}, T_D {r['t_d_us']:g} "
              f"| {r['algorithm']} | {r['seed']} | {counts} | {cpu} | {r['peak_mib']} |")

    # Size sweep at the recommended DCQCN setting.
    sweep = [r for r in rows if (r["t_i_us"], r["t_d_us"]) == RECOMMENDED]
    sizes = {k: sorted({r["size_bytes"] for r in sweep if r["collective"] == k}) for k in KINDS}
    print("\n### Size sweep, T_I 900 µs / T_D 4 µs: slowest CCT × bound (rate cuts, retx pkts)\n")
    print("| collective | size per rank | " + " | ".join(ALGOS) + " | Themis vs AR |")
    print("|---|---|" + "---|" * (len(ALGOS) + 1))
    for k in KINDS:
        for size in sizes[k]:
            rs = cell_rows(k, size, *RECOMMENDED)
            cells = [(f"{rs[a]['slowest_over_bound']:.2f}× ({rs[a]['rate_cuts']}, {rs[a]['retx_pkts']})"
                      if a in rs else "—") for a in ALGOS]
            print(f"| {k} | {size_label(size)} | " + " | ".join(cells)
                  + f" | {fmt_cut(paired_cuts(rs, 'themis', 'adaptive'), spread=False)} |")

    fig_dir.mkdir(parents=True, exist_ok=True)
    size_figure(sweep, sizes, fig_dir / "size_sweep.png")
    py = sys.executable
    root = Path(__file__).resolve().parents[2]
    # One bar per algorithm at the recommended setting, where all four ran (a dot per seed); the
    # other settings compare fewer algorithms and are in the tables.
    for k in KINDS:
        files = [out_root / r["run"] / "collectives.csv" for r in rows
                 if (r["collective"], r["size_bytes"], r["t_i_us"], r["t_d_us"]) == (k, MAIN_SIZE, *RECOMMENDED)]
        # Only from a complete set of run directories (committed rows have none here).
        if files and all(f.is_file() for f in files):
            files = [str(f) for f in files]
            subprocess.run([py, "-m", "plots", "cct", *files, "-o", str(fig_dir / f"cct_{k}.png"),
                            "--title", f"{k}, 300 MB per rank, T_I 900 µs / T_D 4 µs"],
                           check=True, cwd=root, stdout=subprocess.DEVNULL)
    # Fig. 1's time series (per-flow DCQCN rate, cumulative retransmission ratio) for every
    # point of 16 MiB or more whose runs sampled them ([run] rate_trace).
    traced = {}
    for r in rows:
        if r["size_bytes"] >= 16 * 2**20 and (out_root / r["run"] / "rate.txt").is_file():
            traced.setdefault((r["collective"], r["size_bytes"], r["t_i_us"], r["t_d_us"]), []).append(r)
    for (k, size, ti, td), rs in sorted(traced.items()):
        rs.sort(key=lambda r: ALGOS.index(r["algorithm"]))
        name = f"rates_{k}_{size_label(size).replace(' ', '')}_ti{ti:g}_td{td:g}.png"
        subprocess.run([py, "-m", "plots", "rates", *(str(out_root / r["run"]) for r in rs),
                        "-o", str(fig_dir / name),
                        "--title", f"{k}, {size_label(size)} per rank, T_I {ti:g} µs / T_D {td:g} µs"],
                       check=True, cwd=root, stdout=subprocess.DEVNULL)


def size_figure(sweep, sizes, path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from plots import style
    import matplotlib.pyplot as plt

    with plt.rc_context(style.RC):
        fig, axes = plt.subplots(2, 2, figsize=(2 * style.COLUMN_WIDTH_IN, 3.6), sharex="col")
        for j, k in enumerate(KINDS):
            for a in style.ordered({r["algorithm"] for r in sweep if r["collective"] == k}):
                pts = sorted((r["size_bytes"], r["slowest_over_bound"], r["rate_cuts"]) for r in sweep
                             if r["collective"] == k and r["algorithm"] == a)
                xs = [p[0] / 1e6 for p in pts]
                axes[0][j].plot(xs, [p[1] for p in pts], **style.line_kwargs(a))
                axes[1][j].plot(xs, [max(p[2], 0.5) for p in pts], **style.line_kwargs(a))
            axes[0][j].set_title(f"{k}, T_I 900 µs / T_D 4 µs")
            axes[0][j].set_ylabel("slowest CCT / bound")
            axes[1][j].set_ylabel("DCQCN rate cuts (0 drawn at 0.5)")
            axes[1][j].set_yscale("log")
            axes[1][j].set_xlabel("message size per rank (MB)")
            for ax in (axes[0][j], axes[1][j]):
                ax.set_xscale("log")
                ax.grid(True, alpha=0.3)
        axes[0][0].legend(loc="upper left")
        fig.tight_layout()
        fig.savefig(path, dpi=200)
        fig.savefig(path.with_suffix(".pdf"))
        plt.close(fig)


if __name__ == "__main__":
    main()
