"""Grouped bars: one group per x value (workload, CC method, device profile...), one bar per
series (its colour and hatch: plots/styles.py), one panel per facet value and one row of panels
per metric: zen-vldb21 Figures 5-7, 9-17 and 20, nvcaracal Figures 5-7, 9 and 10, and the
device-profile sweep."""
import numpy as np

from plots import common


def plot(df, x="read_ratio", series=("engine", "cc"), facet="theta", y="throughput_tps",
         figure=None):
    df = common.with_series(df, series)
    xcol = common.column(df, x)
    # The papers order workloads from read-only to write-heavy.
    xs = common.ordered(df, xcol)[::-1] if x == "read_ratio" else common.ordered(df, xcol)
    names = common.ordered(df, "series")
    colour, hatch = common.colours(names), common.hatches(names)
    width = 0.8 / len(names)
    fig, panels = common.facets(df, facet, y=y)
    for _, sub, ax, one_y in panels:
        ycol, _, factor = common.metric(df, one_y)
        stats = common.summarize(sub, ["series", xcol], ycol).set_index(["series", xcol])
        for i, name in enumerate(names):
            rows = stats.reindex([(name, v) for v in xs])
            ax.bar(np.arange(len(xs)) + (i - (len(names) - 1) / 2) * width,
                   rows["mean"] * factor, width, yerr=common.error_bars(rows["std"] * factor),
                   capsize=2, label=common.names.system(name), color=colour[name],
                   hatch=hatch[name], edgecolor="black", linewidth=0.4)
        ax.set_xticks(np.arange(len(xs)), [common.x_label(v, x) for v in xs])
        ax.set_xlabel(common.axis_label(x))
        ax.grid(axis="y", alpha=0.3)
    common.label_rows(df, panels)
    return common.finish(fig, df, figure=figure)


render = common.renderer(plot)

if __name__ == "__main__":
    common.main(render, __doc__)
