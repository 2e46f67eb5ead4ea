"""Resume logic from result files already on disk, with a fake root whose Makefile 'builds' a
shell script as rundb (no C++ is compiled): a run is done only when the binary that made its
result is the one built now."""
import json
import os
import sys

import pandas as pd

from conftest import FIXTURES
from experiments.planner import plan
from experiments.report import write_report
from experiments.results import result_path, write_json
from experiments.runner import run_sweep
from experiments.specs import load_spec


FAKE_MAKEFILE = """ENGINE ?= mmdb
CC_ALG ?= no_wait
all:
\tmkdir -p build/$(ENGINE)-$(CC_ALG)
\tcp fake-rundb build/$(ENGINE)-$(CC_ALG)/rundb
"""
FAKE_RUNDB = """#!%s
# %%s: prints one result, its config from its flags and its folder (build/ENGINE-CC/rundb)
import json, os, sys
args = sys.argv[1:]
def value(text):
    try:
        return float(text)
    except ValueError:
        return text
config = {a[2:].replace("-", "_"): value(b) for a, b in zip(args, args[1:] + ["--"])
          if a.startswith("--") and not b.startswith("--")}
config["engine"], config["cc"] = os.path.basename(os.path.dirname(sys.argv[0])).split("-", 1)
print(json.dumps({"config": config, "results": {"committed": 1000, "aborted": 0,
                                                "throughput_tps": 5000.0}}))
""" % sys.executable


def fake_root(tmp_path, version="v1"):
    """A root whose `make` copies a shell script (that prints one rundb result) into place;
    another version is another binary."""
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    (root / "Makefile").write_text(FAKE_MAKEFILE)
    (root / "fake-rundb").write_text(FAKE_RUNDB % version)
    os.chmod(root / "fake-rundb", 0o755)
    return root


def built_by(root, pair=("mmdb", "no_wait"), version="v1"):
    """run.build as the runner records it for the fake root's binary of this version."""
    from experiments.provenance import build_record
    from experiments.runner import make_command
    binary = root / "expected-rundb"
    binary.write_text(FAKE_RUNDB % version)
    record = build_record(binary, make_command(pair)[2:], root)
    binary.unlink()
    return record


def finished_run(run, build=None):
    """A result file in rundb's output shape (DESIGN.md, Output) for one planned run; build:
    what made it (run.build), none for a result from before builds were recorded."""
    s = run.settings
    extra = {"run": {"build": build}} if build else {}
    return {**extra,
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


def done_sweep(tmp_path, p, version="v1"):
    """RESULTS/tiny with every run of p finished by the fake root's binary of this version."""
    root = fake_root(tmp_path)
    out = tmp_path / "results" / "tiny"
    out.mkdir(parents=True)
    for run in p.runs:
        write_json(result_path(out, run), finished_run(run, built_by(root, version=version)))
    return root, out


def test_all_runs_done_by_the_current_binary_means_nothing_is_run(tmp_path):
    p = tiny_plan(repeat=2)
    root, out = done_sweep(tmp_path, p)
    before = {f: f.stat().st_mtime_ns for f in out.glob("*.json")}
    summary = run_sweep(p, tmp_path / "results", root=root, echo=lambda *_: None)
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
    root = fake_root(tmp_path)
    for run in done:
        write_json(result_path(out, run), finished_run(run, built_by(root)))
    summary = run_sweep(p, tmp_path / "results", root=root, echo=lambda *_: None)
    assert (summary.ran, summary.skipped, summary.failed) == (len(p.runs) - len(done), len(done), [])
    assert len(pd.read_csv(summary.csv)) == len(p.runs)


def test_without_a_makefile_every_run_fails_to_build_and_none_is_faked(tmp_path):
    p = tiny_plan(repeat=1)
    summary = run_sweep(p, tmp_path / "results", root=tmp_path, echo=lambda *_: None)
    assert summary.ran == 0 and [k for k, _ in summary.failed] == [r.key for r in p.runs]
    assert all("build failed" in e for _, e in summary.failed)


def test_runs_by_another_binary_are_redone_and_the_runner_says_why(tmp_path):
    p = tiny_plan(repeat=1)
    root, out = done_sweep(tmp_path, p, version="v0")  # the engine was edited since
    lines = []
    summary = run_sweep(p, tmp_path / "results", root=root, echo=lines.append)
    assert (summary.ran, summary.skipped, summary.failed) == (len(p.runs), 0, [])
    assert f"redoing {len(p.runs)} run(s) already done: binary changed (same commit, other " \
           f"uncommitted changes or make variables)" in lines
    for run in p.runs:  # the new results, recording the binary that made them
        data = json.loads(result_path(out, run).read_text())
        assert data["run"]["build"] == built_by(root, version="v1")
        assert data["results"]["throughput_tps"] == 5000.0
        assert data["run"]["build"]["make"] == ["ENGINE=mmdb", "CC_ALG=no_wait"]
    # Again, with the same binary: all skipped.
    again = run_sweep(p, tmp_path / "results", root=root, echo=lines.append)
    assert (again.ran, again.skipped) == (0, len(p.runs))


def test_results_from_before_build_records_are_redone(tmp_path):
    p = tiny_plan(repeat=1)
    root = fake_root(tmp_path)
    out = tmp_path / "results" / "tiny"
    out.mkdir(parents=True)
    for run in p.runs:
        write_json(result_path(out, run), finished_run(run))  # no run.build
    lines = []
    summary = run_sweep(p, tmp_path / "results", root=root, echo=lines.append)
    assert summary.ran == len(p.runs)
    assert f"redoing {len(p.runs)} run(s) already done: no build record (ran before records " \
           f"were kept)" in lines


def test_each_build_is_shown_as_it_starts_and_ends(tmp_path):
    lines = []
    run_sweep(tiny_plan(repeat=1), tmp_path / "results", root=fake_root(tmp_path),
              echo=lines.append)
    assert lines[1] == "building mmdb-no_wait (1 of 1) ..."
    assert lines[2].startswith("building mmdb-no_wait (1 of 1) ... done in ")
    assert lines[2].endswith(" s")


def test_after_the_first_build_the_others_run_side_by_side(tmp_path):
    # Each fake make records when it starts and ends; the first builds alone (with the common
    # objects), the other two overlap.
    from experiments.runner import build
    root = tmp_path / "root"
    root.mkdir()
    (root / "Makefile").write_text(
        "ENGINE ?= mmdb\nCC_ALG ?= no_wait\nall:\n"
        "\tmkdir -p build/$(ENGINE)-$(CC_ALG)\n"
        "\tdate +%s.%N > build/$(ENGINE)-$(CC_ALG)/start; sleep 1\n"
        "\ttouch build/$(ENGINE)-$(CC_ALG)/rundb; date +%s.%N > build/$(ENGINE)-$(CC_ALG)/end\n")
    pairs = [("mmdb", "no_wait"), ("mmdb", "silo"), ("zen", "silo")]
    lines = []
    assert build(pairs, tmp_path, root, lines.append, jobs=2) == {}
    span = {p: tuple(float((root / "build" / "-".join(p) / f).read_text()) for f in ("start", "end"))
            for p in pairs}
    first, a, b = (span[p] for p in pairs)
    assert first[1] <= min(a[0], b[0]), "a build started before the first (common objects) ended"
    assert a[0] < b[1] and b[0] < a[1], "the builds after the first did not overlap"
    assert sorted(l.split(" ...")[0] for l in lines if l.endswith("...")) == \
        ["building mmdb-no_wait (1 of 3)", "building mmdb-silo (2 of 3)", "building zen-silo (3 of 3)"]
