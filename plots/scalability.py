"""Lines: a metric against a swept setting, one line per series (colour, marker and line style:
plots/styles.py): throughput against threads (zen-vldb21 Figures 8 and 18, zen-plus Figures
16, 21, 29 and 30, mcsi Figures 10, 12 and 13), against the epoch size (nvcaracal Figure 12),
or against a device parameter (read latency, write bandwidth)."""
from plots import common


def plot(df, x="threads", series=("engine", "cc"), facet=None, y="throughput_tps",
         logx=False, figure=None):
    df = common.with_series(df, series)
    xcol = common.column(df, x)
    fig, panels = common.facets(df, facet, y=y)
    for _, sub, ax, one_y in panels:
        ycol, _, factor = common.metric(df, one_y)
        stats = common.summarize(sub, ["series", xcol], ycol)
        names = common.ordered(df, "series")
        colour, style = common.colours(names), common.lines(names)
        for name in names:
            line = stats[stats["series"] == name]
            ax.errorbar(line[xcol], line["mean"] * factor, yerr=common.error_bars(line["std"] * factor),
                        capsize=3, label=common.names.system(name), color=colour[name],
                        **style[name])
        if logx:
            ax.set_xscale("log")
        ticks = sorted(sub[xcol].unique())
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel(common.axis_label(x))
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    common.label_rows(df, panels)
    return common.finish(fig, df, figure=figure)


render = common.renderer(plot)

if __name__ == "__main__":
    common.main(render, __doc__)
