"""Two sweeps into one results folder: the second stops at once, saying who holds it."""
import subprocess
import sys
import time

import pytest

from conftest import FIXTURES, ROOT
from experiments.lock import sweep_lock
from experiments.results import ResultsError

HOLD = """import sys, time
sys.path.insert(0, %r)
from experiments.lock import sweep_lock
with sweep_lock(sys.argv[1], "python -m experiments run tiny"):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path):
    """Another process holding RESULTS/tiny's lock."""
    out = tmp_path / "results" / "tiny"
    proc = subprocess.Popen([sys.executable, "-c", HOLD % str(ROOT), str(out)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    yield proc, out
    proc.kill()
    proc.wait()


def test_a_second_sweep_is_refused_naming_the_holder(holder):
    proc, out = holder
    with pytest.raises(ResultsError) as err:
        with sweep_lock(out):
            pass
    assert str(err.value).startswith(f"{out} is in use by another sweep (pid {proc.pid}: "
                                     f"python -m experiments run tiny, since 20")
    proc.kill()
    proc.wait()
    with sweep_lock(out):  # a dead holder's lock is gone with it
        pass


def test_the_cli_exits_at_once_with_one_line(holder, tmp_path):
    proc, out = holder
    start = time.monotonic()
    cli = subprocess.run([sys.executable, "-m", "experiments", "run", str(FIXTURES / "tiny.yaml"),
                          "--results", str(tmp_path / "results")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert cli.returncode == 1
    assert cli.stderr.count("\n") == 1 and cli.stderr.startswith(
        f"error: {out} is in use by another sweep (pid {proc.pid}: ")
    assert time.monotonic() - start < 600
