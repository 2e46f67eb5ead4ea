"""run's options that decide what runs before any build: --dry-run lists and estimates,
--only picks a subset, --timeout 0 is refused, a scale the machine has no room for is refused
saying what it needs; usage errors are one 'error:' line and exit 2."""
import subprocess
import sys
from collections import namedtuple

import pytest

from conftest import ROOT
from experiments.planner import plan
from experiments.room import problems
from experiments.select import UsageError, parse_only
from experiments.specs import load_spec


def experiments(*args):
    return subprocess.run([sys.executable, "-m", "experiments", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_dry_run_lists_configurations_count_and_estimate_and_builds_nothing(tmp_path):
    proc = experiments("run", "ycsb_read_ratio", "--dry-run", "--only", "system=zen/silo,theta=0.6",
                       "--results", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "ycsb_read_ratio [small]: dry run, nothing is built or run"
    assert lines[1].startswith("  1. system=zen/silo read_ratio=1.0 theta=0.6 (~")
    assert "4 configurations x 3 repetitions = 12 runs" in proc.stdout
    assert "estimate: ~" in lines[-1] and "binaries to build" in lines[-1]
    assert not (tmp_path / "r").exists()


def test_only_picks_runs_by_setting_or_label_with_value_lists():
    runs = plan(load_spec("ycsb_read_ratio"), "small", 1).runs
    pick = parse_only("engine=zen,cc=silo|cicada", runs)
    assert {(r.settings["engine"], r.settings["cc"]) for r in runs if pick(r)} == \
        {("zen", "silo"), ("zen", "cicada")}
    pick = parse_only("system=mmdb/no_wait,read_ratio=1,theta=0.60", runs)
    assert sum(map(pick, runs)) == 1


@pytest.mark.parametrize("text,message", [
    ("engin=zen", "--only: no setting or label 'engin' (did you mean 'engine'?)"),
    ("engine=zne", "--only engine=zne matches no run (engine takes: foedus, mmdb, wbl, zen)"),
    ("engine", "--only takes KEY=VALUE[|VALUE...] pairs separated by commas, not 'engine'"),
    ("engine=foedus,cc=silo", "--only engine=foedus,cc=silo matches no run"),
])
def test_a_bad_only_says_what_is_wrong(text, message):
    runs = plan(load_spec("ycsb_read_ratio"), "small", 1).runs
    with pytest.raises(UsageError) as err:
        parse_only(text, runs)
    assert str(err.value).startswith(message)


def test_usage_errors_are_one_error_line_and_exit_2():
    for args in (["run", "ycsb_read_ratio", "--timeout", "0"],
                 ["run", "ycsb_read_ratio", "--only", "engin=zen"],
                 ["run", "ycsb_read_ratio", "--repeat", "0"],
                 ["frobnicate"]):
        proc = experiments(*args)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "--timeout: must be more than 0 seconds" in experiments(
        "run", "tiny", "--timeout", "0").stderr


Run = namedtuple("Run", "settings labels")


def test_a_scale_without_room_is_refused_saying_what_it_needs(tmp_path):
    big = Run({"workload": "ycsb", "rows": 1 << 40, "p_ratio": 4}, {})
    (why,) = problems([big], str(tmp_path), "paper")
    assert why.startswith("--scale paper's largest run (1099511627776 rows, P = 4) needs at "
                          "least 1008.0 TiB"[:70])
    assert f"--nvm-dir {tmp_path} has " in why and "the paper's database, 256 GB for YCSB" in why
    assert problems([Run({"workload": "ycsb", "rows": 1000}, {})], str(tmp_path), "small") == []
    assert problems([Run({"workload": "smallbank"}, {})], str(tmp_path), "small") == []
