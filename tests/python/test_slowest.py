"""scripts/slowest.py, which scripts/test.sh runs after each stage: the output passes through
unchanged and the ten slowest tests follow, from each stage's own format."""
import subprocess
import sys

from conftest import ROOT


def run(text):
    p = subprocess.run([sys.executable, str(ROOT / "scripts/slowest.py"), "unit"], input=text,
                       capture_output=True, text=True, check=True)
    return p.stdout


def test_output_passes_through_and_the_slowest_follow_in_order():
    lines = [f"[       OK ] Suite.T{i} ({i * 100} ms)" for i in range(12)]
    lines += ["ok   test_e2e.sh (75 s)", "30.50s call     tests/python/test_x.py::test_y"]
    out = run("\n".join(lines) + "\n")
    assert out.startswith("\n".join(lines) + "\n")
    tail = out.split("== ten slowest of 'unit':\n")[1].splitlines()
    assert [t.split()[-1] for t in tail] == ["test_e2e.sh", "tests/python/test_x.py::test_y"] + \
        [f"Suite.T{i}" for i in range(11, 3, -1)]
    assert tail[0].split()[0] == "75.0"


def test_sections_without_times_are_timed_by_their_headers():
    out = run("== torture zen+silo\nround 1\n== torture mmdb+silo\n")
    assert "torture zen+silo" in out.split("ten slowest")[1]


def test_a_header_that_states_its_time_keeps_it_and_the_next_section_is_timed_from_it():
    out = run("== torture zen+silo (41 s)\n== torture mmdb+silo (7 s)\n== zen: fault\nround 1\n")
    tail = out.split("== ten slowest of 'unit':\n")[1].splitlines()
    assert [t.split(None, 2)[1:] for t in tail[:2]] == [["s", "torture zen+silo"], ["s", "torture mmdb+silo"]]
    assert tail[0].split()[0] == "41.0" and tail[1].split()[0] == "7.0"
    assert any(t.endswith("zen: fault") for t in tail)
