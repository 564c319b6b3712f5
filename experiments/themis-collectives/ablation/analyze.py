"""The Themis AlltoAll ablation (README.md): one table of the slowest group's CCT and the
counters per change, AR and Themis with their seed spread, Themis' paired cut against AR
beside the paper's 11.5-40.7 %.

Usage: python analyze.py OUT_ROOT OUT_DIR

OUT_ROOT holds the ablation's run directories (``<config stem>-<lb>-s<seed>-<hash>``); the
baseline cell (the main grid's AlltoAll at 300 MB per rank, T_I 900 us / T_D 4 us) is read from
``../results.csv``. Rows of OUT_DIR/results.csv whose run is not under OUT_ROOT are kept (a
resumed ablation on another machine re-runs only what is missing). Writes OUT_DIR/results.csv (one row per run, baseline rows included, the
same counters as the main grid's) and prints the README table. A cell whose runs are not all
finished prints what it has; a missing cell prints "pending".
"""

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAPER = (11.5, 40.7)
ALGOS = ["adaptive", "themis", "spray", "ecmp"]
# Cells in the README's order: (label, config stem, what changes). The baseline is the main grid's.
CELLS = [
    ("baseline", None, "the main grid: simultaneous AlltoAll, exact per-packet AR, PSN 0, alpha 1/16, 64 MB"),
    ("hpcc-ecn", "alltoall_300MB_hpcc_ecn", "HPCC-lineage DCQCN/ECN (Kmin/Kmax 800/3200 KB, AI/HAI 50/100 Mb/s)"),
    ("pairwise", "alltoall_pairwise_300MB", "15 pairwise-shifted steps instead of 15 flows per NIC at t = 0"),
    ("ar-flowlet", "alltoall_300MB_ar_flowlet", "AR per flowlet (5 us gap) instead of per packet"),
    ("ar-sampled", "alltoall_300MB_ar_sampled", "AR on port loads sampled every 10 us"),
    ("alpha-1/2", "alltoall_300MB_alpha_half", "ingress dynamic-threshold alpha 1/2 instead of 1/16"),
    ("random-psn", "alltoall_300MB_random_psn", "Themis with a random initial PSN per QP"),
    ("buffer-32MB", "alltoall_300MB_buffer_32MB", "32 MB switch buffer instead of 64 MB"),
    ("pfc-off", "alltoall_300MB_pfc_off", "PFC off (lossy fabric; NIC-SR recovers drops)"),
]
COLS = ["cell", "algorithm", "seed", "slowest_cct_us", "retx_pkts", "nacks", "rate_cuts", "ecn_marks",
        "pfc_pauses", "drops", "timeouts", "run"]
# Cells that change only one algorithm borrow the other's baseline runs for the comparison.
BORROWS = {"ar-flowlet": "themis", "ar-sampled": "themis", "random-psn": "adaptive"}
# Cells whose change is an algorithm parameter: a run without it is refused (before the fix,
# a sweep's --lb dropped a config's own [lb] params; run.sh passes them with --lb-params).
PARAMS = {"ar-flowlet": "flowlet_gap_ns", "ar-sampled": "load_sample_ns", "random-psn": "initial_psn"}


def baseline_rows():
    rows = []
    with open(HERE.parent / "results.csv") as f:
        for r in csv.DictReader(f):
            if (r["collective"], r["size_bytes"], r["t_i_us"], r["t_d_us"]) == ("alltoall", "300000000", "900.000", "4.000"):
                rows.append({"cell": "baseline", **{c: r[c] for c in COLS if c in r}})
    return rows


def run_rows(out_root):
    stems = {stem: label for label, stem, _ in CELLS if stem}
    rows = []
    for s in sorted(out_root.glob("*/summary.json")):
        stem = s.parent.name.rsplit("-", 3)[0]
        if stem not in stems:
            continue
        summ = json.loads(s.read_text())
        col = summ["collectives"]
        if col["complete"] != col["groups"]:
            sys.exit(f"{s}: only {col['complete']} of {col['groups']} groups completed")
        want = PARAMS.get(stems[stem])
        if want and want not in (summ.get("lb_params") or ""):
            sys.exit(f"{s}: ran without `{want}` (lb_params `{summ.get('lb_params')}`)")
        c = summ["counters"]
        rows.append({
            "cell": stems[stem],
            "algorithm": summ["algorithm"],
            "seed": str(summ["seed"]),
            "slowest_cct_us": f"{col['cct_max_ns'] / 1000:.3f}",
            "retx_pkts": c["retx_pkts"],
            "nacks": c["nacks"],
            "rate_cuts": c["rate_cuts"],
            "ecn_marks": c["ecn_marks"],
            "pfc_pauses": c["pfc_pauses_sent"],
            "drops": c["mmu_drops"] + c["link_down_losses"] + c["error_model_drops"],
            "timeouts": c["timeouts"],
            "run": s.parent.name,
        })
    return rows


def kept_rows(out_dir, fresh):
    """Committed non-baseline rows of OUT_DIR/results.csv for runs OUT_ROOT does not hold."""
    path = out_dir / "results.csv"
    if not path.exists():
        return []
    have = {r["run"] for r in fresh}
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r["cell"] != "baseline" and r["run"] not in have]


def by_seed(rows, cell, algo):
    return {int(r["seed"]): float(r["slowest_cct_us"]) for r in rows if r["cell"] == cell and r["algorithm"] == algo}


def fmt_ms(d):
    if not d:
        return "—"
    v = list(d.values())
    txt = f"{sum(v) / len(v) / 1000:.2f}"
    if len(v) > 1:
        txt += f" ({min(v) / 1000:.2f}–{max(v) / 1000:.2f})"
    return txt


def cuts(themis, ar):
    return [100 * (1 - themis[s] / ar[s]) for s in sorted(themis) if s in ar]


def fmt_cut(cs):
    if not cs:
        return "pending"
    m = sum(cs) / len(cs)
    txt = f"{m:+.1f} %"
    if len(cs) > 1:
        txt += f" ({min(cs):+.1f} … {max(cs):+.1f})"
    lo, hi = PAPER
    return txt + (" **in range**" if lo <= m <= hi else "")


def fmt_counts(rows, cell, algo):
    """Mean counters over the cell's seeds: pauses / marks / cuts / retx / drops, in thousands."""
    rs = [r for r in rows if r["cell"] == cell and r["algorithm"] == algo]
    if not rs:
        return "—"
    k = lambda c: sum(int(r[c]) for r in rs) / len(rs) / 1000
    return (f"{k('pfc_pauses'):,.0f} k / {k('ecn_marks'):,.0f} k / {k('rate_cuts'):,.0f} k / "
            f"{k('retx_pkts'):,.0f} k / {k('drops'):,.1f} k")


def main():
    out_root, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    fresh = run_rows(out_root)
    rows = baseline_rows() + fresh + kept_rows(out_dir, fresh)
    order = {label: i for i, (label, _, _) in enumerate(CELLS)}
    rows.sort(key=lambda r: (order[r["cell"]], ALGOS.index(r["algorithm"]), int(r["seed"])))
    with open(out_dir / "results.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLS)
        for r in rows:
            w.writerow([r[c] for c in COLS])
    print("| cell | change | AR CCT, ms | Themis CCT, ms | Themis vs AR (paper: 11.5–40.7 %) | spray / ECMP, ms |")
    print("|---|---|---|---|---|---|")
    for label, _, what in CELLS:
        ar, th = by_seed(rows, label, "adaptive"), by_seed(rows, label, "themis")
        if not ar and not th:
            print(f"| {label} | {what} | pending | pending | pending | |")
            continue
        borrowed = BORROWS.get(label)
        ar_cmp = by_seed(rows, "baseline", "adaptive") if borrowed == "adaptive" else ar
        th_cmp = by_seed(rows, "baseline", "themis") if borrowed == "themis" else th
        note = f" (against the baseline's {'AR' if borrowed == 'adaptive' else 'Themis'})" if borrowed else ""
        others = " / ".join(fmt_ms(by_seed(rows, label, a)) for a in ("spray", "ecmp"))
        print(f"| {label} | {what} | {fmt_ms(ar)} | {fmt_ms(th)} | {fmt_cut(cuts(th_cmp, ar_cmp))}{note} | "
              f"{others if others != '— / —' else ''} |")
    print()
    print("Counters, mean over seeds (PFC pauses / ECN marks / rate cuts / retransmissions / drops):")
    print()
    print("| cell | AR | Themis |")
    print("|---|---|---|")
    for label, _, _ in CELLS:
        a, t = fmt_counts(rows, label, "adaptive"), fmt_counts(rows, label, "themis")
        if a != "—" or t != "—":
            print(f"| {label} | {a} | {t} |")


if __name__ == "__main__":
    main()
