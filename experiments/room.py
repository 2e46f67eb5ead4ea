"""Room before the first run: a lower bound on the NVM image and DRAM budget of a sweep's
largest run (rows x tuple bytes for YCSB, about 100 MB a warehouse for TPC-C; DRAM = that / P),
checked against the --nvm-dir's free space and the host's available memory, so a scale too big
for this machine is refused up front rather than failing every run with "no space left"."""
import os
import shutil

GiB = 1 << 30
KEY_BYTES = 8
WAREHOUSE_BYTES = 100 << 20  # zen-vldb21: 2048 warehouses are 205 GB
DEFAULTS = {"rows": 1 << 20, "columns": 10, "column_size": 100, "p_ratio": 4.0}  # system/options.h


def database_bytes(settings):
    """Lower bound on one run's database: YCSB rows x (8 B key + columns x column size), TPC-C
    warehouses x 100 MB; None for workloads with no estimate."""
    get = lambda k: float(settings.get(k, DEFAULTS.get(k)))  # noqa: E731
    workload = str(settings.get("workload", "ycsb"))
    if workload.startswith("ycsb"):
        return int(get("rows") * (KEY_BYTES + get("columns") * get("column_size")))
    if workload == "tpcc" and "warehouses" in settings:
        return int(float(settings["warehouses"]) * WAREHOUSE_BYTES)
    return None


def available_memory():
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _on_tmpfs(path):
    """An image on tmpfs (/dev/shm) lives in DRAM too."""
    try:
        for line in open("/proc/mounts"):
            parts = line.split()
            if parts[2] == "tmpfs" and os.path.realpath(path).startswith(parts[1].rstrip("/") + "/"):
                return True
    except (OSError, IndexError):
        pass
    return str(path).startswith("/dev/shm")


def problems(runs, nvm_dir, scale):
    """Why this machine cannot hold the sweep's largest run (empty when it can)."""
    sized = [(database_bytes(r.settings), r) for r in runs]
    sized = [(b, r) for b, r in sized if b]
    if not sized:
        return []
    db, run = max(sized, key=lambda x: x[0])
    dram = db / float(run.settings.get("p_ratio", DEFAULTS["p_ratio"]))
    what = (f"{run.settings.get('rows', DEFAULTS['rows'])} rows" if "rows" in run.settings
            or str(run.settings.get("workload", "ycsb")).startswith("ycsb")
            else f"{run.settings.get('warehouses')} warehouses")
    why = (f"--scale {scale}'s largest run ({what}, P = {run.settings.get('p_ratio', 4)}) "
           f"needs at least {db / GiB:.1f} GiB of NVM image and {dram / GiB:.1f} GiB of DRAM "
           f"(a lower bound: the database alone, rows x tuple bytes; rundb sizes each "
           f"engine's image from its own layout, with indexes, versions, free space and logs, "
           f"so it asks for more than the paper's database, 256 GB for YCSB)")
    short = []
    nvm_dir = run.settings.get("nvm_dir", nvm_dir)
    try:
        free = shutil.disk_usage(nvm_dir).free
    except OSError as exc:
        return [f"cannot read the free space of --nvm-dir {nvm_dir}: {exc.strerror or exc}"]
    if free < db:
        short.append(f"--nvm-dir {nvm_dir} has {free / GiB:.1f} GiB free (point it at a larger "
                     f"DAX mount)")
    memory = available_memory()
    tmpfs = _on_tmpfs(nvm_dir)
    if memory is not None and memory < dram + (db if tmpfs else 0):
        short.append(f"this host has {memory / GiB:.1f} GiB of memory available"
                     f"{f' (and an image in {nvm_dir}, tmpfs, is memory too)' if tmpfs else ''}")
    return [f"{why}, but {' and '.join(short)}; run a smaller scale"] if short else []
