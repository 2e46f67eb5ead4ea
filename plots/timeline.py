"""Throughput over time, one line per series (mean over repetitions, band: std), from rundb's
timeline (--timeline-ms): long-running transactions in zen-plus Figures 24 and 25. Where the
table has timeline.exclusive (Zen: 1 for an interval in which the exclusive stage was on), those
intervals are shaded in the series' colour, darker the more repetitions had it on, and the
legend says so."""
import json

import numpy as np
from matplotlib.patches import Patch

from plots import common


def curves(sub):
    """(seconds, mean, std) over the repetitions' timelines, cut to the shortest."""
    lists = [json.loads(t) for t in sub["timeline.throughput_tps"].dropna()]
    n = min(len(t) for t in lists)
    data = np.array([t[:n] for t in lists], dtype=float)
    step = float(sub["timeline.interval_ms"].iloc[0]) / 1000.0
    return np.arange(1, n + 1) * step, data.mean(axis=0), data.std(axis=0)


def exclusive_spans(sub):
    """(start s, end s, share of repetitions) of the intervals in which any repetition had the
    exclusive stage on."""
    if "timeline.exclusive" not in sub.columns:
        return []
    lists = [json.loads(t) for t in sub["timeline.exclusive"].dropna()]
    if not lists:
        return []
    n = min(len(t) for t in lists)
    on = np.array([t[:n] for t in lists], dtype=float).mean(axis=0)
    step = float(sub["timeline.interval_ms"].iloc[0]) / 1000.0
    return [(i * step, (i + 1) * step, on[i]) for i in range(n) if on[i] > 0]


def plot(df, series=("engine", "cc"), facet=None, figure=None):
    df = common.with_series(df, series)
    fig, panels = common.facets(df, facet)
    names = common.ordered(df, "series")
    colour, style = common.colours(names), common.lines(names)
    shaded = False
    for _, sub, ax, _ in panels:
        for name in names:
            rows = sub[sub["series"] == name]
            if rows.empty:
                continue
            t, mean, std = curves(rows)
            # A marker every tenth of the run: enough to tell the lines apart, not a smear.
            ax.plot(t, mean / 1e3, label=common.names.system(name), color=colour[name],
                    markevery=max(1, len(t) // 10), markersize=5, **style[name])
            for a, b, share in exclusive_spans(rows):
                ax.axvspan(a, b, color=colour[name], alpha=0.3 * share, lw=0)
                shaded = True
            if rows["rep"].nunique() > 1:  # a band only where repetitions give a spread
                ax.fill_between(t, (mean - std) / 1e3, (mean + std) / 1e3, alpha=0.2, color=colour[name])
        ax.set_xlabel("Time (s)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    panels[0][2].set_ylabel("Throughput (K txn/s)")
    handles = list(panels[0][2].get_legend_handles_labels()[0])
    if shaded:  # the shading in the legend too, in a neutral grey (each series' own hue)
        handles.append(Patch(facecolor="grey", alpha=0.3, lw=0,
                             label="Exclusive stage on (shaded)"))
    return common.finish(fig, df, figure=figure,
                         handles=(handles, [h.get_label() for h in handles]))


render = common.renderer(plot)

if __name__ == "__main__":
    common.main(render, __doc__)
