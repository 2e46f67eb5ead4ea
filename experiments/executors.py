"""Where runs execute: in this process one after another, or on a dask.distributed cluster.

Both yield (run, outcome) as runs finish; the caller writes every file, so Dask workers need
the repository (and its built binaries) at the same path but no shared results folder.
"""


def local(fn, jobs):
    for run, kwargs in jobs:
        yield run, fn(**kwargs, pin=True)


def dask(fn, jobs, scheduler=None, workers=1):
    from distributed import Client, LocalCluster, as_completed

    # One thread per worker: a worker runs one benchmark at a time, never two side by side.
    cluster = None if scheduler else LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        futures = {client.submit(fn, **kwargs, pin=False, pure=False,
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
