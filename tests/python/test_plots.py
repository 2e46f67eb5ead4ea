import json
import shutil

import matplotlib.colors
import pandas as pd
from matplotlib.container import BarContainer, ErrorbarContainer

from conftest import FIXTURES
from experiments import report
from plots import (FAMILIES, common, names, render, scalability, stacked, styles, table, timeline,
                   ycsb_bars)


def legend_labels(fig):
    return [t.get_text() for t in fig.legends[0].get_texts()]


def bar_groups(ax):
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def caption_text(fig):
    return " ".join(t.get_text() for t in fig.texts)


def test_ycsb_bars_groups_workloads_by_series_and_skew():
    df = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")
    fig = ycsb_bars.plot(df, x="read_ratio", series=["engine", "cc"], facet="theta")
    assert len(fig.axes) == 3  # one panel per theta
    assert [ax.get_title() for ax in fig.axes] == \
        ["No skew (θ=0)", "Low skew (θ=0.6)", "High skew (θ=0.95)"]
    for ax in fig.axes:
        bars = bar_groups(ax)
        assert len(bars) == 2 and all(len(b) == 4 for b in bars)  # 2 series x 4 workloads
        assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == ["RO", "RH", "BA", "WH"]
    assert legend_labels(fig) == ["MMDB / NO_WAIT", "MMDB / Silo"]
    assert fig.axes[0].get_ylabel() == "Throughput (K txn/s)"
    # First bar: mmdb/no_wait, read-only, no skew = mean over repetitions, in K txn/s.
    rows = df[(df["config.cc"] == "no_wait") & (df["config.read_ratio"] == 1.0)
              & (df["config.theta"] == 0)]
    first = bar_groups(fig.axes[0])[0][0]
    assert abs(first.get_height() - rows["results.throughput_tps"].mean() / 1e3) < 1e-6
    text = caption_text(fig)
    for part in ("zen-vldb21 Figure 5", "scale small", "optane-100", "emulated NVM", "2 repetitions"):
        assert part in text


def test_scalability_draws_one_line_per_series():
    df = pd.read_csv(FIXTURES / "ycsb_scalability.csv")
    fig = scalability.plot(df)
    ax = fig.axes[0]
    assert len(fig.axes) == 1
    lines = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label() for c in lines] == ["MMDB / NO_WAIT", "MMDB / Silo"]
    assert list(lines[0].lines[0].get_xdata()) == [1, 2]
    assert ax.get_xlabel() == "Threads" and ax.get_ylabel() == "Throughput (K txn/s)"
    assert legend_labels(fig) == ["MMDB / NO_WAIT", "MMDB / Silo"]
    assert "Figure 8" in caption_text(fig)


def test_caption_says_real_nvm_when_the_host_had_it():
    df = pd.read_csv(FIXTURES / "ycsb_scalability.csv")
    df["host.nvm.real"] = True
    assert "real NVM" in caption_text(scalability.plot(df))
    assert "emulated" not in caption_text(scalability.plot(df))


def test_other_metrics_get_their_units():
    df = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")
    fig = ycsb_bars.plot(df, y="per_txn.clwb")
    assert fig.axes[0].get_ylabel() == "clwb per transaction"


def test_every_family_renders_png_and_pdf_next_to_its_csv(tmp_path):
    cases = {"ycsb_bars": ("ycsb_read_ratio", {"series": ["engine", "cc"]}),
             "scalability": ("ycsb_scalability", {}),
             "stacked": ("recovery", {"x": "txns", "series": ["system"]}),
             "timeline": ("timeline", {}),
             "table": ("ycsb_scalability", {"rows": "theta", "series": ["cc"]})}
    assert set(cases) == set(FAMILIES)
    for family, (fixture, options) in cases.items():
        csv = tmp_path / f"{fixture}.csv"
        shutil.copy(FIXTURES / f"{fixture}.csv", csv)
        files = render({"script": family, "name": family, **options}, csv)
        assert [f.name for f in files] == [f"{fixture}-{family}.png", f"{fixture}-{family}.pdf"]
        assert all(f.stat().st_size > 1000 for f in files)


def test_every_script_runs_from_its_command_line(tmp_path, capsys):
    # .venv/bin/python -m plots.NAME CSV: --y only where the script draws one metric of choice.
    modules = {"ycsb_bars": (ycsb_bars, "ycsb_read_ratio", True),
               "scalability": (scalability, "ycsb_scalability", True),
               "stacked": (stacked, "recovery", False),
               "timeline": (timeline, "timeline", False)}
    for name, (module, fixture, takes_y) in modules.items():
        csv = tmp_path / f"{fixture}.csv"
        shutil.copy(FIXTURES / f"{fixture}.csv", csv)
        common.main(module.render, module.__doc__, [str(csv)])
        assert capsys.readouterr().out.split() == [str(csv.with_suffix(".png")), str(csv.with_suffix(".pdf"))]
        assert module.render.takes_y == takes_y, name


def test_several_metrics_get_one_row_of_panels_each():
    df = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")
    fig = ycsb_bars.plot(df, facet=None, y=["per_txn.clwb", "per_txn.sfence", "abort_rate"])
    assert [ax.get_ylabel() for ax in fig.axes] == \
        ["clwb per transaction", "sfence per transaction", "Abort rate (%)"]


def test_recovery_steps_stack_per_series():
    df = pd.read_csv(FIXTURES / "recovery.csv")  # real rundb runs, then rundb --recover
    fig = stacked.plot(df, x="txns", series=["system"], prefix="recovery.steps_s")
    ax = fig.axes[0]
    steps = [c.split(".")[-1] for c in df.columns if c.startswith("recovery.steps_s.")]
    words = [s.replace("_", " ") for s in steps]  # 'find checkpoint'
    assert legend_labels(fig) == words + ["MMDB / NO_WAIT", "MMDB / Silo"]
    # 2 series x 2 transaction counts, one segment per step.
    assert len(bar_groups(ax)) == 2 * len(steps) and all(len(b) == 2 for b in bar_groups(ax))
    assert ax.get_ylabel() == "Recovery time (s)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["500", "2000"]
    # The stack's top is the mean total of the steps, over repetitions.
    rows = df[(df["label.system"] == "mmdb/no_wait") & (df["setting.txns"] == 500)]
    top = sum(b[0].get_height() for b in bar_groups(ax)[:len(steps)])
    assert abs(top - rows[[f"recovery.steps_s.{s}" for s in steps]].sum(axis=1).mean()) < 1e-9
    assert "Figure 19" in caption_text(fig)


def test_memory_breakdown_stacks_dram_parts():
    df = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")
    fig = stacked.plot(df, x="read_ratio", series=["cc"],
                       prefix="results.memory_bytes.dram_breakdown")
    assert legend_labels(fig)[:3] == ["index.usertable", "private", "rows.usertable"]
    assert fig.axes[0].get_ylabel() == "Memory (MiB): dram"


def test_timeline_draws_throughput_over_time_per_series():
    df = pd.read_csv(FIXTURES / "timeline.csv")
    fig = timeline.plot(df, series=["engine", "cc"])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["MMDB / NO_WAIT", "MMDB / Silo"]
    assert ax.get_xlabel() == "Time (s)" and ax.get_ylabel() == "Throughput (K txn/s)"
    x = ax.lines[0].get_xdata()
    assert abs(x[0] - 0.1) < 1e-9 and len(x) >= 5  # 100 ms intervals


def test_timeline_shades_the_intervals_of_the_exclusive_stage():
    df = pd.read_csv(FIXTURES / "timeline.csv")
    n = len(json.loads(df["timeline.throughput_tps"].iloc[0]))
    # Zen's timeline.exclusive: the second and third interval of repetition 0, the third of 1.
    df["timeline.exclusive"] = [json.dumps([int(i in (1, 2) if r == 0 else i == 2) for i in range(n)])
                                for r in df["rep"]]
    fig = timeline.plot(df[df["config.cc"] == "no_wait"], series=["engine", "cc"])
    starts = sorted(round(p.get_bbox().x0, 3) for p in fig.axes[0].patches)  # axvspan: Rectangle
    assert starts == [0.1, 0.2]


def test_device_sweep_lines_label_the_swept_parameter():
    df = pd.read_csv(FIXTURES / "device.csv")
    fig = scalability.plot(df, x="read_ns", logx=True)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "NVM read latency (ns per 256 B)" and ax.get_xscale() == "log"
    lines = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label() for c in lines] == ["MMDB / NO_WAIT", "MMDB / Silo"]
    assert list(lines[0].lines[0].get_xdata()) == [100, 1000]


def test_table_shows_the_best_value_and_where_it_is_reached():
    df = pd.read_csv(FIXTURES / "ycsb_scalability.csv")
    fig = table.plot(df, rows="theta", x="threads", series=["cc"], figure="Table 4")
    cells = [c.get_text().get_text() for c in fig.axes[0].tables[0].get_celld().values()]
    assert "NO_WAIT vs Silo (%)" in cells
    assert any("(threads 2)" in c or "(threads 1)" in c for c in cells)
    assert "Table 4" in caption_text(fig)


def clashing_panels(fig):
    fig.canvas.draw()  # lay out the text at the size the figure is saved
    renderer = fig.canvas.get_renderer()
    return [ax.get_title() for ax in fig.axes if common._clashing(ax, renderer)]


def test_bar_tick_labels_never_run_into_each_other():
    df = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")
    ccs = ["no_wait", "wait_die", "dl_detect", "occ", "silo", "tictoc", "mvcc", "hekaton",
           "cicada"]  # zen-vldb21 Figure 11's CC methods: long labels, many groups
    many = pd.concat([df.assign(**{"config.cc": cc}) for cc in ccs], ignore_index=True)
    for fig in (ycsb_bars.plot(many, x="cc", series=["engine"], facet="theta"),
                ycsb_bars.plot(df, x="read_ratio", series=["engine", "cc"], facet="theta",
                               y=["throughput_tps", "abort_rate"]),
                ycsb_bars.plot(df.assign(**{"config.theta": 0.6}), x="read_ratio",
                               series=["cc"], facet="config.persist_domain")):
        assert clashing_panels(fig) == []
    # Labels that fit keep their two lines, untilted.
    fig = ycsb_bars.plot(df, x="read_ratio", series=["engine", "cc"], facet="theta")
    assert fig.axes[0].get_xticklabels()[0].get_text() == "RO\n(100% read)"


def test_one_repetition_draws_no_error_bars():
    one = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv").query("rep == 0")
    fig = ycsb_bars.plot(one, series=["engine", "cc"])
    assert all(b.errorbar is None for ax in fig.axes for b in bar_groups(ax))
    assert "1 repetition" in caption_text(fig)
    lines = pd.read_csv(FIXTURES / "ycsb_scalability.csv").query("rep == 0")
    ax = scalability.plot(lines).axes[0]
    assert not any(c.has_yerr for c in ax.containers if isinstance(c, ErrorbarContainer))
    steps = pd.read_csv(FIXTURES / "recovery.csv").query("rep == 0")
    ax = stacked.plot(steps, x="txns", series=["system"], prefix="recovery.steps_s").axes[0]
    assert not [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    # With repetitions the bars have them.
    fig = ycsb_bars.plot(pd.read_csv(FIXTURES / "ycsb_read_ratio.csv"), series=["engine", "cc"])
    assert all(b.errorbar is not None for ax in fig.axes for b in bar_groups(ax))


def test_engines_keep_their_hue_in_the_papers_order():
    names = ["mmdb/cicada", "wbl/cicada", "zen/cicada", "mmdb/silo", "zen/silo", "other"]
    c = common.colours(names)
    assert set(c) == set(names)
    hue = {e: matplotlib.colors.rgb_to_hsv(matplotlib.colors.to_rgb(c[f"{e}/cicada"]))[0]
           for e in ("mmdb", "wbl", "zen")}
    assert len({round(h, 1) for h in hue.values()}) == 3  # three engines, three hues
    assert c["mmdb/cicada"] != c["mmdb/silo"]  # two methods of one engine: two shades
    assert common.ENGINE_ORDER[:4] == ["mmdb", "wbl", "foedus", "zen"]
    assert c["other"] == "C0"


def test_zen_plus_series_is_labelled_and_shaded_as_a_zen_variant():
    # The zen-plus-journal specs name their Zen+ series (--zen-plus on) zen+/cicada: Zen's hue.
    c = common.colours(["mmdb/cicada", "zen/cicada", "zen+/cicada"])
    hue = lambda n: matplotlib.colors.rgb_to_hsv(matplotlib.colors.to_rgb(c[n]))[0]
    apart = lambda a, b: min(abs(hue(a) - hue(b)), 1 - abs(hue(a) - hue(b)))  # hue is a circle
    assert apart("zen+/cicada", "zen/cicada") < 0.05 < apart("zen+/cicada", "mmdb/cicada")
    assert c["zen+/cicada"] != c["zen/cicada"]
    from experiments.specs import load_spec
    spec = load_spec("ycsb_read_ratio_p8")
    assert {"engine": "zen", "cc": "cicada", "zen_plus": "on", "label": "zen+/cicada"} in spec["axes"]["system"]


# Series told apart without colour (issue 27): hatches for bars, markers and line styles for
# lines, the same for an engine/CC pair in every figure.

def test_bars_of_every_series_have_a_hatch_of_their_own():
    df = pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")
    fig = ycsb_bars.plot(df, series=["engine", "cc"])
    for ax in fig.axes:
        hatches = [b[0].get_hatch() or "" for b in bar_groups(ax)]
        assert len(set(hatches)) == len(hatches) == 2
    legend = [p.get_hatch() or "" for p in fig.legends[0].get_patches()]
    assert legend == hatches  # the legend shows them
    steps = stacked.plot(pd.read_csv(FIXTURES / "recovery.csv"), x="txns", series=["system"])
    series = [p.get_hatch() or "" for p in steps.legends[0].get_patches()][-2:]
    assert len(set(series)) == 2


def test_an_engine_and_cc_keep_their_hatch_and_marker_in_every_figure():
    one = ["mmdb/silo", "zen/silo", "zen/cicada"]
    other = ["wbl/cicada", "zen/cicada", "mmdb/no_wait", "foedus/foedus", "zen/no_wait"]
    for styles in (common.hatches, common.lines):
        a, b = styles(one), styles(other)
        assert a["zen/cicada"] == b["zen/cicada"]
        for s in (a, b):  # and no two series of a figure alike
            assert len({str(v) for v in s.values()}) == len(s)
    # A spec's labels (not engines or CC methods) still differ from each other.
    labels = ["Zen+ adaptive", "exclusive mode only", "baseline"]
    assert len(set(common.hatches(labels).values())) == 3
    assert len({str(v) for v in common.lines(labels).values()}) == 3


def test_lines_differ_in_marker_and_style_as_well_as_colour():
    df = pd.read_csv(FIXTURES / "ycsb_scalability.csv")
    zen = df.assign(**{"config.engine": "zen"})
    ax = scalability.plot(pd.concat([df, zen], ignore_index=True)).axes[0]
    lines = [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]
    looks = [(ln.get_marker(), str(ln.get_linestyle())) for ln in lines]
    assert len(lines) == 4 and len(set(looks)) == 4
    assert len({m for m, _ in looks}) == 2 and len({s for _, s in looks}) == 2  # CC, engine
    t = timeline.plot(pd.read_csv(FIXTURES / "timeline.csv")).axes[0]
    assert len({ln.get_marker() for ln in t.lines}) == 2


def test_shades_of_one_engine_differ_in_grayscale():
    names = [f"zen/{cc}" for cc in ("cicada", "no_wait", "silo", "tictoc")]
    gray = sorted(styles.gray(c) for c in common.colours(names).values())
    assert min(b - a for a, b in zip(gray, gray[1:])) > 0.1


def test_legend_fits_the_figure():
    df = pd.read_csv(FIXTURES / "timeline.csv")  # one narrow panel, long legend entries
    fig = timeline.plot(df.assign(**{"config.long_txn": "scan"}), facet="long_txn")
    fig.canvas.draw()
    box = fig.legends[0].get_window_extent()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width


# Captions, titles and legends in words.

def test_caption_names_threads_rows_p_and_theta():
    df = pd.read_csv(FIXTURES / "ycsb_scalability.csv")  # threads 1 and 2, one theta
    text = caption_text(scalability.plot(df))
    for part in ("threads 1-2", "200,000 rows", "P = 4", "θ = 0.95"):
        assert part in text, part
    text = caption_text(ycsb_bars.plot(pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")))
    assert "2 threads" in text and "θ 0-0.95" in text  # theta varies: it is the facet
    tpcc = df.assign(**{"config.workload": "tpcc", "config.warehouses": 4})
    text = common.caption(tpcc)
    assert "4 warehouses" in text and "rows" not in text and "θ" not in text


def test_caption_says_when_the_host_was_slower_than_the_device():
    df = pd.read_csv(FIXTURES / "ycsb_scalability.csv")  # rundb: ["persist latency"]
    assert "HOST SLOWER THAN THE DEVICE MODEL (persist latency) in every run" in common.caption(df)
    fast = df.assign(**{"host.calibration.slower_than_target": "[]"})
    assert "SLOWER" not in common.caption(fast)
    some = fast.copy()
    some.loc[0, "host.calibration.slower_than_target"] = '["read latency"]'
    assert f"(read latency) in 1 of {len(df)} runs" in common.caption(some)
    flag = df.assign(**{"host.calibration.slower_than_target": True})  # a plain true
    assert "SLOWER THAN THE DEVICE MODEL (calibration) in every run" in common.caption(flag)


def test_timeline_legend_names_the_shading():
    df = pd.read_csv(FIXTURES / "timeline.csv")
    assert "Exclusive stage on (shaded)" not in legend_labels(timeline.plot(df))
    n = len(json.loads(df["timeline.throughput_tps"].iloc[0]))
    df["timeline.exclusive"] = json.dumps([int(i == 2) for i in range(n)])
    assert legend_labels(timeline.plot(df))[-1] == "Exclusive stage on (shaded)"


def test_panel_titles_are_words():
    df = pd.read_csv(FIXTURES / "timeline.csv")
    df["config.long_txn"] = ["scan" if r == 0 else "update" for r in df["rep"]]
    fig = timeline.plot(df, facet="long_txn")
    assert [ax.get_title() for ax in fig.axes] == ["Long transactions: scans",
                                                   "Long transactions: updates"]
    assert common.facet_title("adr", "config.persist_domain") == "Persistence domain: ADR"
    assert common.facet_title(8000, "long_txn_rows") == "Long txn rows: 8000"  # the fallback
    assert common.facet_title(4.0, "p_ratio") == "P (NVM / DRAM): 4"


def test_engines_and_cc_methods_are_shown_by_name():
    assert names.system("zen/cicada") == "Zen / Cicada"
    assert names.system("Zen+ adaptive") == "Zen+ adaptive"  # a spec's label stays
    assert names.value({"engine": "foedus", "cc": "foedus"}, "system") == "FOEDUS / FOEDUS"
    assert names.value({"label": "scan 2GB", "long_txn": "scan", "long_txn_rows": 8000}) == \
        "scan 2GB (long_txn scan, long_txn_rows 8000)"
    assert names.value(268435456.0, "rows") == "268435456"


def test_report_tables_show_names_not_json():
    axes = {"system": [{"engine": "zen", "cc": "cicada"}, {"engine": "mmdb", "cc": "silo"}],
            "theta": [0, 0.6]}
    html = report._table(axes, words=True)
    assert "Zen / Cicada<br>MMDB / Silo" in html and "0, 0.6" in html
    assert "{" not in html and "&quot;" not in html
    assert ">Zen<" in report._table({"engine": "zen"}, words=True)
    assert "[&quot;a&quot;]" in report._table({"x": ["a"]})  # host fields stay exact


def test_report_shows_figures_to_one_scale_the_widest_at_page_width(tmp_path):
    wide = common.save(ycsb_bars.plot(pd.read_csv(FIXTURES / "ycsb_read_ratio.csv")),
                       tmp_path / "wide.csv")[0]  # three panels
    narrow = common.save(scalability.plot(pd.read_csv(FIXTURES / "ycsb_scalability.csv")),
                         tmp_path / "narrow.csv")[0]
    w, n = (float(report._img_width(p).rstrip("%")) for p in (wide, narrow))
    assert 90 <= w <= 100 and 40 <= n <= 60  # 12.6 and 6.7 inches of at most 13
    assert report._img_width(tmp_path / "missing.png") == "100%"
