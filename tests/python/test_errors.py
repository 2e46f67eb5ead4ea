"""A results folder that cannot be used ends in one line and exit 1, never a traceback."""
import subprocess
import sys

from conftest import FIXTURES, ROOT
from test_interrupt import python_as_typed


def experiments(*args):
    return subprocess.run([sys.executable, "-m", "experiments", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_an_impossible_results_path_is_one_line_and_exit_1(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = experiments("run", str(FIXTURES / "tiny.yaml"), "--results", str(blocker / "r"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"error: cannot write results to '{blocker / 'r'}': Not a "
                                   f"directory; pass --results a folder you can write")


def test_report_on_a_missing_folder_says_so_and_creates_nothing(tmp_path):
    missing = tmp_path / "nope"
    proc = experiments("report", "--results", str(missing))
    assert proc.returncode == 1 and not missing.exists()
    assert proc.stderr.strip() == (f"error: no results folder '{missing}': run a sweep first "
                                   f"({python_as_typed()} -m experiments run SPEC --results {missing})")
