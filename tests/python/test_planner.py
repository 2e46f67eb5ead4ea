import subprocess
import sys

import pytest
import yaml

from conftest import FIXTURES, ROOT
from experiments.capabilities import Capabilities, parse_help
from experiments.planner import plan, run_id
from experiments.runner import command
from experiments.specs import SpecError, all_specs, load_spec


# The testbed as this file was written: mmdb and zen, no_wait and silo, rundb's flags then.
TODAY = Capabilities({"mmdb", "zen"}, {"no_wait", "silo"},
                     parse_help((FIXTURES / "rundb-help.txt").read_text()), "fixture")


def test_read_ratio_expansion_counts():
    p = plan(load_spec("ycsb_read_ratio"), "small", repeat=3, caps=TODAY)
    # 8 engine/cc pairs x 4 read ratios x 3 skews, three repetitions each; every pair is one
    # make builds, so nothing is pending (pending is only what a spec declares).
    assert len(p.runs) == 8 * 4 * 3 * 3
    assert len({r.run_id for r in p.runs}) == 96
    assert len({r.key for r in p.runs}) == 288
    assert sorted({r.rep for r in p.runs}) == [0, 1, 2]
    assert p.pairs[:3] == [("mmdb", "cicada"), ("wbl", "cicada"), ("foedus", "foedus")]
    assert p.pending == []
    assert all(r.settings["rows"] == 200000 and r.settings["p_ratio"] == 4 for r in p.runs)
    assert {r.labels["system"] for r in p.runs} >= {"mmdb/no_wait", "foedus/foedus"}


def test_scale_replaces_an_axis_list():
    spec = load_spec("ycsb_scalability")
    small, paper = plan(spec, "small", 1), plan(spec, "paper", 1)
    assert sorted({r.settings["threads"] for r in small.runs}) == [1, 2]
    assert sorted({r.settings["threads"] for r in paper.runs}) == [1, 2, 4, 8, 16, 32]
    assert len(small.runs) == 8 * 2 and len(paper.runs) == 8 * 6
    assert all(r.settings["theta"] == 0.95 and r.settings["read_ratio"] == 0.5 for r in paper.runs)


def test_every_spec_expands_at_every_scale():
    for spec in all_specs():
        for scale in spec["scales"]:
            p = plan(spec, scale, 1)  # no capabilities: only the spec's own pending entries
            assert p.runs or p.pending, (spec["name"], scale)


def test_run_id_is_stable_across_processes():
    settings = {"engine": "mmdb", "cc": "silo", "threads": 2, "theta": 0.6, "read_ratio": 0.9}
    code = ("import sys; sys.path.insert(0, %r); from experiments.planner import run_id; "
            "print(run_id(%r))" % (str(ROOT), settings))
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": "123"}).stdout.strip()
    assert other == run_id(settings)
    assert len(other) == 12 and int(other, 16) >= 0
    # Pinned value (sha1 of '{"cc":"silo","engine":"mmdb","threads":2}'): changing the hashing
    # silently would orphan every stored result. Key order does not matter.
    assert run_id({"threads": 2, "engine": "mmdb", "cc": "silo"}) == "19e3e8ac34e4"


def test_run_id_differs_for_different_settings():
    base = {"engine": "mmdb", "cc": "no_wait", "threads": 2, "theta": 0.6}
    variants = [dict(base, threads=4), dict(base, cc="silo"), dict(base, theta=0.95),
                dict(base, extra=1)]
    ids = {run_id(base)} | {run_id(v) for v in variants}
    assert len(ids) == 1 + len(variants)
    # The same value written 0 or 0.0 in YAML is the same setting.
    assert run_id(dict(base, theta=0)) == run_id(dict(base, theta=0.0))


def test_bad_scale_and_bad_spec_are_rejected(tmp_path):
    with pytest.raises(SpecError, match="no scale 'papr' \\(did you mean 'paper'\\?\\)"):
        plan(load_spec("ycsb_read_ratio"), "papr")
    bad = yaml.safe_load((FIXTURES / "tiny.yaml").read_text())
    del bad["plot"]
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(SpecError, match="missing key 'plot'"):
        load_spec(tmp_path / "bad.yaml")
    with pytest.raises(SpecError, match="no spec"):
        load_spec("no_such_spec")


def test_command_line_maps_settings_to_flags():
    settings = {"engine": "mmdb", "cc": "silo", "threads": 2, "read_ratio": 0.5,
                "nvm_size": "1G", "persist_domain": "adr", "seed": 1}
    cmd = command("build/mmdb-silo/rundb", settings, rep=2, nvm_path="/dev/shm/x.img")
    assert cmd[0] == "build/mmdb-silo/rundb"
    flags = dict(zip(cmd[1::2], cmd[2::2]))
    assert flags == {"--threads": "2", "--read-ratio": "0.5", "--nvm-size": "1G",
                     "--persist-domain": "adr", "--seed": "3", "--nvm-path": "/dev/shm/x.img"}


def test_false_for_a_flag_that_defaults_on_is_its_no_form():
    cmd = command("rundb", {"engine": "nvcaracal", "cc": "caracal", "minor_gc": False, "input_log": True,
                            "recover": False}, 0, "/dev/shm/x.img")
    assert "--no-minor-gc" in cmd and "--input-log" in cmd and "--recover" not in cmd


def test_list_command_shows_pending_reasons():
    out = subprocess.run([sys.executable, "-m", "experiments", "list"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "ycsb_read_ratio: zen-vldb21 Figure 5 (also zen-plus-journal Figure 8)" in out
    # The FOEDUS engine and its CC method are both in the Makefile: nothing waits for them.
    assert "needs engine foedus" not in out and "needs cc foedus" not in out
    for spec in all_specs():  # every spec, with its run counts per scale
        assert f"{spec['name']}: {spec['paper']}" in out
    assert "  small: " in out and "  paper: " in out


def test_build_variant_names_its_own_binary_and_is_no_flag(tmp_path):
    from experiments.capabilities import Capabilities, missing
    from experiments.planner import binaries, binary_of
    from experiments.runner import binary_path, command
    spec = {"name": "t", "axes": {"allocator": [{"label": "zen"}, {"label": "naive", "build": "naive"}]},
            "fixed": {"engine": "zen", "cc": "silo", "threads": 2}, "scales": {"small": {}}}
    p = plan(spec, "small", repeat=1)
    assert binaries(p.runs) == [("zen", "silo"), ("zen", "silo", "naive")]
    naive = next(r for r in p.runs if r.settings.get("build"))
    assert binary_path(*binary_of(naive.settings)).parts[-2] == "zen-silo-naive"
    assert "--build" not in command("rundb", naive.settings, 0, tmp_path / "img")
    caps = Capabilities(engines={"mmdb", "zen"}, ccs={"silo"}, flags={"threads": None})
    assert missing(caps, naive.settings) == []
    assert "no build variant 'naive' for engine mmdb" in missing(caps, {**naive.settings, "engine": "mmdb"})[0]
