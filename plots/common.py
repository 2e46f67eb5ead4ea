"""What every figure shares: columns, aggregation over repetitions, caption, facets, saving."""
import argparse
import inspect
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

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
SETTING_LABELS = {"threads": "Threads", "read_ratio": "Read ratio", "theta": "Zipf θ",
                  "p_ratio": "P (NVM / DRAM)", "read_ns": "NVM read latency (ns per 256 B)",
                  "write_gbps": "NVM write bandwidth (GB/s)", "profile": "Device profile",
                  "persist_domain": "Persistence domain", "cc": "Concurrency control",
                  "epoch_txns": "Epoch size (transactions)",
                  "group_commit_us": "Group-commit interval (µs)", "txns": "Transactions per thread "
                  "before the crash", "rows": "Rows"}
WORKLOADS = {1.0: "RO", 0.9: "RH", 0.5: "BA", 0.1: "WH"}  # zen-vldb21's read/write mixes
SKEWS = {0.0: "No skew", 0.6: "Low skew", 0.95: "High skew"}


# Engines in the papers' order (zen-vldb21 Figures 5-10 and 17-20: MMDB, WBL, FOEDUS, Zen; then
# the other papers' engines), each with a hue of its own so an engine keeps its colour in every
# figure; several series of one engine (its CC methods) are shades of that hue.
ENGINE_ORDER = ["mmdb", "wbl", "foedus", "zen", "nvmvcc", "nvcaracal"]
ENGINE_CMAPS = {"mmdb": "Blues", "wbl": "Oranges", "foedus": "Purples", "zen": "Reds",
                "nvmvcc": "Greens", "nvcaracal": "Greys"}


def engine_of(name):
    """The engine a series name starts with: 'zen+/cicada' (Zen+, a variant of Zen) -> 'zen'."""
    return str(name).split("/")[0].rstrip("+")


def colours(names):
    """A colour per series name. A name whose first part is an engine ('wbl/cicada', 'wbl',
    'zen+/cicada') takes a shade of the engine's hue (darkest first, in the order given); any
    other name a colour of matplotlib's cycle."""
    by_engine = {}
    for n in names:
        e = engine_of(n)
        if e in ENGINE_CMAPS:
            by_engine.setdefault(e, []).append(n)
    out, other = {}, 0
    for n in names:
        e = engine_of(n)
        if e in ENGINE_CMAPS:
            group = by_engine[e]
            k = group.index(n)
            shade = 0.8 - (0.45 * k / (len(group) - 1) if len(group) > 1 else 0.0)
            out[n] = plt.get_cmap(ENGINE_CMAPS[e])(shade)
        else:
            out[n] = f"C{other % 10}"
            other += 1
    return out


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
    return f"{value:g}" if isinstance(value, float) else str(value)


def facet_title(value, setting):
    if setting == "theta" and float(value) in SKEWS:
        return f"{SKEWS[float(value)]} (θ={float(value):g})"
    return f"{SETTING_LABELS.get(setting, setting)} = {value}"


def facets(df, facet, width=4.2, height=3.4, y=None):
    """One panel per value of the facet setting (a single panel when there is none), and one
    row of panels per metric when y is a list. Returns (fig, [(value, rows, ax, y)]), y being
    that panel's metric."""
    ys = y if isinstance(y, list) else [y or "throughput_tps"]
    values = ordered(df, column(df, facet)) if facet else [None]
    if facet is None and len(ys) == 1:
        fig, ax = plt.subplots(figsize=(width * 1.6, height * 1.2))
        return fig, [(None, df, ax, ys[0])]
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


def caption(df, figure=None):
    """'zen-vldb21 Figure 5 · scale small · profile optane-100 · emulated NVM · 3 repetitions'."""
    nvm = {str(v).lower() for v in _unique(df, "host.nvm.real")}
    kind = "real NVM" if nvm == {"true"} else "emulated NVM" if nvm == {"false"} else \
        "real and emulated NVM" if nvm else "NVM kind unknown"
    reps = df["rep"].nunique() if "rep" in df.columns else 1
    name = _unique(df, "paper") + ([figure] if figure else _unique(df, "figure"))
    parts = [" ".join(name) + " shape",
             "scale " + ",".join(_unique(df, "scale")),
             "profile " + ",".join(_unique(df, "config.profile")),
             kind, f"{reps} repetitions (error bars: std)" if reps > 1 else "1 repetition"]
    # NUMA runs say whether their nodes were real or virtual (the device model's alone).
    virtual = [v for v in _unique(df, "host.numa.virtual_nodes") if v not in ("0", "0.0")]
    real = [v for v in _unique(df, "host.numa.real_nodes") if v not in ("0", "0.0", "1", "1.0")]
    if virtual:
        parts.insert(4, "VIRTUAL NUMA nodes (device model)")
    if real:
        parts.insert(4, "real NUMA nodes")
    return " · ".join(parts)


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
    if labels:
        legend = fig.legend(handles, labels, loc="upper center",
                            ncol=min(legend_cols, len(labels)), frameon=False,
                            bbox_to_anchor=(0.5, 1.0))
        legend_in = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.dpi
    # About 15 characters of 8-point text per inch: wrap so narrow figures keep the caption.
    text = textwrap.fill(caption(df, figure), width=int(fig.get_figwidth() * 15))
    fig.text(0.5, 0.005, text, ha="center", va="bottom", fontsize=8)
    # Margins in inches (legend above, caption below), so tall figures of several rows of
    # panels do not leave a fixed share of their height empty.
    height = fig.get_figheight() + legend_in  # the panels keep their size under a tall legend
    fig.set_figheight(height)
    rect = (0, (0.15 * (1 + text.count("\n")) + 0.12) / height, 1,
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
        fig.savefig(path, dpi=150)
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
    """Command line shared by the plot scripts: python3 -m plots.NAME CSV [--y METRIC] (--y for
    the scripts that draw one metric; timeline and stacked draw their own)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("csv", help="a sweep's table, e.g. results/ycsb_read_ratio/ycsb_read_ratio.csv")
    if render.takes_y:
        ap.add_argument("--y", default="throughput_tps", help=f"metric: {', '.join(METRICS)}")
    args = ap.parse_args(argv)
    options = {"y": args.y} if render.takes_y else {}
    for path in render(args.csv, **options):
        print(path)
