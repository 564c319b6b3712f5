"""AI training on a rail-optimized fabric (README.md): per run, the iteration time, the CCT of
each kind of collective (labelled from SimAI's workload file, in the order rdma-lb expands an
iteration: forward layers first to last, then per layer last to first its input-gradient and
weight-gradient collectives, each once per group of its kind), bytes by link class and per spine;
per algorithm, mean and min-max over seeds. Writes results.csv (one row per run),
collectives.csv (per run and collective kind) and the figures; prints the table.

usage: analyze.py RUNS_DIR OUT_DIR
RUNS_DIR holds the sweep's <config>-<lb>-s<seed>-<hash>/ directories (summary.json, flows.csv,
collectives.csv, port_bytes.csv). Rows of the committed results.csv, collectives.csv and spines.csv
whose run (scenario, algorithm, seed) is not under RUNS_DIR are kept (raw outputs are not
committed, so a run on another machine adds rows instead of dropping them); the tables and
figures are redrawn only for the scenarios with runs under RUNS_DIR."""

import collections
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import figure_grid, linestyle_for, save, style_for  # noqa: E402
from plots.tables import markdown, write_csv  # noqa: E402

HERE = Path(__file__).resolve().parent
# No-contention estimates from first principles (README.md, "Bound"): the DP reduce-scatter's
# critical chain of 127 ring steps (6.01 us send latency each; ~32 NIC hops at their ideal FCT,
# 13.0 us, ~95 NVLink hops at 1.3 us), and the iteration = 3.91 ms of NVLink-only phases + it.
BOUND_DP_MS = {"llama7b_tp2_256g": 1.30, "llama7b_tp2_256g_nicsr": 1.30}
BOUND_ITERATION_MS = {"llama7b_tp2_256g": 5.21, "llama7b_tp2_256g_nicsr": 5.21}
REPO = HERE.parents[1]


def simai_topology(path):
    """(node_count, gpus, nvswitch ids, switch ids) of a SimAI topology file."""
    tokens = path.read_text().split()
    nodes, _gps, nvs, sws = (int(t) for t in tokens[:4])
    ids = [int(t) for t in tokens[6:6 + nvs + sws]]
    return nodes, nodes - nvs - sws, set(ids[:nvs]), set(ids[nvs:])


def simai_labels(workload, world, tp, ep, comm_scale):
    """One (layer name, phase, group, kind, bytes as sent) per collective record, in expansion
    order; sizes scaled by SimAI's comm_scale (truncated), then forward ones raised to 4,096.
    A comm type's suffix names its group (`_EP`, `_DP_EP`); without one, forward and input-
    gradient collectives are TP's and weight-gradient ones DP's (rdma_lb_scenario::simai)."""
    lines = workload.read_text().split("\n")
    count = int(lines[1].split()[0])
    toks = " ".join(lines[2:]).split()
    layers = [toks[i * 12:(i + 1) * 12] for i in range(count)]
    dp = world // tp
    # Records per issue = groups of the kind: TP blocks, DP strides, EP and DP_EP slices of DP.
    groups = {"TP": world // tp, "DP": tp, "EP": world // ep, "DP_EP": world // (dp // ep)}
    out = []

    def issue(layer, phase, slot_type, size, default):
        kind = next((k for k in ("ALLREDUCE", "ALLTOALL", "ALLGATHER", "REDUCESCATTER")
                     if slot_type.startswith(k)), None)
        if kind is None:
            return
        suffix = slot_type[len(kind):]
        group = {"": default, "_EP": "EP", "_DP_EP": "DP_EP"}[suffix]
        size = int(int(size) * comm_scale)
        if phase == "fwd" and size > 0:
            size = max(size, 4096)
        out.extend([(layer, phase, group, kind, size)] * groups[group])

    for i, l in enumerate(layers):
        issue(i, "fwd", l[3], l[4], "TP")
    for i in reversed(range(count)):
        issue(i, "ig", layers[i][6], layers[i][7], "TP")
        issue(i, "wg", layers[i][9], layers[i][10], "DP")
    return [(layers[lay][0], *rest) for lay, *rest in out]


def run_row(run, labels, topo, comm_scale):
    s = json.loads((run / "summary.json").read_text())
    nodes, gpus, nvswitches, switches = topo
    nvlink = nic = 0
    end = 0
    with open(run / "flows.csv") as f:
        flows = list(csv.DictReader(f))
    nic_fct = []
    for r in flows:
        b = int(r["size_bytes"])
        if int(r["src"]) >= nodes:
            nvlink += b
        else:
            nic += b
            if r["fct_ns"]:
                nic_fct.append(int(r["fct_ns"]))
        if r["fct_ns"]:
            end = max(end, int(r["start_ns"]) + int(r["fct_ns"]))
    nic_fct.sort()
    with open(run / "collectives.csv") as f:
        colls = list(csv.DictReader(f))
    assert len(colls) == len(labels), (run, len(colls), len(labels))
    per_kind = collections.defaultdict(list)
    for c, lab in zip(colls, labels):
        name, phase, group, kind, size = lab
        per_kind[(phase, group, kind, size)].append(
            (int(c["start_ns"]), int(c["finish_ns"])))
    kinds = []
    for (phase, group, kind, size), spans in per_kind.items():
        ccts = [f - s0 for s0, f in spans]
        kinds.append({"phase": phase, "group": group, "collective": kind,
                      "bytes": size, "records": len(spans),
                      "mean_cct_us": sum(ccts) / len(ccts) / 1e3,
                      "max_cct_us": max(ccts) / 1e3})
    # Bytes per spine (PSW): what every ASW sent up to it, from port_bytes.csv.
    spine = collections.Counter()
    pb = run / "port_bytes.csv"
    with open(pb) if pb.exists() else open("/dev/null") as f:
        for r in csv.DictReader(f):
            a, b = int(r["switch"]), int(r["peer"])
            if b in switches and a in switches and a < b:
                spine[b] += int(r["tx_bytes"])
    spines = dict(sorted(spine.items()))
    up = sorted(spine.values())
    c = s["counters"]
    row = {"algorithm": s["algorithm"], "seed": s["seed"],
           "iteration_ms": end / 1e6,
           "dp_rs_ms": next(k["max_cct_us"] for k in kinds if k["group"] == "DP") / 1e3,
           "nic_fct_mean_us": sum(nic_fct) / len(nic_fct) / 1e3,
           "nic_fct_p99_us": nic_fct[int(0.99 * (len(nic_fct) - 1))] / 1e3,
           "nvlink_bytes": nvlink, "nic_bytes": nic,
           # (no spine bytes at all: PXN keeps every NIC flow on its rail switch)
           "spine_bytes": sum(up), "spine_max_over_mean": up[-1] / (sum(up) / len(up)) if sum(up) else 0,
           "spine_min_over_mean": up[0] / (sum(up) / len(up)) if sum(up) else 0,
           "retx_pkts": c.get("retx_pkts", 0), "pfc_pauses": c["pfc_pauses_sent"], "packet_hops": c["packet_hops"],
           "timeouts": c.get("timeouts", 0), "trims": c.get("trims", 0),
           "flows_completed": f"{s['flows_completed']}/{s['flows_total']}",
           "cpu_s": s["cpu_time_s"], "peak_mib": s["peak_rss_mib"],
           "comm_scale": comm_scale}
    return row, kinds, spines


def size(b):
    """Bytes in the largest binary unit that keeps a whole number part."""
    for unit, n in (("MiB", 2**20), ("KiB", 2**10)):
        if b >= n:
            return f"{b / n:.3g} {unit}"
    return f"{b} B"


def spread(vals, fmt):
    if not vals:
        return ""  # a column the runs predate
    return f"{fmt(sum(vals) / len(vals))} ({fmt(min(vals))}-{fmt(max(vals))})"


def config_of(run):
    """The run's TOML (summary.json's config echo names it) -> (topology, workload, scales)."""
    s = json.loads((run / "summary.json").read_text())
    return s["scenario"]


def bars(ax, algos, rows, key, scale=1.0):
    """One bar per algorithm (mean, min-max whisker); an axis clipped at 1.6x the median
    algorithm, the clipped bars' values written at the top."""
    means = sorted(sum(v) / len(v) for v in (
        [float(r[key]) * scale for r in rows if r["algorithm"] == a] for a in algos))
    top = min(means[-1] * 1.05, means[len(means) // 2] * 1.6)
    ax.set_ylim(top=top)
    for i, a in enumerate(algos):
        vals = [float(r[key]) * scale for r in rows if r["algorithm"] == a]
        mean = sum(vals) / len(vals)
        if mean > top:
            ax.text(i, top * 0.97, f"{mean:.3g}", fontsize=5, ha="center", va="top",
                    rotation=90, color="w")
        color = style_for(a)[0]
        switch = linestyle_for(a) == "--"
        ax.bar(i, mean, color=color, width=0.6, hatch="///" if switch else None,
               edgecolor="w" if switch else None)
        ax.errorbar(i, mean, yerr=[[max(0.0, mean - min(vals))], [max(0.0, max(vals) - mean)]], color="k",
                    capsize=2, lw=0.6)
    ax.set_xticks(list(range(len(algos))))
    ax.set_xticklabels(algos, rotation=40, ha="right", fontsize=6)
    ax.grid(True, axis="y")


def timeline(runs, scenario, rows, labels, png):
    """Seed 1 of ECMP and of the algorithm with the shortest iteration: each collective issue
    (all groups of one layer phase) as a bar from its first start to its last finish."""
    s1 = [r for r in rows if int(r["seed"]) == 1]
    if not s1:
        return
    best = min(s1, key=lambda r: float(r["iteration_ms"]))["algorithm"]
    algos = ["ecmp", best] if best != "ecmp" else ["ecmp"]
    lanes = []
    for lab in labels:
        if f"{lab[1]} {lab[2]}" not in lanes:
            lanes.append(f"{lab[1]} {lab[2]}")
    fig, axes = figure_grid(len(lanes) * 3 / 10 * len(algos), len(algos), 1, sharex=True,
                            width_in=6.6)
    for (ax,), a in zip(axes, algos):
        d = next(runs.glob(f"{scenario}-{a}-s1-*"))
        with open(d / "collectives.csv") as f:
            colls = list(csv.DictReader(f))
        issues = []  # consecutive records of one label = one issue (all its groups)
        for c, lab in zip(colls, labels):
            t0, t1 = int(c["start_ns"]), int(c["finish_ns"])
            if issues and issues[-1][0] == lab:
                issues[-1][1] = min(issues[-1][1], t0)
                issues[-1][2] = max(issues[-1][2], t1)
            else:
                issues.append([lab, t0, t1])
        for key, t0, t1 in issues:
            lane = lanes.index(f"{key[1]} {key[2]}")
            ax.barh(lane, (t1 - t0) / 1e6, left=t0 / 1e6, height=0.6,
                    color=style_for(a)[0] if key[2] != "TP" else "0.6")
        ax.set_yticks(range(len(lanes)))
        ax.set_yticklabels(lanes, fontsize=6)
        ax.set_title(f"{a}, seed 1", fontsize=6)
        ax.grid(True, axis="x")
    axes[-1][0].set_xlabel("Time (ms)")
    fig.tight_layout(pad=0.3)
    save(fig, png)


def kept(path, fresh):
    """The rows of a committed CSV whose run (scenario, algorithm, seed) is not in ``fresh``."""
    if not path.exists():
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f)
                if (r["scenario"], r["algorithm"], r["seed"]) not in fresh]


def main():
    runs, out = Path(sys.argv[1]), Path(sys.argv[2])
    import tomllib  # noqa: PLC0415

    rows, kind_rows, spine_rows = [], [], []
    cache = {}
    for d in sorted(runs.iterdir()):
        if not all((d / f).exists() for f in ("summary.json", "collectives.csv", "flows.csv")):
            continue
        scenario = config_of(d)
        cfg_path = HERE / f"{scenario}.toml"
        if scenario not in cache:
            cfg = tomllib.loads(cfg_path.read_text())
            topo = simai_topology((cfg_path.parent / cfg["topology"]["simai_file"]).resolve())
            wl = (cfg_path.parent / cfg["workload"]["simai_file"]).resolve()
            header = wl.read_text().split("\n")[0].split()
            tp = int(header[header.index("model_parallel_NPU_group:") + 1])
            ep = int(header[header.index("ep:") + 1]) if "ep:" in header else 1
            scale = cfg["workload"].get("simai_comm_scale", 1.0)
            cache[scenario] = (topo, simai_labels(wl, topo[1], tp, ep, scale), scale)
        topo, labels, comm_scale = cache[scenario]
        row, kinds, spines = run_row(d, labels, topo, comm_scale)
        row = {"scenario": scenario, **row}
        spine_rows.extend({"scenario": scenario, "algorithm": row["algorithm"],
                           "seed": row["seed"], "psw": psw, "bytes_from_asws": b}
                          for psw, b in spines.items())
        rows.append(row)
        for k in kinds:
            kind_rows.append({"scenario": scenario, "algorithm": row["algorithm"],
                              "seed": row["seed"], **k,
                              "mean_cct_us": f"{k['mean_cct_us']:.2f}",
                              "max_cct_us": f"{k['max_cct_us']:.2f}"})
    from plots.style import ordered  # noqa: PLC0415

    for r in rows:
        for k in ("iteration_ms", "dp_rs_ms"):
            r[k] = f"{r[k]:.4f}"
        for k in ("nic_fct_mean_us", "nic_fct_p99_us"):
            r[k] = f"{r[k]:.2f}"
        for k in ("spine_max_over_mean", "spine_min_over_mean"):
            r[k] = f"{r[k]:.3f}"
    fresh = {(r["scenario"], r["algorithm"], str(r["seed"])) for r in rows}
    fresh_scenarios = {r["scenario"] for r in rows}
    # (rows from before a column was added leave it empty)
    rows += [{**dict.fromkeys(rows[0], ""), **r} for r in kept(out / "results.csv", fresh)]
    kind_rows += kept(out / "collectives.csv", fresh)
    spine_rows += kept(out / "spines.csv", fresh)
    rank = {a: i for i, a in enumerate(ordered(sorted({r["algorithm"] for r in rows})))}
    rows.sort(key=lambda r: (r["scenario"], rank[r["algorithm"]], int(r["seed"])))
    write_csv(rows, out / "results.csv")
    write_csv(kind_rows, out / "collectives.csv")
    if spine_rows:
        write_csv(spine_rows, out / "spines.csv")
    for scenario in sorted(fresh_scenarios):
        rs = [r for r in rows if r["scenario"] == scenario]
        algos = ordered(sorted({r["algorithm"] for r in rs}))
        ecmp = [float(r["iteration_ms"]) for r in rs if r["algorithm"] == "ecmp"]
        base = sum(ecmp) / len(ecmp) if ecmp else float("nan")
        summary = []
        for a in algos:
            ra = [r for r in rs if r["algorithm"] == a]
            it = [float(r["iteration_ms"]) for r in ra]
            summary.append({
                "algorithm": a, "seeds": len(ra),
                "iteration_ms": spread(it, lambda v: f"{v:.3f}"),
                "vs_ecmp": f"{sum(it) / len(it) / base:.3f}",
                "dp_reduce_scatter_ms": spread([float(r["dp_rs_ms"]) for r in ra],
                                               lambda v: f"{v:.3f}"),
                "nic_fct_mean_us": spread([float(r["nic_fct_mean_us"]) for r in ra],
                                          lambda v: f"{v:.1f}"),
                "nic_fct_p99_us": spread([float(r["nic_fct_p99_us"]) for r in ra],
                                         lambda v: f"{v:.1f}"),
                "spine_max/mean": spread([float(r["spine_max_over_mean"]) for r in ra],
                                         lambda v: f"{v:.2f}"),
                "retx_pkts": spread([int(r["retx_pkts"]) for r in ra], lambda v: f"{v:.0f}"),
                "pfc_pauses": spread([int(r["pfc_pauses"]) for r in ra], lambda v: f"{v:.0f}"),
                **{k: spread([int(r[k]) for r in ra if r[k] != ""], lambda v: f"{v:.0f}")
                   for k in ("timeouts", "trims")},
                "cpu_s": spread([float(r["cpu_s"]) for r in ra], lambda v: f"{v:.0f}"),
            })
        print(f"== {scenario}")
        print(markdown(summary))
        write_csv(summary, out / f"summary_{scenario}.csv")

        fig, ((ax_it, ax_dp, ax_sp),) = figure_grid(2.2, 1, 3, width_in=9.9)
        bars(ax_it, algos, rs, "iteration_ms")
        ax_it.set_ylabel("Iteration time (ms)")
        bars(ax_dp, algos, rs, "dp_rs_ms")
        ax_dp.set_ylabel("DP reduce-scatter CCT (ms)")
        bars(ax_sp, algos, rs, "nic_fct_mean_us")
        ax_sp.set_ylabel("Mean FCT of NIC flows (us)")
        for ax, bound in ((ax_it, BOUND_ITERATION_MS.get(scenario)),
                          (ax_dp, BOUND_DP_MS.get(scenario))):
            if bound:
                ax.axhline(bound, color="0.3", ls="--", lw=0.7)
                ax.text(-0.45, bound, f"no-contention estimate {bound} ms", fontsize=5,
                        va="bottom", color="0.3")
        for ax, key, bounds in ((ax_it, "iteration_ms", BOUND_ITERATION_MS),
                                (ax_dp, "dp_rs_ms", BOUND_DP_MS)):
            lo = min([float(r[key]) for r in rs] + [bounds.get(scenario, float("inf"))])
            ax.set_ylim(bottom=lo * 0.9)
        ax_it.set_title(f"{scenario}: mean, min-max over seeds", fontsize=6)
        fig.tight_layout(pad=0.3)
        save(fig, out / f"iteration_{scenario}.png")

        # Per collective kind: mean CCT per algorithm (seeds pooled), normalised to ECMP's.
        ks = [k for k in kind_rows if k["scenario"] == scenario]
        keys = []
        for k in ks:
            key = (k["phase"], k["group"], k["collective"], int(k["bytes"]))
            if key not in keys:
                keys.append(key)
        fig, ((ax,),) = figure_grid(2.4, 1, 1, width_in=6.6)
        width = 0.8 / len(algos)
        for j, a in enumerate(algos):
            ys = []
            for key in keys:
                v = [float(k["mean_cct_us"]) for k in ks if k["algorithm"] == a and
                     (k["phase"], k["group"], k["collective"], int(k["bytes"])) == key]
                ys.append(sum(v) / len(v))
            ax.bar([i + j * width for i in range(len(keys))], ys, width=width,
                   color=style_for(a)[0], label=a)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(keys))])
        ax.set_xticklabels([f"{p} {g} {c.lower()}\n{size(b)}" for p, g, c, b in keys],
                           fontsize=5)
        ax.set_yscale("log")
        ax.set_ylabel("Mean CCT (us)")
        ax.legend(fontsize=5, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.25))
        ax.grid(True, axis="y")
        fig.tight_layout(pad=0.3)
        save(fig, out / f"collectives_{scenario}.png")
        timeline(runs, scenario, rs, cache[scenario][1], out / f"timeline_{scenario}.png")
    for p in out.glob("*.pdf"):
        p.unlink()  # keep the PNGs only


if __name__ == "__main__":
    main()
