"""What every figure shares: columns, aggregation over repetitions, caption, facets, saving."""
import argparse
import inspect
import json
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import plots  # noqa: E402
from plots import names  # noqa: E402
from plots.styles import ENGINE_ORDER, colours, hatches, lines  # noqa: E402,F401

# Result column -> (axis label with unit, factor applied to the raw value).
METRICS = {
    "throughput_tps": ("Throughput (K txn/s)", 1e-3),
    "throughput_by_type_tps.normal": ("Normal transactions (K txn/s)", 1e-3),
    "abort_rate": ("Abort rate (%)", 100.0),
    "retry_rate": ("Committed transactions retried (%)", 100.0),
    "cache_hit_rate": ("Cache hit rate (%)", 100.0),
    "latency_us.avg": ("Average latency (µs)", 1.0),
    "latency_us.p50": ("Median latency to commit (µs)", 1.0),
    "latency_us.p99": ("99th percentile latency (µs)", 1.0),
    "durable_latency_us.p50": ("Median to durable (µs)", 1.0),
    "durable_latency_us.p99": ("p99 to durable (µs)", 1.0),
    "per_txn.clwb": ("clwb per transaction", 1.0),
    "per_txn.sfence": ("sfence per transaction", 1.0),
    "per_txn.nvm_read_bytes": ("NVM reads per transaction (bytes)", 1.0),
    "per_txn.nvm_write_bytes": ("NVM writes per transaction (bytes)", 1.0),
    "numa.accesses.nvm_read.remote_per_txn": ("Remote NVM reads per txn", 1.0),
    "numa.accesses.nvm_write.remote_per_txn": ("Remote NVM writes per txn", 1.0),
    "numa.accesses.dram_read.remote_per_txn": ("Remote DRAM reads per txn", 1.0),
    "numa.accesses.dram_write.remote_per_txn": ("Remote DRAM writes per txn", 1.0),
}
WORKLOADS = {1.0: "RO", 0.9: "RH", 0.5: "BA", 0.1: "WH"}  # zen-vldb21's read/write mixes
SKEWS = {0.0: "No skew", 0.6: "Low skew", 0.95: "High skew"}


def column(df, name):
    """A setting, label or metric by short name (threads, throughput_tps) or full name."""
    for col in (name, f"label.{name}", f"config.{name}", f"setting.{name}", f"results.{name}"):
        if col in df.columns:
            return col
    raise KeyError(f"no column {name!r} in the table")


def ordered(df, col):
    """Values of a column in plotting order: numbers ascending, labels as the spec lists them
    (the table keeps the plan's order)."""
    values = df[col].dropna()
    if pd.api.types.is_numeric_dtype(values):
        return sorted(values.unique())
    return list(dict.fromkeys(values))


def metric(df, y):
    """(column, axis label, factor) for the plotted metric."""
    label, factor = METRICS.get(y, (y, 1.0))
    return column(df, y), label, factor


def with_series(df, series):
    """Adds a 'series' column, e.g. 'mmdb/silo', from the spec's series settings."""
    df = df.copy()
    cols = [column(df, s) for s in series]
    df["series"] = df[cols].astype(str).agg("/".join, axis=1)
    return df


def summarize(df, keys, y):
    """Mean and standard deviation over repetitions; std is NaN where there is one, so no
    error bar claims a spread nobody measured."""
    return df.groupby(keys, sort=True)[y].agg(["mean", "std", "count"]).reset_index()


def error_bars(std):
    """yerr for bars or lines: None when no point has two repetitions (nothing to draw)."""
    return None if std.isna().all() else std.fillna(0.0)


def x_label(value, setting):
    if setting == "read_ratio" and float(value) in WORKLOADS:
        return f"{WORKLOADS[float(value)]}\n({float(value):.0%} read)"
    return names.value(value, setting)


def axis_label(setting):
    """The x axis' title: read ratios are the papers' workloads."""
    return "Workload" if names.bare(setting) == "read_ratio" else names.setting(setting)


def facet_title(value, setting):
    """A panel's title in words: 'High skew (θ=0.95)', 'Long transactions: scans'."""
    if names.bare(setting) == "theta" and float(value) in SKEWS:
        return f"{SKEWS[float(value)]} (θ={float(value):g})"
    return f"{names.setting(setting)}: {names.value(value, setting)}"


def facets(df, facet, width=4.2, height=3.4, y=None):
    """One panel per value of the facet setting (a single panel when there is none), and one
    row of panels per metric when y is a list. Returns (fig, [(value, rows, ax, y)]), y being
    that panel's metric."""
    ys = y if isinstance(y, list) else [y or "throughput_tps"]
    values = ordered(df, column(df, facet)) if facet else [None]
    if facet is None and len(ys) == 1:
        fig, ax = plt.subplots(figsize=(width * 1.6, height * 1.2))
        return fig, [(None, df, ax, ys[0])]
    # At most MAX_WIDTH inches wide: the report shows figures at page width, and a wider one
    # would be shrunk there until its text is too small to read.
    width = min(width, plots.MAX_WIDTH / len(values))
    fig, axes = plt.subplots(len(ys), len(values), figsize=(width * len(values), height * len(ys)),
                             sharey="row", squeeze=False)
    panels = []
    for i, one_y in enumerate(ys):
        for value, ax in zip(values, axes[i]):
            sub = df if facet is None else df[df[column(df, facet)] == value]
            if facet is not None and i == 0:
                ax.set_title(facet_title(value, facet), fontsize=10)
            panels.append((value, sub, ax, one_y))
    return fig, panels


def label_rows(df, panels):
    """The y label, with its unit, on the first panel of each metric's row."""
    seen = set()
    for _, _, ax, y in panels:
        if y not in seen:
            ax.set_ylabel(metric(df, y)[1])
            seen.add(y)


def _unique(df, col):
    return sorted(df[col].dropna().astype(str).unique()) if col in df.columns else []


# The database's size by workload: YCSB rows, TPC-C warehouses, SmallBank accounts.
SIZES = {"ycsb": "rows", "tpcc": "warehouses", "smallbank": "accounts"}


def _fixed(df, setting, one, many):
    """one('16') where a setting has one value in the figure, many('1-32') where it varies
    (it is an axis), nothing where the table lacks it."""
    col = f"config.{setting}"
    values = sorted(df[col].dropna().unique()) if col in df.columns else []
    if not values:
        return []
    def word(v):
        return f"{v:,.0f}" if float(v) == int(float(v)) and abs(float(v)) >= 1000 else f"{v:g}"
    if len(values) == 1:
        return [one(word(values[0]))]
    return [many(f"{word(values[0])}-{word(values[-1])}")]


def settings_words(df):
    """Threads, database size, P and (for YCSB) θ, as the figure's runs had them."""
    workloads = _unique(df, "config.workload")
    parts = _fixed(df, "threads", lambda v: f"{v} thread{'' if v == '1' else 's'}",
                   lambda r: f"threads {r}")
    for w in workloads or ["ycsb"]:
        size = SIZES.get(w)
        if size:
            parts += _fixed(df, size, lambda v, s=size: f"{v} {s}", lambda r, s=size: f"{s} {r}")
    parts += _fixed(df, "p_ratio", lambda v: f"P = {v}", lambda r: f"P {r}")
    if "ycsb" in workloads:
        parts += _fixed(df, "theta", lambda v: f"θ = {v}", lambda r: f"θ {r}")
    return parts


def _slower(value):
    """What one run's host.calibration.slower_than_target names: a JSON list (rundb's form),
    or a plain true (no detail)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [value] if value.strip().lower() not in ("", "false", "0", "nan") else []
    if isinstance(value, list):
        return [str(v) for v in value]
    return ["calibration"] if value is True or value == 1 else []


def slower_host(df):
    """'HOST SLOWER THAN THE DEVICE MODEL (persist latency) in 3 of 4 runs', or None: rundb's
    host.calibration.slower_than_target lists what this host could not emulate fast enough,
    so the figure's numbers are slower than the modelled device's."""
    col = "host.calibration.slower_than_target"
    if col not in df.columns:
        return None
    lists = [_slower(v) for v in df[col]]
    slow = [x for x in lists if x]
    if not slow:
        return None
    what = ", ".join(sorted({w for x in slow for w in x}))
    runs = "every run" if len(slow) == len(lists) else f"{len(slow)} of {len(lists)} runs"
    return f"HOST SLOWER THAN THE DEVICE MODEL ({what}) in {runs}"


def caption(df, figure=None):
    """'zen-vldb21 Figure 5 shape · 2 threads · 200,000 rows · P = 4 · θ 0-0.95 · scale small
    · profile optane-100 · emulated NVM · 3 repetitions' (and the slower-host note)."""
    nvm = {str(v).lower() for v in _unique(df, "host.nvm.real")}
    kind = "real NVM" if nvm == {"true"} else "emulated NVM" if nvm == {"false"} else \
        "real and emulated NVM" if nvm else "NVM kind unknown"
    reps = df["rep"].nunique() if "rep" in df.columns else 1
    name = _unique(df, "paper") + ([figure] if figure else _unique(df, "figure"))
    parts = [" ".join(name) + " shape", *settings_words(df),
             "scale " + ",".join(_unique(df, "scale")),
             "profile " + ",".join(_unique(df, "config.profile")),
             kind, f"{reps} repetitions (error bars: std)" if reps > 1 else "1 repetition"]
    # NUMA runs say whether their nodes were real or virtual (the device model's alone).
    virtual = [v for v in _unique(df, "host.numa.virtual_nodes") if v not in ("0", "0.0")]
    real = [v for v in _unique(df, "host.numa.real_nodes") if v not in ("0", "0.0", "1", "1.0")]
    if virtual:
        parts.insert(-1, "VIRTUAL NUMA nodes (device model)")
    if real:
        parts.insert(-1, "real NUMA nodes")
    slow = slower_host(df)
    return " · ".join(parts + ([slow] if slow else []))


def _clashing(ax, renderer, pad=3):
    """True when two x tick labels of a panel overlap (or come within pad pixels)."""
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    if len(labels) < 2:
        return False
    angle = labels[0].get_rotation() % 180
    if angle == 0:
        boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
        return any(a.x1 + pad > b.x0 for a, b in zip(boxes, boxes[1:]))
    # Tilted labels are parallel strips: they clear each other when the gap between ticks,
    # measured across the text, is more than a line of text.
    xs = np.sort([ax.transData.transform((x, 0))[0] for x in ax.get_xticks()])
    line = renderer.points_to_pixels(labels[0].get_fontsize()) * 1.2
    return np.diff(xs).min() * np.sin(np.radians(angle)) < line + pad


def unclash_ticks(fig):
    """Tilts a panel's x tick labels, one line each, 45 degrees or, if that is not enough,
    upright, where they would run into each other at the size the figure is saved (e.g.
    '(100% read)(90% read)'). Returns whether any panel changed."""
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        for angle in (45, 90):
            if not _clashing(ax, renderer):
                break
            texts = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
            ax.set_xticks(ax.get_xticks(), texts, rotation=angle, ha="right",
                          rotation_mode="anchor")
            changed = True
    return changed


def finish(fig, df, legend_cols=4, figure=None, handles=None):
    handles, labels = handles or fig.axes[0].get_legend_handles_labels()
    legend_in = 0.0  # the legend's height (inches), measured once drawn
    # As many columns as fit the figure's width: a wider legend would be cut at the edges.
    for ncol in range(min(legend_cols, len(labels)), 0, -1):
        legend = fig.legend(handles, labels, loc="upper center", ncol=ncol, frameon=False,
                            bbox_to_anchor=(0.5, 1.0))
        box = legend.get_window_extent(fig.canvas.get_renderer())
        if box.width <= fig.bbox.width or ncol == 1:
            legend_in = box.height / fig.dpi
            break
        legend.remove()
    # About 13 characters of 9-point text per inch: wrap so narrow figures keep the caption.
    text = textwrap.fill(caption(df, figure), width=int(fig.get_figwidth() * 13))
    fig.text(0.5, 0.005, text, ha="center", va="bottom", fontsize=9)
    # Margins in inches (legend above, caption below), so tall figures of several rows of
    # panels do not leave a fixed share of their height empty.
    height = fig.get_figheight() + legend_in  # the panels keep their size under a tall legend
    fig.set_figheight(height)
    rect = (0, (0.17 * (1 + text.count("\n")) + 0.12) / height, 1,
            1 - (legend_in + 0.1) / height)
    fig.tight_layout(rect=rect)
    if unclash_ticks(fig):
        fig.tight_layout(rect=rect)
    return fig


def save(fig, csv_path, name=None):
    """PNG and PDF next to the CSV, named after it (and after the plot, when a spec has
    several)."""
    stem = Path(csv_path).with_suffix("")
    if name:
        stem = stem.with_name(f"{stem.name}-{name}")
    paths = [stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")]
    for path in paths:
        fig.savefig(path, dpi=plots.DPI)
    plt.close(fig)
    return paths


def read(csv_path):
    return pd.read_csv(csv_path)


def renderer(plot):
    """render(csv_path, name=None, **options) for a module's plot(df, **options)."""
    def render(csv_path, name=None, **options):
        return save(plot(read(csv_path), **options), csv_path, name)
    render.takes_y = "y" in inspect.signature(plot).parameters  # main() offers --y only then
    return render


def main(render, doc, argv=None):
    """Command line shared by the plot scripts: .venv/bin/python -m plots.NAME CSV [--y METRIC] (--y for
    the scripts that draw one metric; timeline and stacked draw their own)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("csv", help="a sweep's table, e.g. results/ycsb_read_ratio/ycsb_read_ratio.csv")
    if render.takes_y:
        ap.add_argument("--y", default="throughput_tps", help=f"metric: {', '.join(METRICS)}")
    args = ap.parse_args(argv)
    options = {"y": args.y} if render.takes_y else {}
    for path in render(args.csv, **options):
        print(path)
