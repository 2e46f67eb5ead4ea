"""Build the binaries a plan needs, run what is not done yet, collect the table and figures."""
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from experiments import executors
from experiments.capabilities import BUILDS, NOT_FLAGS
from experiments.planner import binaries, binary_of, describe_pending
from experiments.lock import sweep_lock
from experiments.provenance import build_record, load_result, stale_reason
from experiments.results import ROOT, host_info, result_path, write_csv, write_json
INTERRUPTED = 130  # exit status of rundb (and of this runner) stopped by SIGINT or SIGTERM
DEFAULT_NVM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def binary_path(engine, cc, variant=None, root=ROOT):
    suffix = BUILDS[variant][2] if variant else ""
    return Path(root) / "build" / f"{engine}-{cc}{suffix}" / "rundb"


def split_pair(pair):
    """(engine, cc, build variant or None) of a binary (planner.binary_of)."""
    return (*pair, None)[:3]


def make_command(pair):
    """make's command line for one binary (planner.binary_of)."""
    engine, cc, variant = split_pair(pair)
    cmd = ["make", f"-j{os.cpu_count() or 1}", f"ENGINE={engine}", f"CC_ALG={cc}"]
    return cmd + (BUILDS[variant][1] if variant else [])


def build(pairs, log_dir, root=ROOT, echo=None, jobs=None):
    """make each binary (planner.binary_of) once, saying when each starts and ends (a fresh
    build takes minutes); returns {pair: error} for the ones that failed. The first binary of
    each build variant is made alone (with every core it also compiles the engine-independent
    objects, build/common*/); the rest `jobs` (default: the core count) at a time, since each
    is then one single-threaded compile, system/rundb.cpp (make writes a common object to a
    temporary file and renames it, so concurrent makes are safe)."""
    errors = {}
    numbered = list(enumerate(pairs, 1))

    def make(item):
        i, pair = item
        engine, cc, variant = split_pair(pair)
        cmd = make_command(pair)
        name = "-".join(pair)
        log = Path(log_dir) / f"build-{name}.log"
        if echo:
            echo(f"building {name} ({i} of {len(pairs)}) ...")
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
            log.write_text(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
            failed = proc.returncode != 0
        except OSError as exc:
            log.write_text(f"$ {' '.join(cmd)}\n{exc}\n")
            failed = True
        if failed or not binary_path(engine, cc, variant, root).is_file():
            errors[pair] = f"build failed: {' '.join(cmd)} (log: {log})"
        if echo:
            echo(f"building {name} ({i} of {len(pairs)}) ... "
                 f"{'FAILED, see ' + str(log) if pair in errors else 'done'} "
                 f"in {time.monotonic() - start:.0f} s")

    firsts = {}  # build variant -> its first (i, pair)
    for i, pair in numbered:
        firsts.setdefault(split_pair(pair)[2], (i, pair))
    for item in firsts.values():
        make(item)
    alone = {i for i, _ in firsts.values()}
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        list(pool.map(make, [item for item in numbered if item[0] not in alone]))
    return errors


# Boolean flags that default on: false is given as --no-<flag> (rundb's --help lists both).
NEGATABLE = ("prefetch", "minor_gc", "cached_versions", "input_log")


# The measured run's flags, which rundb --recover refuses (it recovers and stops).
RUN_ONLY = ("duration", "timeline_ms")


def command(binary, settings, rep, nvm_path):
    """rundb's command line for one repetition; repetition r runs with seed + r. Booleans are
    bare flags (--recover), present only when true, except the NEGATABLE ones, which default
    on: false is --no-<flag>."""
    args = [str(binary)]
    for key, value in settings.items():
        if value is False and key in NEGATABLE:
            args.append(f"--no-{key.replace('_', '-')}")
            continue
        if key in NOT_FLAGS or key == "seed" or value is False:
            continue
        args.append(f"--{key.replace('_', '-')}")
        if value is not True:
            args.append(str(value))
    return args + ["--seed", str(int(settings.get("seed", 1)) + rep), "--nvm-path", str(nvm_path)]


def _rundb(cmd, timeout):
    """(stdout, stderr, returncode, error) of one rundb process."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return proc.stdout, proc.stderr, proc.returncode, None
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return "", err, None, f"timed out after {timeout} s"
    except OSError as exc:
        return "", "", None, f"could not start {cmd[0]}: {exc}"


def image_path(run, nvm_dir):
    """The run's own NVM image, removed after the run (and after an interrupted sweep)."""
    return Path(run.settings.get("nvm_dir", nvm_dir)) / f"nvtestbed-{run.spec}-{run.key}.img"


def pinned_cpus(threads):
    """The CPUs a run of this many threads is pinned to: the first ones this process may use
    (a Dask worker started under taskset keeps to its own cores), or None when taskset is
    missing or there are fewer CPUs than threads. Both executors pin this way, and each run's
    JSON records it (run.cpus), so resuming with the other executor mixes nothing."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else list(range(os.cpu_count() or 1))
    if not shutil.which("taskset") or threads > len(allowed):
        return None
    return ",".join(map(str, allowed[:threads]))


def execute_run(binary, settings, rep, nvm_path, timeout=None):
    """Run rundb once and return its JSON (or why not). Runs on Dask workers too: no file output
    besides the NVM image, which is always removed.

    With `recover: true` it is a recovery experiment: a first process runs the workload and
    exits, a second one recovers from the image it left (same flags plus --recover). The result is the first one's JSON with the second one's
    `recovery` and `invariants` blocks."""
    recovery = bool(settings.get("recover"))
    cmd = command(binary, {k: v for k, v in settings.items() if k != "recover"}, rep, nvm_path)
    # The recovering process is not told to crash again: its own work may pass the same point
    # (nvcaracal's replay runs the crashed epoch through nvcaracal.before_epoch_commit), nor
    # given the measured run's times, which rundb --recover refuses (it runs no workload).
    again = command(binary, {k: v for k, v in settings.items()
                             if k not in ("recover", "crash_at") + RUN_ONLY}, rep, nvm_path)
    cpus = pinned_cpus(int(settings.get("threads", 1)))
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
        again = ["taskset", "-c", cpus] + again
    start = time.monotonic()
    try:
        out, err, rc, error = _rundb(cmd, timeout)
        # A run told to crash (--crash-at) exits 86 and leaves its image to recover.
        crashed = recovery and rc == 86 and settings.get("crash_at") not in (None, "none")
        if recovery and error is None and (rc == 0 or crashed):
            first, cmd = out, again + ["--recover"]
            out, err2, rc, error = _rundb(cmd, timeout)
            err += f"\n$ {' '.join(cmd)}\n{err2}"
    finally:
        Path(nvm_path).unlink(missing_ok=True)
    result = None
    if error is None and rc != 0:
        # The reason is usually in the last lines (CLI11 ends with a "Run with --help" hint).
        tail = " / ".join(line.strip() for line in err.strip().splitlines()[-2:])
        error = f"exit status {rc}: {tail or 'no message'}"
    elif error is None:
        try:
            result = json.loads(out)
            if recovery and first.strip():
                result = {**json.loads(first), **{k: result[k] for k in ("recovery", "invariants")
                                                   if k in result}}
        except ValueError as exc:
            error = f"stdout is not one JSON object: {exc}"
    # rundb stopped early by a signal (exit 130, or "interrupted" in its results): not a result.
    interrupted = rc == INTERRUPTED or bool(result and result.get("results", {}).get("interrupted"))
    if interrupted:
        result, error = None, "interrupted"
    return {"result": result, "error": error, "stderr": err, "command": cmd, "cpus": cpus,
            "returncode": rc, "interrupted": interrupted,
            "wall_s": round(time.monotonic() - start, 3)}


@dataclass
class Summary:
    out_dir: Path
    ran: int = 0
    skipped: int = 0
    failed: list = field(default_factory=list)  # (run key, message)
    csv: Path = None
    figures: list = field(default_factory=list)
    interrupted: bool = False  # stopped by a signal: no figures, no sweep.json
    planned: int = 0


def run_sweep(plan, results_dir="results", executor="local", scheduler=None, workers=1,
              nvm_dir=DEFAULT_NVM_DIR, timeout=1800, root=ROOT, echo=print, cluster="local",
              hosts=None, slurm=None, select=None, command=None):
    """Build, run and plot one sweep. select(run): the runs to do (--only); command: who we
    are, for the results folder's lock."""
    spec = plan.spec
    out_dir = Path(results_dir) / spec["name"]
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with sweep_lock(out_dir, command):
        return _sweep(plan, out_dir, logs, executor, nvm_dir, timeout, root, echo, select,
                      {"scheduler": scheduler, "workers": workers, "cluster": cluster,
                       "hosts": hosts, "slurm": slurm} if executor == "dask" else {})


def _sweep(plan, out_dir, logs, executor, nvm_dir, timeout, root, echo, select, options):
    spec = plan.spec
    summary = Summary(out_dir, planned=len(plan.runs))
    for text, count in Counter(describe_pending(e) for _, e in plan.pending).items():
        echo(f"pending, skipped ({count} configs): {text}")
    wanted = [r for r in plan.runs if select is None or select(r)]
    # Every binary the runs use is (re)built, even for runs already done: a run is done only
    # when the binary that made its result is the one built now (experiments/provenance.py).
    pairs = binaries(wanted)
    build_errors = build(pairs, logs, root, echo)
    records = {pair: build_record(binary_path(*pair, root=root), make_command(pair)[2:], root)
               for pair in pairs if pair not in build_errors}
    todo, stale = [], Counter()
    for run in wanted:
        path = result_path(out_dir, run)
        if not path.exists():
            todo.append(run)
            continue
        pair = binary_of(run.settings)
        result = load_result(path)
        why = (build_errors.get(pair) and "its binary did not build") or \
            ("unreadable result" if result is None else stale_reason(result, records[pair]))
        if why:
            stale[why] += 1
            todo.append(run)
    summary.skipped = len(wanted) - len(todo)
    for why, count in stale.items():
        echo(f"redoing {count} run(s) already done: {why}")
    only = f" ({len(wanted)} chosen by --only)" if len(wanted) < len(plan.runs) else ""
    echo(f"{spec['name']} [{plan.scale}]: {len(plan.runs)} runs planned{only}, "
         f"{summary.skipped} already done by the current binary, {len(todo)} to run"
         f"{f' ({sum(stale.values())} redone)' if stale else ''}, "
         f"{len(plan.pending)} pending configs")
    for run in todo:  # a stale result must not stay in the table if its redo fails
        result_path(out_dir, run).unlink(missing_ok=True)
    if todo:  # rewritten at the end: until then the report lists the sweep as incomplete
        (out_dir / "sweep.json").unlink(missing_ok=True)

    try:
        _run_todo(plan, todo, summary, logs, nvm_dir, timeout, root, executor, options,
                  build_errors, records)
    except KeyboardInterrupt:  # SIGINT, or SIGTERM (the CLI turns it into one)
        summary.interrupted = True
        # A run cut short on a Dask worker may not get to remove its image (or rundb's .new).
        for run in todo:
            image = image_path(run, nvm_dir)
            for left in image.parent.glob(image.name + "*"):
                left.unlink(missing_ok=True)
        summary.csv = write_csv(plan, out_dir)  # what finished; no sweep.json: incomplete
        return summary

    sweep = {k: spec[k] for k in ("name", "paper", "figure", "title", "path")}
    sweep.update(scale=plan.scale, repeat=plan.repeat, axes=plan.axes, fixed=plan.fixed,
                 executor=executor, host=host_info(), runs=len(plan.runs),
                 pending=[{"settings": s, "reason": e["reason"]} for s, e in plan.pending])
    summary.csv = write_csv(plan, out_dir)
    if summary.ran + summary.skipped:
        from plots import render_all  # matplotlib only once there is something to draw
        summary.figures = [str(p) for p in render_all(spec, summary.csv)]
    sweep.update(failed=[{"run": k, "error": e} for k, e in summary.failed],
                 csv=summary.csv.name, figures=[Path(p).name for p in summary.figures])
    write_json(out_dir / "sweep.json", sweep)
    return summary


def _run_todo(plan, todo, summary, logs, nvm_dir, timeout, root, executor, options,
              build_errors, records):
    """Run every job not done yet, writing each result, with what built its binary, as it
    arrives."""
    out_dir = summary.out_dir
    jobs = []
    for run in todo:
        pair = binary_of(run.settings)
        if pair in build_errors:
            summary.failed.append((run.key, build_errors[pair]))
            continue
        image = image_path(run, nvm_dir)
        jobs.append((run, dict(binary=str(binary_path(*pair, root=root)), settings=run.settings,
                               rep=run.rep, nvm_path=str(image), timeout=timeout)))
    with tqdm(total=len(jobs), unit="run", desc=plan.spec["name"], disable=not jobs) as bar:
        for run, outcome in executors.EXECUTORS[executor](execute_run, jobs, **options):
            (logs / f"{run.key}.stderr").write_text(
                f"$ {' '.join(outcome['command'])}\n{outcome['stderr']}")
            if outcome.get("interrupted"):  # rundb got the signal too: stop, keep it not done
                raise KeyboardInterrupt
            if outcome["result"] is None:
                summary.failed.append((run.key, outcome["error"]))
                bar.write(f"FAILED {run.key}: {outcome['error']}")
            else:
                data = outcome["result"]
                data["run"] = {"id": run.run_id, "rep": run.rep, "spec": run.spec,
                               "scale": plan.scale, "settings": run.settings,
                               "labels": run.labels, "cpus": outcome.get("cpus"),
                               "command": outcome["command"], "wall_s": outcome["wall_s"],
                               "build": records[binary_of(run.settings)]}
                write_json(result_path(out_dir, run), data)
                summary.ran += 1
            bar.update()
