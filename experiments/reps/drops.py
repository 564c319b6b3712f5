"""REPS' "fewer dropped packets" (the paper's §6 summary: REPS "significantly improves the FCT,
runtime and number of dropped packets"): packets lost per run, by scheme and fabric, from
results_uet.csv (written by analyze_uet.py; no new runs).

A loss is a trimmed packet (its payload cut at a full queue; only the header goes on), a buffer
drop, or a packet sent into a failed link. Writes drops.csv (one row per fabric and scheme: runs,
mean losses per run and their range) and prints it as README.md shows it.

Usage (from the repository root): python experiments/reps/drops.py [EXP_DIR]
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

LOSS_COLUMNS = ("trims", "mmu_drops", "link_down_losses")
SCHEMES = ("reps", "spray", "ecmp")


def losses(row):
    return sum(int(row[c] or 0) for c in LOSS_COLUMNS)


def main(exp):
    runs = defaultdict(list)  # (variant, scheme) -> losses per run
    variants = []
    with open(exp / "results_uet.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["variant"] not in variants:
                variants.append(row["variant"])
            runs[(row["variant"], row["algorithm"])].append(losses(row))
    out = []
    for v in variants:
        for a in SCHEMES:
            xs = runs.get((v, a))
            if xs:
                out.append({"variant": v, "algorithm": a, "runs": len(xs),
                            "mean_losses": round(sum(xs) / len(xs), 1), "min_losses": min(xs),
                            "max_losses": max(xs)})
    with open(exp / "drops.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    print("| fabric | REPS | spraying | ECMP |\n|---|---|---|---|")
    for v in variants:
        cells = []
        for a in SCHEMES:
            r = next((r for r in out if r["variant"] == v and r["algorithm"] == a), None)
            if r is None:
                cells.append("–")
            elif r["runs"] == 1:
                cells.append(f"{r['mean_losses']:g}")
            else:
                cells.append(f"{r['mean_losses']:g} ({r['min_losses']}–{r['max_losses']}, {r['runs']} runs)")
        print(f"| {v} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
