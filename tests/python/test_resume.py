"""Resume logic from result files already on disk; needs no binary (none is built or run)."""
import json

import pandas as pd

from conftest import FIXTURES
from experiments.planner import plan
from experiments.report import write_report
from experiments.results import result_path, write_json
from experiments.runner import run_sweep
from experiments.specs import load_spec


def finished_run(run):
    """A result file in rundb's output shape (DESIGN.md, Output) for one planned run."""
    s = run.settings
    return {
        "config": {**{k: v for k, v in s.items()}, "seed": s["seed"] + run.rep},
        "host": {"cpu": "test cpu", "cores": 2, "numa_nodes": 1,
                 "nvm": {"real": False, "path": "/dev/shm/x.img"}},
        "results": {"committed": 1000, "aborted": 10, "throughput_tps": 3000.0 + run.rep,
                    "abort_rate": 0.0099,
                    "latency_us": {"avg": 300.0, "p50": 280.0, "p99": 900.0, "p999": 1500.0},
                    "per_txn": {"clwb": 20.0, "sfence": 1.0, "nvm_read_bytes": 9000,
                                "nvm_write_bytes": 4000},
                    "cache_hit_rate": 0.5, "memory_bytes": {"dram": 1 << 26, "nvm": 1 << 28}},
    }


def tiny_plan(repeat):
    return plan(load_spec(FIXTURES / "tiny.yaml"), "small", repeat)


def test_all_runs_done_means_nothing_is_built_or_run(tmp_path):
    p = tiny_plan(repeat=2)
    out = tmp_path / "results" / "tiny"
    out.mkdir(parents=True)
    for run in p.runs:
        write_json(result_path(out, run), finished_run(run))
    before = {f: f.stat().st_mtime_ns for f in out.glob("*.json")}
    # root has no Makefile: any build attempt would fail and show up in summary.failed.
    summary = run_sweep(p, tmp_path / "results", root=tmp_path, echo=lambda *_: None)
    assert (summary.ran, summary.skipped, summary.failed) == (0, 4, [])
    assert {f: f.stat().st_mtime_ns for f in before} == before
    df = pd.read_csv(summary.csv)
    assert sorted(zip(df["run_id"], df["rep"])) == sorted((r.run_id, r.rep) for r in p.runs)
    assert {"config.threads", "results.throughput_tps", "results.per_txn.clwb",
            "host.nvm.real", "scale", "figure"} <= set(df.columns)
    assert [p.rsplit("/", 1)[-1] for p in summary.figures] == ["tiny.png", "tiny.pdf"]
    sweep = json.loads((out / "sweep.json").read_text())
    assert sweep["scale"] == "small" and len(sweep["pending"]) == 2
    html = write_report(tmp_path / "results")[0].read_text()
    assert "tiny/tiny.csv" in html and "tiny/tiny.png" in html and "engine not implemented" in html


def test_only_missing_runs_are_attempted(tmp_path):
    p = tiny_plan(repeat=1)
    out = tmp_path / "results" / "tiny"
    out.mkdir(parents=True)
    done = [r for r in p.runs if r.settings["read_ratio"] == 1.0]
    for run in done:
        write_json(result_path(out, run), finished_run(run))
    summary = run_sweep(p, tmp_path / "results", root=tmp_path, echo=lambda *_: None)
    # The other run needs a binary that cannot be built here: it fails, it is not faked.
    assert (summary.ran, summary.skipped) == (0, len(done))
    assert [k for k, _ in summary.failed] == [r.key for r in p.runs if r not in done]
    assert all("build failed" in e for _, e in summary.failed)
    assert len(pd.read_csv(summary.csv)) == len(done)
