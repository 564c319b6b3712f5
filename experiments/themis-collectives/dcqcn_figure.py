"""Themis' Fig. 5 axis: the slowest group's CCT at 300 MB per rank against the DCQCN (T_I, T_D)
setting, one panel per collective, every algorithm that ran, one marker per seed and a line
through the seeds' mean.

Usage: python dcqcn_figure.py RESULTS_CSV OUT_PNG

Reads the rows analyze.py writes (results.csv); writes OUT_PNG and the same figure as PDF.
Settings are drawn in the order of the paper's argument: the recommended T_I 900 / T_D 4 first,
then smaller T_I and larger T_D.
"""

import csv
import sys
from pathlib import Path

MAIN_SIZE = "300000000"
KINDS = ["allreduce", "alltoall"]


def main():
    results, out = Path(sys.argv[1]), Path(sys.argv[2])
    with open(results) as f:
        rows = [r for r in csv.DictReader(f) if r["size_bytes"] == MAIN_SIZE]
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from plots import style
    import matplotlib.pyplot as plt

    settings = sorted({(float(r["t_i_us"]), float(r["t_d_us"])) for r in rows}, key=lambda s: (-s[0], s[1]))
    xs = {s: i for i, s in enumerate(settings)}
    with plt.rc_context(style.RC):
        fig, axes = plt.subplots(1, 2, figsize=(2 * style.COLUMN_WIDTH_IN, 2.4))
        for ax, k in zip(axes, KINDS):
            mine = [r for r in rows if r["collective"] == k]
            algos = style.ordered({r["algorithm"] for r in mine})
            for j, a in enumerate(algos):
                shift = (j - (len(algos) - 1) / 2) * 0.06  # seeds of one setting side by side
                pts = {}
                for r in mine:
                    if r["algorithm"] == a:
                        s = (float(r["t_i_us"]), float(r["t_d_us"]))
                        pts.setdefault(s, []).append(float(r["slowest_cct_us"]) / 1000)
                kw = style.line_kwargs(a)
                order = sorted(pts, key=xs.get)
                ax.plot([xs[s] + shift for s in order], [sum(pts[s]) / len(pts[s]) for s in order], **kw)
                for s in order:
                    ax.plot([xs[s] + shift] * len(pts[s]), pts[s], linestyle="none", marker=kw.get("marker", "o"),
                            color=kw.get("color"), markersize=3, alpha=0.6)
            ax.set_xticks(range(len(settings)))
            ax.set_xticklabels([f"{ti:g} / {td:g}" for ti, td in settings])
            ax.set_xlabel("DCQCN T_I / T_D (µs)")
            ax.set_ylabel("slowest group's CCT (ms)")
            ax.set_title(f"{k}, 300 MB per rank")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
        axes[0].legend(loc="upper right")
        fig.tight_layout()
        fig.savefig(out, dpi=200)
        fig.savefig(out.with_suffix(".pdf"))
        plt.close(fig)


if __name__ == "__main__":
    main()
