"""A recovery experiment that crashes on purpose (--crash-at) recovers in a second process that
is not told to crash again (nvcaracal's replay passes the same named point)."""
import json
import stat

from experiments.runner import execute_run


def test_the_recovering_process_gets_no_crash_point(tmp_path):
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "rundb"
    # Exits 86 (a simulated power failure) unless asked to recover; then prints a recovery.
    fake.write_text(f"""#!/bin/sh
echo "$@" >> {calls}
case " $* " in
  *" --recover "*) echo '{{"recovery": {{"total_s": 0.1}}, "invariants": {{"violations": 0}}}}' ;;
  *) echo '{{"results": {{"committed": 5}}}}'; exit 86 ;;
esac
""")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    settings = {"engine": "nvcaracal", "cc": "caracal", "recover": True, "power_fail": True,
                "crash_at": "point:nvcaracal.before_epoch_commit", "threads": 1,
                "duration": 1, "timeline_ms": 100}
    out = execute_run(str(fake), settings, 0, str(tmp_path / "img"))
    assert out["error"] is None, out
    first, second = calls.read_text().splitlines()
    assert "--crash-at point:nvcaracal.before_epoch_commit" in first and "--recover" not in first
    assert "--crash-at" not in second and "--recover" in second and "--power-fail" in second
    # rundb --recover runs no workload and refuses the measured run's times.
    assert "--duration 1" in first and "--duration" not in second and "--timeline-ms" not in second
    assert out["result"]["recovery"] == {"total_s": 0.1}
    assert out["result"]["results"] == {"committed": 5}
    json.dumps(out["result"])
