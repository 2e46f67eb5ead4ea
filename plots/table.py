"""A paper's table drawn from a sweep: per row value and series, the best mean over x (mcsi
Tables 4 and 5: maximum throughput and the thread count reaching it) or the mean at one x
(Table 6: latency at 18 threads), with the change of the first series against the second."""
import matplotlib.pyplot as plt

from plots import common


def cells(df, rows, x, y, at=None):
    """{row value: {series: (value, x reaching it)}} in display units."""
    ycol, _, factor = common.metric(df, y)
    xcol, rcol = common.column(df, x), common.column(df, rows)
    stats = common.summarize(df, [rcol, "series", xcol], ycol)
    if at is not None:
        stats = stats[stats[xcol] == at]
    best = stats.loc[stats.groupby([rcol, "series"])["mean"].idxmax()]
    out = {}
    for _, r in best.iterrows():
        out.setdefault(r[rcol], {})[r["series"]] = (r["mean"] * factor, r[xcol])
    return out


def plot(df, rows="read_ratio", x="threads", series=("cc",), y="throughput_tps", at=None,
         figure=None):
    df = common.with_series(df, series)
    names = common.ordered(df, "series")
    data = cells(df, rows, x, y, at)
    label = common.metric(df, y)[1]
    shown = [common.names.system(n) for n in names]
    header = [common.names.setting(rows)] + [f"{n}: {label}" for n in shown]
    if len(names) == 2:
        header.append(f"{shown[0]} vs {shown[1]} (%)")
    body = []
    for key in common.ordered(df, common.column(df, rows)):
        line = [common.x_label(key, rows).replace("\n", " ")]
        for n in names:
            v = data.get(key, {}).get(n)
            line.append("-" if v is None else f"{v[0]:.4g}" + ("" if at is not None else
                                                                 f" ({x} {v[1]:g})"))
        if len(names) == 2 and all(n in data.get(key, {}) for n in names):
            a, b = data[key][names[0]][0], data[key][names[1]][0]
            line.append(f"{(a / b - 1) * 100:+.0f}" if b else "-")
        elif len(names) == 2:
            line.append("-")
        body.append(line)
    fig, ax = plt.subplots(figsize=(2.2 * len(header), 0.5 * len(body) + 1.6))
    ax.axis("off")
    ax.table(cellText=body, colLabels=header, loc="center").auto_set_font_size(False)
    ax.set_title(f"{label}, " + (f"at {x} = {at}" if at is not None else f"best over {x}"),
                 fontsize=10)
    return common.finish(fig, df, figure=figure)


render = common.renderer(plot)

if __name__ == "__main__":
    common.main(render, __doc__)
