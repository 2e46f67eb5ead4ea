"""results/report.html is a web page: headless Chromium renders it, every figure must load
(a missing file or an unreadable PNG has naturalWidth 0), and a screenshot is kept for a look.
Skips, saying why, only where Chromium is not installed (scripts/setup.sh installs it)."""
import json
import re
import shutil
import subprocess

import pytest

from experiments.report import write_report
from experiments.runner import run_sweep
from test_resume import done_sweep, tiny_plan

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Appended to a copy of the page: lists the images that did not load once the page has.
CHECK = """<script>window.addEventListener('load', () => {
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
                                     .map(i => i.getAttribute('src'));
  const out = document.createElement('pre'); out.id = 'img-check';
  out.textContent = JSON.stringify({images: document.images.length, broken});
  document.body.appendChild(out);
});</script>"""


def chromium(*args):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--allow-file-access-from-files", *args],
                          capture_output=True, text=True, timeout=120)


def image_check(report):
    """{'images': n, 'broken': [src, ...]} as Chromium sees the page."""
    page = report.with_name("report-check.html")
    page.write_text(report.read_text().replace("</body>", CHECK + "</body>"))
    proc = chromium("--virtual-time-budget=10000", "--dump-dom", page.as_uri())
    page.unlink()
    found = re.search(r"<pre id=\"img-check\">(.*?)</pre>", proc.stdout)
    assert found, f"Chromium did not render the page: {proc.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"'))


@pytest.fixture
def report(tmp_path):
    """A report with one finished sweep (figures drawn from result files, no rundb needed) and
    one interrupted sweep folder."""
    if not CHROMIUM:
        pytest.skip("no chromium (scripts/setup.sh installs the Debian package)")
    p = tiny_plan(repeat=2)
    root, _ = done_sweep(tmp_path, p)
    run_sweep(p, tmp_path / "results", root=root, echo=lambda *_: None)
    (tmp_path / "results" / "cut_short" / "logs").mkdir(parents=True)
    return write_report(tmp_path / "results")[0]


def test_every_figure_of_the_report_loads_and_a_screenshot_is_kept(report):
    assert image_check(report) == {"images": 1, "broken": []}
    shot = report.with_name("report-screenshot.png")
    chromium("--hide-scrollbars", "--window-size=1200,2000", f"--screenshot={shot}",
             report.as_uri())
    assert shot.stat().st_size > 10000
    print(f"screenshot: {shot}")


def test_a_figure_that_does_not_load_is_caught(report):
    (report.parent / "tiny" / "tiny.png").unlink()
    assert image_check(report) == {"images": 1, "broken": ["tiny/tiny.png"]}
