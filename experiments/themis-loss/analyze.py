"""Themis under real loss and a link failure (README.md): per run, the flows' slowest and mean
FCT, the transport's counters and Themis' own (NACKs blocked / forwarded, compensations,
switches in ECMP mode at the end); per config and scheme, the mean over seeds with the range of the
slowest FCT.

Usage: python analyze.py OUT_ROOT RESULTS_CSV
"""

import csv
import json
import sys
from pathlib import Path

CONFIGS = ["loss", "failure", "failure_permanent"]
SCHEMES = ["ecmp", "spray", "themis", "themis (no compensation)"]
COUNTERS = ["retx_pkts", "nacks", "timeouts", "rate_cuts", "mmu_drops", "link_down_losses"]
THEMIS = ["nacks_blocked", "nacks_forwarded", "compensations", "cancellations", "nacks_unresolved",
          "ecmp_fallback", "sprayed_pkts"]


def read(out_root):
    rows = []
    for s in sorted(out_root.glob("*/summary.json")):
        summ = json.loads(s.read_text())
        config = Path(summ["config"]["path"]).stem
        scheme = summ["algorithm"]
        if "compensation = false" in (summ.get("lb_params") or ""):
            scheme += " (no compensation)"
        fcts = []
        with open(s.parent / "flows.csv") as f:
            for r in csv.DictReader(f):
                if not r["fct_ns"]:
                    sys.exit(f"{s.parent}: flow {r.get('flow_id', '?')} did not complete")
                fcts.append(int(r["fct_ns"]))
        lb = summ["lb_counters"]
        rows.append({
            "config": config, "scheme": scheme, "seed": summ["seed"],
            "max_fct_us": max(fcts) / 1000, "mean_fct_us": sum(fcts) / len(fcts) / 1000,
            **{c: summ["counters"][c] for c in COUNTERS},
            **{t: int(lb.get(f"themis_{t}", 0)) for t in THEMIS},
            "run": s.parent.name,
        })
    rows.sort(key=lambda r: (CONFIGS.index(r["config"]), SCHEMES.index(r["scheme"]), r["seed"]))
    return rows


def main():
    out_root, results = Path(sys.argv[1]), Path(sys.argv[2])
    rows = read(out_root)
    cols = list(rows[0])
    with open(results, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([f"{r[c]:.3f}" if isinstance(r[c], float) else r[c] for c in cols])
    print("| case | scheme | seeds | slowest FCT, ms (range) | mean FCT, ms | retx | NACKs | timeouts "
          "| drops (buffer / link down) | Themis: blocked / forwarded / compensated / cancelled | "
          "switches in ECMP mode at the end (of 6) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in CONFIGS:
        for s in SCHEMES:
            rs = [r for r in rows if r["config"] == c and r["scheme"] == s]
            if not rs:
                continue
            m = lambda k: sum(r[k] for r in rs) / len(rs)
            mx = [r["max_fct_us"] / 1000 for r in rs]
            th = (f"{m('nacks_blocked'):,.0f} / {m('nacks_forwarded'):,.0f} / {m('compensations'):,.0f} / "
                  f"{m('cancellations'):,.0f}" if s.startswith("themis") else "")
            fb = f"{m('ecmp_fallback'):g}" if s.startswith("themis") else ""
            print(f"| {c} | {s} | {len(rs)} | {m('max_fct_us') / 1000:.2f} ({min(mx):.2f}–{max(mx):.2f}) | "
                  f"{m('mean_fct_us') / 1000:.2f} | {m('retx_pkts'):,.0f} | {m('nacks'):,.0f} | "
                  f"{m('timeouts'):.1f} | {m('mmu_drops'):,.0f} / {m('link_down_losses'):,.0f} | {th} | {fb} |")


if __name__ == "__main__":
    main()
