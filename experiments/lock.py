"""One sweep at a time per results folder: an flock on RESULTS/SPEC/.lock, held for the whole
sweep, so two sweeps never run side by side on the same cores and overwrite each other's
JSON. The holder writes who it is into the file; the loser says so and stops at once."""
import contextlib
import datetime
import fcntl
import json
import os
import sys
from pathlib import Path

from experiments.results import ResultsError


_HELD = set()  # lock files this process holds: taking one again (CLI, then runner) is a no-op


@contextlib.contextmanager
def sweep_lock(out_dir, command=None):
    path = (Path(out_dir) / ".lock").resolve()
    if path in _HELD:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(f"{out_dir} is in use by another sweep ({holder(path)}); wait "
                               f"for it to end or pass another --results") from None
        me = {"pid": os.getpid(), "command": command or " ".join(sys.argv),
              "since": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        _HELD.add(path)
        try:
            yield
        finally:
            _HELD.discard(path)
    finally:
        os.close(fd)  # closing the descriptor releases the lock, also if this process dies


def holder(path):
    """'pid 123, python -m experiments run tiny, since 2026-...' from the lock file."""
    try:
        who = json.loads(Path(path).read_text())
        return f"pid {who['pid']}: {who['command']}, since {who['since']}"
    except (OSError, ValueError, KeyError):
        return "its pid not yet written"
