"""run --dry-run: the configurations a sweep would run, their count and a rough time: per run
warm-up + duration + load (rows x tuple bytes at about 64 MiB/s, as rundb loads 2M rows in
30 s), twice for a run that also recovers, plus about a minute per binary not built yet."""
from experiments.planner import binary_of
from experiments.results import result_path
from experiments.room import database_bytes
from experiments.runner import binary_path

LOAD_BYTES_PER_S = 64 << 20
BUILD_S = 60  # one binary from scratch on a few cores
DEFAULT_WARMUP_S, DEFAULT_DURATION_S = 1.0, 2.0  # system/options.h


def run_seconds(settings):
    """Rough wall time of one run."""
    load = (database_bytes(settings) or 0) / LOAD_BYTES_PER_S
    measure = float(settings.get("warmup", DEFAULT_WARMUP_S)) + \
        float(settings.get("duration", DEFAULT_DURATION_S))
    return (load + measure) * (2 if settings.get("recover") else 1)


def estimate_s(runs, binaries_to_build):
    """The time these runs take, with binaries_to_build built from scratch first."""
    return sum(run_seconds(r.settings) for r in runs) + BUILD_S * binaries_to_build


def minutes(seconds):
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def describe(plan, out_dir, selected, root=None):
    """The dry run's lines."""
    varying = [k for k in plan.axes]
    configs = {}
    for run in selected:
        configs.setdefault(run.run_id, run)
    lines = []
    for i, run in enumerate(configs.values(), 1):
        named = {**run.settings, **run.labels}
        what = " ".join(f"{k}={named[k]}" for k in varying if k in named)
        lines.append(f"  {i}. {what} (~{minutes(run_seconds(run.settings))} a run)")
    done = sum(result_path(out_dir, r).exists() for r in selected)
    todo = [r for r in selected if not result_path(out_dir, r).exists()]
    kw = {"root": root} if root else {}
    unbuilt = {binary_of(r.settings) for r in selected} - \
        {p for p in {binary_of(r.settings) for r in selected} if binary_path(*p, **kw).is_file()}
    total = estimate_s(todo, len(unbuilt))
    lines.append(f"{len(configs)} configurations x {plan.repeat} repetitions = {len(selected)} "
                 f"runs ({done} with results already: kept if their binary is unchanged), "
                 f"{len(plan.pending)} pending configs")
    lines.append(f"estimate: ~{minutes(total)} ({len(todo)} runs of warm-up + duration + "
                 f"load, {len(unbuilt)} of {len({binary_of(r.settings) for r in selected})} "
                 f"binaries to build from scratch at ~{BUILD_S} s each)")
    return lines
