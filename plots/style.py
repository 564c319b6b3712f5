"""The one visual language: a colour and marker per algorithm name, and paper-column rc settings.

Every figure takes an algorithm's look from ``ALGORITHM_STYLE`` and nowhere else; a name not in
it is an error (add it here, once).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

# name -> (colour, marker), in the order of the registry's rows (rust-lb/core/src/registry.rs,
# = rdma_lb_core::Algorithm::ALL; a test holds it). Colour-blind-friendly hues first.
ALGORITHM_STYLE = {
    "ecmp": ("#000000", "o"),
    "spray": ("#0072b2", "s"),
    "reps": ("#e69f00", "^"),
    "flowbender": ("#009e73", "v"),
    "whack-a-mole": ("#d55e00", "D"),
    "hopper": ("#cc79a7", "P"),
    "plb": ("#6a3d9a", "x"),
    "flowcut": ("#b15928", "+"),
    "uec-bitmap": ("#1f78b4", "1"),
    "uec-mixed": ("#fb9a99", "2"),
    "themis": ("#56b4e9", "X"),
    "plts-random": ("#8c564b", "<"),
    "plts-counter": ("#7f7f7f", ">"),
    "plts-rr": ("#bcbd22", "p"),
    "adaptive": ("#9467bd", "h"),
    "drill": ("#17becf", "*"),
    "conga": ("#2ca02c", "H"),
    "letflow": ("#ff7f0e", "8"),
    "conweave": ("#d62728", "d"),
}

# Schemes whose decisions are made at the switches (the registry's `switch` rows; a test holds it):
# drawn dashed, so that 12+ lines stay distinguishable by colour, marker and line style.
SWITCH_SCHEMES = frozenset({"themis", "plts-random", "plts-counter", "plts-rr", "adaptive", "drill",
                            "conga", "letflow", "conweave"})

# The two simulators of `python -m plots compare`: (colour, marker); the statistic is the line style.
# The reference's markers are hollow and larger, so that it shows where ours lies on top of it.
SIMULATOR_STYLE = {
    "reference": ("#7f7f7f", "o"),
    "ours": ("#0072b2", "s"),
}


def simulator_kwargs(name):
    colour, marker = SIMULATOR_STYLE[name]
    kw = {"color": colour, "marker": marker}
    if name == "reference":
        kw.update(markerfacecolor="none", markersize=5)
    return kw

COLUMN_WIDTH_IN = 3.3


def style_for(algorithm):
    """(colour, marker) of ``algorithm``; ValueError naming the known names otherwise."""
    try:
        return ALGORITHM_STYLE[algorithm]
    except KeyError:
        raise ValueError(f"unknown algorithm {algorithm!r}: add it to ALGORITHM_STYLE in plots/style.py "
                         f"(known: {', '.join(ALGORITHM_STYLE)})") from None


def linestyle_for(algorithm):
    """"--" for switch-side schemes, "-" for host-side ones (and ECMP)."""
    style_for(algorithm)
    return "--" if algorithm in SWITCH_SCHEMES else "-"


def line_kwargs(algorithm):
    colour, marker = style_for(algorithm)
    return {"color": colour, "marker": marker, "linestyle": linestyle_for(algorithm), "label": algorithm}


def ordered(names):
    """``names`` (unique) in the order of ``ALGORITHM_STYLE`` (= rdma_lb_core::Algorithm::ALL), so legends and bars list algorithms the same way whatever the input order.
    Unknown names raise ValueError (see :func:`style_for`)."""
    order = {name: i for i, name in enumerate(ALGORITHM_STYLE)}
    names = list(names)
    for n in names:
        style_for(n)
    return sorted(names, key=order.__getitem__)


RC = {
    "font.size": 7,
    "axes.labelsize": 7,
    "axes.titlesize": 7,
    "legend.fontsize": 6,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "lines.linewidth": 1.0,
    "lines.markersize": 3.5,
    "axes.linewidth": 0.6,
    "grid.linewidth": 0.4,
    "grid.alpha": 0.5,
    "legend.frameon": False,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}


def figure(height_in, nrows=1, sharex=False):
    """A column-wide figure with ``nrows`` stacked axes (rc settings above applied)."""
    plt.rcParams.update(RC)
    fig, axes = plt.subplots(nrows, 1, figsize=(COLUMN_WIDTH_IN, height_in), sharex=sharex, squeeze=False)
    return fig, [a[0] for a in axes]


def figure_grid(height_in, nrows=1, ncols=1, sharex=False, sharey=False, width_in=None):
    """``nrows`` x ``ncols`` axes as a list of rows (rc settings above applied); one column wide per
    column unless ``width_in`` is given."""
    plt.rcParams.update(RC)
    width = width_in if width_in is not None else COLUMN_WIDTH_IN * ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height_in), sharex=sharex, sharey=sharey, squeeze=False)
    return fig, [list(row) for row in axes]


def save(fig, out_png):
    """Write ``out`` as PNG and, beside it, the same figure as PDF. Returns the two paths."""
    from pathlib import Path

    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    out_pdf = out_png.with_suffix(".pdf")
    fig.savefig(out_png)
    fig.savefig(out_pdf)
    plt.close(fig)
    return out_png, out_pdf
