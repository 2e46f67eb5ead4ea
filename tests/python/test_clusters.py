"""The Dask clusters of experiments/clusters.py: Slurm job scripts carry one single-threaded
worker with the repository importable; bad cluster requests fail clearly. (A LocalCluster
sweep runs end to end in test_e2e.py; SSH needs hosts, so only its argument check runs here.)"""
import pytest

from experiments import clusters


def test_slurm_job_runs_one_single_threaded_worker_with_the_repo_on_its_path():
    c = clusters.slurm_cluster(queue="short", walltime="00:30:00", memory="8GB", account="lab")
    try:
        script = c.job_script()
    finally:
        c.close()
    assert "#SBATCH -p short" in script and "#SBATCH -A lab" in script
    assert "#SBATCH -t 00:30:00" in script and "#SBATCH --cpus-per-task=1" in script
    assert f"export PYTHONPATH={clusters.ROOT}" in script
    assert "--nthreads 1" in script


def test_ssh_cluster_needs_a_scheduler_and_a_worker_host():
    with pytest.raises(ValueError, match="--hosts"):
        clusters.make_cluster("ssh", hosts=["only-one"])


def test_unknown_cluster_and_no_workers_are_refused():
    with pytest.raises(ValueError, match="unknown cluster"):
        clusters.make_cluster("kubernetes")
    with pytest.raises(ValueError, match="--workers"):
        clusters.make_cluster("local", workers=0)
