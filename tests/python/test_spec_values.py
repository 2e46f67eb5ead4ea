"""Names and values a spec gives are checked before any build: a typo'd engine or CC method, a
pair make does not build, a value outside what rundb accepts, a misspelt spec or scale name are
errors (exit 2) with file:line and a did-you-mean; none is quietly 'pending'."""
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from experiments.planner import plan
from experiments.ranges import rules
from experiments.specs import SpecError, load_spec

TINY = (FIXTURES / "tiny.yaml").read_text()


def experiments(*args):
    return subprocess.run([sys.executable, "-m", "experiments", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def spec_file(tmp_path, old, new):
    assert old in TINY
    text = TINY.replace(old, new)
    path = tmp_path / "t.yaml"
    path.write_text(text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if new.strip() in s)
    return path, line


@pytest.mark.parametrize("old,new,message", [
    ("engine: [mmdb, zen]", "engine: [mmdb, zne]", "unknown engine 'zne' (did you mean 'zen'?)"),
    ("cc: [no_wait]", "cc: [silx]", "unknown cc 'silx' (did you mean 'silo'?)"),
    ("p_ratio: 4", "p_ratio: four", "--p-ratio is a number, not 'four'"),
    ("theta: [0.6]", "theta: [2]", "--theta must be in [0, 0.99], not 2"),
    ("threads: 1", "threads: 1.5", "--threads is a whole number, not 1.5"),
    ("workload: ycsb", "workload: ycbs", "--workload takes one of smallbank, tpcc, ycsb"),
])
def test_a_bad_name_or_value_is_a_spec_error_with_its_line(tmp_path, old, new, message):
    path, line = spec_file(tmp_path, old, new)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert any(p.startswith(f"{path}:{line}: {message}") for p in err.value.args[0]), err.value


def test_the_cli_refuses_a_typod_engine_before_any_build(tmp_path):
    path, line = spec_file(tmp_path, "engine: [mmdb, zen]", "engine: [mmdb, zne]")
    proc = experiments("run", str(path), "--results", str(tmp_path / "r"))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {path}:{line}: unknown engine 'zne' (did you mean "
                                  f"'zen'?): the Makefile builds ")
    assert "Traceback" not in proc.stderr and not (tmp_path / "r").exists()


def test_a_declared_pending_value_is_allowed_and_pending(tmp_path):
    path, _ = spec_file(tmp_path, "theta: [0.6]", "theta: [0.6, 2]")
    path.write_text(path.read_text().replace("reason: \"engine not implemented yet\"}",
                                             "reason: \"engine not implemented yet\"}\n"
                                             "  - {theta: 2, reason: \"a wider Zipf\"}"))
    p = plan(load_spec(path), "small", 1)
    assert {s["theta"] for s, _ in p.pending} == {0.6, 2}
    assert {r.settings["theta"] for r in p.runs} == {0.6}


def test_a_pair_make_does_not_build_is_a_spec_error(tmp_path):
    path, _ = spec_file(tmp_path, "cc: [no_wait]", "cc: [mcsi]")
    spec = load_spec(path)  # each name exists; the pair does not
    with pytest.raises(SpecError) as err:
        plan(spec, "small", 1)
    (problem,) = err.value.args[0]
    assert problem.startswith(f"{path}: engine mmdb with cc mcsi is not a pair make builds "
                              f"(mmdb runs cicada, dl_detect, ")
    assert "mcsi runs on nvmvcc" in problem
    proc = experiments("run", str(path), "--results", str(tmp_path / "r"))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and \
        "not a pair make builds" in proc.stderr and "Traceback" not in proc.stderr


def test_ranges_come_from_rundb_source():
    found = rules()
    assert (found["theta"].lo, found["theta"].hi) == (0.0, 0.99)
    assert found["rows"].whole and found["rows"].hi == 1 << 36
    assert found["seed"].hi is None  # ~uint64_t(0) >> 1: no upper bound worth naming
    assert {"adr", "eadr"} == found["persist_domain"].members
    assert found["lrt_alpha"].problem(95).endswith("(write 0.95 for 95%)")
    assert found["power_fail"].problem(True) is None and found["power_fail"].problem("yes")
    assert found["dram_size"].problem("2G") is None and found["dram_size"].problem("lots")


def test_a_misspelt_spec_or_scale_or_a_missing_file_says_so(tmp_path):
    proc = experiments("run", "ycsb_red_ratio")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no spec 'ycsb_red_ratio' (did you mean 'ycsb_read_ratio'?)")
    proc = experiments("run", str(tmp_path / "gone.yaml"))
    assert (proc.returncode, proc.stderr) == (2, f"error: no spec file '{tmp_path / 'gone.yaml'}'\n")
    with pytest.raises(SpecError, match="no scale 'papr' \\(did you mean 'paper'\\?\\)"):
        plan(load_spec("ycsb_read_ratio"), "papr", 1)
