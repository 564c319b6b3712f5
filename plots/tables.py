"""Tables beside the figures: one row per dict, written as CSV and printed as Markdown, so that
an experiment's README can paste exactly what its analysis printed."""

import csv


def write_csv(rows, path):
    """Writes `rows` (dicts with the same keys, in column order) to `path` as CSV."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def markdown(rows):
    """`rows` as a Markdown table with columns padded to their widest cell."""
    cols = list(rows[0])
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths)) + " |" for r in rows]
    return "\n".join(lines)
