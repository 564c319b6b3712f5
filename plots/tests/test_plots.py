"""Fast tests of plots/: hand-computed ideal FCTs, slowdowns, buckets, percentiles, CCT, errors, CLI."""

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plots import InputError, analysis
from plots.cli import main
from plots.io import read_collectives, read_fct_txt, read_flows_csv, read_run
from plots.slowdown import base_rtt_ns, ideal_fct_ns, slowdown, total_wire_bytes

REPO = Path(__file__).resolve().parents[2]
FLOWS_HEADER = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,retx_pkts,nacks,path_switches,algorithm"

# 100G leaf-spine, 1 us links. Inter-rack = 4 links (host-leaf-spine-leaf-host), intra-rack = 2.
# base RTT = 2*4*1000 + 4 * (1000 B * 8 / 100 Gb/s = 80 ns) = 8320 ns (the reference's base RTT).
# 1000 B flow: 1 packet -> 1000 + 48 = 1048 B -> 83.84 ns, truncated to 83 -> ideal 8403 ns.
IDEAL_1000B = 8403
# 10 MB = 10^7 B: 10^4 packets -> 10,480,000 B -> 838,400 ns -> ideal 846,720 ns.
IDEAL_10MB = 846_720


# ---------------------------------------------------------------- ideal FCT and slowdown
def test_base_rtt_matches_spec_pair_rtts():
    assert base_rtt_ns(4) == 8320
    assert base_rtt_ns(2) == 4160
    assert base_rtt_ns(6) == 12480  # fat-tree k=8 inter-pod


def test_total_wire_bytes_adds_48_per_started_packet():
    assert total_wire_bytes(1) == 49
    assert total_wire_bytes(1000) == 1048
    assert total_wire_bytes(1001) == 1001 + 2 * 48
    assert total_wire_bytes(10_000_000) == 10_480_000


def test_ideal_fct_reference():
    assert ideal_fct_ns(1000, hops=4) == IDEAL_1000B
    assert ideal_fct_ns(10_000_000, hops=4) == IDEAL_10MB
    assert ideal_fct_ns(1000, hops=2) == 4160 + 83
    # 1500 B: 2 packets -> 1596 B -> 127.68 ns -> 127
    assert ideal_fct_ns(1500, hops=4) == 8320 + 127


def test_ideal_fct_fixed_uses_first_packet_wire_size_per_hop():
    # per hop: (1000 + 48) B * 8 / 100 = 83.84 ns, x4 = 335.36; RTT = 8335.36
    assert ideal_fct_ns(1000, hops=4, variant="fixed") == pytest.approx(8000 + 335.36 + 83.84)
    assert ideal_fct_ns(10_000_000, hops=4, variant="fixed") == pytest.approx(8335.36 + 838_400)
    # a 100 B flow's single packet is 148 B: per hop 11.84 ns
    assert ideal_fct_ns(100, hops=4, variant="fixed") == pytest.approx(8000 + 4 * 11.84 + 11.84)
    with pytest.raises(ValueError):
        ideal_fct_ns(1000, hops=4, variant="nope")


def test_slowdown_is_ratio_floored_at_one():
    assert slowdown(2 * IDEAL_1000B, IDEAL_1000B) == 2.0
    assert slowdown(4000, IDEAL_1000B) == 1.0  # faster than "ideal" -> 1
    assert slowdown(IDEAL_10MB * 3, IDEAL_10MB) == 3.0
    np.testing.assert_allclose(slowdown([1, 20, 30], [10, 10, 10]), [1.0, 2.0, 3.0])


# ---------------------------------------------------------------- readers
def _fct_line(size, fct, ideal, start=2_010_000_000, i=0):
    return f"3 100 {10000 + i} 100 {size} {start} {fct} {ideal}\n"


def _run(tmp_path, name, algorithm, lines=None, csv_rows=None, seed=1):
    d = tmp_path / name
    d.mkdir()
    (d / "summary.json").write_text(json.dumps({"algorithm": algorithm, "seed": seed}))
    if lines is not None:
        (d / "fct.txt").write_text("".join(lines))
    if csv_rows is not None:
        (d / "flows.csv").write_text(FLOWS_HEADER + "\n" + "".join(r + "\n" for r in csv_rows))
    return d


def test_read_fct_txt(tmp_path):
    p = tmp_path / "fct.txt"
    p.write_text(_fct_line(1000, 2 * IDEAL_1000B, IDEAL_1000B) + "\n" + _fct_line(10_000_000, 4000, IDEAL_10MB, i=1))
    f = read_fct_txt(p)
    assert len(f) == 2
    assert list(f.size) == [1000, 10_000_000]
    assert list(f.slowdown) == [2.0, 1.0]


def test_read_flows_csv_and_run_dir(tmp_path):
    rows = [f"0,3,100,1000,2010000000,{3 * IDEAL_1000B},{IDEAL_1000B},3.0,0,0,0,spray",
            f"1,3,100,10000000,2010000000,{IDEAL_10MB // 2},{IDEAL_10MB},1,2,1,5,spray"]
    d = _run(tmp_path, "r", "spray", lines=[_fct_line(5, 5, 5)], csv_rows=rows)
    run = read_run(d)  # flows.csv preferred over fct.txt
    assert run.algorithm == "spray" and run.seed == 1
    assert list(run.flows.slowdown) == [3.0, 1.0]
    assert len(read_run(d, source="fct").flows) == 1


def test_flows_csv_incomplete_flows_listed_not_plotted(tmp_path):
    # A flow that did not complete (e.g. a link failed for good) has empty fct_ns and slowdown.
    p = tmp_path / "flows.csv"
    p.write_text(FLOWS_HEADER + "\n" + f"0,3,100,1000,0,{2 * IDEAL_1000B},{IDEAL_1000B},2,0,0,0,ecmp\n"
                 f"1,3,100,5000,7,,{IDEAL_1000B},,4,1,0,ecmp\n")
    flows, algo = read_flows_csv(p)
    assert algo == "ecmp" and list(flows.slowdown) == [2.0]
    p.write_text(FLOWS_HEADER + "\n" + f"1,3,100,x,7,,{IDEAL_1000B},,4,1,0,ecmp\n")
    with pytest.raises(InputError, match=r"flows\.csv:2: column size_bytes"):
        read_flows_csv(p)
    p.write_text(FLOWS_HEADER + "\n" + f"1,3,100,5000,7,,{IDEAL_1000B},,4,1,0,ecmp\n")
    with pytest.raises(InputError, match=r"flows\.csv:2: algorithm 'ecmp' differs"):
        read_flows_csv(p, expect_algorithm="reps")


def test_flows_csv_inconsistent_slowdown_and_algorithm(tmp_path):
    p = tmp_path / "flows.csv"
    p.write_text(FLOWS_HEADER + "\n" + f"0,3,100,1000,0,{2 * IDEAL_1000B},{IDEAL_1000B},2.5,0,0,0,ecmp\n")
    with pytest.raises(InputError, match=r"flows\.csv:2: slowdown 2\.5"):
        read_flows_csv(p)
    p.write_text(FLOWS_HEADER + "\n" + f"0,3,100,1000,0,{2 * IDEAL_1000B},{IDEAL_1000B},2,0,0,0,ecmp\n")
    with pytest.raises(InputError, match=r"flows\.csv:2: algorithm 'ecmp' differs"):
        read_flows_csv(p, expect_algorithm="reps")


@pytest.mark.parametrize("text,where,what", [
    ("3 100 10000 100 1000 0 16806 8403\n3 100 10001 100 1000 0 16806\n", ":2:", "expected 8 columns"),
    ("3 100 10000 100 1000 0 16806 8403 9\n", ":1:", "got 9"),
    ("3 100 10000 100 1k 0 16806 8403\n", ":1:", "size_bytes: not an integer"),
    ("3 100 10000 100 1000 0 16806 0\n", ":1:", "ideal_fct_ns: must be > 0"),
])
def test_bad_fct_txt(tmp_path, text, where, what):
    p = tmp_path / "fct.txt"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_fct_txt(p)
    assert f"{p}{where}" in str(e.value) and what in str(e.value)


def test_bad_flows_csv_column_count_and_header(tmp_path):
    p = tmp_path / "flows.csv"
    p.write_text(FLOWS_HEADER + "\n0,3,100,1000,0,16806,8403,2,0,0,0\n")
    with pytest.raises(InputError, match=r"flows\.csv:2: expected 12 columns, got 11"):
        read_flows_csv(p)
    p.write_text("flow_id,src\n")
    with pytest.raises(InputError, match=r"flows\.csv:1: header must be exactly"):
        read_flows_csv(p)


def test_run_dir_needs_summary_with_algorithm_and_seed(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    with pytest.raises(InputError, match="summary.json: missing"):
        read_run(d)
    (d / "summary.json").write_text('{"algorithm": "ecmp"}')
    with pytest.raises(InputError, match="missing key 'seed'"):
        read_run(d)
    (d / "summary.json").write_text('{"algorithm": "ecmp", "seed": 3}')
    with pytest.raises(InputError, match="neither flows.csv nor fct.txt"):
        read_run(d)


# ---------------------------------------------------------------- statistics
def test_index_percentile_vs_interpolated():
    a = np.arange(1, 101, dtype=float)
    assert analysis.index_percentile(a, 0.5) == 51.0  # a[int(100*0.5)] = a[50]
    assert analysis.index_percentile(a, 0.99) == 100.0
    assert np.percentile(a, 99) == pytest.approx(99.01)


def _flows(sizes, slowdowns, ideal=1000.0):
    rows = [(s, 0.0, sd * ideal, ideal, 0, 1) for s, sd in zip(sizes, slowdowns)]
    from plots.io import _flows_from_rows
    return _flows_from_rows(rows)


def test_drop_largest_and_buckets_reference():
    # 40 flows, sizes 100..4000 B given in reverse; slowdown of the flow of size 100*k is k.
    sizes = [100 * k for k in range(40, 0, -1)]
    f = analysis.sort_by_size(_flows(sizes, [s / 100 for s in sizes]), drop_largest=True)
    assert len(f) == 39 and f.size[-1] == 3900  # the 4000 B flow is dropped
    b = analysis.bucket_stats(f, 20)
    # boundaries i*39//20: 0,1,3,5,...,37,39 -> bucket 1 holds 1 flow, the others 2
    assert [x.n for x in b] == [1] + [2] * 19
    assert b[0].size_max == 100 and b[0].avg == 1.0 and b[0].p99 == 1.0
    # bucket 2 = flows of 200 and 300 B, slowdowns 2 and 3: avg 2.5; p50 = a[int(2*.5)] = a[1] = 3
    assert (b[1].size_max, b[1].avg, b[1].p50, b[1].p99) == (300, 2.5, 3.0, 3.0)
    assert b[-1].size_max == 3900 and b[-1].avg == 38.5
    kept = analysis.sort_by_size(_flows(sizes, [1] * 40), drop_largest=False)
    assert len(kept) == 40 and kept.size[-1] == 4000


def test_buckets_with_equal_sizes_keep_file_order_and_floor():
    # 4 flows of equal size; slowdowns 0.5 (floored to 1), 2, 3, 4; 2 buckets, no drop.
    f = analysis.sort_by_size(_flows([1000] * 4, [0.5, 2, 3, 4]), drop_largest=False)
    b = analysis.bucket_stats(f, 2)
    assert [(x.n, x.avg) for x in b] == [(2, 1.5), (2, 3.5)]


def test_group_stats_bdp_split_interpolated():
    sizes = [1000] * 100 + [200_000] * 4
    sds = list(range(1, 101)) + [2, 4, 6, 8]
    g = {s.label: s for s in analysis.group_stats(_flows(sizes, sds))}
    assert g["<1BDP"].n == 100 and g["<1BDP"].p99 == pytest.approx(99.01) and g["<1BDP"].p50 == 50.5
    assert g["<1BDP"].avg == 50.5
    # 2,4,6,8: p50 = 5, p99 = 6 + 0.97*2 = 7.94
    assert g[">=1BDP"].p50 == 5.0 and g[">=1BDP"].p99 == pytest.approx(7.94) and g[">=1BDP"].avg == 5.0
    assert g["all"].n == 104 and g["all"].size_max == 200_000


def test_filter_window_matches_reference_inequalities():
    from plots.io import _flows_from_rows
    f = _flows_from_rows([(1000, 100, 10, 10, 0, 1), (1000, 101, 10, 10, 0, 1), (1000, 150, 50, 10, 0, 1)])
    kept = analysis.filter_flows(f, start_after_ns=100, finish_before_ns=200)
    assert list(kept.start_ns) == [101]  # start > 100 strictly; 150 + 50 < 200 fails


def test_recompute_ideal_leaf_spine():
    from plots.io import _flows_from_rows
    # hosts 0-15 on ToR 0, 16-31 on ToR 1: 3->100 inter-rack, 3->5 intra-rack
    f = _flows_from_rows([(1000, 0, 16806, 1, 3, 100), (1000, 0, 8486, 1, 3, 5), (10_000_000, 0, 1, 1, 3, 100)])
    ref = analysis.recompute_ideal(f, "reference", hosts_per_tor=16)
    assert list(ref.ideal_ns) == [IDEAL_1000B, 4243, IDEAL_10MB]
    assert list(ref.slowdown[:2]) == [2.0, 2.0]
    fixed = analysis.recompute_ideal(f, "fixed", hosts_per_tor=16)
    np.testing.assert_allclose(fixed.ideal_ns, [8419.2, 4000 + 2 * 83.84 + 83.84, 846_735.36])


def test_cdf_points():
    x, F = analysis.cdf_points([3, 1, 2, 4])
    assert list(x) == [1, 2, 3, 4] and list(F) == [0.25, 0.5, 0.75, 1.0]
    x, F = analysis.cdf_points(np.arange(100_000), max_points=1000)
    assert len(x) <= 1001 and F[-1] == 1.0 and x[-1] == 99_999 and np.all(np.diff(x) > 0)


def test_pooling_by_algorithm_drops_largest_per_run(tmp_path):
    from plots.io import Run
    r1 = Run(Path("a"), "ecmp", 1, _flows([100, 200, 300], [1, 2, 3]))
    r2 = Run(Path("b"), "ecmp", 2, _flows([150, 250], [4, 5]))
    r3 = Run(Path("c"), "reps", 1, _flows([100, 200], [1, 1]))
    p = analysis.prepare_runs([r1, r2, r3])
    assert list(p) == ["ecmp", "reps"]
    assert list(p["ecmp"][0].size) == [100, 150, 200] and len(p["ecmp"][1]) == 2


# ---------------------------------------------------------------- CCT
def test_cct_slowest_group(tmp_path):
    p = tmp_path / "coll.csv"
    p.write_text("group,algorithm,start_ns,finish_ns\n"
                 "g0,ecmp,1000,51000\ng1,ecmp,1000,81000\ng0,reps,0,30000\ng1,reps,500,20500\n")
    q = tmp_path / "coll2.csv"
    q.write_text("group,algorithm,start_ns,finish_ns\ng0,ecmp,0,60000\ng1,ecmp,0,70000\n")
    rows = analysis.cct_table(read_collectives(p) + read_collectives(q))
    c1, c2 = str(p), str(q)
    assert rows == [(c1, "ecmp", "g0", 50000, 0), (c1, "ecmp", "g1", 80000, 1),
                    (c1, "reps", "g0", 30000, 1), (c1, "reps", "g1", 20000, 0),
                    (c2, "ecmp", "g0", 60000, 0), (c2, "ecmp", "g1", 70000, 1)]
    assert analysis.cct_per_algorithm(rows) == {"ecmp": [80000, 70000], "reps": [30000]}


def test_bad_collectives(tmp_path):
    p = tmp_path / "coll.csv"
    p.write_text("group,algorithm,start_ns,finish_ns\ng0,ecmp,100,50\n")
    with pytest.raises(InputError, match=r"coll\.csv:2: finish_ns 50 < start_ns 100"):
        read_collectives(p)
    p.write_text("group,algorithm,start_ns,finish_ns\ng0,ecmp,100\n")
    with pytest.raises(InputError, match=r"coll\.csv:2: expected 4 columns, got 3"):
        read_collectives(p)


# ---------------------------------------------------------------- style and CLI
def _registry_rows():
    """(name, side) of every scheme, in ``Algorithm::ALL`` order, read from the Rust registry's rows
    (rust-lb/core/src/registry.rs): the base row is ECMP (host side), then the host rows, then the
    switch rows."""
    import re
    text = (Path(__file__).resolve().parents[2] / "rust-lb/core/src/registry.rs").read_text()
    body = text[text.rindex("registry! {"):]
    rows = [(re.search(r'base: \w+ = "([^"]+)";', body).group(1), "host")]
    for side in ("host", "switch"):
        section = re.search(side + r": \[(.*?)\n    \]", body, re.S).group(1)
        rows += [(name, side) for name in re.findall(r'^\s+\w+ = "([^"]+)" =>', section, re.M)]
    return rows


def test_the_legend_is_the_registry_in_order_and_side():
    from plots.style import ALGORITHM_STYLE, SWITCH_SCHEMES, style_for
    rows = _registry_rows()
    assert len(rows) >= 15 and rows[0] == ("ecmp", "host") and ("conweave", "switch") in rows
    assert list(ALGORITHM_STYLE) == [name for name, _ in rows]
    assert SWITCH_SCHEMES == {name for name, side in rows if side == "switch"}
    assert len({c for c, _ in ALGORITHM_STYLE.values()}) == len(rows)
    assert len({m for _, m in ALGORITHM_STYLE.values()}) == len(rows)
    with pytest.raises(ValueError, match="unknown algorithm 'foo'"):
        style_for("foo")


def _two_runs(tmp_path):
    lines = [_fct_line(100 * k, IDEAL_1000B * (1 + k % 7), IDEAL_1000B, i=k) for k in range(1, 60)]
    a = _run(tmp_path, "ecmp-1", "ecmp", lines=lines)
    rows = [f"{k},3,100,{1000 * k},0,{IDEAL_1000B * 2},{IDEAL_1000B},2,0,0,0,conweave" for k in range(1, 60)]
    b = _run(tmp_path, "cw-1", "conweave", csv_rows=rows)
    return a, b


def _assert_outputs(out):
    for suffix in (".png", ".pdf", ".csv"):
        p = out.with_suffix(suffix)
        assert p.is_file() and p.stat().st_size > 0, p


def test_cli_slowdown_cdf_cct(tmp_path):
    a, b = _two_runs(tmp_path)
    out = tmp_path / "figs" / "slowdown.png"
    assert main(["slowdown", str(a), str(b), "-o", str(out)]) == 0
    _assert_outputs(out)
    with open(out.with_suffix(".csv")) as f:
        table = list(csv.DictReader(f))
    cw = [r for r in table if r["algorithm"] == "conweave" and r["kind"] == "bucket"]
    assert len(cw) == 20 and all(float(r["avg"]) == 2.0 for r in cw)
    assert sum(int(r["n_flows"]) for r in cw) == 58  # 59 flows minus the largest
    out = tmp_path / "fixed.png"
    assert main(["slowdown", str(a), "-o", str(out), "--ideal", "fixed", "--hosts-per-tor", "16",
                 "--keep-largest"]) == 0
    with open(out.with_suffix(".csv")) as f:
        assert sum(int(r["n_flows"]) for r in csv.DictReader(f) if r["kind"] == "bucket") == 59
    assert main(["slowdown", str(a), "-o", str(out), "--ideal", "fixed"]) == 2
    out = tmp_path / "cdf.png"
    assert main(["cdf", str(a), str(b), "-o", str(out), "--group", "small"]) == 0
    _assert_outputs(out)
    coll = tmp_path / "coll.csv"
    coll.write_text("group,algorithm,start_ns,finish_ns\ng0,ecmp,0,100000\ng1,ecmp,0,120000\ng0,hopper,1000,1235567\n")
    out = tmp_path / "cct.png"
    assert main(["cct", str(coll), "-o", str(out)]) == 0
    _assert_outputs(out)
    with open(out.with_suffix(".csv")) as f:
        table = list(csv.DictReader(f))
    assert [(r["algorithm"], r["group"], r["cct_ns"], r["slowest"]) for r in table] == [
        ("ecmp", "g0", "100000", "0"), ("ecmp", "g1", "120000", "1"), ("hopper", "g0", "1234567", "1")]


def test_seed_spread_is_drawn_from_each_runs_own_flows(tmp_path):
    # Two seeds of ECMP: every flow at slowdown 2 in one, 4 in the other (40 flows each, 39 after
    # the largest is dropped: 20 buckets of 1-2 flows); one run of spray, at 5.
    runs = []
    for seed, factor in ((1, 2), (2, 4)):
        lines = [_fct_line(1000 * k, factor * IDEAL_1000B, IDEAL_1000B, i=k) for k in range(1, 41)]
        runs.append(read_run(_run(tmp_path, f"ecmp-{seed}", "ecmp", lines=lines, seed=seed)))
    lines = [_fct_line(1000 * k, 5 * IDEAL_1000B, IDEAL_1000B, i=k) for k in range(1, 41)]
    runs.append(read_run(_run(tmp_path, "spray-1", "spray", lines=lines)))
    prepared = analysis.prepare_runs(runs)
    lo, hi = analysis.bucket_spread(prepared["ecmp"][1], "avg")
    assert list(lo) == [2.0] * 20 and list(hi) == [4.0] * 20
    assert analysis.group_spread(prepared["ecmp"][1], "p99") == (2.0, 4.0)
    assert analysis.bucket_spread(prepared["spray"][1], "avg") is None  # one run: no spread
    assert analysis.group_spread(prepared["spray"][1], "avg") is None
    from plots import figures
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection
    captured = {}
    real_save = figures.save

    def keep(fig, out_png):
        captured["fig"] = fig
        return real_save(fig, out_png)

    figures.save = keep
    try:
        figures.slowdown_figure(prepared, tmp_path / "s.png")
        bands = [c for ax in captured["fig"].axes for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == 2  # ECMP's avg and p99 bands; spray has one run
        figures.ranking_figure(prepared, tmp_path / "r.png")
        ax = captured["fig"].axes[0]
        whiskers = [ln for ln in ax.lines if list(ln.get_xdata()) == [2.0, 4.0]]
        assert len(whiskers) == 1
        labels = [t.xy[0] for t in ax.texts if t.get_text() == "3.00"]  # ECMP's pooled mean
        assert labels == [4.0]  # right of the whisker, not over the bar
    finally:
        figures.save = real_save
        plt.close("all")


def test_cli_bad_input_exit_code_and_message(tmp_path, capsys):
    d = _run(tmp_path, "bad", "ecmp", lines=[_fct_line(1000, 2, 1), "1 2 3\n"])
    assert main(["slowdown", str(d), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert f"{d / 'fct.txt'}:2: expected 8 columns" in err
    assert not (tmp_path / "x.png").exists()
    d2 = _run(tmp_path, "unknown", "mystery-lb", lines=[_fct_line(1000, 2, 1)])
    assert main(["cdf", str(d2), "-o", str(tmp_path / "y.png")]) == 2
    assert "unknown algorithm 'mystery-lb'" in capsys.readouterr().err


def test_python_dash_m_entry_point(tmp_path):
    a, b = _two_runs(tmp_path)
    out = tmp_path / "s.png"
    ok = subprocess.run([sys.executable, "-m", "plots", "slowdown", str(a), str(b), "-o", str(out)],
                        cwd=REPO, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    _assert_outputs(out)
    bad = tmp_path / "bad"
    bad.mkdir()
    res = subprocess.run([sys.executable, "-m", "plots", "slowdown", str(bad), "-o", str(out)],
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 2 and "summary.json: missing" in res.stderr


# ---------------------------------------------------------------- demo-driven additions
def test_ordered_follows_the_canonical_list_and_switch_schemes_are_dashed():
    from plots.style import linestyle_for, line_kwargs, ordered
    assert ordered(["drill", "ecmp", "themis", "reps"]) == ["ecmp", "reps", "themis", "drill"]
    assert linestyle_for("spray") == "-" and linestyle_for("ecmp") == "-"
    assert linestyle_for("plts-rr") == "--" and line_kwargs("themis")["linestyle"] == "--"
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        ordered(["ecmp", "nope"])


def test_flow_id_range_keeps_half_open_interval(tmp_path):
    from plots.io import parse_flow_id_range
    assert parse_flow_id_range(":3") == (None, 3) and parse_flow_id_range("2:") == (2, None)
    assert parse_flow_id_range("1:4") == (1, 4)
    for bad, what in (("3", "expected LO:HI"), ("a:3", "not an integer"), ("4:4", "empty range"),
                      ("-1:", "must be >= 0")):
        with pytest.raises(InputError, match=what):
            parse_flow_id_range(bad)
    # ids 0..4 with slowdowns 1..5: keep ids 1, 2, 3 -> slowdowns 2, 3, 4
    rows = [f"{k},3,100,1000,0,{IDEAL_1000B * (k + 1)},{IDEAL_1000B},{k + 1},0,0,0,ecmp" for k in range(5)]
    d = _run(tmp_path, "r", "ecmp", csv_rows=rows, lines=[_fct_line(1000, 1, 1)])
    assert list(read_run(d, flow_ids=(1, 4)).flows.slowdown) == [2.0, 3.0, 4.0]
    assert list(read_run(d, flow_ids=(None, 2)).flows.slowdown) == [1.0, 2.0]
    with pytest.raises(InputError, match="--flow-ids needs flows.csv"):
        read_run(d, source="fct", flow_ids=(0, 2))


def test_cli_flow_ids_title_and_canonical_row_order(tmp_path):
    # spray given first, ecmp second: tables list ecmp first (canonical order).
    rows_s = [f"{k},3,100,{1000 * (k + 1)},0,{IDEAL_1000B * 3},{IDEAL_1000B},3,0,0,0,spray" for k in range(40)]
    rows_s += [f"{k},3,100,{1000 * (k + 1)},0,{IDEAL_1000B * 9},{IDEAL_1000B},9,0,0,0,spray" for k in range(40, 50)]
    s = _run(tmp_path, "s", "spray", csv_rows=rows_s)
    rows_e = [f"{k},3,100,{1000 * (k + 1)},0,{IDEAL_1000B * 2},{IDEAL_1000B},2,0,0,0,ecmp" for k in range(50)]
    e = _run(tmp_path, "e", "ecmp", csv_rows=rows_e)
    out = tmp_path / "sd.png"
    assert main(["slowdown", str(s), str(e), "-o", str(out), "--flow-ids", ":40", "--title", "t"]) == 0
    with open(out.with_suffix(".csv")) as f:
        table = list(csv.DictReader(f))
    assert [r["algorithm"] for r in table][0] == "ecmp"
    alls = {r["algorithm"]: r for r in table if r["kind"] == "group" and r["bucket"] == "all"}
    # the slowdown-9 flows (ids 40..49) are cut; 40 flows minus the largest remain
    assert float(alls["spray"]["avg"]) == 3.0 and int(alls["spray"]["n_flows"]) == 39
    assert main(["slowdown", str(s), "-o", str(out), "--flow-ids", "5"]) == 2
    coll = tmp_path / "coll.csv"
    coll.write_text("group,algorithm,start_ns,finish_ns\ng0,drill,0,5000\ng0,ecmp,0,100000\ng0,themis,0,7000\n")
    out = tmp_path / "cct.png"
    assert main(["cct", str(coll), "-o", str(out), "--title", "x"]) == 0
    with open(out.with_suffix(".csv")) as f:
        assert [r["algorithm"] for r in csv.DictReader(f)] == ["ecmp", "themis", "drill"]


# ---------------------------------------------------------------- tables
def test_markdown_pads_columns_and_csv_round_trips(tmp_path):
    from plots.tables import markdown, write_csv

    rows = [{"algorithm": "ecmp", "p99": "26.09"}, {"algorithm": "plts-counter", "p99": "7.5"}]
    assert markdown(rows).split("\n") == [
        "| algorithm    | p99   |",
        "|--------------|-------|",
        "| ecmp         | 26.09 |",
        "| plts-counter | 7.5   |",
    ]
    write_csv(rows, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text() == "algorithm,p99\necmp,26.09\nplts-counter,7.5\n"


# ---------------------------------------------------------------- compare (reference vs ours)
REF_CASE = REPO / "data" / "reference" / "conweave-leaf-spine-128-nl50" / "reference" / "ecmp-pfc"
T0 = 2_000_000_000  # the traffic generator's base time; run.py's window is then (T0 + 5 ms, T0 + 60 ms)
WINDOW = {"start_ns": T0 + 5_000_000, "end_ns": T0 + 60_000_000}


def _conweave_line(src, dst, size, start, fct, ideal, sport=10000, dport=100):
    return f"{src} {dst} {sport} {dport} {size} {start} {fct} {ideal}\n"


def _compare_files(tmp_path, ref_lines, ours_lines, gz=False):
    import gzip
    paths = []
    for name, lines in (("ref", ref_lines), ("ours", ours_lines)):
        p = tmp_path / (f"{name}.txt.gz" if gz else f"{name}.txt")
        with (gzip.open(p, "wt") if gz else open(p, "w")) as f:
            f.write("".join(lines))
        paths.append(p)
    return paths


def _compare(ref_path, ours_path, **kw):
    from plots import compare
    return compare.compare(read_fct_txt(ref_path), read_fct_txt(ours_path), **kw)


def test_compare_slower_flow_ratio_2_and_unmatched_counted(tmp_path):
    from plots import compare
    s = T0 + 6_000_000
    ref = [_conweave_line(1, 2, 1000, s, 8403, 8403), _conweave_line(3, 4, 5000, s + 10, 10000, 8000),
           _conweave_line(5, 6, 1000, s + 20, 9000, 8403)]  # only in the reference
    # ours: other ports, other order, flow 3->4 twice as slow, one flow of our own
    ours = [_conweave_line(3, 4, 5000, s + 10, 20000, 8000, sport=10007, dport=101),
            _conweave_line(7, 8, 1000, s + 30, 8403, 8403),  # only in ours
            _conweave_line(1, 2, 1000, s, 8403, 8403, sport=10003)]
    cmp = _compare(*_compare_files(tmp_path, ref, ours), **WINDOW)
    assert (cmp.n_matched, cmp.n_only_ref, cmp.n_only_ours) == (2, 1, 1)
    assert sorted(cmp.ratios) == [1.0, 2.0]
    summary = compare.ratio_summary(cmp.ratios)
    assert summary["median"] == 1.5 and summary[0.01] == 0.5 and summary[0.05] == 0.5


def test_compare_pairs_duplicate_keys_in_file_order():
    from plots import compare
    # two reference flows and two of ours share one key: first with first, second with second
    ref = _flows_from_rows_with_start([(1000, 5, 10), (1000, 5, 20), (2000, 7, 30)])
    ours = _flows_from_rows_with_start([(2000, 7, 60), (1000, 5, 11), (1000, 5, 22), (1000, 5, 99)])
    ref_idx, ours_idx = compare.match_flows(ref, ours)
    assert list(zip(ref_idx, ours_idx)) == [(2, 0), (0, 1), (1, 2)]


def _flows_from_rows_with_start(rows):
    from plots.io import _flows_from_rows
    return _flows_from_rows([(size, start, fct, 1.0, 0, 1) for size, start, fct in rows])


def test_compare_window_defaults_to_run_py_and_drops_flows_outside(tmp_path):
    from plots import compare
    lines = [_conweave_line(1, 2, 1000, T0 + 83, 8403, 8403),  # starts before sT = T0 + 5 ms
             _conweave_line(1, 2, 1000, T0 + 5_000_000, 8403, 8403),  # start == sT: out (strict)
             _conweave_line(1, 2, 1000, T0 + 5_000_001, 8403, 8403),  # in
             _conweave_line(3, 2, 1000, T0 + 9_999_342, 50_000_658, 8403),  # ends at fT: out
             _conweave_line(4, 2, 1000, T0 + 9_999_342, 16806, 8403)]  # in; latest start -> fT = T0 + 60 ms
    ref, ours = _compare_files(tmp_path, lines, lines)
    assert compare.window(read_fct_txt(ref)) == (T0 + 5_000_000, T0 + 60_000_000)
    cmp = _compare(ref, ours)
    assert cmp.n_matched == 5 and len(cmp.ratios) == 2
    assert cmp.ref.n_window == 2 and cmp.ours.n_window == 2
    cmp = _compare(ref, ours, start_ns=0, end_ns=T0 + 10_020_000)  # explicit bounds
    assert len(cmp.ratios) == 4 and cmp.ours.n_window == 4
    with pytest.raises(InputError, match="--end-ns: window end"):
        compare.window(read_fct_txt(ref), start_ns=10, end_ns=10)


def test_compare_drops_each_sides_largest_flow_from_the_summary(tmp_path):
    s = T0 + 6_000_000
    # slowdown 2 for the small flows, the largest flow 40x slower in ours
    ref = [_conweave_line(1, 2, 1000 * k, s + k, 2 * 8403, 8403) for k in range(1, 40)]
    ref.append(_conweave_line(1, 2, 200_000, s, 10 * 20_000, 20_000))
    ours = ref[:-1] + [_conweave_line(1, 2, 200_000, s, 400 * 20_000, 20_000)]
    cmp = _compare(*_compare_files(tmp_path, ref, ours), **WINDOW)
    assert cmp.ref.n_window == 40 and cmp.ref.n_analysed == 39
    assert cmp.ref.groups["all"].avg == 2.0 and cmp.ours.groups["all"].avg == 2.0
    assert cmp.ours.groups[">=1BDP"].n == 0  # the only >= BDP flow was the largest
    assert sorted(cmp.ratios)[-1] == 40.0 and len(cmp.ratios) == 40  # per-flow ratios keep it


def test_compare_buckets_follow_fctanalysis_tie_order_not_file_order():
    # equal sizes: fctAnalysis's `sort -n -k 2` orders "slowdown size" lines as text ("10.5" < "2")
    f = _flows([1000] * 4, [2, 10.5, 1, 1.5])
    ranked = analysis.sort_by_size(f, drop_largest=False, ties="reference")
    assert list(ranked.slowdown) == [1.0, 1.5, 10.5, 2.0]
    assert list(analysis.sort_by_size(f, drop_largest=True, ties="reference").slowdown) == [1.0, 1.5, 10.5]
    shuffled = f.select(np.array([3, 1, 0, 2]))
    assert list(analysis.sort_by_size(shuffled, False, ties="reference").slowdown) == list(ranked.slowdown)
    with pytest.raises(ValueError, match="ties must be"):
        analysis.sort_by_size(f, ties="size")


def test_compare_reads_gzip(tmp_path):
    s = T0 + 6_000_000
    lines = [_conweave_line(1, 2, 1000, s, 3 * 8403, 8403), _conweave_line(1, 3, 2000, s, 8403, 8403)]
    plain = _compare(*_compare_files(tmp_path, lines, lines), **WINDOW)
    gz_dir = tmp_path / "gz"
    gz_dir.mkdir()
    ref, ours = _compare_files(gz_dir, lines, lines, gz=True)
    assert list(read_fct_txt(ref).slowdown) == [3.0, 1.0]
    zipped = _compare(ref, ours, **WINDOW)
    assert zipped.n_matched == plain.n_matched == 2 and list(zipped.ratios) == list(plain.ratios)


@pytest.mark.parametrize("line,what", [
    ("1 2 10000 100 1000 2006000000 8403\n", ":2: expected 8 columns (src dst sport dport size_bytes start_ns "
                                             "fct_ns ideal_fct_ns), got 7"),
    ("1 2 10000 100 1000 2.006e9x 8403 8403\n", ":2: column start_ns: not a number: '2.006e9x'"),
])
def test_compare_bad_input_one_line_and_status_2(tmp_path, capsys, line, what):
    good = _conweave_line(1, 2, 1000, T0 + 6_000_000, 8403, 8403)
    ref, ours = _compare_files(tmp_path, [good], [good, line])
    assert main(["compare", str(ref), str(ours)]) == 2
    out = capsys.readouterr()
    assert out.err == f"python -m plots compare: {ours}{what}\n" and out.out == ""


def test_compare_bad_gzip_and_empty_file(tmp_path, capsys):
    good = _conweave_line(1, 2, 1000, T0 + 6_000_000, 8403, 8403)
    ref, _ = _compare_files(tmp_path, [good], [])
    bad = tmp_path / "bad.txt.gz"
    bad.write_text(good)  # not compressed
    assert main(["compare", str(ref), str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"python -m plots compare: {bad}: bad gzip data")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["compare", str(empty), str(ref)]) == 2
    assert capsys.readouterr().err == f"python -m plots compare: {empty}: no flows\n"


def test_cli_compare_prints_and_writes_figure_and_csv(tmp_path, capsys):
    s = T0 + 6_000_000
    ref = [_conweave_line(k % 7, 100, 1000 * k, s + k, 8403 + 10 * k, 8403) for k in range(1, 61)]
    ref.append(_conweave_line(9, 100, 1000, T0 + 120, 8403, 8403))  # sets sT = T0 + 5 ms; starts before
    ref.append(_conweave_line(9, 100, 1000, T0 + 70_000_000, 60_000_000, 8403))  # sets fT = T0 + 120 ms; ends after
    ours = [_conweave_line(k % 7, 100, 1000 * k, s + k, 2 * (8403 + 10 * k), 8403, sport=20000 + k)
            for k in range(60, 0, -1)]
    ref_path, ours_path = _compare_files(tmp_path, ref, ours)
    out, table = tmp_path / "figs" / "cmp.png", tmp_path / "tables" / "cmp.csv"
    assert main(["compare", str(ref_path), str(ours_path), "-o", str(out), "--csv", str(table),
                 "--title", "t"]) == 0
    printed = capsys.readouterr().out
    assert "matched by (src, dst, size, start_ns): 60; only in reference: 2; only in ours: 0" in printed
    assert "window (fctAnalysis): start > 2005000000 ns and start + fct < 2120000000 ns: reference 60 flows, ours 60" in printed
    assert "drop each side's largest flow" in printed and "reference 59, ours 59" in printed
    assert "bucket avg_ratio ours/ref: min" in printed
    assert "over 60 matched flows" in printed
    assert "median 2.000, p10 2.000, p90 2.000; within ±1 %: 0.0 %; within ±5 %: 0.0 %" in printed
    for p in (out, out.with_suffix(".pdf"), table):
        assert p.is_file() and p.stat().st_size > 0, p
    with open(table) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 20 and rows[0]["bucket"] == "1" and rows[-1]["size_max_ref"] == "59000"
    assert all(float(r["avg_ratio"]) == pytest.approx(2.0) for r in rows)
    assert main(["compare", str(ref_path), str(ours_path), "-o", str(tmp_path / "x.txt")]) == 2
    assert "output must end in .png or .pdf" in capsys.readouterr().err
    from plots.figures import _ratio_ticks  # readable ratio axis, near 1 as over decades
    assert _ratio_ticks(0.857, 1.155) == [0.9, 0.95, 1.0, 1.1] and _ratio_ticks(0.03, 11) == [0.1, 1.0, 10.0]
    # a window without flows: counted, no tables, no crash
    assert main(["compare", str(ref_path), str(ours_path), "--start-ns", "0", "--end-ns", "100"]) == 0
    assert "(no flows in the window)" in capsys.readouterr().out


def _fct_summary_slowdown(path):
    """fct_summary.txt's SLOWDOWN section as text: {"<1BDP": [avg, p50, p95, p99, p999], ">1BDP": ...}
    and the 20 bucket rows [size, avg, p50, p95, p99, p999] (numbers as printed, 3 decimals)."""
    groups, buckets = {}, []
    for line in path.read_text().split("ABSOLUTE")[0].splitlines():
        if line.startswith(("<1BDP,", ">1BDP,")):
            label, *values = line.split(",")
            groups[label] = values
        elif line.startswith("#0.") or line.startswith("#1."):
            buckets.append(line.split()[1:])
    return groups, buckets


@pytest.fixture(scope="module")
def reference_flows():
    path = REF_CASE / "fct.txt.gz"
    return path, read_fct_txt(path)


def test_compare_reproduces_the_reference_fct_summary(reference_flows):
    from plots import compare
    path, flows = reference_flows
    groups, buckets = _fct_summary_slowdown(REF_CASE / "fct_summary.txt")
    assert (groups["<1BDP"][0], groups["<1BDP"][3], groups[">1BDP"][0], groups[">1BDP"][3]) == (
        "1.809", "8.981", "4.706", "17.347")
    cmp = compare.compare(flows, flows)
    assert cmp.window == (2_005_000_000, 2_060_000_000)  # run.py's -sT / -fT for this case
    assert cmp.ref.n_window == 48_798 and cmp.ref.n_analysed == 48_797
    for ours_label, ref_label in (("<1BDP", "<1BDP"), (">=1BDP", ">1BDP")):
        g = cmp.ref.groups[ours_label]
        assert [f"{v:.3f}" for v in (g.avg, g.p50, g.p95, g.p99, g.p999)] == groups[ref_label]
    # Buckets: same flows in each (fctAnalysis's tie order), same sizes; fctAnalysis's bucket
    # percentiles are slowdowns as awk printed them (%.6g), so allow that rounding on top of 3 decimals.
    assert len(buckets) == 20 and len(cmp.ref.buckets) == 20
    for b, (size, *values) in zip(cmp.ref.buckets, buckets):
        assert str(b.size_max) == size
        for ours, printed in zip((b.avg, b.p50, b.p95, b.p99, b.p999), values):
            assert abs(ours - float(printed)) <= 0.0005 + 5e-6 * ours, (size, ours, printed)


def test_compare_reference_against_itself(reference_flows, tmp_path):
    from plots import compare
    path, flows = reference_flows
    cmp = compare.compare(flows, flows)
    assert (cmp.n_matched, cmp.n_only_ref, cmp.n_only_ours) == (97_593, 0, 0)
    assert len(cmp.ratios) == 48_798 and np.all(cmp.ratios == 1.0)
    assert all(r["ours/ref"] == 1.0 for r in compare.group_rows(cmp))
    assert all(r["avg_ratio"] == 1.0 and r["p99_ratio"] == 1.0 for r in compare.bucket_rows(cmp))
    assert compare.ratio_summary(cmp.ratios)[0.01] == 1.0
    res = subprocess.run([sys.executable, "-m", "plots", "compare", str(path), str(path)],
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "| <1BDP  | avg  | 1.809     | 1.809  | 1.000    |" in res.stdout
    assert "| >=1BDP | p99  | 17.347    | 17.347 | 1.000    |" in res.stdout
    assert "within ±1 %: 100.0 %; within ±5 %: 100.0 %" in res.stdout


# ---------------------------------------------------------------- compare: PFC pauses, CNPs, bounds
PFC_LINES = ["2000000100 130 1 3 1\n", "2000000200 130 1 3 0\n", "2000000300 5 0 1 1\n", "\n",
             "2000000400 131 1 2 1\n"]  # 3 pauses (type 1), 1 resume, a blank line
CNP_LINES = ["2000100002 9 4 0 4\n", "2000100002 36 54 2 56\n", "\n"]  # cnp_total 4 + 56 = 60


def _text_file(path, lines):
    import gzip
    with (gzip.open(path, "wt") if path.suffix == ".gz" else open(path, "w")) as f:
        f.write("".join(lines))
    return path


def _summary(path, cnps):
    path.write_text(json.dumps({"algorithm": "ecmp", "seed": 1, "counters": {"cnps": cnps, "cnps_sent": cnps, "pfc_pauses_sent": 4}}))
    return path


def test_compare_counts_pfc_pauses_and_cnps_plain_and_gz(tmp_path):
    from plots.io import read_cnp_total, read_pfc_pauses, read_summary_counter
    for name in ("pfc.txt", "pfc.txt.gz"):
        assert read_pfc_pauses(_text_file(tmp_path / name, PFC_LINES)) == 3
    for name in ("cnp.txt", "cnp.txt.gz"):
        assert read_cnp_total(_text_file(tmp_path / name, CNP_LINES)) == 60
    assert read_pfc_pauses(_text_file(tmp_path / "none.txt", ["2000000200 130 1 3 0\n"])) == 0
    summary = _summary(tmp_path / "summary.json", 57)
    assert read_summary_counter(summary, "cnps") == 57 and read_summary_counter(summary, "pfc_pauses_sent") == 4
    bad = tmp_path / "bad.txt.gz"
    bad.write_text("".join(PFC_LINES))  # not compressed
    with pytest.raises(InputError, match=r"bad\.txt\.gz: bad gzip data"):
        read_pfc_pauses(bad)


@pytest.mark.parametrize("reader,lines,what", [
    ("pfc", ["2000000100 130 1 3 1\n", "2000000200 130 1 3 2\n"], ":2: column type: must be 1 (pause) or 0 (resume), got 2"),
    ("pfc", ["2000000100 130 1 3\n"], ":1: expected 5 columns (time node_id node_type port type), got 4"),
    ("pfc", ["\n", "2000000100 x 1 3 1\n"], ":2: column node_id: not an integer: 'x'"),
    ("cnp", ["2000100002 9 4 0 4\n", "2000100002 9 4 0 3.5\n"], ":2: column cnp_total: not an integer: '3.5'"),
    ("cnp", ["2000100002 9 4 0 -4\n"], ":1: column cnp_total: must be >= 0, got -4"),
    ("cnp", ["2000100002 9 4 0 4 1\n"], ":1: expected 5 columns (time node cnp_by_ecn cnp_by_ooo cnp_total), got 6"),
])
def test_compare_bad_pfc_and_cnp_lines(tmp_path, reader, lines, what):
    from plots.io import read_cnp_total, read_pfc_pauses
    p = _text_file(tmp_path / f"{reader}.txt.gz", lines)
    with pytest.raises(InputError) as e:
        (read_pfc_pauses if reader == "pfc" else read_cnp_total)(p)
    assert str(e.value) == f"{p}{what}"


def test_compare_bad_summary_counters(tmp_path):
    from plots.io import read_summary_counter
    p = tmp_path / "summary.json"
    for text, what in (('{"algorithm": "ecmp"}', "missing key 'counters' (an object)"),
                       ('{"counters": {"pfc_pauses_sent": 3}}', "missing key 'counters.cnps'"),
                       ('{"counters": {"cnps": "12"}}', "'counters.cnps' must be an integer >= 0, got '12'"),
                       ('{"counters": {"cnps": -1}}', "'counters.cnps' must be an integer >= 0, got -1"),
                       ('[1]', "must be a JSON object")):
        p.write_text(text)
        with pytest.raises(InputError) as e:
            read_summary_counter(p, "cnps")
        assert str(e.value) == f"{p}: {what}"
    p.write_text('{"counters":\n {"cnps": }}')
    with pytest.raises(InputError, match=r"summary\.json:2: invalid JSON"):
        read_summary_counter(p, "cnps")


def _stats(label, avg, p99):
    return analysis.Stats(label, 1000, 10, avg, avg, p99, p99, p99)


def _bounds_comparison():
    """A Comparison built by hand (binary-exact numbers) for the bound checks:
    overall avg 2 -> 2.25 (|ratio - 1| = 0.125); bucket avg 4 -> 3 and 2 -> 2.25 (0.25 and 0.125:
    worst 0.25, bucket 1); bucket p99 8 -> 8 and 8 -> 12 (0 and 0.5: worst 0.5, bucket 2);
    per-flow ratios whose interpolated median is (1.03125 + 1.0625) / 2 = 1.046875 (0.046875),
    3 of 8 within ±5 % (0.375) and 2 of 8 within ±1 % (0.25)."""
    from plots import compare

    def side(all_avg, buckets):
        return compare.Side(10, 10, 9, {"all": _stats("all", all_avg, 5.0)},
                            [_stats(str(i + 1), avg, p99) for i, (avg, p99) in enumerate(buckets)])
    ratios = np.array([0.5, 1.0, 1.0078125, 1.03125, 1.0625, 2.0, 3.0, 4.0])
    return compare.Comparison((0, 1), 104_000, side(2.0, [(4.0, 8.0), (2.0, 8.0)]),
                              side(2.25, [(3.0, 8.0), (2.25, 12.0)]), 8, 0, 0, ratios)


# name, measured value, failing bound (just past it); pauses 8 -> 10 (0.25), CNPs 100 -> 103
# (0.03, in floating point 0.030000000000000027: the slack lets a bound of 0.03 pass it)
BOUND_EDGES = [("overall_avg", 0.125, 0.124), ("bucket_avg", 0.25, 0.249), ("bucket_p99", 0.5, 0.499),
               ("median", 0.046875, 0.0468), ("within5", 0.375, 0.376), ("within1", 0.25, 0.251),
               ("pfc", 0.25, 0.2499), ("cnp", 0.03, 0.0299)]


@pytest.mark.parametrize("name,measured,failing", BOUND_EDGES)
def test_compare_each_bound_passes_at_its_edge_and_fails_past_it(name, measured, failing):
    from plots import compare
    cmp = _bounds_comparison()
    counts = {"pauses": (8, 10), "cnps": (100, 103)}
    for limit, result in ((measured, "PASS"), (failing, "FAIL")):
        [row] = compare.evaluate_bounds(cmp, {name: limit}, **counts)
        assert row["bound"] == name and row["measured"] == pytest.approx(measured, abs=1e-15)
        assert row["result"] == result, (limit, row)
        assert row["limit"] == ("<= " if name not in ("within5", "within1") else ">= ") + f"{limit:g}"
    where = {"bucket_avg": "bucket 1", "bucket_p99": "bucket 2"}.get(name, "")
    assert row["where"] == where


def test_compare_bounds_in_canonical_order_and_unmeasurable_fails():
    from plots import compare
    cmp = _bounds_comparison()
    bounds = compare.parse_bounds(" within1=0.25 , overall_avg=0.2,pfc=1")
    assert bounds == {"overall_avg": 0.2, "within1": 0.25, "pfc": 1.0}
    assert list(bounds) == ["overall_avg", "within1", "pfc"]
    rows = compare.evaluate_bounds(cmp, bounds, pauses=(0, 5))  # no reference pauses: ratio nan
    assert [(r["bound"], r["result"]) for r in rows] == [("overall_avg", "PASS"), ("within1", "PASS"),
                                                         ("pfc", "FAIL")]
    assert math.isnan(rows[2]["measured"])
    cmp.ours.buckets = cmp.ours.buckets[:1]  # a bucket only the reference has
    [row] = compare.evaluate_bounds(cmp, {"bucket_avg": 10})
    assert math.isnan(row["measured"]) and row["result"] == "FAIL"


def test_compare_bound_needing_absent_counts_is_an_error():
    from plots import compare
    cmp = _bounds_comparison()
    with pytest.raises(InputError) as e:
        compare.evaluate_bounds(cmp, {"median": 0.1, "pfc": 0.1}, cnps=(1, 1))
    assert str(e.value) == "--bounds: pfc needs --ref-pfc and --ours-pfc"
    with pytest.raises(InputError, match="^--bounds: cnp needs --ref-cnp and --ours-summary$"):
        compare.evaluate_bounds(cmp, {"cnp": 0.1}, pauses=(1, 1))


@pytest.mark.parametrize("spec,what", [
    ("", "bad item '': expected name=value (names: overall_avg, bucket_avg, bucket_p99, median, within5, "
         "within1, pfc, cnp)"),
    ("median=0.1,", "bad item '': expected name=value"),
    ("median", "bad item 'median': expected name=value"),
    ("median=0.1,p99=0.2", "bad item 'p99=0.2': unknown name 'p99'"),
    ("median=x", "bad item 'median=x': not a number: 'x'"),
    ("median=-0.1", "bad item 'median=-0.1': must be a finite number >= 0"),
    ("median=nan", "bad item 'median=nan': must be a finite number >= 0"),
    ("within5=1.5", "bad item 'within5=1.5': a share of flows, at most 1"),
    ("pfc=0.1,pfc=0.2", "bad item 'pfc=0.2': pfc given twice"),
])
def test_compare_bad_bounds_spec(spec, what):
    from plots import compare
    with pytest.raises(InputError) as e:
        compare.parse_bounds(spec)
    assert str(e.value).startswith(f"--bounds: {what}")


def _cli_bounds_files(tmp_path):
    """40 flows, ours identical to the reference (every FCT ratio 1); 4 reference pauses against 5
    of ours (ratio 1.25); 60 reference CNPs against 57 (ratio 0.95)."""
    s = T0 + 6_000_000
    lines = [_conweave_line(1, 2, 1000 * k, s + k, 2 * 8403, 8403) for k in range(1, 41)]
    ref, ours = _compare_files(tmp_path, lines, lines)
    return {"ref": ref, "ours": ours,
            "ref_pfc": _text_file(tmp_path / "ref_pfc.txt.gz", PFC_LINES + ["2000000500 131 1 2 1\n"]),
            "ours_pfc": _text_file(tmp_path / "ours_pfc.txt", PFC_LINES + ["2000000500 131 1 2 1\n"] * 2),
            "ref_cnp": _text_file(tmp_path / "cnp.txt.gz", CNP_LINES),
            "summary": _summary(tmp_path / "summary.json", 57)}


def test_cli_compare_bounds_exit_status_0_1_2(tmp_path, capsys):
    f = _cli_bounds_files(tmp_path)
    base = ["compare", str(f["ref"]), str(f["ours"]), "--start-ns", str(T0 + 5_000_000),
            "--end-ns", str(T0 + 60_000_000)]
    counts = ["--ref-pfc", str(f["ref_pfc"]), "--ours-pfc", str(f["ours_pfc"]),
              "--ref-cnp", str(f["ref_cnp"]), "--ours-summary", str(f["summary"])]
    # all pass: 0
    assert main(base + counts + ["--bounds", "overall_avg=0,bucket_avg=0,bucket_p99=0,median=0,within1=1,"
                                 "within5=1,pfc=0.25,cnp=0.05"]) == 0
    out = capsys.readouterr().out
    assert "PFC pauses (pfc.txt lines of type 1): reference 4, ours 5, ours/ref 1.250" in out
    assert "CNPs sent by receivers (reference: cnp.txt's cnp_total summed; ours: summary.json's counters.cnps_sent): reference 60, " \
           "ours 57, ours/ref 0.950" in out
    assert "| pfc         | 0.2500   | <= 0.25 | PASS   |          |" in out
    assert "| bucket_avg  | 0.0000   | <= 0    | PASS   | bucket 1 |" in out
    assert "| cnp         | 0.0500   | <= 0.05 | PASS   |          |" in out  # 1 - 57/60 = 0.05 + 4e-17
    assert out.rstrip().endswith("bounds: 8 of 8 PASS")
    # one fails: 1, the rest of the output as before
    assert main(base + counts + ["--bounds", "median=0,pfc=0.2"]) == 1
    out = capsys.readouterr().out
    assert "| pfc    | 0.2500   | <= 0.2 | FAIL   |       |" in out
    assert out.rstrip().endswith("bounds: 1 of 2 PASS; FAIL: pfc")
    # counts without bounds: printed, status 0; no bounds section
    assert main(base + counts) == 0
    out = capsys.readouterr().out
    assert "ours/ref 1.250" in out and "--bounds" not in out and "PASS" not in out
    # usage errors: 2, one line, nothing on stdout
    for extra, what in ((["--bounds", "pfc=0.1"], "--bounds: pfc needs --ref-pfc and --ours-pfc"),
                        (["--bounds", "median=0.1,p99=1"], "--bounds: bad item 'p99=1': unknown name 'p99'"),
                        (["--ref-cnp", str(f["ref_cnp"])], "--ref-cnp: needs --ours-summary too"),
                        (["--ours-pfc", str(f["ours_pfc"])], "--ours-pfc: needs --ref-pfc too")):
        assert main(base + extra) == 2
        res = capsys.readouterr()
        assert res.err.startswith(f"python -m plots compare: {what}") and res.out == "", extra
    # a bad pfc line: 2, file:line
    bad = _text_file(tmp_path / "bad_pfc.txt", ["2000000100 130 1 3 1\n", "2000000100 130 1 3 pause\n"])
    assert main(base + ["--ref-pfc", str(f["ref_pfc"]), "--ours-pfc", str(bad)]) == 2
    assert capsys.readouterr().err == (f"python -m plots compare: {bad}:2: column type: not an integer: "
                                       "'pause'\n")
    missing = tmp_path / "nope.json"
    assert main(base + ["--ref-cnp", str(f["ref_cnp"]), "--ours-summary", str(missing)]) == 2
    assert capsys.readouterr().err == f"python -m plots compare: {missing}: No such file or directory\n"


def test_python_dash_m_compare_bounds_fail_exits_1(tmp_path):
    f = _cli_bounds_files(tmp_path)
    res = subprocess.run([sys.executable, "-m", "plots", "compare", str(f["ref"]), str(f["ours"]),
                          "--ref-pfc", str(f["ref_pfc"]), "--ours-pfc", str(f["ours_pfc"]), "--bounds", "pfc=0.1"],
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 1 and res.stderr == ""
    assert "bounds: 0 of 1 PASS; FAIL: pfc" in res.stdout


def test_reference_pause_and_cnp_counts(reference_flows):
    from plots.io import read_cnp_total, read_pfc_pauses
    assert read_pfc_pauses(REF_CASE / "pfc.txt.gz") == 9_356  # as data/README.md says
    assert read_cnp_total(REF_CASE / "cnp.txt.gz") == 445_365


# ---------------------------------------------------------------- uplinks (ToR uplink balance)
# ToR 1 (ports 1-4) and ToR 2 (ports 5, 6), samples every 10 ns, windows of 20 ns (edges 0, 20, 40):
# ToR 1, window [0, 20): 100 B on each port -> mean 100, max/mean 1, cv 0;
#        window [20, 40): 400, 0, 0, 0 -> mean 100, max/mean 4, cv = sqrt((300^2 + 3*100^2)/4)/100 = sqrt(3);
# ToR 2, window [0, 20): idle; window [20, 40): 300, 100 -> mean 200, max/mean 1.5, cv = 100/200 = 0.5.
UPLINK_TRACE = {
    (1, 1): (0, 50, 100, 300, 500), (1, 2): (0, 50, 100, 100, 100), (1, 3): (0, 0, 100, 100, 100),
    (1, 4): (0, 100, 100, 100, 100), (2, 5): (0, 0, 0, 0, 300), (2, 6): (0, 0, 0, 50, 100),
}
SQRT3 = 3 ** 0.5


def _uplink_txt(path, trace=UPLINK_TRACE, times=(0, 10, 20, 30, 40)):
    lines = [f"{t},{tor},{port},{trace[(tor, port)][i]}\n" for i, t in enumerate(times)
             for (tor, port) in sorted(trace)]
    path.write_text("".join(lines))
    return path


def test_uplink_windows_hand_computed(tmp_path):
    from plots import uplinks
    tr = uplinks.read_uplink_txt(_uplink_txt(tmp_path / "uplink.txt"))
    assert list(tr.times) == [0, 10, 20, 30, 40] and tr.tors[1][0] == (1, 2, 3, 4) and tr.tors[2][0] == (5, 6)
    wins = {(w.tor, w.start_ns): w for w in uplinks.windows(tr, 20)}
    assert sorted(wins) == [(1, 0), (1, 20), (2, 0), (2, 20)]
    w = wins[(1, 0)]
    assert (w.mean, w.max_over_mean, w.cv, w.total) == (100, 1, 0, 400)
    w = wins[(1, 20)]
    assert (w.mean, w.max_over_mean, w.total) == (100, 4, 400) and w.cv == pytest.approx(SQRT3)
    w = wins[(2, 20)]
    assert (w.mean, w.max_over_mean, w.cv, w.total) == (200, 1.5, 0.5, 400)
    assert wins[(2, 0)].mean == 0 and math.isnan(wins[(2, 0)].cv)
    b = uplinks.balance("t", list(wins.values()), group_ns=20)
    assert (b.n_windows, b.n_idle) == (4, 1)
    assert b.max_over_mean["mean"] == pytest.approx(6.5 / 3) and b.max_over_mean["p50"] == 1.5
    assert b.cv["mean"] == pytest.approx((SQRT3 + 0.5) / 3) and b.cv["p50"] == 0.5
    assert b.per_tor[1] == (pytest.approx(SQRT3 / 2), 800) and b.per_tor[2] == (0.5, 400)
    assert b.per_slot[0] == (0, 400) and b.per_slot[20] == (pytest.approx((SQRT3 + 0.5) / 2), 800)
    # busy only above 100 B per uplink: ToR 2's second window alone
    b = uplinks.balance("t", list(wins.values()), min_mean_bytes=100)
    assert b.n_idle == 3 and b.cv["mean"] == 0.5 and b.max_over_mean["p99"] == 1.5
    # one 40 ns window: ToR 1 sends 500, 100, 100, 100 -> mean 200, max/mean 2.5
    (w1, _) = uplinks.windows(tr, 40)
    assert (w1.tor, w1.mean, w1.max_over_mean) == (1, 200, 2.5)
    assert w1.cv == pytest.approx((300 ** 2 + 3 * 100 ** 2) ** 0.5 / 2 / 200)


def test_uplink_bad_traces(tmp_path):
    from plots import uplinks
    bad = dict(UPLINK_TRACE)
    bad[(1, 2)] = (0, 50, 40, 100, 100)  # decreases
    with pytest.raises(InputError, match=r"ToR 1 port 2: counter decreases \(50 -> 40\)"):
        uplinks.read_uplink_txt(_uplink_txt(tmp_path / "dec.txt", bad))
    p = tmp_path / "cols.txt"
    p.write_text("0,1,2,3\n10,1,2\n")
    with pytest.raises(InputError, match="cols.txt:2: expected 4 comma-separated columns"):
        uplinks.read_uplink_txt(p)
    p.write_text("0,1,2,3\n10,1,2,4\n0,1,3,0\n")
    with pytest.raises(InputError, match="ToR 1 port 3 has no sample at time 10"):
        uplinks.read_uplink_txt(p)
    tr = uplinks.read_uplink_txt(_uplink_txt(tmp_path / "ok.txt"))
    with pytest.raises(InputError, match="window edge 15 ns is not a sample time"):
        uplinks.windows(tr, 15)


def test_cli_uplinks_table_csv_figure_and_errors(tmp_path, capsys):
    a = _uplink_txt(tmp_path / "a.txt")
    b = _uplink_txt(tmp_path / "b.txt", times=(0, 10, 20, 30, 40))
    out = tmp_path / "u" / "uplinks.png"
    csv_path = tmp_path / "u" / "uplinks.csv"
    assert main(["uplinks", str(a), str(b), "--label", "ref", "--label", "ours", "--window-ns", "20",
                 "--group-ns", "20", "-o", str(out), "--csv", str(csv_path)]) == 0
    text = capsys.readouterr().out
    assert "0 .. 40 ns" in text
    assert "| ref   | 4       | 1    | 2.167         | 1.500        |" in text
    assert f"| 1   | {SQRT3 / 2:.3f} (0.0) | {SQRT3 / 2:.3f} (0.0) |" in text
    _assert_outputs(out)
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8 and rows[1]["trace"] == "ref" and rows[1]["max_over_mean"] == "4"
    assert main(["uplinks", str(a), "--label", "x", "--label", "y"]) == 2
    assert "2 labels for 1 traces" in capsys.readouterr().err
    assert main(["uplinks", str(a), "--window-ns", "15"]) == 2
    assert "not a sample time" in capsys.readouterr().err


# ---------------------------------------------------------------- rates (rate.txt / retx.txt)
def _rate_run(d, rate_rows, retx_rows):
    d.mkdir(parents=True)
    (d / "summary.json").write_text('{"algorithm": "spray"}')
    (d / "rate.txt").write_text("time_ns,flow,rate_bps\n" + "".join(f"{r}\n" for r in rate_rows))
    (d / "retx.txt").write_text("time_ns,data_pkts,retx_pkts\n" + "".join(f"{r}\n" for r in retx_rows))
    return d


def test_rates_hand_computed_and_cli(tmp_path):
    from plots import rates

    d = _rate_run(tmp_path / "run", ["10000,0,100000000000", "10000,1,50000000000", "20000,1,20000000000"],
                  ["10000,100,0", "20000,200,50", "30000,400,100"])
    r = rates.read_rate_run(d)
    assert r["algorithm"] == "spray"
    assert list(r["active"]) == [2, 1, 0]
    assert r["mean"][0] == pytest.approx(75e9)
    assert (r["min"][0], r["max"][0]) == (50e9, 100e9)
    assert list(r["retx_ratio"]) == pytest.approx([0.0, 0.25, 0.25])
    out = tmp_path / "fig" / "rates.png"
    assert main(["rates", str(d), "-o", str(out)]) == 0
    assert out.exists() and out.with_suffix(".pdf").exists()
    rows = list(csv.reader(open(out.with_suffix(".csv"))))
    assert rows[0] == rates.RATE_HEADER
    assert rows[1] == ["run", "spray", "10.000", "2", "75.000", "50.000", "100.000", "0.000000"]


def test_rates_bad_input(tmp_path, capsys):
    d = _rate_run(tmp_path / "bad", ["10000,0"], ["10000,1,0"])
    assert main(["rates", str(d), "-o", str(tmp_path / "x.png")]) == 2
    assert "rate.txt:2: expected 3 columns, got 2" in capsys.readouterr().err
    (tmp_path / "none").mkdir()
    assert main(["rates", str(tmp_path / "none"), "-o", str(tmp_path / "y.png")]) == 2
    assert "rate.txt: missing (run the scenario with [run] rate_trace)" in capsys.readouterr().err


# ---------------------------------------------------------------- side panels and the ranking
def _const_run(tmp_path, algorithm, slowdown_value, n=21, cct_ns=None):
    """A run of ``n`` flows of 1000..n*1000 B, every one at ``slowdown_value`` (the largest is
    dropped by the analysis), and optionally a collectives.csv with one group of that CCT."""
    rows = [f"{k},3,100,{1000 * (k + 1)},0,{IDEAL_1000B * slowdown_value},{IDEAL_1000B},{slowdown_value},0,0,0,"
            f"{algorithm}" for k in range(n)]
    d = _run(tmp_path, algorithm, algorithm, csv_rows=rows)
    if cct_ns is not None:
        (d / "collectives.csv").write_text(f"group,algorithm,start_ns,finish_ns\n0,{algorithm},1000,{1000 + cct_ns}\n")
    return d


def test_side_groups_put_ecmp_in_both_panels():
    from plots.figures import side_groups
    assert side_groups(["ecmp", "reps", "drill", "themis"]) == [
        ("host-side schemes", ["ecmp", "reps"]), ("switch-side schemes (+ ecmp)", ["ecmp", "drill", "themis"])]
    assert side_groups(["reps", "drill"]) == [("host-side schemes", ["reps"]), ("switch-side schemes", ["drill"])]
    # one side only: one panel
    assert side_groups(["ecmp", "spray"]) == [(None, ["ecmp", "spray"])]
    assert side_groups(["conga", "letflow"]) == [(None, ["conga", "letflow"])]


def test_cli_slowdown_side_panels_same_table(tmp_path):
    runs = [str(_const_run(tmp_path, a, v)) for a, v in (("ecmp", 3), ("reps", 2), ("drill", 4), ("conga", 5))]
    one, side = tmp_path / "one.png", tmp_path / "side.png"
    assert main(["slowdown", *runs, "-o", str(one), "--buckets", "4"]) == 0
    assert main(["slowdown", *runs, "-o", str(side), "--buckets", "4", "--panels", "side", "--title", "t"]) == 0
    _assert_outputs(side)
    # the panels change the drawing, never the numbers
    assert one.with_suffix(".csv").read_text() == side.with_suffix(".csv").read_text()
    with pytest.raises(SystemExit):
        main(["slowdown", *runs, "-o", str(side), "--panels", "three"])
    with pytest.raises(ValueError, match="panels must be one of"):
        from plots.figures import slowdown_figure
        slowdown_figure({}, tmp_path / "x.png", panels="three")


def test_ranking_rows_best_first_with_ratios_to_ecmp():
    from plots.figures import ranking_rows
    from plots.io import Collective, Flows

    def flows(sd, n=10):
        size = np.arange(1, n + 1, dtype=float) * 1000
        ideal = np.full(n, 1000.0)
        return Flows(size, np.zeros(n), ideal * sd, ideal, np.zeros(n), np.ones(n))

    # drill and reps tie on avg (2): the lower p99 first; then canonical order breaks exact ties
    prepared = {"ecmp": (flows(np.full(10, 4.0)), [1]), "drill": (flows(np.array([1.0] * 5 + [3.0] * 5)), [1, 2]),
                "reps": (flows(np.full(10, 2.0)), [1]), "spray": (flows(np.full(10, 2.0)), [1])}
    colls = [Collective("0", "ecmp", 0, 100_000, "x"), Collective("1", "ecmp", 0, 300_000, "x", "b"),
             Collective("0", "reps", 0, 50_000, "y")]
    rows = ranking_rows(prepared, colls)
    assert [r[:3] for r in rows] == [(1, "spray", "host"), (2, "reps", "host"), (3, "drill", "switch"),
                                     (4, "ecmp", "host")]
    spray, reps, drill, ecmp = rows
    assert drill[3] == 2 and drill[4] == 10 and drill[5] == 2.0 and drill[6] > 2.9
    assert reps[7] == 0.5 and reps[8] == 0.5 and ecmp[7] == 1.0
    # CCT: ecmp's two collectives (files "" and "b") 100 and 300 us -> mean 200 us; reps 50 us
    assert ecmp[9] == 200_000 and reps[9] == 50_000 and reps[10] == 0.25
    assert math.isnan(spray[9]) and math.isnan(spray[10])
    # no ECMP run: no ratios
    rows = ranking_rows({"reps": prepared["reps"]})
    assert math.isnan(rows[0][7]) and math.isnan(rows[0][9])


def test_cli_ranking_with_and_without_cct(tmp_path):
    runs = [str(_const_run(tmp_path, a, v, cct_ns=c))
            for a, v, c in (("ecmp", 3, 300_000), ("themis", 2, 100_000), ("hopper", 5, 200_000))]
    out = tmp_path / "rank.png"
    assert main(["ranking", *runs, "-o", str(out), "--title", "ranked"]) == 0
    _assert_outputs(out)
    with open(out.with_suffix(".csv")) as f:
        table = list(csv.DictReader(f))
    assert [(r["rank"], r["algorithm"], r["side"]) for r in table] == [
        ("1", "themis", "switch"), ("2", "ecmp", "host"), ("3", "hopper", "host")]
    assert [r["avg"] for r in table] == ["2", "3", "5"] and table[0]["n_flows"] == "20"
    assert table[0]["cct_mean_ns"] == "100000" and table[2]["avg_vs_ecmp"] == "1.66667"
    assert main(["ranking", *runs, "-o", str(out), "--collectives", "none"]) == 0
    with open(out.with_suffix(".csv")) as f:
        assert {r["cct_mean_ns"] for r in csv.DictReader(f)} == {"nan"}
    # a run without collectives.csv: no CCT panel, no error
    (Path(runs[0]) / "collectives.csv").unlink()
    assert main(["ranking", *runs, "-o", str(out)]) == 0
