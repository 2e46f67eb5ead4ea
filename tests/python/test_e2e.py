"""The tiny sweep through the real rundb binary, with both executors. Skips only when
mmdb-no_wait cannot be built, and says why; in CI (env CI=true) that is a failure instead."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import FIXTURES, ROOT
from experiments.runner import DEFAULT_NVM_DIR, execute_run

TINY = str(FIXTURES / "tiny.yaml")


def experiments(*args):
    proc = subprocess.run([sys.executable, "-m", "experiments", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def sweep(results, executor="local"):
    return experiments("run", TINY, "--repeat", "1", "--results", str(results),
                       "--executor", executor)


def test_tiny_sweep_local_and_dask(rundb, tmp_path):
    local = sweep(tmp_path / "local")
    assert "ran 2, skipped 0 already done, failed 0" in local
    assert "pending, skipped (2 configs): engine=zen" in local
    out = tmp_path / "local" / "tiny"
    df = pd.read_csv(out / "tiny.csv")
    assert len(df) == 2
    assert set(df["config.engine"]) == {"mmdb"} and set(df["config.cc"]) == {"no_wait"}
    assert sorted(df["config.read_ratio"]) == [0.5, 1.0]
    assert (df["results.committed"] > 0).all() and (df["results.throughput_tps"] > 0).all()
    for col in ("results.latency_us.p99", "results.per_txn.clwb", "results.per_txn.sfence",
                "results.abort_rate", "host.nvm.real", "host.cores"):
        assert col in df.columns, col
    assert (out / "tiny.png").stat().st_size > 1000 and (out / "tiny.pdf").exists()
    assert not list(Path(DEFAULT_NVM_DIR).glob("nvtestbed-tiny-*")), "NVM images left behind"

    # Resume: nothing runs again; a deleted result is the only one redone.
    assert "ran 0, skipped 2 already done" in sweep(tmp_path / "local")
    files = sorted(out.glob("*-r0.json"))
    kept = files[1].stat().st_mtime_ns
    files[0].unlink()
    assert "ran 1, skipped 1 already done" in sweep(tmp_path / "local")
    assert files[0].exists() and files[1].stat().st_mtime_ns == kept

    # Dask LocalCluster: same runs, same table shape.
    assert "ran 2, skipped 0 already done, failed 0" in sweep(tmp_path / "dask", "dask")
    dd = pd.read_csv(tmp_path / "dask" / "tiny" / "tiny.csv")
    df = pd.read_csv(out / "tiny.csv")
    assert dd.shape == df.shape and list(dd.columns) == list(df.columns)
    assert sorted(zip(dd["run_id"], dd["rep"])) == sorted(zip(df["run_id"], df["rep"]))
    # Both executors pin a run the same way (and record it), so a resumed folder mixes nothing.
    assert list(dd.sort_values("run_id")["run.cpus"]) == list(df.sort_values("run_id")["run.cpus"])
    if shutil.which("taskset"):
        assert set(df["run.cpus"].astype(str)) == {str(min(os.sched_getaffinity(0)))}

    report = experiments("report", "--results", str(tmp_path / "local"))
    assert "1 sweeps" in report
    html = (tmp_path / "local" / "report.html").read_text()
    assert "tiny/tiny.csv" in html and "tiny/tiny.png" in html


def test_a_rejected_flag_is_a_failed_run_not_a_result(rundb, tmp_path):
    image = tmp_path / "x.img"
    outcome = execute_run(rundb, {"engine": "mmdb", "cc": "no_wait", "theta": 1.5}, 0, image)
    assert outcome["result"] is None and outcome["returncode"] != 0
    assert "--theta" in outcome["error"]
    assert not image.exists()
