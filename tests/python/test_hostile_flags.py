"""Every rundb flag fed hostile values: a clear error and a non-zero exit, never a crash or hang.

The flag list is read from `rundb --help`, so a new flag is fuzzed without editing this test.
"""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNDB = os.path.join(ROOT, "build", "mmdb-no_wait", "rundb")
BAD_VALUES = ["-1", "0", "abc", "", "nan", "1e30", "99999999999999999999999", "1.5", "-0.0"]


@pytest.fixture(scope="module")
def rundb():
    subprocess.run(["make", "-s", "-j2", "ENGINE=mmdb", "CC_ALG=no_wait"], cwd=ROOT, check=True)
    return RUNDB


def value_flags(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    flags = []
    for line in out.splitlines():
        m = re.match(r"\s+(--[a-z0-9-]+)\s+([A-Z]+)", line)
        if m:
            flags.append(m.group(1))
    return flags


def test_help_lists_every_flag(rundb):
    flags = value_flags(rundb)
    for f in ("--threads", "--rows", "--theta", "--p-ratio", "--nvm-size", "--profile", "--crash-at"):
        assert f in flags


@pytest.mark.parametrize("value", BAD_VALUES)
def test_every_flag_rejects_or_runs_cleanly(rundb, tmp_path, value):
    base = ["--rows", "20000", "--warmup", "0", "--duration", "0.05", "--threads", "1",
            "--nvm-path", str(tmp_path / "img")]
    for flag in value_flags(rundb):
        cmd = [rundb] + base + [flag, value]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{flag} {value!r}: hung")
        assert p.returncode >= 0, f"{flag} {value!r}: killed by signal {-p.returncode}"
        assert p.returncode in (0, 1, 2, 3), f"{flag} {value!r}: exit {p.returncode}: {p.stderr}"
        if p.returncode == 2:
            assert flag in p.stderr, f"{flag} {value!r}: error does not name the flag: {p.stderr}"
        elif p.returncode != 0:
            assert "rundb: error:" in p.stderr, f"{flag} {value!r}: unclear error: {p.stderr}"
        assert "Segmentation" not in p.stderr and "terminate called" not in p.stderr
        for f in tmp_path.iterdir():
            if f.name != "img" and f.is_file():
                f.unlink()
