"""rundb's command line from a fresh clone's point of view (issue 27): a misspelt flag gets a
did-you-mean, a value that is no number says so, --recover reads the image's layout from its
header (a contradicting flag is named with both values), --recover refuses flags it would
ignore, and the default image is removed after a clean run unless --keep-image."""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNDB = os.path.join(ROOT, "build", "mmdb-no_wait", "rundb")
DEFAULT_IMAGE = "/dev/shm/nvtestbed-mmdb-no_wait.img"
TINY = ["--warmup", "0", "--duration", "0.1", "--threads", "1"]


@pytest.fixture(scope="module")
def rundb():
    subprocess.run(["make", "-s", "-j2", "ENGINE=mmdb", "CC_ALG=no_wait"], cwd=ROOT, check=True)
    return RUNDB


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


def test_a_misspelt_flag_gets_a_did_you_mean(rundb):
    p = run(rundb, "--thread", "2")
    assert p.returncode == 2
    assert "rundb: error: unknown flag --thread; did you mean --threads?" in p.stderr
    p = run(rundb, "--zzzzzzzz", "1")
    assert p.returncode == 2 and "unknown flag --zzzzzzzz" in p.stderr and "did you mean" not in p.stderr


@pytest.mark.parametrize("flag", ["--rows", "--threads", "--theta", "--duration", "--epoch-txns"])
def test_a_value_that_is_no_number_is_named(rundb, flag):
    p = run(rundb, flag, "abc")
    assert p.returncode == 2
    assert f"rundb: error: {flag}: 'abc' is not a number" in p.stderr


def test_recover_reads_the_layout_from_the_image(rundb, tmp_path):
    img = str(tmp_path / "db.img")
    first = run(rundb, "--rows", "20000", "--columns", "4", *TINY, "--nvm-path", img)
    assert first.returncode == 0, first.stderr
    rec = run(rundb, "--recover", "--nvm-path", img)  # no --rows, --columns, --threads repeated
    assert rec.returncode == 0, rec.stderr
    d = json.loads(rec.stdout)
    assert d["recovery"]["rows"] == 20000
    assert d["config"]["rows"] == 20000 and d["config"]["columns"] == 4 and d["config"]["threads"] == 1
    assert "takes from the image: --threads 1 --rows 20000 --columns 4" in rec.stderr


def test_recover_names_a_flag_that_contradicts_the_image(rundb, tmp_path):
    img = str(tmp_path / "db.img")
    assert run(rundb, "--rows", "20000", *TINY, "--nvm-path", img).returncode == 0
    p = run(rundb, "--recover", "--rows", "30000", "--nvm-path", img)
    assert p.returncode == 2
    assert f"--rows: the image {img} holds --rows 20000, not the 30000 given" in p.stderr
    # The same value again is no contradiction.
    assert run(rundb, "--recover", "--rows", "20000", "--nvm-path", img).returncode == 0


@pytest.mark.parametrize("flag", ["--duration", "--timeline-ms"])
def test_recover_refuses_a_run_it_would_not_measure(rundb, tmp_path, flag):
    img = str(tmp_path / "db.img")
    assert run(rundb, "--rows", "20000", *TINY, "--nvm-path", img).returncode == 0
    p = run(rundb, "--recover", flag, "100", "--nvm-path", img)
    assert p.returncode == 2
    assert f"{flag}: --recover recovers the image and stops" in p.stderr


def test_the_default_image_is_removed_after_a_clean_run_unless_kept(rundb):
    if os.path.exists(DEFAULT_IMAGE):
        pytest.skip(f"{DEFAULT_IMAGE} exists (another run's): not touched")
    try:
        p = run(rundb, "--rows", "20000", *TINY)
        assert p.returncode == 0, p.stderr
        assert not os.path.exists(DEFAULT_IMAGE)
        p = run(rundb, "--rows", "20000", *TINY, "--keep-image")
        assert p.returncode == 0, p.stderr
        assert os.path.exists(DEFAULT_IMAGE)
        # Kept for a later --recover, which needs no flag repeated (and removes it when done).
        p = run(rundb, "--recover")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["recovery"]["rows"] == 20000
        assert not os.path.exists(DEFAULT_IMAGE)
    finally:
        if os.path.exists(DEFAULT_IMAGE):
            os.unlink(DEFAULT_IMAGE)


def test_a_given_image_path_is_kept(rundb, tmp_path):
    img = tmp_path / "db.img"
    assert run(rundb, "--rows", "20000", *TINY, "--nvm-path", str(img)).returncode == 0
    assert img.exists()


def stderr_on_a_terminal(binary, *args):
    """(exit status, stdout, what rundb wrote to stderr) with stderr a pseudo-terminal."""
    import pty
    master, slave = pty.openpty()
    try:
        p = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=slave, text=True, timeout=120)
    finally:
        os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed: all read
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return p.returncode, p.stdout, seen.decode(errors="replace")


def test_a_load_progress_line_on_a_terminal_only(rundb, tmp_path):
    args = ["--rows", "50000", *TINY, "--nvm-path", str(tmp_path / "db.img")]
    rc, out, err = stderr_on_a_terminal(rundb, *args)
    assert rc == 0, err
    assert "\rrundb: loading 50000 / 50000 rows (100%)" in err
    json.loads(out)  # stdout stays one JSON object
    p = run(rundb, *args)
    assert p.returncode == 0 and "loading" not in p.stderr


def test_ycsb_d_with_default_flags_runs_its_whole_duration(rundb, tmp_path):
    # 4 x --rows of room lasted 0.3 s of a 2 s run; the room is now sized from the run.
    p = run(rundb, "--workload", "ycsb-d", "--rows", "20000", "--nvm-path", str(tmp_path / "db.img"))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["config"]["insert_rows"] == 600064  # 2 threads x 3 s x 100k inserts/s, in 1024s
    assert d["results"]["measured_s"] >= 2.0
    assert d["workload"]["ycsb_de"]["insert_room"] == 600064


NVCARACAL = os.path.join(ROOT, "build", "nvcaracal-caracal", "rundb")


@pytest.fixture(scope="module")
def nvcaracal():
    subprocess.run(["make", "-s", "-j2", "ENGINE=nvcaracal", "CC_ALG=caracal"], cwd=ROOT, check=True)
    return NVCARACAL


def test_nvcaracal_picks_the_largest_epoch_its_budget_holds(nvcaracal, tmp_path):
    img = str(tmp_path / "db.img")
    p = run(nvcaracal, "--rows", "20000", "--warmup", "0", "--duration", "0.2", "--nvm-path", img)
    assert p.returncode == 0, p.stderr  # the old default, 100000, needed GBs of transient pool
    chosen = json.loads(p.stdout)["config"]["epoch_txns"]
    assert 1000 <= chosen < 100000  # the default budget holds an epoch of at least 1000
    assert f"rundb: --epoch-txns {chosen} (the largest whose transient pool" in p.stderr
    # A size that does not fit stays an error naming the flag.
    p = run(nvcaracal, "--rows", "20000", "--warmup", "0", "--duration", "0.2", "--nvm-path", img,
            "--epoch-txns", "100000")
    assert p.returncode == 1 and "--epoch-txns 100000" in p.stderr and "transient pool" in p.stderr
    # The chosen size is in the image: --recover needs no --epoch-txns.
    assert run(nvcaracal, "--rows", "20000", "--warmup", "0", "--duration", "0.2", "--nvm-path", img).returncode == 0
    rec = run(nvcaracal, "--recover", "--nvm-path", img)
    assert rec.returncode == 0, rec.stderr
    assert json.loads(rec.stdout)["config"]["epoch_txns"] == chosen


def test_nvcaracal_runs_smallbank_with_default_flags(nvcaracal, tmp_path):
    # Its default budget (database / P plus index and row entries) held no transient pool for
    # even one transaction; it now holds an epoch of 1000 beside the data cap, which stays db / P.
    p = run(nvcaracal, "--workload", "smallbank", "--warmup", "0", "--duration", "0.2",
            "--nvm-path", str(tmp_path / "sb.img"))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["config"]["epoch_txns"] >= 1000
    mem = out["results"]["memory_bytes"]
    assert mem["dram_data"] <= mem["dram_data_cap"] == out["config"]["database_bytes"] // 4
