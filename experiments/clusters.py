"""The Dask clusters a sweep can run on: a LocalCluster, the machines of an SSH cluster, or
Slurm jobs through dask-jobqueue. Every worker runs one benchmark at a time (one thread, one
process), needs this repository at the same path with its binaries built, and imports
experiments/ from it (PYTHONPATH)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("local", "ssh", "slurm")


def make_cluster(kind, workers=1, hosts=None, slurm=None):
    """A started cluster of `kind` with `workers` single-threaded workers.

    ssh: `hosts` lists the scheduler's host first, then one worker per host (asyncssh, keys from
    ~/.ssh). slurm: `slurm` holds SLURMCluster settings (queue, walltime, memory, account);
    `workers` jobs are submitted, one worker each."""
    if workers < 1:
        raise ValueError("--workers must be at least 1")
    if kind == "local":
        from distributed import LocalCluster
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address=None)
    if kind == "ssh":
        if not hosts or len(hosts) < 2:
            raise ValueError("--cluster ssh needs --hosts SCHEDULER,WORKER[,WORKER...]")
        from distributed import SSHCluster
        return SSHCluster(hosts, remote_python=sys.executable,
                          worker_options={"nthreads": 1, "n_workers": 1},
                          scheduler_options={"dashboard_address": None})
    if kind == "slurm":
        cluster = slurm_cluster(**(slurm or {}))
        cluster.scale(jobs=workers)
        return cluster
    raise ValueError(f"unknown cluster kind {kind!r}; choose one of {', '.join(KINDS)}")


def slurm_cluster(queue=None, walltime="02:00:00", memory="16GB", account=None):
    """Slurm jobs of one core and one worker process each, with this repository importable."""
    from dask_jobqueue import SLURMCluster
    return SLURMCluster(cores=1, processes=1, memory=memory, queue=queue, account=account,
                        walltime=walltime, python=sys.executable,
                        job_script_prologue=[f"export PYTHONPATH={ROOT}", f"cd {ROOT}"],
                        scheduler_options={"dashboard_address": None})
