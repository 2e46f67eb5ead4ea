"""results/report.html: every figure with its spec, exact settings, host and table."""
import json
from html import escape
from pathlib import Path

import pandas as pd

import plots
from plots import names

STYLE = """body{font-family:sans-serif;max-width:1300px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;
text-align:left;font-size:90%}img{border:1px solid #eee}
section{margin-bottom:3em}.fail{color:#b00}
.v-reproduced{background:#d9f2d9}.v-same{background:#fff3c4}.v-not{background:#f7d4d4}
.v-notrun{background:#eee;color:#666}"""
VERDICT_CLASS = {"reproduced": "v-reproduced", "same direction": "v-same",
                 "not reproduced": "v-not", "not run": "v-notrun"}


def _table(mapping, words=False):
    """Key and value per row; with words, settings' values as names ('Zen / Cicada'), an axis
    of engine/CC pairs or labels one per line; else lists and dicts as JSON (the host's fields,
    exactly)."""
    def cell(k, v):
        if words:
            several = isinstance(v, list) and any(isinstance(x, dict) for x in v)
            items = v if several else [v]
            return "<br>".join(escape(names.value(x, k)) for x in items)
        return escape(json.dumps(v) if isinstance(v, (list, dict)) else str(v))
    rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{cell(k, v)}</td></tr>"
                   for k, v in mapping.items())
    return f"<table>{rows}</table>"


def _img_width(png):
    """The share of the page a figure takes: the widest figure (plots.MAX_WIDTH) the whole
    width, the others to scale, so their text is the same size and as large as it can be."""
    data = png.read_bytes()[16:20] if png.exists() else b""  # IHDR: width, big-endian
    if len(data) < 4:
        return "100%"
    share = int.from_bytes(data, "big") / (plots.MAX_WIDTH * plots.DPI)
    return f"{min(100.0, share * 100):.0f}%"


def _binary_host(csv_path):
    """The host block rundb reported, one value (or the set of values) per field."""
    if not csv_path.exists() or csv_path.stat().st_size == 0:
        return {}
    try:
        df = pd.read_csv(csv_path)
    except pd.errors.EmptyDataError:
        return {}
    host = {}
    for col in (c for c in df.columns if c.startswith("host.")):
        values = df[col].dropna()
        if values.nunique() == 1:
            host[col[len("host."):]] = values.iloc[0]
        elif pd.api.types.is_numeric_dtype(values):  # per-run calibration: show the range
            host[col[len("host."):]] = f"{values.min():g} to {values.max():g} over {len(values)} runs"
        else:  # a few distinct values are worth listing; per-run paths are not
            distinct = sorted(values.astype(str).unique())
            host[col[len("host."):]] = distinct if len(distinct) <= 3 else \
                f"{len(distinct)} distinct values, one per run"
    return host


def _verdicts(sweep_dir, sweep):
    """The claims of the sweep's spec checked on its table ([] when the spec is gone)."""
    from experiments.claims import check_spec
    from experiments.specs import SpecError, load_spec
    try:
        spec = load_spec(sweep.get("path") or sweep["name"])
    except SpecError:
        return []
    return check_spec(spec, sweep_dir.parent)


def _claims_table(verdicts, link=False):
    head = ("<tr>" + ("<th>figure</th>" if link else "") +
            "<th>verdict</th><th>claim</th><th>paper</th><th>measured</th><th>why / where</th></tr>")
    rows = []
    for v in verdicts:
        fig = f"<td><a href='#{escape(v.spec)}'>{escape(v.spec)}</a></td>" if link else ""
        why = escape(" ".join(v.explanation.split())) if v.explanation else ""
        rows.append(f"<tr class='{VERDICT_CLASS[v.verdict]}'>{fig}<td>{escape(v.verdict)}</td>"
                    f"<td>{escape(v.claim)}<br><small>{escape(v.source)}</small></td>"
                    f"<td>{escape(v.paper)}</td><td>{escape(v.measured)}</td><td>{why}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def scorecard(verdicts):
    """The report's opening: every claim of every sweep, coloured by verdict."""
    from experiments.claims import counts
    if not verdicts:
        return "<p>No spec of these sweeps states claims.</p>"
    c = counts(verdicts)
    summary = ", ".join(f"{n} {k}" for k, n in c.items())
    return f"<h2>Scorecard</h2><p>{escape(summary)}</p>{_claims_table(verdicts, link=True)}"


def section(sweep_dir, verdicts=()):
    sweep = json.loads((sweep_dir / "sweep.json").read_text())
    name, csv = sweep["name"], sweep_dir / sweep["csv"]
    parts = [f"<section id='{escape(name)}'><h2>{escape(sweep['paper'])} {escape(sweep['figure'])}: "
             f"{escape(sweep['title'])}</h2>",
             f"<p>spec <code>{escape(name)}</code> ({escape(sweep['path'])}), scale "
             f"<b>{escape(sweep['scale'])}</b>, {sweep['repeat']} repetition(s), "
             f"{sweep['runs']} runs, executor {escape(sweep['executor'])}. "
             f"Table: <a href='{name}/{escape(csv.name)}'>{escape(csv.name)}</a></p>"]
    for fig in sweep["figures"]:
        if fig.endswith(".png"):
            pdf = Path(fig).with_suffix(".pdf").name
            width = _img_width(sweep_dir / fig)
            parts.append(f"<p><a href='{name}/{pdf}'><img src='{name}/{escape(fig)}' "
                         f"style='width:{width}' "
                         f"alt='{escape(sweep['figure'])}'></a></p>")
    if not sweep["figures"]:
        parts.append("<p class='fail'>No figure: no run finished.</p>")
    if verdicts:
        parts += ["<h3>The paper's claims about this figure</h3>", _claims_table(verdicts)]
    if sweep["failed"]:
        items = "".join(f"<li>{escape(f['run'])}: {escape(f['error'])}</li>" for f in sweep["failed"])
        parts.append(f"<p class='fail'>{len(sweep['failed'])} run(s) failed "
                     f"(logs in {name}/logs/):</p><ul>{items}</ul>")
    parts += ["<h3>Axes</h3>", _table(sweep["axes"], words=True), "<h3>Fixed settings</h3>",
              _table(sweep["fixed"], words=True)]
    if sweep["pending"]:
        reasons = sorted({p["reason"] for p in sweep["pending"]})
        parts.append(f"<h3>Pending ({len(sweep['pending'])} configurations skipped)</h3><ul>"
                     + "".join(f"<li>{escape(r)}</li>" for r in reasons) + "</ul>")
    parts += ["<h3>Host (driver)</h3>", _table(sweep["host"])]
    binary_host = _binary_host(csv)
    if binary_host:
        parts += ["<h3>Host (as rundb reported it)</h3>", _table(binary_host)]
    return "\n".join(parts) + "</section>"


def incomplete(sweep_dir):
    """A sweep folder without sweep.json: interrupted, still running or never finished."""
    done = len([p for p in sweep_dir.glob("*-r*.json")])
    name = escape(sweep_dir.name)
    return (f"<section id='{name}'><h2>{name}: incomplete</h2><p class='fail'>No <code>sweep.json</code>: "
            f"the sweep was interrupted or is still running ({done} run result(s) so far, "
            f"no figures). Resume it with <code>.venv/bin/python -m experiments run {name} "
            f"--results {escape(str(sweep_dir.parent))}</code> and the same --scale and "
            f"--repeat.</p></section>")


def write_report(results_dir="results"):
    results_dir = Path(results_dir)
    # A sweep folder has its logs/ from the first run on, whether or not it finished.
    sweeps = sorted(p.parent for p in results_dir.glob("*/logs"))
    sweeps = sorted(set(sweeps) | {p.parent for p in results_dir.glob("*/sweep.json")})
    verdicts = {d: _verdicts(d, json.loads((d / "sweep.json").read_text()))
                for d in sweeps if (d / "sweep.json").exists()}
    body = "\n".join(section(d, verdicts[d]) if d in verdicts else incomplete(d)
                     for d in sweeps) or "<p>No sweep has run yet.</p>"
    card = scorecard([v for d in sweeps for v in verdicts.get(d, [])]) if sweeps else ""
    index = "".join(f"<li><a href='#{d.name}'>{escape(d.name)}</a></li>" for d in sweeps)
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>nvtestbed results</title>"
            f"<style>{STYLE}</style></head><body><h1>nvtestbed results</h1>{card}<ul>{index}</ul>"
            f"{body}</body></html>\n")
    path = results_dir / "report.html"
    results_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(html)
    return path, len(sweeps)
