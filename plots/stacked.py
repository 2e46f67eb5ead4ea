"""Stacked bars: each bar is one series at one x value, split into the parts under a column
prefix: recovery time per step (recovery.steps_s.*: zen-vldb21 Figure 19, zen-plus Figure 22,
nvcaracal Figure 11) or memory per data structure (results.memory_bytes.*: nvcaracal
Figure 8). Colours name the parts, hatches the series."""
import numpy as np
from matplotlib.patches import Patch

from plots import common

# Steps of every engine in one figure (recovery: 11 of them) each get their own colour.
STEP_COLOURS = common.plt.get_cmap("tab20")


def unit(prefix, df_cols):
    """(axis label, factor) for the stacked quantity."""
    if "memory_bytes" in prefix:
        big = max((df_cols.max().max() or 0), 0)
        return ("Memory (GiB)", 2 ** -30) if big >= 2 ** 30 else ("Memory (MiB)", 2 ** -20)
    if prefix.endswith("_s"):
        return "Recovery time (s)" if "recovery" in prefix else "Time (s)", 1.0
    return prefix, 1.0


def plot(df, x="engine", series=("engine",), prefix="recovery.steps_s", facet=None,
         figure=None):
    prefixes = prefix if isinstance(prefix, list) else [prefix]
    df = common.with_series(df, series)
    xcol = common.column(df, x)
    xs, names = common.ordered(df, xcol), common.ordered(df, "series")
    fig, panels = common.facets(df, facet, y=prefixes)
    width = 0.8 / len(names)
    hatch = common.hatches(names)
    colours = {}
    for _, sub, ax, pre in panels:
        parts = [c for c in df.columns if c.startswith(pre + ".")]
        label, factor = unit(pre, df[parts])
        means = sub.groupby(["series", xcol])[parts].mean().fillna(0.0)
        for j, name in enumerate(names):
            pos = np.arange(len(xs)) + (j - (len(names) - 1) / 2) * width
            bottom = np.zeros(len(xs))
            for part in parts:
                height = means[part].reindex([(name, v) for v in xs]).fillna(0.0).to_numpy() * factor
                colour = colours.setdefault(part[len(pre) + 1:], STEP_COLOURS(len(colours) % 20))
                ax.bar(pos, height, width, bottom=bottom, color=colour,
                       hatch=hatch[name], edgecolor="black", linewidth=0.4)
                bottom += height
            # Spread over repetitions of the total, as the error bar on top of the stack.
            totals = sub.assign(_t=sub[parts].sum(axis=1)).groupby(["series", xcol])["_t"].std()
            err = common.error_bars(totals.reindex([(name, v) for v in xs]) * factor)
            if err is not None:  # no spread to show from single repetitions
                ax.errorbar(pos, bottom, yerr=err.to_numpy(), fmt="none", ecolor="black",
                            capsize=2)
        ax.set_xticks(np.arange(len(xs)), [common.x_label(v, x) for v in xs])
        ax.set_xlabel(common.axis_label(x))
        ax.set_ylabel(label if pre.startswith("recovery") else
                      f"{label}: {pre.rsplit('.', 1)[-1].replace('_breakdown', '')}")
        ax.grid(axis="y", alpha=0.3)
    handles = [Patch(facecolor=c, edgecolor="black", label=p.replace("_", " "))  # words
               for p, c in colours.items()]
    if len(names) > 1:
        handles += [Patch(facecolor="white", edgecolor="black", hatch=hatch[n],
                          label=common.names.system(n)) for n in names]
    return common.finish(fig, df, legend_cols=3, figure=figure,
                         handles=(handles, [h.get_label() for h in handles]))


render = common.renderer(plot)

if __name__ == "__main__":
    common.main(render, __doc__)
