"""Dead paths: per run (config x algorithm x seed), when the last data packet (resends included)
and the last probe went into the failed link, from failed_drops.csv and summary.json.

    python3 analyze.py OUT_ROOT RESULTS_CSV

Times are after the failure (1 ms), in us and in base RTTs (8.4 us for IRN's 1 KB packets, 9.4
us for uet's 4 KiB ones: 8 x 1 us of links plus the serialisations). `last_any_us` is what
failed_drops.csv reported before probes were counted apart (the last loss of any packet).
"""

import csv
import json
import sys
from pathlib import Path

FAIL_NS = 1_000_000
BASE_RTT_US = {"irn": 8.4, "uet": 9.4}
ORDER = ["whack-a-mole", "reps", "hopper", "flowbender", "spray", "ecmp"]


def after(ns):
    return "" if ns == 0 else round((ns - FAIL_NS) / 1e3, 1)


def main():
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    rows = []
    for s in sorted(root.glob("*/summary.json")):
        d = s.parent
        summ = json.loads(s.read_text())
        drops = list(csv.DictReader(open(d / "failed_drops.csv")))
        flows = [r for r in drops if r["flow_id"]]
        last = max((int(r["last_drop_ns"]) for r in drops), default=0)
        last_resend = max((int(r["last_resend_drop_ns"]) for r in drops), default=0)
        last_probe = max((int(r["last_probe_drop_ns"]) for r in drops), default=0)
        scen = summ["scenario"]
        transport = "uet" if "_uet_" in scen else "irn"
        rtt = BASE_RTT_US[transport]
        a = after(last)
        rows.append({
            "config": scen,
            "transport": transport,
            "failure": "one-way" if "oneway" in scen else "two-way",
            "algorithm": summ["algorithm"],
            "seed": summ["seed"],
            "flows_completed": f'{summ["flows_completed"]}/{summ["flows_total"]}',
            "flows_hit": len(flows),
            "data_drops": sum(int(r["drops"]) for r in drops),
            "resend_drops": sum(int(r["resend_drops"]) for r in drops),
            "probe_drops": sum(int(r["probe_drops"]) for r in drops),
            "last_data_us": a,
            "last_data_rtts": "" if a == "" else round(a / rtt, 1),
            "last_resend_us": after(last_resend),
            "last_probe_us": after(last_probe),
            "last_any_us": after(max(last, last_probe)),
            "sim_end_us": after(summ["sim_time_ns"]),
        })
    rows.sort(key=lambda r: (r["transport"], r["failure"], ORDER.index(r["algorithm"])
                             if r["algorithm"] in ORDER else 99, r["seed"]))
    if not rows:
        sys.exit("no runs under " + str(root))
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    cols = ["config", "algorithm", "seed", "flows_completed", "flows_hit", "data_drops",
            "resend_drops", "probe_drops", "last_data_us", "last_data_rtts", "last_resend_us",
            "last_probe_us", "last_any_us"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))


if __name__ == "__main__":
    main()
