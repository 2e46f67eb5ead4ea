import shutil

import pandas as pd
from matplotlib.container import BarContainer, ErrorbarContainer

from conftest import FIXTURES
from experiments.specs import all_specs
from plots import render, scalability, ycsb_bars


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
    assert legend_labels(fig) == ["mmdb/no_wait", "mmdb/silo"]
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
    assert [c.get_label() for c in lines] == ["mmdb/no_wait", "mmdb/silo"]
    assert list(lines[0].lines[0].get_xdata()) == [1, 2]
    assert ax.get_xlabel() == "Threads" and ax.get_ylabel() == "Throughput (K txn/s)"
    assert legend_labels(fig) == ["mmdb/no_wait", "mmdb/silo"]
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


def test_every_spec_renders_png_and_pdf_next_to_its_csv(tmp_path):
    for spec in all_specs():
        csv = tmp_path / f"{spec['name']}.csv"
        shutil.copy(FIXTURES / f"{spec['name']}.csv", csv)
        files = render(spec["plot"], csv)
        assert [f.name for f in files] == [f"{spec['name']}.png", f"{spec['name']}.pdf"]
        assert all(f.stat().st_size > 1000 for f in files)
