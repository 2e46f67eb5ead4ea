"""Where runs execute: in this process one after another, or on a dask.distributed cluster.

Both yield (run, outcome) as runs finish; the caller writes every file, so Dask workers need
the repository (and its built binaries) at the same path but no shared results folder.
"""


def local(fn, jobs):
    for run, kwargs in jobs:
        yield run, fn(**kwargs)


def dask(fn, jobs, scheduler=None, workers=1, cluster="local", hosts=None, slurm=None):
    from distributed import Client, as_completed

    from experiments.clusters import make_cluster

    # An existing scheduler, or a cluster started here (experiments/clusters.py); one thread
    # per worker either way: a worker runs one benchmark at a time, never two side by side.
    cluster = None if scheduler else make_cluster(cluster, workers, hosts, slurm)
    client = Client(scheduler or cluster)
    try:
        futures = {client.submit(fn, **kwargs, pure=False,
                                 key=f"rundb-{run.spec}-{run.key}"): run
                   for run, kwargs in jobs}
        for future in as_completed(futures):
            run = futures[future]
            try:
                outcome = future.result()
            except Exception as exc:  # a lost worker must not end the sweep
                outcome = {"result": None, "error": f"dask task failed: {exc!r}",
                           "stderr": "", "command": [], "returncode": None, "wall_s": 0}
            yield run, outcome
    finally:
        client.close()
        if cluster:
            cluster.close()


EXECUTORS = {"local": local, "dask": dask}
