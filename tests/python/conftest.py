import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(ROOT))  # import experiments/ and plots/ without installing them


@pytest.fixture(scope="session")
def rundb(tmp_path_factory):
    """build/mmdb-no_wait/rundb, built once; the test skips, saying why, if it cannot be."""
    from experiments.runner import binary_path, build
    logs = tmp_path_factory.mktemp("build")
    errors = build([("mmdb", "no_wait")], logs)
    if errors:
        log = next(logs.glob("*.log")).read_text()[-1500:]
        reason = f"cannot build mmdb-no_wait: {errors[('mmdb', 'no_wait')]}\n{log}"
        print(reason)
        # CI must build it: a skip there would pass without running the sweep.
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return binary_path("mmdb", "no_wait")


@pytest.fixture(autouse=True)
def close_figures():
    """Figures a test draws without saving (plot() returns them open) are closed after it, so
    later tests do not pile up open figures."""
    yield
    import matplotlib.pyplot as plt
    plt.close("all")
