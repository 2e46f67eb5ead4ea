"""Per-run JSON files, the tidy CSV per sweep, and what we record about the host."""
import datetime
import json
import os
import platform
import subprocess
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


class ResultsError(Exception):
    """A results folder that cannot be used (one line for the user)."""


def writable_dir(path):
    """Creates the results folder if needed and checks a file can be written in it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ResultsError(f"cannot write results to {str(path)!r}: {exc.strerror or exc}; "
                           f"pass --results a folder you can write") from None


def result_path(out_dir, run):
    return Path(out_dir) / f"{run.key}.json"


def write_json(path, data):
    # Write-then-rename so an interrupted sweep never leaves a half file that resume would trust.
    path = Path(path)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def flatten(obj, prefix=""):
    """{'a': {'b': 1}} -> {'a.b': 1}; lists become JSON text so every cell is a scalar."""
    out = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, list):
            out[name] = json.dumps(value)
        else:
            out[name] = value
    return out


def table(plan, out_dir):
    """One row per finished run of the plan: ids, then config.*, host.*, results.* columns."""
    rows = []
    for run in plan.runs:
        path = result_path(out_dir, run)
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        row = {"run_id": run.run_id, "rep": run.rep, "spec": run.spec,
               "paper": plan.spec["paper"], "figure": plan.spec["figure"], "scale": plan.scale}
        row.update({f"label.{k}": v for k, v in run.labels.items()})
        row["run.cpus"] = data.get("run", {}).get("cpus")  # taskset CPU list; None: unpinned
        # The spec's own names too: rundb may echo a flag under another name (txns ->
        # config.txns_per_thread), and plots look settings up by the spec's names.
        row.update({f"setting.{k}": v for k, v in run.settings.items()})
        # timeline.throughput_tps stays one JSON list per cell; plots/timeline.py parses it.
        for section in ("config", "host", "results", "recovery", "timeline", "invariants"):
            row.update(flatten(data.get(section, {}), section + "."))
        rows.append(row)
    return pd.DataFrame(rows)


def write_csv(plan, out_dir):
    """The sweep's raw table, and beside it its summary (mean, std, n per configuration and
    metric: experiments/claims.py), which the scorecard reads."""
    from experiments.claims import write_summary

    path = Path(out_dir) / f"{plan.spec['name']}.csv"
    table(plan, out_dir).to_csv(path, index=False)
    write_summary(path)
    return path


def _first_line(cmd):
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def host_info():
    """What the sweep ran on, as seen from the driver (rundb reports its own host block too)."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nodes = sorted(Path("/sys/devices/system/node").glob("node[0-9]*"))
    return {
        "hostname": platform.node(),
        "cpu": cpu or platform.processor(),
        "cores": os.cpu_count(),
        "numa_nodes": len(nodes) or 1,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "git_commit": _first_line(["git", "rev-parse", "HEAD"]) or "none",
        "git_dirty": bool(_first_line(["git", "status", "--porcelain", "--untracked-files=no"])),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
