"""Hopper experiment analysis: FCT slowdown (avg, p99) per workload, load and algorithm, and
Hopper's improvement over ECMP and FlowBender; the asymmetric fabric's share of bytes on the
1 Gbps links.

For each (workload, load) cell it runs ``python -m plots slowdown`` on the three algorithms'
run directories (the one slowdown definition, plots/slowdown.py; ConWeave's analysis: the
largest flow of each run dropped), reads the CSV table it writes, and keeps the "all",
"<1BDP" and ">=1BDP" rows. Writes results.csv, two figures, and prints the README tables.

Usage (from the repository root): python experiments/hopper/analyze.py OUT_ROOT EXP_DIR
"""
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ALGOS = ["ecmp", "flowbender", "hopper"]
CELLS = [("hopper_fbhdp", "0.25", "Hadoop", "50%"), ("hopper_fbhdp", "0.4", "Hadoop", "80%"),
         ("hopper_alistorage", "0.25", "AliStorage", "50%"), ("hopper_alistorage", "0.4", "AliStorage", "80%"),
         ("hopper_asym", None, "asym 10G/1G (1 MiB rounds)", "-")]
FIGURES = {("hopper_fbhdp", "0.25"): "slowdown_hadoop_50.png", ("hopper_fbhdp", "0.4"): "slowdown_hadoop_80.png"}
# hopper_asym.toml: leaves 8 and 9; their 1-based ports 5..10 go to spines 10..15, and
# spines 10 and 11 (ports 5 and 6) are the 1 Gbps ones.
SLOW_PORTS, FAST_PORTS = {5, 6}, {7, 8, 9, 10}


def run_dirs(out_root, stem, load, algo):
    pat = re.compile(rf"^{re.escape(stem)}-{re.escape(algo)}-" + (rf"l{re.escape(load)}-" if load else "") + r"s\d+-[0-9a-f]+$")
    return sorted(d for d in Path(out_root).iterdir() if pat.match(d.name) and (d / "summary.json").exists())


def slow_link_share(d):
    last = {}
    with open(d / "uplink.txt") as f:
        for line in f:
            t, tor, port, b = line.strip().split(",")
            last[(tor, int(port))] = int(b)
    slow = sum(b for (_, p), b in last.items() if p in SLOW_PORTS)
    fast = sum(b for (_, p), b in last.items() if p in FAST_PORTS)
    return slow / (slow + fast) if slow + fast else float("nan")


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    py = sys.executable
    tmp = out_root / "analysis"
    tmp.mkdir(parents=True, exist_ok=True)
    rows = []
    for stem, load, wl, load_label in CELLS:
        dirs = {a: run_dirs(out_root, stem, load, a) for a in ALGOS}
        if not all(dirs.values()):
            print(f"(missing runs for {stem} load {load}: {[a for a in ALGOS if not dirs[a]]})", file=sys.stderr)
            continue
        png = tmp / f"{stem}-{load or 'asym'}.png"
        args = [py, "-m", "plots", "slowdown", *[str(d) for a in ALGOS for d in dirs[a]], "-o", str(png)]
        if stem == "hopper_asym":
            # The recorded ideal FCT takes the bottleneck of the first BFS path, which here
            # crosses a 1 Gbps spine; recompute it over a 10 Gbps path (the fast paths'
            # bottleneck), so slowdown is measured against the best the fabric offers.
            args += ["--ideal", "fixed", "--hosts-per-tor", "4", "--link-delay-ns", "1000",
                     "--bw-gbps", "10", "--bdp-bytes", "32000"]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        if (stem, load) in FIGURES:
            shutil.copyfile(png, exp / FIGURES[(stem, load)])
        with open(png.with_suffix(".csv")) as f:
            table = [r for r in csv.DictReader(f) if r["kind"] == "group"]
        for a in ALGOS:
            sums = [json.loads((d / "summary.json").read_text()) for d in dirs[a]]
            done = sum(s["flows_completed"] for s in sums)
            total = sum(s["flows_total"] for s in sums)
            c = lambda k: sum(s["counters"][k] for s in sums)  # noqa: E731
            row = {"workload": wl, "load": load_label, "algorithm": a, "seeds": len(sums),
                   "flows_completed": done, "flows_total": total}
            for g in ("all", "<1BDP", ">=1BDP"):
                r = next((x for x in table if x["algorithm"] == a and x["bucket"] == g), None)
                row[f"avg_{g}"] = r["avg"] if r else ""
                row[f"p99_{g}"] = r["p99"] if r else ""
            row["path_switches"] = c("path_switches")
            row["probes"] = c("probes")
            row["retx_pkts"] = c("retx_pkts")
            row["timeouts"] = c("timeouts")
            row["mmu_drops"] = c("mmu_drops")
            row["slow_link_share"] = (f"{sum(slow_link_share(d) for d in dirs[a]) / len(dirs[a]):.4f}"
                                      if stem == "hopper_asym" else "")
            rows.append(row)
    if not rows:
        sys.exit(f"{out_root}: no finished cells")
    with open(exp / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    def imp(base, x):
        return f"{(base - x) / base * 100:+.0f}%" if base else "-"

    print("| workload | load | algorithm | flows done | avg slowdown | p99 slowdown | avg / p99 <1 BDP | avg / p99 >=1 BDP | 1G share | Hopper vs this (avg / p99) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for stem, load, wl, load_label in CELLS:
        cell = {r["algorithm"]: r for r in rows if r["workload"] == wl and r["load"] == load_label}
        if not cell:
            continue
        h = cell["hopper"]
        for a in ALGOS:
            r = cell[a]
            f2 = lambda v: f"{float(v):.2f}" if v not in ("", "nan") else "-"  # noqa: E731
            vs = "" if a == "hopper" else (f"{imp(float(r['avg_all']), float(h['avg_all']))} / "
                                           f"{imp(float(r['p99_all']), float(h['p99_all']))}")
            share = f"{float(r['slow_link_share']) * 100:.1f}%" if r["slow_link_share"] else ""
            print(f"| {wl} | {load_label} | {a} | {r['flows_completed']}/{r['flows_total']} | {f2(r['avg_all'])} | "
                  f"{f2(r['p99_all'])} | {f2(r['avg_<1BDP'])} / {f2(r['p99_<1BDP'])} | "
                  f"{f2(r['avg_>=1BDP'])} / {f2(r['p99_>=1BDP'])} | {share} | {vs} |")


if __name__ == "__main__":
    main()
