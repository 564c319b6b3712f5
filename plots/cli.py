"""``python -m plots {slowdown,ranking,cdf,cct,compare,uplinks,rates} ...``: figures (PNG + PDF) and a CSV table beside them.

Exit status: 0 on success, 1 when ``compare --bounds`` finds a bound exceeded, 2 on bad input or
usage (one line on stderr naming file:line)."""

import argparse
import csv
import sys
from pathlib import Path

from . import analysis, compare, figures, rates, uplinks
from .errors import InputError
from .io import (parse_flow_id_range, read_cnp_total, read_collectives, read_fct_txt, read_pfc_pauses, read_run,
                 read_summary_counter)
from .tables import write_csv


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([_fmt(v) for v in r])


def _fmt(v):
    """Whole numbers exactly (sizes, ns); other floats to 6 significant digits."""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{v:.6g}"
    return v


def _figure_path(out):
    out = Path(out)
    if out.suffix.lower() not in (".png", ".pdf"):
        raise InputError(out, None, "output must end in .png or .pdf (both are written)")
    return out.with_suffix(".png")


def _out_paths(out):
    png = _figure_path(out)
    return png, png.with_suffix(".csv")


def _add_flow_options(p):
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (summary.json + flows.csv and/or fct.txt)")
    p.add_argument("-o", "--out", required=True, help="figure path (.png; .pdf and .csv are written beside it)")
    p.add_argument("--source", choices=("auto", "csv", "fct"), default="auto",
                   help="which flow file to read: auto = flows.csv if present, else fct.txt")
    p.add_argument("--start-after-ns", type=float, default=None,
                   help="keep flows with start > this (reference: 2005000000); default keeps all")
    p.add_argument("--finish-before-ns", type=float, default=None,
                   help="keep flows with start + fct < this (reference: stop + 50 ms); default keeps all")
    p.add_argument("--keep-largest", action="store_true",
                   help="fix: keep each run's largest flow (the reference drops it)")
    p.add_argument("--ideal", choices=("file", "reference", "fixed"), default="file",
                   help="ideal FCT: as recorded in the file (default), or recomputed from size on a "
                        "leaf-spine with the reference formula or the fixed one (needs --hosts-per-tor)")
    p.add_argument("--hosts-per-tor", type=int, default=None, help="for --ideal reference/fixed (ConWeave: 16)")
    p.add_argument("--link-delay-ns", type=int, default=1000, help="for --ideal reference/fixed")
    p.add_argument("--bw-gbps", type=float, default=100.0, help="for --ideal reference/fixed")
    p.add_argument("--bdp-bytes", type=int, default=analysis.DEFAULT_BDP_BYTES,
                   help="small/large split (default 104000, leaf-spine 100G)")
    p.add_argument("--flow-ids", default=None, metavar="LO:HI",
                   help="keep flows with LO <= flow_id < HI (flows.csv only; either side may be empty), "
                        "e.g. a scenario's Poisson flows without its collectives' flows")
    _add_title(p)


def _add_title(p):
    p.add_argument("--title", default=None, help="figure title (e.g. the transport or setup)")


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m plots", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("slowdown", help="avg/p99 FCT slowdown per flow-size bucket")
    _add_flow_options(p)
    p.add_argument("--buckets", type=int, default=20, help="count-quantile buckets (reference: 20 of 5%%)")
    p.add_argument("--panels", choices=figures.PANELS, default="one",
                   help="one panel per statistic (default), or `side`: host-side and switch-side schemes in "
                        "two columns, ECMP in both")
    p = sub.add_parser("ranking", help="algorithms ranked by avg / p99 FCT slowdown (and CCT): horizontal bars")
    _add_flow_options(p)
    p.add_argument("--collectives", choices=("auto", "none"), default="auto",
                   help="auto (default): add a CCT panel from each run's collectives.csv when every run has one")
    p = sub.add_parser("cdf", help="CDF of FCT slowdown")
    _add_flow_options(p)
    p.add_argument("--group", choices=("all", "small", "large"), default="all",
                   help="all flows, or flows below / at-or-above the BDP")
    p = sub.add_parser("cct", help="collective completion time per algorithm")
    p.add_argument("files", nargs="+", metavar="COLLECTIVES_CSV")
    p.add_argument("-o", "--out", required=True, help="figure path (.png; .pdf and .csv beside it)")
    _add_title(p)
    p = sub.add_parser("compare", help="our fct.txt against the reference simulator's, flow for flow")
    p.add_argument("ref", metavar="REF_FCT", help="the reference's (ConWeave ns-3) fct.txt, or fct.txt.gz")
    p.add_argument("ours", metavar="OURS_FCT", help="our fct.txt, or fct.txt.gz")
    p.add_argument("-o", "--out", default=None,
                   help="figure path (.png; .pdf beside it): per-bucket slowdown and per-flow FCT ratio CDF")
    p.add_argument("--csv", default=None, metavar="TABLE.csv", help="write the per-bucket table as CSV")
    p.add_argument("--start-ns", type=float, default=None,
                   help="keep flows with start > this (default: the reference's first start floored to "
                        "the ms + 5 ms, run.py's sT)")
    p.add_argument("--end-ns", type=float, default=None,
                   help="keep flows with start + fct < this (default: the reference's last start ceiled "
                        "to the ms + 50 ms, run.py's fT)")
    p.add_argument("--bdp", type=int, default=analysis.DEFAULT_BDP_BYTES,
                   help="small/large split in bytes (default 104000, leaf-spine 100G)")
    p.add_argument("--ref-pfc", default=None, metavar="FILE",
                   help="the reference's pfc.txt(.gz) (time node_id node_type port type); its pauses are counted")
    p.add_argument("--ours-pfc", default=None, metavar="FILE", help="our pfc.txt(.gz), same format")
    p.add_argument("--ref-cnp", default=None, metavar="FILE",
                   help="the reference's cnp.txt(.gz) (time node cnp_by_ecn cnp_by_ooo cnp_total); cnp_total summed")
    p.add_argument("--ours-summary", default=None, metavar="FILE", help="our summary.json; CNPs = counters.cnps_sent (sent by receivers, as cnp.txt counts)")
    p.add_argument("--bounds", default=None, metavar="SPEC",
                   help="name=value,... agreement bounds checked (exit status 1 if one fails); names: "
                        + ", ".join(compare.BOUNDS))
    _add_title(p)
    p = sub.add_parser("uplinks", help="per-ToR uplink imbalance over time from uplink traces (reference and ours)")
    p.add_argument("traces", nargs="+", metavar="UPLINK_TXT",
                   help="uplink traces (time_ns,tor_id,port,cumulative_tx_bytes), plain or .gz: the "
                        "reference's *_out_uplink.txt, our uplink.txt (--queueTrace=true)")
    p.add_argument("--label", action="append", default=None,
                   help="a name per trace, in order (default: the file paths)")
    p.add_argument("--window-ns", type=int, default=100_000,
                   help="window over which each uplink's bytes are summed (a multiple of the monitor "
                        "interval; default 100000)")
    p.add_argument("--start-ns", type=int, default=None,
                   help="first window edge (default: the latest first sample of the traces)")
    p.add_argument("--end-ns", type=int, default=None,
                   help="last window edge (default: the earliest last sample of the traces)")
    p.add_argument("--min-mean-bytes", type=float, default=0.0,
                   help="windows with at most this mean per uplink are idle, left out (default 0)")
    p.add_argument("--group-ns", type=int, default=1_000_000, help="time slot of the per-slot table (default 1 ms)")
    p.add_argument("-o", "--out", default=None,
                   help="figure path (.png; .pdf beside it): mean cv per window over time, CDF of max/mean")
    p.add_argument("--csv", default=None, metavar="TABLE.csv", help="write every (trace, ToR, window) row as CSV")
    _add_title(p)
    p = sub.add_parser("rates", help="sending rate and cumulative retransmission ratio over time")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories with rate.txt and retx.txt "
                   "([run] rate_trace)")
    p.add_argument("-o", "--out", required=True, help="figure path (.png; .pdf and .csv beside it)")
    _add_title(p)
    return parser


def _prepared(args):
    ideal = None
    if args.ideal != "file":
        if not args.hosts_per_tor or args.hosts_per_tor < 1:
            raise InputError("--ideal", None, f"{args.ideal} needs --hosts-per-tor N (N >= 1)")
        ideal = {"variant": args.ideal, "hosts_per_tor": args.hosts_per_tor,
                 "link_delay_ns": args.link_delay_ns, "bw_gbps": args.bw_gbps}
    flow_ids = parse_flow_id_range(args.flow_ids) if args.flow_ids is not None else None
    runs = [read_run(d, args.source, flow_ids) for d in args.runs]
    return analysis.prepare_runs(runs, args.start_after_ns, args.finish_before_ns,
                                 drop_largest=not args.keep_largest, ideal=ideal)


def _read_flows(path):
    flows = read_fct_txt(path)
    if not len(flows):
        raise InputError(path, None, "no flows")
    return flows


def _paired(ref, ours, ref_option, ours_option):
    """Both files of a count, or neither (a count needs both sides for its ratio)."""
    if (ref is None) != (ours is None):
        given, missing = (ref_option, ours_option) if ours is None else (ours_option, ref_option)
        raise InputError(given, None, f"needs {missing} too")
    return ref is not None


def run_compare(args):
    """Prints the comparison; returns 1 if a --bounds bound fails, else 0."""
    if args.bdp < 1:
        raise InputError("--bdp", None, "must be >= 1")
    png = _figure_path(args.out) if args.out is not None else None
    have = set()  # the whole-run counts asked for
    if _paired(args.ref_pfc, args.ours_pfc, "--ref-pfc", "--ours-pfc"):
        have.add("pfc")
    if _paired(args.ref_cnp, args.ours_summary, "--ref-cnp", "--ours-summary"):
        have.add("cnp")
    bounds = compare.parse_bounds(args.bounds) if args.bounds is not None else {}
    compare.check_bound_inputs(bounds, have)
    cmp = compare.compare(_read_flows(args.ref), _read_flows(args.ours), args.start_ns, args.end_ns, args.bdp)
    pauses = (read_pfc_pauses(args.ref_pfc), read_pfc_pauses(args.ours_pfc)) if "pfc" in have else None
    cnps = (read_cnp_total(args.ref_cnp), read_summary_counter(args.ours_summary, "cnps_sent")) if "cnp" in have else None
    rows = compare.evaluate_bounds(cmp, bounds, pauses, cnps)
    print(compare.report(cmp, args.ref, args.ours, pauses, cnps, rows))
    written = []
    if args.csv is not None:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        write_csv([{k: _fmt(v) for k, v in r.items()} for r in compare.bucket_rows(cmp)], args.csv)
        written.append(args.csv)
    if png is not None:
        written.extend(figures.compare_figure(cmp, png, title=args.title))
    if written:
        print("wrote " + " ".join(str(p) for p in written))
    return 1 if any(r["result"] == "FAIL" for r in rows) else 0


def run_uplinks(args):
    """Prints the per-trace balance tables; writes the CSV and figure when asked."""
    labels = args.label or list(args.traces)
    if len(labels) != len(args.traces):
        raise InputError("--label", None, f"{len(labels)} labels for {len(args.traces)} traces")
    if args.group_ns <= 0:
        raise InputError("--group-ns", None, "must be > 0")
    png = _figure_path(args.out) if args.out is not None else None
    traces = [uplinks.read_uplink_txt(t) for t in args.traces]
    lo, hi = uplinks.common_span(traces)
    span = (lo if args.start_ns is None else args.start_ns, hi if args.end_ns is None else args.end_ns)
    wins = [uplinks.windows(t, args.window_ns, *span) for t in traces]
    bals = [uplinks.balance(lab, w, args.min_mean_bytes, args.group_ns) for lab, w in zip(labels, wins)]
    print(uplinks.report(bals, args.window_ns, span, args.min_mean_bytes, args.group_ns))
    written = []
    if args.csv is not None:
        rows = [r for lab, w in zip(labels, wins) for r in uplinks.csv_rows(lab, w)]
        if not rows:
            raise InputError(args.csv, None, "no windows to write")
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        write_csv([{k: _fmt(v) for k, v in r.items()} for r in rows], args.csv)
        written.append(args.csv)
    if png is not None:
        written.extend(figures.uplinks_figure(labels, wins, args.min_mean_bytes, png, title=args.title))
    if written:
        print("wrote " + " ".join(str(p) for p in written))
    return 0


def run(args):
    if args.command == "compare":
        return run_compare(args)
    if args.command == "uplinks":
        return run_uplinks(args)
    png, table = _out_paths(args.out)
    if args.command == "slowdown":
        if args.buckets < 1:
            raise InputError("--buckets", None, "must be >= 1")
        (png, pdf), rows = figures.slowdown_figure(_prepared(args), png, args.buckets, args.bdp_bytes,
                                                   title=args.title, panels=args.panels)
        header = figures.SLOWDOWN_HEADER
    elif args.command == "ranking":
        colls = None
        files = [Path(d) / "collectives.csv" for d in args.runs]
        if args.collectives == "auto" and all(f.is_file() for f in files):
            colls = [c for f in files for c in read_collectives(f)]
        (png, pdf), rows = figures.ranking_figure(_prepared(args), png, colls, args.bdp_bytes, title=args.title)
        header = figures.RANKING_HEADER
    elif args.command == "cdf":
        (png, pdf), rows = figures.cdf_figure(_prepared(args), png, args.group, args.bdp_bytes, title=args.title)
        header = figures.CDF_HEADER
    elif args.command == "rates":
        runs = [rates.read_rate_run(d) for d in args.runs]
        png, pdf = rates.rates_figure(runs, png, title=args.title)
        rows, header = rates.rate_rows(runs), rates.RATE_HEADER
    else:
        colls = [c for f in args.files for c in read_collectives(f)]
        (png, pdf), rows = figures.cct_figure(colls, png, title=args.title)
        header = figures.CCT_HEADER
    _write_csv(table, header, rows)
    print(f"wrote {png} {pdf} {table}")


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        status = run(args)
    except (InputError, ValueError) as e:
        print(f"python -m plots {args.command}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"python -m plots {args.command}: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return status or 0
