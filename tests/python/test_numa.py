"""NUMA placements through rundb (issue 16): nodes are labelled real or virtual, a placement
that needs two nodes on a one-node host asks for virtual ones, bad NUMA input exits 2 naming
what was wrong, and the NUMA specs are no longer pending. Engine-independent placements run on
mmdb-no_wait (the fixture's binary); Zen's own ones are covered by tests/unit/test_numa.cpp."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TINY = ["--rows", "20000", "--threads", "2", "--warmup", "0", "--duration", "0.2"]


def real_nodes():
    nodes = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    return max(1, len(nodes))


def run(rundb, tmp_path, *args):
    return subprocess.run([str(rundb), *TINY, "--nvm-path", str(tmp_path / "img"), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(real_nodes() > 1, reason="the host has several real NUMA nodes")
@pytest.mark.parametrize("policy", ["remote", "naive"])
def test_a_policy_of_two_nodes_on_one_real_node_is_a_clear_error(rundb, tmp_path, policy):
    proc = run(rundb, tmp_path, "--numa-policy", policy)
    assert proc.returncode == 2, proc.stderr
    assert f"--numa-policy {policy} needs 2 NUMA nodes" in proc.stderr
    assert "add --numa-nodes 2 for virtual nodes" in proc.stderr


@pytest.mark.parametrize("args, says", [
    (["--numa-real-nodes", "7"], "NUMA node 7 does not exist on this host"),
    (["--numa-nodes", "2", "--numa-policy", "local-write"], "needs an engine with node-local pools (zen), not mmdb"),
    (["--numa-nodes", "2", "--numa-policy", "soft-partition"], "needs an engine with node-local pools (zen)"),
    (["--numa-nodes", "2", "--numa-policy", "bogus"], "bogus not in"),
    (["--numa-nodes", "2", "--numa-partitions", "0"], "--numa-partitions"),
    (["--numa-nodes", "1", "--numa-policy", "remote"], "needs 2 NUMA nodes, not --numa-nodes 1"),
])
def test_bad_numa_input_exits_2_naming_it(rundb, tmp_path, args, says):
    proc = run(rundb, tmp_path, *args)
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr


def test_virtual_nodes_are_labelled_and_accesses_reported_by_kind(rundb, tmp_path):
    proc = run(rundb, tmp_path, "--numa-nodes", "2", "--numa-policy", "shared")  # the specs' old name
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["config"]["numa_policy"] == "naive"
    numa = out["host"]["numa"]
    if real_nodes() == 1:
        assert numa["virtual_nodes"] == 2 and numa["real_nodes"] == 0
        assert [n["kind"] for n in numa["node_list"]] == ["virtual", "virtual"]
        assert "VIRTUAL" in proc.stderr
    acc = out["results"]["numa"]["accesses"]
    assert set(acc) == {"nvm_read", "nvm_write", "dram_read", "dram_write"}
    # Interleaved pages: about half of the NVM reads are another node's.
    assert 0.3 < acc["nvm_read"]["remote_share"] < 0.7
    # One node: nothing is remote, and the output says the node is real.
    proc = run(rundb, tmp_path)
    out = json.loads(proc.stdout)
    assert out["host"]["numa"]["node_list"][0]["kind"] == "real"
    assert all(k["remote"] == 0 for k in out["results"]["numa"]["accesses"].values())


def test_the_numa_specs_are_no_longer_pending(rundb):
    proc = subprocess.run([sys.executable, "-m", "experiments", "list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for spec in ["numa_overall", "numa_local_write", "numa_scalability", "numa_binding", "numa_tpcc", "zen_numa"]:
        i = next(i for i, l in enumerate(lines) if l.startswith(spec + ":"))
        assert " 0 pending" in lines[i + 1], lines[i:i + 3]


def test_one_nvm_file_per_node_survives_a_power_failure(rundb, tmp_path):
    """--nvm-path as a {node} pattern: one image file per node; a simulated power failure
    writes each node's persistent bytes into its own file, and a fresh process recovers every
    acknowledged commit from them. The crash is at a commit's log fence, so always after the load
    and its checkpoint (a crash timed in ms could come before them on a slow host)."""
    nodes = ["--numa-nodes", "2", "--numa-policy", "naive", "--nvm-path", str(tmp_path / "pmem{node}.img")]
    crash = subprocess.run([str(rundb), "--rows", "20000", "--threads", "2", "--warmup", "0", "--duration", "5",
                            *nodes, "--power-fail", "--crash-at", "point:mmdb.after_log_fence:300",
                            "--ack-file", str(tmp_path / "ack")],
                           capture_output=True, text=True, timeout=120)
    assert crash.returncode == 86, crash.stderr
    assert sorted(p.name for p in tmp_path.glob("pmem*.img")) == ["pmem0.img", "pmem1.img"]
    rec = subprocess.run([str(rundb), "--rows", "20000", "--threads", "2", *nodes, "--recover",
                          "--verify-ack", str(tmp_path / "ack")], capture_output=True, text=True, timeout=120)
    assert rec.returncode == 0, rec.stderr
    out = json.loads(rec.stdout)
    assert out["host"]["nvm"]["files"] == [str(tmp_path / "pmem0.img"), str(tmp_path / "pmem1.img")]
    assert out["invariants"]["violations"] == 0


@pytest.mark.parametrize("path, says", [
    ("{d}/a,{d}/b,{d}/c", "--nvm-path lists 3 NVM image files and the run has 2 NUMA nodes"),
    ("{d}/a,{d}/a", "names {d}/a twice"),
])
def test_a_file_list_that_does_not_fit_the_nodes_exits_2(rundb, tmp_path, path, says):
    proc = subprocess.run([str(rundb), *TINY, "--numa-nodes", "2", "--numa-policy", "naive",
                           "--nvm-path", path.format(d=tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert says.format(d=tmp_path) in proc.stderr
