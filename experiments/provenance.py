"""What built a binary (git commit, a hash of uncommitted changes to tracked files, the make
variables, the binary's own sha256), recorded in each run's JSON as run.build, so a resumed
sweep redoes a run whose binary has changed since it ran instead of trusting its old numbers."""
import hashlib
import json
import subprocess
from pathlib import Path


def _git(root, *args):
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_record(binary, make_vars, root):
    """run.build for a binary just built with these make variables from root."""
    commit = _git(root, "rev-parse", "HEAD")
    diff = _git(root, "diff", "HEAD", "--binary")
    return {"git_commit": commit.decode().strip() if commit else None,
            # sha256 of `git diff HEAD`: tracked files' uncommitted changes; None when clean.
            "uncommitted_sha256": hashlib.sha256(diff).hexdigest() if diff else None,
            "make": list(make_vars),
            "binary_sha256": sha256_file(binary)}


def stale_reason(result, record):
    """Why a finished run's result cannot be trusted with this binary, or None when the same
    binary produced it."""
    old = (result.get("run") or {}).get("build")
    if not old:
        return "no build record (ran before records were kept)"
    if old.get("binary_sha256") == record["binary_sha256"]:
        return None
    if old.get("git_commit") != record["git_commit"]:
        return (f"binary changed (built from commit {str(old.get('git_commit'))[:10]}, "
                f"now {str(record['git_commit'])[:10]})")
    return "binary changed (same commit, other uncommitted changes or make variables)"


def load_result(path):
    """A finished run's JSON, or None when unreadable (then it is redone)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
