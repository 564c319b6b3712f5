"""Whack-a-Mole in collectives over degraded spines (collective_slow_spines.toml): per run, the
slowest group's CCT (collectives.csv) and the slow spines' share of the ToR uplink bytes
(uplink.txt, whole run, ACKs included); per algorithm, mean and min-max over seeds beside the
capacity-proportional bound. Writes the results CSV and a two-panel figure; prints the tables.

usage: analyze_collectives.py RUNS_DIR RESULTS_CSV FIGURE_PNG
RUNS_DIR holds the sweep's <config>-<lb>-s<seed>-<hash>/ directories. A leaf's ports are its 16
hosts (1-16), then the spines in link order (17-32): spines 272-275, the slow ones, are 17-20."""

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import figure_grid, save, style_for  # noqa: E402
from plots.tables import markdown, write_csv  # noqa: E402

SLOW_PORTS = {17, 18, 19, 20}
DEST = 'profile_scope = "destination"'
ORDER = ["whack-a-mole", f"whack-a-mole {DEST}", "hopper", "reps", "spray", "ecmp"]
LABEL = {f"whack-a-mole {DEST}": "wam-destination"}

# The bound, from first principles. A ring AllReduce of S bytes per rank over N ranks sends
# 2 (N - 1) chunks of S / N per rank; with one rank per ToR every chunk crosses the fabric, and
# each ToR's 16 ranks (one per group) send through its uplinks at once. uet wire: each packet
# carries at most 4086 B of payload plus a 64 B header.
N, S, HOSTS_PER_TOR = 16, 16 << 20, 16
PAYLOAD, HEADER = 4086, 64
CHUNK = S // N
CHUNK_WIRE = CHUNK + -(-CHUNK // PAYLOAD) * HEADER
RANK_WIRE = 2 * (N - 1) * CHUNK_WIRE
UPLINK_BPS = 12 * 400e9 + 4 * 100e9  # 12 spines at 400 G, 4 at 100 G
HOST_BPS = 400e9
BOUND_NS = max(HOSTS_PER_TOR * RANK_WIRE * 8 / UPLINK_BPS, RANK_WIRE * 8 / HOST_BPS) * 1e9
CAPACITY_SHARE = 4 * 100 / (12 * 400 + 4 * 100)


def run_row(run):
    s = json.loads((run / "summary.json").read_text())
    with open(run / "collectives.csv") as f:
        cct = max(int(r["finish_ns"]) - int(r["start_ns"]) for r in csv.DictReader(f))
    final = {}
    with open(run / "uplink.txt") as f:
        for line in f:
            t, tor, port, b = (int(x) for x in line.strip().split(","))
            final[(tor, port)] = b  # cumulative: the last line of a port is its total
    total = sum(final.values())
    slow = sum(b for (_, port), b in final.items() if port in SLOW_PORTS)
    # How busy the uplinks were while the collectives ran (0 to the last finish): a sender's
    # packets that a full queue drops are never carried, so the carried share of a slow link
    # can be capped by its capacity whatever the load balancer offered it.
    with open(run / "collectives.csv") as f:
        end_ns = max(int(r["finish_ns"]) for r in csv.DictReader(f))
    n_slow = sum(1 for (_, port) in final if port in SLOW_PORTS)
    n_fast = len(final) - n_slow
    busy_slow = slow * 8 / (n_slow * 100e9 * end_ns * 1e-9)
    busy_fast = (total - slow) * 8 / (n_fast * 400e9 * end_ns * 1e-9)
    c = s["counters"]
    variant = f"{s['algorithm']} {s['lb_params']}".strip()
    return {"variant": variant, "algorithm": s["algorithm"], "seed": s["seed"],
            "groups_done": f"{len(s.get('collectives', []) or [])}",
            "slowest_cct_us": f"{cct / 1e3:.1f}", "cct_over_bound": f"{cct / BOUND_NS:.3f}",
            "slow_share": f"{slow / total:.4f}", "slow_busy": f"{busy_slow:.3f}",
            "fast_busy": f"{busy_fast:.3f}", "retx_pkts": c["retx_pkts"],
            "timeouts": c["timeouts"], "probes": c["probes"],
            "flows_completed": f"{s['flows_completed']}/{s['flows_total']}"}


def spread(vals, fmt):
    return f"{fmt(sum(vals) / len(vals))} ({fmt(min(vals))}-{fmt(max(vals))})"


def main():
    runs, out_csv, fig_png = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    rows = [run_row(d) for d in sorted(runs.iterdir()) if (d / "summary.json").exists()]
    rows.sort(key=lambda r: (ORDER.index(r["variant"]) if r["variant"] in ORDER else 99,
                             r["variant"], int(r["seed"])))
    for r in rows:
        r.pop("groups_done")
    write_csv(rows, out_csv)
    print(f"bound: {HOSTS_PER_TOR} ranks x {RANK_WIRE} B on the wire per ToR over "
          f"{UPLINK_BPS / 1e9:.0f} Gbps of uplinks = {BOUND_NS / 1e3:.1f} us; "
          f"capacity share of the slow spines {CAPACITY_SHARE:.4f}")
    print(markdown(rows))
    algos = [a for a in ORDER if any(r["variant"] == a for r in rows)]
    summary = []
    for a in algos:
        rs = [r for r in rows if r["variant"] == a]
        cct = [float(r["slowest_cct_us"]) for r in rs]
        share = [float(r["slow_share"]) for r in rs]
        summary.append({"variant": LABEL.get(a, a), "seeds": len(rs),
                        "slowest_cct_us": spread(cct, lambda v: f"{v:.0f}"),
                        "x_bound": spread([v * 1e3 / BOUND_NS for v in cct], lambda v: f"{v:.2f}"),
                        "slow_share_pct": spread([100 * v for v in share], lambda v: f"{v:.1f}"),
                        "slow_busy_pct": spread([100 * float(r["slow_busy"]) for r in rs],
                                                lambda v: f"{v:.0f}"),
                        "fast_busy_pct": spread([100 * float(r["fast_busy"]) for r in rs],
                                                lambda v: f"{v:.0f}"),
                        "retx_pkts": spread([int(r["retx_pkts"]) for r in rs],
                                            lambda v: f"{v:.0f}")})
    print()
    print(markdown(summary))

    fig, ((ax_cct, ax_share),) = figure_grid(2.0, 1, 2)
    x = range(len(algos))
    for ax, key, scale in ((ax_cct, "slowest_cct_us", 1e-3), (ax_share, "slow_share", 100)):
        for i, a in enumerate(algos):
            rs = [r for r in rows if r["variant"] == a]
            vals = [float(r[key]) * scale for r in rs]
            mean = sum(vals) / len(vals)
            color = style_for(rs[0]["algorithm"])[0]
            ax.bar(i, mean, color=color, width=0.6, hatch="///" if a in LABEL else None,
                   edgecolor="w" if a in LABEL else None)
            ax.errorbar(i, mean, yerr=[[mean - min(vals)], [max(vals) - mean]], color="k",
                        capsize=2, lw=0.6)
        ax.set_xticks(list(x))
        ax.set_xticklabels([LABEL.get(a, a) for a in algos], rotation=30, ha="right", fontsize=6)
        ax.grid(True, axis="y")
    ax_cct.axhline(BOUND_NS / 1e6, color="0.3", ls="--", lw=0.7)
    ax_cct.text(-0.45, BOUND_NS / 1e6, f"capacity bound {BOUND_NS / 1e3:.0f} us", fontsize=5,
                ha="left", va="bottom", color="0.3")
    ax_cct.set_ylabel("Slowest group's CCT (ms)")
    ax_share.axhline(100 * CAPACITY_SHARE, color="0.3", ls=":", lw=0.7)
    ax_share.axhline(25, color="0.5", ls="--", lw=0.7)
    ax_share.text(-0.45, 25, "uniform 25 %", fontsize=5, ha="left", va="bottom")
    ax_share.text(-0.45, 100 * CAPACITY_SHARE, "capacity 7.7 %", fontsize=5, ha="left",
                  va="bottom")
    ax_share.set_ylabel("Slow spines' byte share (%)")
    ax_share.set_ylim(0, 30)
    ax_cct.set_title("16 ring AllReduces of 16 MiB, uet", fontsize=6)
    ax_share.set_title("4 of 16 spines at 100 G; mean, min-max over seeds", fontsize=6)
    fig.tight_layout(pad=0.3)
    save(fig, fig_png)


if __name__ == "__main__":
    main()
