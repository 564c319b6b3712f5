"""Readers for ConWeave's fct.txt, pfc.txt and cnp.txt, our flows.csv and summary.json counters,
run directories and collectives CSVs.

Every malformed line raises :class:`plots.errors.InputError` naming ``file:line``.
"""

import csv
import gzip
import json
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import InputError
from .slowdown import slowdown

FCT_TXT_COLUMNS = ("src", "dst", "sport", "dport", "size_bytes", "start_ns", "fct_ns", "ideal_fct_ns")
FLOWS_CSV_COLUMNS = (
    "flow_id", "src", "dst", "size_bytes", "start_ns", "fct_ns", "ideal_fct_ns", "slowdown",
    "retx_pkts", "nacks", "path_switches", "algorithm",
)
COLLECTIVES_COLUMNS = ("group", "algorithm", "start_ns", "finish_ns")
PFC_TXT_COLUMNS = ("time", "node_id", "node_type", "port", "type")  # type 1 = pause, 0 = resume
CNP_TXT_COLUMNS = ("time", "node", "cnp_by_ecn", "cnp_by_ooo", "cnp_total")
# Relative tolerance between a flows.csv `slowdown` and max(1, fct_ns / ideal_fct_ns).
SLOWDOWN_RTOL = 1e-4


@dataclass
class Flows:
    """Columns of completed flows (numpy arrays, one entry per flow, in file order)."""

    size: np.ndarray
    start_ns: np.ndarray
    fct_ns: np.ndarray
    ideal_ns: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    def __len__(self):
        return len(self.size)

    @property
    def slowdown(self):
        return slowdown(self.fct_ns, self.ideal_ns)

    def select(self, mask_or_index):
        return Flows(*(getattr(self, f)[mask_or_index] for f in ("size", "start_ns", "fct_ns", "ideal_ns", "src", "dst")))

    @staticmethod
    def concat(parts):
        parts = list(parts)
        if not parts:
            return _flows_from_rows([])
        return Flows(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("size", "start_ns", "fct_ns", "ideal_ns", "src", "dst")))


@dataclass
class Run:
    path: Path
    algorithm: str
    seed: object
    flows: Flows
    summary: dict = field(default_factory=dict)


def _flows_from_rows(rows):
    # rows: list of (size, start, fct, ideal, src, dst)
    arr = np.array(rows, dtype=float).reshape(-1, 6)
    return Flows(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], arr[:, 4].astype(np.int64), arr[:, 5].astype(np.int64))


def _num(path, lineno, name, text, integer=False, positive=False):
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise InputError(path, lineno, f"column {name}: not a{'n integer' if integer else ' number'}: {text!r}") from None
    if not integer and not math.isfinite(value):
        raise InputError(path, lineno, f"column {name}: not finite: {text!r}")
    if positive and value <= 0:
        raise InputError(path, lineno, f"column {name}: must be > 0, got {text}")
    if value < 0:
        raise InputError(path, lineno, f"column {name}: must be >= 0, got {text}")
    return value


def _algorithm(path, lineno, cols, expect_algorithm):
    """The row's algorithm name: not empty, and summary.json's when that is known."""
    algo = cols["algorithm"]
    if not algo:
        raise InputError(path, lineno, "empty algorithm")
    if expect_algorithm is not None and algo != expect_algorithm:
        raise InputError(path, lineno, f"algorithm {algo!r} differs from summary.json's {expect_algorithm!r}")
    return algo


def _flow_row(path, lineno, cols):
    """Parse (src, dst, size, start, fct, ideal) from a dict of column texts."""
    size = _num(path, lineno, "size_bytes", cols["size_bytes"], integer=True, positive=True)
    start = _num(path, lineno, "start_ns", cols["start_ns"])
    fct = _num(path, lineno, "fct_ns", cols["fct_ns"], positive=True)
    ideal = _num(path, lineno, "ideal_fct_ns", cols["ideal_fct_ns"], positive=True)
    src = _num(path, lineno, "src", cols["src"], integer=True)
    dst = _num(path, lineno, "dst", cols["dst"], integer=True)
    return size, start, fct, ideal, src, dst


def _open_text(path):
    """``path`` opened as UTF-8 text, decompressed on the fly if its name ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _numbered_lines(path):
    """(line number, line) of a text file, gzip-decompressed if its name ends in ``.gz``; bad gzip
    data or non-UTF-8 text is an InputError naming the file."""
    try:
        with _open_text(path) as f:
            yield from enumerate(f, 1)
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise InputError(path, None, f"bad gzip data: {e}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None


def _columns(path, lineno, line, names):
    """The whitespace-separated fields of a line as {name: text}; None for a blank line."""
    parts = line.split()
    if not parts:
        return None
    if len(parts) != len(names):
        raise InputError(path, lineno, f"expected {len(names)} columns ({' '.join(names)}), got {len(parts)}")
    return dict(zip(names, parts))


def read_fct_txt(path):
    """ConWeave/HPCC ``fct.txt``: 8 whitespace-separated columns per line,
    ``src dst sport dport size_B start_ns fct_ns ideal_fct_ns``. Blank lines are skipped; a name
    ending in ``.gz`` is read gzip-compressed (as the reference runs in data/reference are stored)."""
    path = Path(path)
    rows = [_fct_txt_row(path, lineno, line) for lineno, line in _numbered_lines(path)]
    return _flows_from_rows([r for r in rows if r is not None])


def _fct_txt_row(path, lineno, line):
    """(size, start, fct, ideal, src, dst) of one fct.txt line; None for a blank line."""
    cols = _columns(path, lineno, line, FCT_TXT_COLUMNS)
    if cols is None:
        return None
    for name in ("sport", "dport"):
        _num(path, lineno, name, cols[name], integer=True)
    return _flow_row(path, lineno, cols)


def read_pfc_pauses(path):
    """The number of PFC pauses in ConWeave's ``pfc.txt`` (our runs write the same format): lines
    ``time node_id node_type port type`` with type 1 = pause, 0 = resume; the type-1 lines are
    counted. Blank lines are skipped; ``.gz`` is read compressed."""
    path = Path(path)
    pauses = 0
    for lineno, line in _numbered_lines(path):
        cols = _columns(path, lineno, line, PFC_TXT_COLUMNS)
        if cols is None:
            continue
        _num(path, lineno, "time", cols["time"])
        for name in ("node_id", "node_type", "port"):
            _num(path, lineno, name, cols[name], integer=True)
        kind = _num(path, lineno, "type", cols["type"], integer=True)
        if kind not in (0, 1):
            raise InputError(path, lineno, f"column type: must be 1 (pause) or 0 (resume), got {cols['type']}")
        pauses += kind
    return pauses


def read_cnp_total(path):
    """The number of CNPs in ConWeave's ``cnp.txt``: lines ``time node cnp_by_ecn cnp_by_ooo
    cnp_total``, the last column summed. Blank lines are skipped; ``.gz`` is read compressed."""
    path = Path(path)
    total = 0
    for lineno, line in _numbered_lines(path):
        cols = _columns(path, lineno, line, CNP_TXT_COLUMNS)
        if cols is None:
            continue
        _num(path, lineno, "time", cols["time"])
        for name in CNP_TXT_COLUMNS[1:-1]:
            _num(path, lineno, name, cols[name], integer=True)
        total += _num(path, lineno, "cnp_total", cols["cnp_total"], integer=True)
    return total


def read_summary_counter(path, key):
    """``summary.json``'s ``counters.<key>`` (e.g. "cnps", "pfc_pauses_sent"): an integer >= 0."""
    path = Path(path)
    summary = _read_json_object(path)
    counters = summary.get("counters")
    if not isinstance(counters, dict):
        raise InputError(path, None, "missing key 'counters' (an object)")
    if key not in counters:
        raise InputError(path, None, f"missing key 'counters.{key}'")
    value = counters[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(path, None, f"'counters.{key}' must be an integer >= 0, got {value!r}")
    return value


def _read_json_object(path):
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(path, e.lineno, f"invalid JSON: {e.msg}") from None
    if not isinstance(summary, dict):
        raise InputError(path, None, "must be a JSON object")
    return summary


def read_flows_csv(path, expect_algorithm=None, flow_ids=None):
    """Our per-flow CSV (schema in plots/README.md). Returns (Flows, algorithm).

    ``flow_ids`` = (lo, hi) keeps only flows with lo <= flow_id < hi (either may be None): e.g.
    a scenario's Poisson flows, which come before its collectives' flows (ids: flow file, then
    Poisson, then each collective). Every row is still validated."""
    path = Path(path)
    rows, algorithms = [], set()
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise InputError(path, 1, "empty file (expected the header line)")
        if tuple(h.strip() for h in header) != FLOWS_CSV_COLUMNS:
            raise InputError(path, 1, f"header must be exactly {','.join(FLOWS_CSV_COLUMNS)}, got {','.join(header)}")
        for record in reader:
            lineno = reader.line_num
            if not record or all(not c.strip() for c in record):
                continue
            if len(record) != len(FLOWS_CSV_COLUMNS):
                raise InputError(path, lineno, f"expected {len(FLOWS_CSV_COLUMNS)} columns, got {len(record)}")
            cols = dict(zip(FLOWS_CSV_COLUMNS, (c.strip() for c in record)))
            if cols["fct_ns"] == "" and cols["slowdown"] == "":
                # A flow that did not complete before the stop: listed (every flow of the
                # workload appears once), validated, not plotted.
                for name in ("flow_id", "src", "dst", "size_bytes", "start_ns", "retx_pkts", "nacks", "path_switches"):
                    _num(path, lineno, name, cols[name], integer=True)
                _num(path, lineno, "ideal_fct_ns", cols["ideal_fct_ns"])
                algorithms.add(_algorithm(path, lineno, cols, expect_algorithm))
                continue
            row = _flow_row(path, lineno, cols)
            flow_id = _num(path, lineno, "flow_id", cols["flow_id"], integer=True)
            for name in ("retx_pkts", "nacks", "path_switches"):
                _num(path, lineno, name, cols[name], integer=True)
            recorded = _num(path, lineno, "slowdown", cols["slowdown"])
            expected = slowdown(row[2], row[3])
            if abs(recorded - expected) > SLOWDOWN_RTOL * expected:
                raise InputError(path, lineno, f"slowdown {recorded} != max(1, fct_ns/ideal_fct_ns) = {expected:.6g}")
            algorithms.add(_algorithm(path, lineno, cols, expect_algorithm))
            if flow_ids is not None and not _in_range(flow_id, flow_ids):
                continue
            rows.append(row)
    if len(algorithms) > 1:
        raise InputError(path, None, f"more than one algorithm in one file: {sorted(algorithms)}")
    algo = algorithms.pop() if algorithms else expect_algorithm
    return _flows_from_rows(rows), algo


def _in_range(flow_id, flow_ids):
    lo, hi = flow_ids
    return (lo is None or flow_id >= lo) and (hi is None or flow_id < hi)


def parse_flow_id_range(text):
    """``"LO:HI"``, ``":HI"`` or ``"LO:"`` -> (lo, hi) with None for an open side (half-open)."""
    parts = text.split(":")
    if len(parts) != 2:
        raise InputError("--flow-ids", None, f"expected LO:HI (either side may be empty), got {text!r}")
    out = []
    for p in parts:
        p = p.strip()
        if not p:
            out.append(None)
            continue
        try:
            v = int(p)
        except ValueError:
            raise InputError("--flow-ids", None, f"not an integer: {p!r}") from None
        if v < 0:
            raise InputError("--flow-ids", None, f"must be >= 0, got {v}")
        out.append(v)
    lo, hi = out
    if lo is not None and hi is not None and hi <= lo:
        raise InputError("--flow-ids", None, f"empty range {text!r} (HI must exceed LO)")
    return lo, hi


def read_run(run_dir, source="auto", flow_ids=None):
    """A run directory: summary.json ({"algorithm": ..., "seed": ...}) plus flows.csv and/or fct.txt.

    ``source`` is "auto" (flows.csv if present, else fct.txt), "csv" or "fct". ``flow_ids``
    (lo, hi) keeps flows with lo <= id < hi; it needs flows.csv (fct.txt has no flow ids)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(run_dir, None, "not a directory")
    summary_path = run_dir / "summary.json"
    try:
        summary = _read_json_object(summary_path)
    except FileNotFoundError:
        raise InputError(summary_path, None, "missing (a run directory needs summary.json)") from None
    for key in ("algorithm", "seed"):
        if key not in summary:
            raise InputError(summary_path, None, f"missing key {key!r}")
    algorithm = summary["algorithm"]
    if not isinstance(algorithm, str) or not algorithm:
        raise InputError(summary_path, None, "'algorithm' must be a non-empty string")
    csv_path, fct_path = run_dir / "flows.csv", run_dir / "fct.txt"
    if source not in ("auto", "csv", "fct"):
        raise ValueError(f"source must be auto, csv or fct, got {source!r}")
    use_csv = source == "csv" or (source == "auto" and csv_path.exists())
    if use_csv:
        if not csv_path.exists():
            raise InputError(csv_path, None, "missing")
        flows, _ = read_flows_csv(csv_path, expect_algorithm=algorithm, flow_ids=flow_ids)
    else:
        if flow_ids is not None:
            raise InputError(run_dir, None, "--flow-ids needs flows.csv (fct.txt has no flow ids)")
        if not fct_path.exists():
            raise InputError(run_dir, None, "has neither flows.csv nor fct.txt")
        flows = read_fct_txt(fct_path)
    return Run(run_dir, algorithm, summary["seed"], flows, summary)


@dataclass
class Collective:
    group: str
    algorithm: str
    start_ns: float
    finish_ns: float
    where: str
    collective: str = ""

    @property
    def cct_ns(self):
        return self.finish_ns - self.start_ns


def read_collectives(path):
    """Collectives CSV: header ``group,algorithm,start_ns,finish_ns``; one file is one collective,
    one row per (group, algorithm) taking part in it."""
    path = Path(path)
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLLECTIVES_COLUMNS:
            raise InputError(path, 1, f"header must be exactly {','.join(COLLECTIVES_COLUMNS)}")
        for record in reader:
            lineno = reader.line_num
            if not record or all(not c.strip() for c in record):
                continue
            if len(record) != len(COLLECTIVES_COLUMNS):
                raise InputError(path, lineno, f"expected {len(COLLECTIVES_COLUMNS)} columns, got {len(record)}")
            group, algo, start, finish = (c.strip() for c in record)
            if not group or not algo:
                raise InputError(path, lineno, "empty group or algorithm")
            s = _num(path, lineno, "start_ns", start)
            e = _num(path, lineno, "finish_ns", finish)
            if e < s:
                raise InputError(path, lineno, f"finish_ns {finish} < start_ns {start}")
            out.append(Collective(group, algo, s, e, f"{path}:{lineno}", str(path)))
    return out
