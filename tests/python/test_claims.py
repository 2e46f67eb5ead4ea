"""The scorecard (docs/claims.md): each verdict reached by a table built for it, a claim on a
missing configuration is 'not run', a claim naming an unknown series or metric is a spec error
with file and line, the summary table holds mean, std and n, and `check` exits 3 when a claim
that ran was not reproduced."""
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT
from experiments.claims import (NOT, NOT_RUN, REPRODUCED, SAME, evaluate, summarize,
                                validate_claims)
from experiments.specs import SpecError, all_specs, load_spec

SPEC = {"name": "t", "axes": {"system": [{"engine": "zen", "cc": "cicada"},
                                         {"engine": "mmdb", "cc": "cicada"},
                                         {"label": "WBL", "engine": "wbl", "cc": "cicada"}],
                              "theta": [0, 0.95], "p_ratio": [2, 4, 8]},
        "fixed": {"workload": "ycsb"}, "scales": {"small": {"threads": 2}}}


def table(values, reps=3, spread=0.02):
    """A raw sweep table: values[(system, theta, p)] = mean throughput, each repetition
    within +-spread of it."""
    rows = []
    for (system, theta, p), mean in values.items():
        rid = f"{system}-{theta}-{p}"
        for r in range(reps):
            off = (r - (reps - 1) / 2) * spread * mean
            rows.append({"run_id": rid, "rep": r, "label.system": system, "setting.theta": theta,
                         "setting.p_ratio": p, "results.throughput_tps": mean + off,
                         "results.per_txn.sfence": 1.0 if system == "zen/cicada" else 9.0})
    return pd.DataFrame(rows)


def grid(f):
    return {(s, t, p): f(s, t, p) for s in ("zen/cicada", "mmdb/cicada", "WBL")
            for t in (0, 0.95) for p in (2, 4, 8)}


BASE = {"zen/cicada": 200e3, "mmdb/cicada": 100e3, "WBL": 80e3}
FALLING = table(grid(lambda s, t, p: BASE[s] / p))


def verdict(claim, raw=FALLING):
    c = {"id": "c", "claim": "x", "source": "paper", **claim}
    assert not validate_claims({**SPEC, "claims": [c]}), validate_claims({**SPEC, "claims": [c]})
    return evaluate(SPEC, c, summarize(raw))


def test_the_summary_holds_mean_std_and_n_per_configuration_and_metric():
    s = summarize(FALLING)
    row = s[(s["run_id"] == "zen/cicada-0-2") & (s["metric"] == "results.throughput_tps")].iloc[0]
    assert row["n"] == 3 and row["mean"] == pytest.approx(100e3) and row["std"] > 0
    assert set(s["metric"]) == {"results.throughput_tps", "results.per_txn.sfence"}
    assert row["label.system"] == "zen/cicada" and row["setting.p_ratio"] == 2


def test_a_ratio_inside_the_papers_range_is_reproduced():
    v = verdict({"ratio": {"axis": "system", "of": "zen/cicada", "to": "mmdb/cicada", "range": [1.5, 2.5]}})
    assert v.verdict == REPRODUCED, v.details
    assert "2" in v.measured and v.groups == "6 of 6 groups reproduced"


def test_a_ratio_on_the_right_side_of_one_with_another_magnitude_is_same_direction():
    v = verdict({"ratio": {"axis": "system", "of": "zen/cicada", "to": "mmdb/cicada", "range": [3.0, 4.0]}})
    assert v.verdict == SAME, v.details


def test_a_ratio_on_the_wrong_side_of_one_is_not_reproduced():
    v = verdict({"ratio": {"axis": "system", "of": "mmdb/cicada", "to": "zen/cicada", "range": [1.1, None]}})
    assert v.verdict == NOT, v.details


def test_the_interval_from_repetitions_counts_a_near_miss_as_reproduced():
    # 2.0 measured with a wide spread: its interval reaches 2.1.
    wide = table(grid(lambda s, t, p: BASE[s] / p), spread=0.3)
    assert verdict({"ratio": {"axis": "system", "of": "zen/cicada", "to": "mmdb/cicada",
                              "range": [2.1, 2.5]}}, wide).verdict == REPRODUCED
    # The same means with no spread stay outside.
    exact = table(grid(lambda s, t, p: BASE[s] / p), spread=0.0)
    assert verdict({"ratio": {"axis": "system", "of": "zen/cicada", "to": "mmdb/cicada",
                              "range": [2.1, 2.5]}}, exact).verdict == SAME


def test_orders():
    ok = {"order": {"axis": "system", "series": ["zen/cicada", "mmdb/cicada", "WBL"]}}
    assert verdict(ok).verdict == REPRODUCED
    swapped = {"order": {"axis": "system", "series": ["zen/cicada", "WBL", "mmdb/cicada"]}}
    assert verdict(swapped).verdict == SAME  # first ahead of last, the middle wrong
    reversed_ = {"order": {"axis": "system", "series": ["WBL", "mmdb/cicada", "zen/cicada"]}}
    assert verdict(reversed_).verdict == NOT


def test_trends():
    assert verdict({"trend": {"along": "p_ratio", "direction": "decreasing"}}).verdict == REPRODUCED
    assert verdict({"trend": {"along": "p_ratio", "direction": "increasing"}}).verdict == NOT
    # Down overall but up in the middle (2 -> 4 rises): the right direction only.
    bumpy = table(grid(lambda s, t, p: BASE[s] * {2: 1.0, 4: 1.5, 8: 0.5}[p]))
    assert verdict({"trend": {"along": "p_ratio", "direction": "decreasing", "axis": "system",
                              "series": ["zen/cicada"]}}, bumpy).verdict == SAME


def test_a_flat_noisy_line_that_ends_on_the_wrong_side_is_no_trend():
    # Every step is inside the intervals (30% spread), but the line ends above where it began.
    flat = table(grid(lambda s, t, p: BASE[s] * {2: 1.0, 4: 0.9, 8: 1.07}[p]), spread=0.3)
    assert verdict({"trend": {"along": "p_ratio", "direction": "decreasing"}}, flat).verdict == NOT
    # The same noise, ending below the start: the trend holds within its intervals.
    down = table(grid(lambda s, t, p: BASE[s] * {2: 1.0, 4: 1.07, 8: 0.9}[p]), spread=0.3)
    assert verdict({"trend": {"along": "p_ratio", "direction": "decreasing"}}, down).verdict == REPRODUCED
    # An order whose last series is ahead of its first by the means shows no order.
    tied = table(grid(lambda s, t, p: {"zen/cicada": 100e3, "mmdb/cicada": 99e3, "WBL": 101e3}[s]), spread=0.3)
    assert verdict({"order": {"axis": "system", "series": ["zen/cicada", "mmdb/cicada", "WBL"]}},
                   tied).verdict == NOT


def test_values_and_a_ratio_of_two_metrics():
    assert verdict({"metric": "per_txn.sfence", "value": {"axis": "system", "series": ["zen/cicada"],
                                                          "range": [None, 1]}}).verdict == REPRODUCED
    assert verdict({"metric": "per_txn.sfence", "value": {"axis": "system", "series": ["mmdb/cicada"],
                                                          "range": [None, 1]}}).verdict == NOT
    v = verdict({"metric": "per_txn.sfence / throughput_tps",
                 "value": {"axis": "system", "series": ["zen/cicada"], "range": [0, 1e-4]}})
    assert v.verdict == REPRODUCED, v.details


def test_where_restricts_the_groups():
    skewed = table(grid(lambda s, t, p: BASE[s] * (3 if (s == "mmdb/cicada" and t == 0.95) else 1)))
    claim = {"ratio": {"axis": "system", "of": "zen/cicada", "to": "mmdb/cicada", "range": [1.5, 2.5]}}
    assert verdict(claim, skewed).verdict == NOT  # at theta 0.95 mmdb leads
    assert verdict({**claim, "where": {"theta": 0}}, skewed).verdict == REPRODUCED


def test_a_claim_on_a_missing_configuration_is_not_run():
    no_wbl = FALLING[FALLING["label.system"] != "WBL"]
    v = verdict({"order": {"axis": "system", "series": ["zen/cicada", "WBL"]}}, no_wbl)
    assert v.verdict == NOT_RUN and "missing" in v.measured
    v = verdict({"ratio": {"axis": "system", "of": "zen/cicada", "to": "mmdb/cicada", "range": [1, 3]},
                 "where": {"theta": 0.6}})
    assert v.verdict == NOT_RUN
    c = {"id": "c", "claim": "x", "source": "p", "ratio": {"axis": "system", "of": "zen/cicada",
                                                           "to": "mmdb/cicada", "range": [1, 3]}}
    assert evaluate(SPEC, c, None).verdict == NOT_RUN


BAD = """\
paper: zen-vldb21
figure: Figure 5
title: t
axes:
  system:
    - {engine: zen, cc: cicada}
    - {engine: mmdb, cc: cicada}
  theta: [0, 0.95]
fixed: {workload: ycsb}
scales: {small: {threads: 2}, paper: {threads: 16}}
plot: {script: ycsb_bars, x: theta, series: [system], facet: null}
claims:
  - id: ok
    claim: Zen ahead
    source: here
    ratio: {axis: system, of: zen/cicada, to: mmdb/cicada, range: [1.1, 2.5]}
  - id: bad-series
    claim: Zen ahead of WBL
    source: here
    ratio: {axis: system, of: zen/cicada, to: wbl/cicada, range: [1.1, 2.5]}
  - id: bad-metric
    claim: fences
    source: here
    metric: per_txn.sfense
    value: {range: [0, 1]}
"""


def test_an_unknown_series_or_metric_is_a_spec_error_with_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    lines = e.value.args[0]
    assert any(f"{path}:20:" in l and "unknown series 'wbl/cicada'" in l for l in lines), lines
    assert any(f"{path}:24:" in l and "unknown metric 'per_txn.sfense'" in l for l in lines), lines
    assert len(lines) == 2, lines


def test_every_shipped_specs_claims_validate():
    for spec in all_specs():  # raises SpecError, naming file and line, on a bad claim
        assert not validate_claims(spec), spec["name"]


def test_check_exits_3_when_a_claim_that_ran_is_not_reproduced(tmp_path):
    spec = tmp_path / "t.yaml"
    spec.write_text(BAD.split("  - id: bad-series")[0])
    folder = tmp_path / "results" / "t"
    folder.mkdir(parents=True)
    raw = table({("zen/cicada", t, 4): 100e3 for t in (0, 0.95)} |
                {("mmdb/cicada", t, 4): 200e3 for t in (0, 0.95)})
    raw.to_csv(folder / "t.csv", index=False)
    run = subprocess.run([sys.executable, "-m", "experiments", "check", str(spec), "--results",
                          str(tmp_path / "results")], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "[not reproduced] ok" in run.stdout and "0 reproduced" in run.stdout
    assert (folder / "t_summary.csv").exists()
    raw.assign(**{"results.throughput_tps": raw["results.throughput_tps"].where(
        raw["label.system"] == "mmdb/cicada", 300e3)}).to_csv(folder / "t.csv", index=False)
    run = subprocess.run([sys.executable, "-m", "experiments", "check", str(spec), "--results",
                          str(tmp_path / "results")], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


TINY_CLAIMS = """\
claims:
  - id: fast-enough
    claim: MMDB commits between 1k and 5k transactions a second
    source: test fixture
    value: {axis: engine, series: [mmdb], range: [1000, 5000]}
  - id: zen-ahead
    claim: Zen ahead of MMDB
    source: test fixture
    explanation: Zen is pending in this sweep
    ratio: {axis: engine, of: zen, to: mmdb, range: [1.1, 2.5]}
"""


def test_the_report_opens_with_the_scorecard_and_each_figure_shows_its_claims(tmp_path):
    from experiments.report import write_report
    from experiments.runner import run_sweep
    from conftest import FIXTURES
    from experiments.planner import plan
    from test_resume import done_sweep

    spec = tmp_path / "tiny.yaml"
    spec.write_text((FIXTURES / "tiny.yaml").read_text() + TINY_CLAIMS)
    p = plan(load_spec(spec), "small", 2)
    root, out = done_sweep(tmp_path, p)
    lines = []
    summary = run_sweep(p, tmp_path / "results", root=root, echo=lines.append)
    assert (out / "tiny_summary.csv").exists() and summary.csv.exists()
    html = write_report(tmp_path / "results")[0].read_text()
    card = html.index("<h2>Scorecard</h2>")
    assert card < html.index("<section"), "the scorecard comes first"
    assert "1 reproduced, 0 same direction, 0 not reproduced, 1 not run" in html
    section = html[html.index("<section"):]
    assert "The paper's claims about this figure" in section
    assert "class='v-reproduced'" in section and "class='v-notrun'" in section
    assert "href='#tiny'" in html[card:html.index("<section")]


def test_a_trend_along_a_label_axis_follows_the_specs_order():
    spec = {"name": "t", "axes": {"system": ["a"], "contention": [{"label": "low", "hot": 0},
                                                                  {"label": "medium", "hot": 4},
                                                                  {"label": "high", "hot": 7}]},
            "fixed": {}, "scales": {}}
    # Alphabetically high < low < medium: rising with contention only in the spec's order.
    raw = pd.DataFrame([{"run_id": c, "rep": 0, "setting.system": "a", "label.contention": c,
                         "results.throughput_tps": v} for c, v in (("low", 1.0), ("medium", 2.0), ("high", 3.0))])
    c = {"id": "c", "claim": "x", "source": "p", "trend": {"along": "contention", "direction": "increasing"}}
    assert not validate_claims({**spec, "claims": [c]})
    assert evaluate(spec, c, summarize(raw)).verdict == REPRODUCED
