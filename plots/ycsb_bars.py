"""Grouped bars per workload (read ratio), one bar per engine/cc, one panel per skew:
zen-vldb21 Figures 5, 6 and (with another y) 9-12."""
import numpy as np

from plots import common


def plot(df, x="read_ratio", series=("engine", "cc"), facet="theta", y="throughput_tps"):
    df = common.with_series(df, series)
    xcol = common.column(df, x)
    ycol, ylabel, factor = common.metric(df, y)
    # The paper orders workloads from read-only to write-heavy.
    xs = sorted(df[xcol].unique(), reverse=(x == "read_ratio"))
    names = sorted(df["series"].unique())
    width = 0.8 / len(names)
    fig, panels = common.facets(df, facet)
    for _, sub, ax in panels:
        stats = common.summarize(sub, ["series", xcol], ycol).set_index(["series", xcol])
        for i, name in enumerate(names):
            rows = stats.reindex([(name, v) for v in xs])
            ax.bar(np.arange(len(xs)) + (i - (len(names) - 1) / 2) * width,
                   rows["mean"] * factor, width, yerr=rows["std"] * factor,
                   capsize=2, label=name)
        ax.set_xticks(np.arange(len(xs)), [common.x_label(v, x) for v in xs])
        ax.set_xlabel("Workload" if x == "read_ratio" else common.SETTING_LABELS.get(x, x))
        ax.grid(axis="y", alpha=0.3)
    panels[0][2].set_ylabel(ylabel)
    return common.finish(fig, df)


def render(csv_path, **options):
    return common.save(plot(common.read(csv_path), **options), csv_path)


if __name__ == "__main__":
    common.main(render, __doc__)
