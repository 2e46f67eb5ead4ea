"""Every spec loads, expands at both scales and names a plot family that exists; what the
testbed cannot run yet is pending with a precise reason, never run with a bad flag."""
import importlib
import inspect

import pytest
import yaml

from conftest import FIXTURES
from experiments.capabilities import Capabilities, missing, parse_help
from experiments.planner import plan, reasons
from experiments.runner import command
from experiments.specs import all_specs, load_spec
from plots import FAMILIES

HELP = parse_help((FIXTURES / "rundb-help.txt").read_text())
TODAY = Capabilities({"mmdb", "zen"}, {"no_wait", "silo"}, HELP, "fixture")
SPECS = all_specs()
PAPERS = {"zen-vldb21", "zen-plus-journal", "nvcaracal-eurosys23", "mcsi", "foedus-sigmod15", "none (testbed)"}


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_spec_expands_at_both_scales_and_its_plots_exist(spec):
    assert spec["paper"] in PAPERS and spec["figure"] and spec["title"]
    assert {"small", "paper"} <= set(spec["scales"])
    for scale in ("small", "paper"):
        p = plan(spec, scale, 1, caps=TODAY)
        assert p.runs or p.pending, scale
        assert all(reasons(e) and all(reasons(e)) for _, e in p.pending)
        # Nothing that runs names a flag rundb lacks.
        assert all(not missing(TODAY, r.settings) for r in p.runs)
        if scale == "small":  # 2 cores: never more threads than that
            assert all(int(r.settings.get("threads", 2)) <= 2 for r in p.runs)
    for options in spec["plots"]:
        assert options["script"] in FAMILIES
        module = importlib.import_module(f"plots.{options['script']}")
        kwargs = {k: v for k, v in options.items() if k not in ("script", "name")}
        inspect.signature(module.plot).bind(None, **kwargs)  # options the plot accepts


def test_every_paper_figure_has_a_spec():
    named = " ".join(f"{s['paper']} {s['figure']} " + " ".join(s["also"]) for s in SPECS)
    for fig in ["Figure 5", "Figure 6", "Figure 7", "Figure 8", "Figures 9-12", "Figure 13",
                "Figure 14", "Figure 15", "Figure 16", "Figure 17", "Figure 18",
                "Figure 19 (a, b)", "Figure 19 (c)", "Figure 20"]:
        assert f"zen-vldb21 {fig} " in named, fig
    for n in (9, 16, 20, 21, 26, 27, 28, 29, 30, 31):
        assert f"zen-plus-journal Figure {n}" in named, n
    assert "zen-plus-journal Figures 24-25" in named
    for n in range(5, 13):
        assert f"nvcaracal-eurosys23 Figure {n} " in named, n
    for part in ("Figures 10, 13; Tables 4, 6", "Figure 11", "Figures 12, 13; Tables 5, 6"):
        assert f"mcsi {part}" in named, part


def test_device_specs_sweep_profiles_domains_latency_and_bandwidth():
    axes = {s["name"]: s["axes"] for s in SPECS if s["paper"] == "none (testbed)"}
    assert axes["device_profiles"]["profile"] == ["dram", "optane-100", "optane-200", "cxl"]
    assert axes["device_profiles"]["persist_domain"] == ["adr", "eadr"]
    assert "read_ns" in axes["device_read_latency"]
    assert "write_gbps" in axes["device_write_bandwidth"]


def spec_with(tmp_path, **changes):
    raw = yaml.safe_load((FIXTURES / "tiny.yaml").read_text())
    raw["pending"] = []
    for key, value in changes.items():
        raw[key].update(value) if isinstance(value, dict) else raw.__setitem__(key, value)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_spec(path)


def test_a_declared_flag_rundb_lacks_makes_the_spec_pending(tmp_path):
    spec = spec_with(tmp_path, fixed={"warp_factor": 9},
                     pending=[{"flags": ["warp_factor"], "reason": "issue 99"}])
    p = plan(spec, "small", 1, caps=TODAY)
    assert not p.runs and len(p.pending) == 4
    assert all(e["reason"] == "rundb has no flag --warp-factor (issue 99)" for _, e in p.pending)


def test_a_value_a_flag_does_not_accept_is_pending(tmp_path):
    p = plan(spec_with(tmp_path, fixed={"workload": "tpcc"}), "small", 1, caps=TODAY)
    assert {e["reason"] for _, e in p.pending} == {"needs --workload tpcc (issue 5)"}
    p = plan(spec_with(tmp_path, fixed={"profile": "pcm"}), "small", 1, caps=TODAY)
    assert {e["reason"] for _, e in p.pending} == {"needs --profile pcm"}


def test_an_engine_still_to_come_is_pending_only_when_the_spec_declares_it(tmp_path):
    spec = spec_with(tmp_path, axes={"engine": ["mmdb", "hyrise"], "cc": ["silo"]},
                     pending=[{"engine": "hyrise", "reason": "issue 99"}])
    p = plan(spec, "small", 1, caps=TODAY)
    assert {(r.settings["engine"], r.settings["cc"]) for r in p.runs} == {("mmdb", "silo")}
    assert {(s["engine"], e["reason"]) for s, e in p.pending} == {("hyrise", "issue 99")}


def test_a_spec_pending_entry_can_cover_the_whole_spec(tmp_path):
    spec = spec_with(tmp_path, pending=[{"reason": "needs a time breakdown in the JSON"}])
    p = plan(spec, "small", 1, caps=TODAY)
    assert not p.runs and reasons(p.pending[0][1]) == ["whole spec: needs a time breakdown in the JSON"]


def test_bundle_axes_set_several_settings_and_name_a_label(tmp_path):
    spec = spec_with(tmp_path, axes={"read_ratio": [{"label": "A", "read_ratio": 0.5},
                                                    {"label": "C", "read_ratio": 1.0}],
                                     "theta": [0.6]},
                     fixed={"rows": "${threads}"})
    p = plan(spec, "small", 1, caps=TODAY)
    assert sorted((r.labels["read_ratio"], r.settings["read_ratio"]) for r in p.runs
                  if r.settings["engine"] == "mmdb") == [("A", 0.5), ("C", 1.0)]
    assert all(r.settings["rows"] == 1 for r in p.runs)  # ${threads} took the thread count


def test_help_parsing_and_boolean_flags():
    assert HELP["threads"] is None and HELP["recover"] is None
    assert HELP["profile"] == {"dram", "optane-100", "optane-200", "cxl"}
    assert HELP["workload"] == {"ycsb", "ycsb-a", "ycsb-b", "ycsb-c", "smallbank"} and "help" not in HELP
    cmd = command("rundb", {"engine": "mmdb", "cc": "silo", "power_fail": True,
                            "recover": False, "seed": 1}, 0, "/dev/shm/x.img")
    assert "--power-fail" in cmd and "true" not in cmd and "--recover" not in cmd
