"""Ctrl-C (SIGINT to the whole process group, as a terminal sends it) and SIGTERM (to the
runner alone) stop a sweep of the real rundb with one line saying what finished and the
command that resumes, exit 130, no traceback; the interrupted run is left not done."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from conftest import FIXTURES, ROOT
from experiments.report import write_report


def python_as_typed():
    """The interpreter as the runner prints it: relative when inside the repository."""
    exe = sys.executable
    return os.path.relpath(exe, ROOT) if exe.startswith(f"{ROOT}{os.sep}") else exe


def slow_second_run_spec(tmp_path):
    """Two runs of mmdb/no_wait: a short one, then one far longer than the test waits."""
    spec = yaml.safe_load((FIXTURES / "tiny.yaml").read_text())
    spec["axes"] = {"engine": ["mmdb"], "cc": ["no_wait"], "duration": [0.2, 600]}
    spec["fixed"].pop("duration")
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def start_and_wait_for_second_run(tmp_path):
    results, nvm = tmp_path / "results", tmp_path / "nvm"
    nvm.mkdir()
    args = ["-m", "experiments", "run", str(slow_second_run_spec(tmp_path)), "--repeat", "1",
            "--results", str(results), "--nvm-dir", str(nvm)]
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = results / "slow"
    # The second run is under way once the first has its result and an image exists again.
    # (A guard against hanging forever, not a timing assertion.)
    for _ in range(1200):
        if proc.poll() is not None:
            pytest.fail(f"sweep ended early: {proc.communicate()}")
        if len(list(out.glob("*-r0.json"))) == 1 and list(nvm.glob("*.img")):
            return proc, args, out
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail("the second run never started")


@pytest.mark.parametrize("how", ["SIGINT to the process group", "SIGTERM to the runner"])
def test_a_signal_stops_the_sweep_with_one_line_and_exit_130(rundb, tmp_path, how):
    proc, args, out = start_and_wait_for_second_run(tmp_path)
    if how.startswith("SIGINT"):
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    else:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the runner did not stop")
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    resume = " ".join([python_as_typed(), *args])
    assert last == (f"interrupted: 1 run(s) finished now, 1 of 2 done in all (table: "
                    f"{out / 'slow.csv'}); resume with: {resume}")
    # Only the finished run has a result: resuming re-runs the interrupted one.
    done = list(out.glob("*-r0.json"))
    assert len(done) == 1 and json.loads(done[0].read_text())["run"]["settings"]["duration"] == 0.2
    assert not list((tmp_path / "nvm").iterdir()), "NVM image left behind"
    assert not (out / "sweep.json").exists()
    html = write_report(tmp_path / "results")[0].read_text()
    assert "slow: incomplete" in html and "1 run result(s) so far" in html


@pytest.mark.parametrize("exit_status, output", [
    (130, '{"results": {"committed": 5, "interrupted": true}}'),  # rundb stopped by SIGINT
    (0, '{"results": {"committed": 5, "interrupted": true}}'),
    (130, "")])
def test_an_interrupted_rundb_is_no_result(tmp_path, exit_status, output):
    from experiments.runner import execute_run
    fake = tmp_path / "rundb"
    fake.write_text(f"#!/bin/sh\necho '{output}'\nexit {exit_status}\n")
    fake.chmod(0o755)
    outcome = execute_run(fake, {"engine": "mmdb", "cc": "no_wait", "threads": 1}, 0,
                          tmp_path / "x.img")
    assert outcome["interrupted"] and outcome["result"] is None
