"""A spec with a mistyped setting, an unknown key or a wrong type is an error (exit 2) naming
file, line and the closest known name; every problem is reported at once; every shipped spec
validates."""
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from experiments.capabilities import Capabilities, parse_help
from experiments.planner import plan
from experiments.schema import rundb_flags
from experiments.specs import SpecError, load_all, load_spec

TINY = (FIXTURES / "tiny.yaml").read_text()
HELP = parse_help((FIXTURES / "rundb-help.txt").read_text())
TODAY = Capabilities({"mmdb", "zen"}, {"no_wait", "silo"}, HELP, "fixture")


def experiments(*args):
    return subprocess.run([sys.executable, "-m", "experiments", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def write(tmp_path, text):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    return path


def line_of(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_every_shipped_spec_validates():
    specs, problems = load_all()
    assert problems == [] and len(specs) >= 30


def test_list_checks_every_spec_and_exits_0_when_all_validate():
    proc = experiments("list")
    assert proc.returncode == 0 and "error" not in proc.stderr, proc.stderr


def test_flags_come_from_rundb_source():
    flags = rundb_flags()
    assert {"theta", "p_ratio", "read_ratio", "power_fail", "no_prefetch"} <= flags
    assert "thta" not in flags


def test_a_mistyped_setting_is_an_error_naming_the_closest_flag(tmp_path):
    text = TINY.replace("  theta: [0.6]", "  thta: [0.6]")
    proc = experiments("run", str(write(tmp_path, text)), "--results", str(tmp_path / "r"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == (f"error: {tmp_path / 't.yaml'}:{line_of(text, 'thta')}: "
                                   f"unknown setting 'thta' (did you mean 'theta'?): not a rundb "
                                   f"flag; a flag still to come goes in pending: "
                                   f"[{{flags: [thta], reason: ...}}]")
    assert "Traceback" not in proc.stderr and not (tmp_path / "r" / "t").exists()


def test_unknown_top_level_keys_and_bad_types_are_all_reported_with_lines(tmp_path):
    text = TINY.replace("pending:", "alsoo: [x]\npendingg: []\npending:").replace(
        "title: tiny test sweep", "title: [not, a, string]").replace("threads: 1", "threads: {a: 1}")
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.args[0] == [
        f"{path}:{line_of(text, 'title:')}: 'title' must be a non-empty string",
        f"{path}:{line_of(text, 'alsoo')}: unknown key 'alsoo' (did you mean 'also'?)",
        f"{path}:{line_of(text, 'pendingg')}: unknown key 'pendingg' (did you mean 'pending'?)",
    ]
    # Once the top level is right, settings are checked too, every one of them.
    text = TINY.replace("threads: 1", "threads: {a: 1}").replace("rows:", "rowz:")
    with pytest.raises(SpecError) as err:
        load_spec(write(tmp_path, text))
    assert [p.split(": ", 1)[1] for p in err.value.args[0]] == [
        "setting 'threads' must be a single value",
        "unknown setting 'rowz' (did you mean 'rows'?): not a rundb flag; a flag still to come "
        "goes in pending: [{flags: [rowz], reason: ...}]"]


def test_an_unknown_plot_option_is_an_error(tmp_path):
    text = TINY.replace("  facet: theta", "  facett: theta")
    with pytest.raises(SpecError, match=r"plot ycsb_bars has no option 'facett' \(did you mean 'facet'\?\)"):
        load_spec(write(tmp_path, text))


def test_a_declared_flag_is_pending_until_rundb_has_it(tmp_path):
    text = TINY.replace("  seed: 1", "  seed: 1\n  epoch_txns: 100").replace(
        "pending:", "pending:\n  - {flags: [epoch_txns], reason: \"NVCaracal epochs (issue 9)\"}")
    spec = load_spec(write(tmp_path, text))
    p = plan(spec, "small", 1, caps=TODAY)
    assert not p.runs
    assert {e["reason"] for _, e in p.pending} == {
        "engine not implemented yet",
        "rundb has no flag --epoch-txns (NVCaracal epochs (issue 9))"}
    with_flag = Capabilities(TODAY.engines, TODAY.ccs, {**HELP, "epoch-txns": None}, "fixture")
    assert len(plan(spec, "small", 1, caps=with_flag).runs) == 2  # runs once the flag lands
