"""Throughput against threads, one line per engine/cc: zen-vldb21 Figure 8."""
from plots import common


def plot(df, x="threads", series=("engine", "cc"), facet=None, y="throughput_tps"):
    df = common.with_series(df, series)
    xcol = common.column(df, x)
    ycol, ylabel, factor = common.metric(df, y)
    fig, panels = common.facets(df, facet)
    for _, sub, ax in panels:
        stats = common.summarize(sub, ["series", xcol], ycol)
        for name, line in stats.groupby("series"):
            ax.errorbar(line[xcol], line["mean"] * factor, yerr=line["std"] * factor,
                        marker="o", capsize=3, label=name)
        ticks = sorted(sub[xcol].unique())
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_xlabel(common.SETTING_LABELS.get(x, x))
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    panels[0][2].set_ylabel(ylabel)
    return common.finish(fig, df)


def render(csv_path, **options):
    return common.save(plot(common.read(csv_path), **options), csv_path)


if __name__ == "__main__":
    common.main(render, __doc__)
