"""The reproduction scorecard: a spec's claims (docs/claims.md) checked on its sweep's summary
table. A verdict per claim: reproduced, same direction, not reproduced, or not run, with the
measured value and its 95% interval beside the paper's."""
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

KINDS = ("ratio", "order", "trend", "value")
REPRODUCED, SAME, NOT, NOT_RUN = "reproduced", "same direction", "not reproduced", "not run"
RANK = {REPRODUCED: 0, SAME: 1, NOT: 2}  # a claim's verdict is its worst group's
ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")

# Result fields a claim may name (under results., recovery., invariants. in the table): these
# names, and anything under these prefixes.
METRIC_NAMES = {"throughput_tps", "abort_rate", "retry_rate", "cache_hit_rate", "committed", "aborted",
                "measured_s", "tpmC", "throughput_tpm", "total_s", "rows", "replayed", "violations"}
METRIC_NAMES |= {f"per_txn.{k}" for k in ("clwb", "sfence", "nvm_read_bytes", "nvm_write_bytes",
                                           "dram_bytes", "remote_accesses", "charged_ns")}
METRIC_NAMES |= {f"{h}.{k}" for h in ("latency_us", "durable_latency_us") for k in ("avg", "p50", "p99", "p999")}
# Engine-specific and per-type fields: anything under these.
METRIC_PREFIXES = ("memory_bytes.", "engine.", "numa.", "throughput_by_type_tps.", "committed_by_type.",
                   "aborts_by_cause.", "time_breakdown_s.", "steps_s.", "recovery.", "invariants.")


def metric_known(name):
    def one(m):
        m = m.strip()
        m = m[len("results."):] if m.startswith("results.") else m
        return m in METRIC_NAMES or m.startswith(METRIC_PREFIXES)
    return all(one(part) for part in str(name).split(" / "))


# Two-sided 95% t quantiles by degrees of freedom (no scipy needed); 1.96 past 30.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def t95(df):
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


# ---------------------------------------------------------------------------- summary table

def summarize(raw):
    """The summary table of a sweep's raw table: one row per configuration (run_id) and
    metric, with mean, std (NaN for one repetition) and n, beside the configuration's labels
    and settings. Metrics are the numeric results.*, recovery.* and invariants.* columns."""
    if raw.empty or "run_id" not in raw.columns:
        return pd.DataFrame(columns=["run_id", "metric", "mean", "std", "n"])
    keys = [c for c in raw.columns if c.startswith(("label.", "setting."))]
    metrics = [c for c in raw.columns if c.startswith(("results.", "recovery.", "invariants."))
               and pd.api.types.is_numeric_dtype(raw[c]) and raw[c].notna().any()]
    first = raw.groupby("run_id", sort=False)[keys].first() if keys else \
        pd.DataFrame(index=raw["run_id"].unique())
    parts = []
    stats = raw.groupby("run_id", sort=False)[metrics].agg(["mean", "std", "count"])
    for m in metrics:
        s = stats[m].rename(columns={"count": "n"})
        s = s[s["n"] > 0]
        part = first.loc[s.index].copy()
        part["metric"] = m
        part[["mean", "std", "n"]] = s[["mean", "std", "n"]].values
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=["run_id", *keys, "metric", "mean", "std", "n"])
    out = pd.concat(parts).reset_index().rename(columns={"index": "run_id"})
    out["n"] = out["n"].astype(int)
    return out[["run_id", *keys, "metric", "mean", "std", "n"]]


def summary_path(csv_path):
    p = Path(csv_path)
    return p.with_name(p.stem + "_summary.csv")


def write_summary(csv_path):
    """<spec>_summary.csv next to the raw <spec>.csv."""
    try:
        raw = pd.read_csv(csv_path)
    except (pd.errors.EmptyDataError, FileNotFoundError):
        raw = pd.DataFrame()
    path = summary_path(csv_path)
    summarize(raw).to_csv(path, index=False)
    return path


# ------------------------------------------------------------------------------ evaluation

@dataclass
class Point:
    """A measured mean with its 95% interval (lo == hi == mean for one repetition)."""
    mean: float
    lo: float
    hi: float
    n: int

    @staticmethod
    def of(mean, std, n):
        n = int(n)
        if n < 2 or std is None or (isinstance(std, float) and math.isnan(std)):
            return Point(mean, mean, mean, n)
        h = t95(n - 1) * std / math.sqrt(n)
        return Point(mean, mean - h, mean + h, n)

    def ratio(self, other):
        """self / other, its interval by the delta method over the two means."""
        if other.mean == 0:
            return None
        r = self.mean / other.mean
        rel = 0.0
        for p in (self, other):
            if p.n >= 2 and p.mean != 0:
                se = (p.hi - p.mean) / t95(p.n - 1)
                rel += (se / p.mean) ** 2
        h = abs(r) * math.sqrt(rel) * t95(max(1, min(self.n, other.n) - 1)) if rel else 0.0
        return Point(r, r - h, r + h, min(self.n, other.n))

    def text(self):
        if self.hi == self.lo:
            return f"{fmt(self.mean)} (n={self.n})"
        return f"{fmt(self.mean)} [{fmt(self.lo)}, {fmt(self.hi)}] (n={self.n})"


def fmt(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "?"
    a = abs(x)
    if a >= 1e5:
        return f"{x / 1e3:.0f}k"
    if a >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.3g}"


def _range_text(r):
    lo, hi = r
    if lo is None:
        return f"<= {fmt(hi)}"
    if hi is None:
        return f">= {fmt(lo)}"
    return f"{fmt(lo)}-{fmt(hi)}"


def _in_range(p, r):
    lo, hi = r
    return (lo is None or p.mean >= lo) and (hi is None or p.mean <= hi)


def _overlaps(p, r):
    lo, hi = r
    return (lo is None or p.hi >= lo) and (hi is None or p.lo <= hi)


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        try:
            return math.isclose(float(a), float(b))
        except (TypeError, ValueError):
            return str(a) == str(b)
    try:
        return math.isclose(float(a), float(b))
    except (TypeError, ValueError):
        return a == b


@dataclass
class Verdict:
    spec: str
    id: str
    claim: str
    source: str
    kind: str
    verdict: str
    measured: str = ""
    paper: str = ""
    groups: str = ""
    explanation: str = ""
    details: list = field(default_factory=list)  # one line per group

    def row(self):
        return {k: getattr(self, k) for k in ("spec", "id", "verdict", "measured", "paper", "groups",
                                                "claim", "source", "explanation")}


def axis_column(spec, axis, table):
    """The table column holding an axis's values: label.<axis> for a bundle axis, else the
    setting's."""
    for col in (f"label.{axis}", f"setting.{axis}"):
        if col in table.columns:
            return col
    return None


class _Table:
    """The summary table of one sweep, with point lookups for a metric."""

    def __init__(self, spec, summary):
        self.spec, self.s = spec, summary

    def metric_rows(self, name):
        for full in (name, f"results.{name}", f"recovery.{name}", f"invariants.{name}"):
            rows = self.s[self.s["metric"] == full]
            if not rows.empty:
                return rows
        return None

    def points(self, metric):
        """{run_id: Point} for a metric, or for 'a / b' the per-configuration ratio."""
        parts = [p.strip() for p in str(metric).split(" / ")]
        found = [self.metric_rows(p) for p in parts]
        if any(f is None for f in found):
            return None, None
        pts = [{r.run_id: Point.of(r.mean, r.std, r.n) for r in f.itertuples()} for f in found]
        if len(pts) == 1:
            return pts[0], found[0]
        out = {k: pts[0][k].ratio(pts[1][k]) for k in pts[0] if k in pts[1]}
        return {k: v for k, v in out.items() if v is not None}, found[0]


def evaluate(spec, claim, summary):
    """The Verdict of one claim on a sweep's summary table (None: no summary, not run)."""
    kind = next(k for k in KINDS if k in claim)
    body = claim[kind]
    v = Verdict(spec["name"], claim["id"], claim.get("claim", ""), claim.get("source", ""), kind,
                NOT_RUN, explanation=claim.get("explanation", ""))
    v.paper = _paper_text(kind, body)
    if summary is None or summary.empty:
        v.measured = "no results"
        return v
    t = _Table(spec, summary)
    pts, rows = t.points(claim.get("metric", "throughput_tps"))
    if pts is None:
        v.measured = f"no {claim.get('metric', 'throughput_tps')} in the table"
        return v
    configs = rows.drop_duplicates("run_id").set_index("run_id")
    configs = configs[configs.index.isin(pts.keys())]
    for key, want in (claim.get("where") or {}).items():
        col = axis_column(spec, key, configs)
        if col is None:
            v.measured = f"no setting {key} in the table"
            return v
        wants = want if isinstance(want, list) else [want]
        configs = configs[[any(_same(x, w) for w in wants) for x in configs[col]]]
    if configs.empty:
        v.measured = "no configuration matches 'where'"
        return v
    axis = body.get("axis")
    along = body.get("along")
    acol = axis_column(spec, axis, configs) if axis else None
    lcol = axis_column(spec, along, configs) if along else None
    if (axis and acol is None) or (along and lcol is None):
        v.measured = f"no column for axis {axis or along} in the table"
        return v
    others = [c for a in spec["axes"] if a not in (axis, along)
              for c in [axis_column(spec, a, configs)] if c is not None]
    groups = [g for _, g in configs.groupby(others, dropna=False, sort=False)] if others else [configs]
    fn = {"ratio": _ratio, "order": _order, "trend": _trend, "value": _value}[kind]
    # A trend along a label axis (contention: low, medium, high) follows the spec's order.
    along_order = axis_values(spec, along) if along else None
    results = []
    for g in groups:
        name = ", ".join(f"{c.split('.', 1)[1]}={g[c].iloc[0]}" for c in others) or "all"
        got = fn(body, g, pts, acol, (lcol, along_order))
        if got is not None:
            results.append((name, *got))
    if not results:
        v.measured = "the configurations it compares are missing"
        return v
    v.verdict = max((r[1] for r in results), key=RANK.get)
    v.details = [f"{name}: {verdict}: {text}" for name, verdict, text, _ in results]
    v.groups = f"{sum(r[1] == REPRODUCED for r in results)} of {len(results)} groups reproduced"
    values = [r[3] for r in results if r[3] is not None]
    worst = next(r for r in results if r[1] == v.verdict)
    if values and len(values) > 1:
        v.measured = f"{fmt(min(values))} to {fmt(max(values))} over {len(results)} groups; worst: {worst[2]}"
    else:
        v.measured = worst[2]
    return v


def _paper_text(kind, b):
    if kind == "ratio":
        return f"{b['of']} / {b['to']} in {_range_text(b['range'])}"
    if kind == "order":
        return " > ".join(map(str, b["series"]))
    if kind == "trend":
        return f"{b['direction']} along {b['along']}"
    return f"in {_range_text(b['range'])}"


def _series_points(g, pts, acol, names):
    """{name: Point} of the series in one group; None when one is missing."""
    out = {}
    for n in names:
        rows = g[[_same(x, n) for x in g[acol]]]
        if len(rows) != 1:
            return None
        out[n] = pts[rows.index[0]]
    return out


def _ratio(b, g, pts, acol, _):
    s = _series_points(g, pts, acol, [b["of"], b["to"]])
    if s is None:
        return None
    r = s[b["of"]].ratio(s[b["to"]])
    if r is None:
        return None
    rng = b["range"]
    if _in_range(r, rng) or _overlaps(r, rng):
        verdict = REPRODUCED
    else:
        lo, hi = rng
        above = lo is not None and lo >= 1
        below = hi is not None and hi <= 1
        verdict = SAME if (above and r.mean > 1) or (below and r.mean < 1) else NOT
    return verdict, r.text(), r.mean


def _holds(a, b, descending=True):
    """a comes before b in a descending (or ascending) order, or the intervals cannot tell."""
    if descending:
        return a.mean >= b.mean or a.hi >= b.lo
    return a.mean <= b.mean or a.lo <= b.hi


def _order(b, g, pts, acol, _):
    names = b["series"]
    s = _series_points(g, pts, acol, names)
    if s is None:
        return None
    ps = [s[n] for n in names]
    text = " | ".join(f"{n} {fmt(s[n].mean)}" for n in names)
    return _sequence(ps, True), text, None


def _sequence(ps, desc):
    """An order or a trend: reproduced when the first point is ahead of the last (by the means)
    and no step goes the wrong way by more than the intervals allow; same direction when only
    the first and last are in the claimed order; not reproduced else (a flat line whose noise
    ends on the wrong side shows no trend, whatever its intervals)."""
    ends = ps[0].mean > ps[-1].mean if desc else ps[0].mean < ps[-1].mean
    if not ends:
        return NOT
    return REPRODUCED if all(_holds(x, y, desc) for x, y in zip(ps, ps[1:])) else SAME


def _position(values, order):
    """Where each value stands along the axis: its number, or its place in the spec's order."""
    nums = pd.to_numeric(values, errors="coerce")
    if not nums.isna().any():
        return nums
    return pd.Series([next((i for i, o in enumerate(order or []) if _same(v, o)), len(order or []))
                      for v in values], index=values.index)


def _trend(b, g, pts, acol, along):
    lcol, order = along
    desc = b["direction"] == "decreasing"
    if acol:
        names = b.get("series") or list(dict.fromkeys(g[acol]))
        lines = {n: g[[_same(x, n) for x in g[acol]]] for n in names}
    else:
        lines = {"all": g}
    worst, texts = REPRODUCED, []
    for n, rows in lines.items():
        if len(rows) < 2:
            return None
        rows = rows.assign(_x=_position(rows[lcol], order)).sort_values("_x", kind="stable")
        ps = [pts[i] for i in rows.index]
        got = _sequence(ps, desc)
        worst = max(worst, got, key=RANK.get)
        texts.append(f"{n}: " + " -> ".join(fmt(p.mean) for p in ps))
    return worst, "; ".join(texts), None


def _value(b, g, pts, acol, _):
    names = b.get("series") or (list(dict.fromkeys(g[acol])) if acol else None)
    if names is None:
        if len(g) != 1:
            return None
        s = {"all": pts[g.index[0]]}
    else:
        s = _series_points(g, pts, acol, names)
        if s is None:
            return None
    rng, worst, texts = b["range"], REPRODUCED, []
    for n, p in s.items():
        ok = _in_range(p, rng) or _overlaps(p, rng)
        worst = max(worst, REPRODUCED if ok else NOT, key=RANK.get)
        texts.append(f"{n} {p.text()}")
    vals = [p.mean for p in s.values()]
    return worst, "; ".join(texts), (max(vals) if rng[0] is None else min(vals))


# ------------------------------------------------------------------------------- sweeps

def load_summary(results_dir, name):
    """A sweep's summary table, written from its raw table when missing or older; None
    when the sweep has no table."""
    folder = Path(results_dir) / name
    raw = folder / f"{name}.csv"
    if not raw.exists():
        return None
    path = summary_path(raw)
    if not path.exists() or path.stat().st_mtime < raw.stat().st_mtime:
        write_summary(raw)
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return None


def check_spec(spec, results_dir):
    summary = load_summary(results_dir, spec["name"])
    return [evaluate(spec, c, summary) for c in spec.get("claims", [])]


def counts(verdicts):
    out = {REPRODUCED: 0, SAME: 0, NOT: 0, NOT_RUN: 0}
    for v in verdicts:
        out[v.verdict] += 1
    return out


def print_verdicts(verdicts, echo=print):
    by_spec = {}
    for v in verdicts:
        by_spec.setdefault(v.spec, []).append(v)
    for spec, vs in by_spec.items():
        echo(f"claims of {spec}:")
        for v in vs:
            echo(f"  [{v.verdict}] {v.id}: {v.claim}")
            echo(f"      paper: {v.paper}; measured: {v.measured}")
            if v.verdict not in (REPRODUCED, NOT_RUN) and v.explanation:
                echo(f"      why: {' '.join(v.explanation.split())}")
    c = counts(verdicts)
    echo(f"scorecard: {c[REPRODUCED]} reproduced, {c[SAME]} same direction, "
         f"{c[NOT]} not reproduced, {c[NOT_RUN]} not run")


# ------------------------------------------------------------------------------ validation

def axis_values(spec, axis):
    """Every value an axis takes at any scale, as the table shows it (a bundle's label, or
    its values joined by '/'; planner.py names them so)."""
    values = list(spec["axes"].get(axis) or [])
    for overrides in (spec.get("scales") or {}).values():
        if isinstance(overrides, dict) and isinstance(overrides.get(axis), list):
            values += overrides[axis]
    out = []
    for v in values:
        if isinstance(v, dict):
            out.append(str(v["label"]) if "label" in v else "/".join(map(str, v.values())))
        else:
            out.append(v)
    return out


def _range_ok(r):
    if not isinstance(r, list) or len(r) != 2 or r == [None, None]:
        return False
    if not all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in r):
        return False
    return r[0] is None or r[1] is None or r[0] <= r[1]


def validate_claims(spec):
    """[(path, message)] for everything wrong with a spec's claims."""
    from experiments.schema import _closest  # difflib's did-you-mean, as for settings

    problems = []
    add = lambda path, msg: problems.append((path, msg))  # noqa: E731
    claims = spec.get("claims", [])
    if not isinstance(claims, list):
        return [(("claims",), "'claims' is a list of claims (docs/claims.md)")]
    axes = spec.get("axes") or {}
    settings = set(axes) | set(spec.get("fixed") or {})
    for overrides in (spec.get("scales") or {}).values():
        if isinstance(overrides, dict):
            settings |= set(overrides)
    seen = set()
    for i, c in enumerate(claims):
        at = ("claims", i)
        if not isinstance(c, dict):
            add(at, "a claim is a mapping (id, claim, source, one of ratio/order/trend/value)")
            continue
        for key in c:
            if key not in ("id", "claim", "source", "metric", "where", "explanation", *KINDS):
                add(at + (key,), f"unknown claim key {key!r}"
                                 f"{_closest(key, ['id', 'claim', 'source', 'metric', 'where', 'explanation', *KINDS])}")
        cid = c.get("id")
        if not isinstance(cid, str) or not ID.match(cid):
            add(at, "a claim needs an 'id' of lower-case letters, digits and '-'")
        elif cid in seen:
            add(at + ("id",), f"claim id {cid!r} used twice")
        seen.add(cid)
        for key in ("claim", "source"):
            if not isinstance(c.get(key), str) or not c.get(key).strip():
                add(at, f"claim {cid}: {key!r} must say it (the paper's statement; where it is)")
        metric = c.get("metric", "throughput_tps")
        if not isinstance(metric, str) or not metric_known(metric):
            add(at + ("metric",), f"claim {cid}: unknown metric {metric!r}"
                                  f"{_closest(str(metric), METRIC_NAMES)}")
        where = c.get("where") or {}
        if not isinstance(where, dict):
            add(at + ("where",), f"claim {cid}: 'where' is a mapping of settings to values")
            where = {}
        for key in where:
            if key not in settings:
                add(at + ("where", key), f"claim {cid}: 'where' names {key!r}, not a setting of this "
                                         f"spec{_closest(key, settings)}")
        kinds = [k for k in KINDS if k in c]
        if len(kinds) != 1:
            add(at, f"claim {cid}: exactly one of {', '.join(KINDS)} (found {len(kinds)})")
            continue
        kind, body = kinds[0], c[kinds[0]]
        at = at + (kind,)
        if not isinstance(body, dict):
            add(at, f"claim {cid}: {kind} is a mapping (docs/claims.md)")
            continue
        axis = body.get("axis")
        needs_axis = kind in ("ratio", "order") or "series" in body
        if axis is None and needs_axis:
            add(at, f"claim {cid}: {kind} needs 'axis', the spec axis its series are values of")
        elif axis is not None and axis not in axes:
            add(at + ("axis",), f"claim {cid}: no axis {axis!r} in this spec{_closest(str(axis), axes)}")
            axis = None
        known = axis_values(spec, axis) if axis else []

        def series(path, name):
            if axis and not any(_same(name, k) for k in known):
                add(at + path, f"claim {cid}: unknown series {name!r} on axis {axis!r}"
                               f"{_closest(str(name), [str(k) for k in known])}")

        if kind == "ratio":
            for key in ("of", "to"):
                if key not in body:
                    add(at, f"claim {cid}: ratio needs '{key}'")
                else:
                    series((key,), body[key])
        if kind in ("order",) or "series" in body:
            names = body.get("series")
            if not isinstance(names, list) or len(names) < (2 if kind == "order" else 1):
                add(at + ("series",), f"claim {cid}: 'series' lists {'two or more' if kind == 'order' else 'the'} "
                                      f"values of the axis")
            else:
                for j, n in enumerate(names):
                    series(("series", j), n)
        if kind in ("ratio", "value") and not _range_ok(body.get("range")):
            add(at + ("range",), f"claim {cid}: 'range' is [low, high] (one may be null), low <= high")
        if kind == "trend":
            if body.get("along") not in axes:
                add(at + ("along",), f"claim {cid}: 'along' must be an axis of this spec"
                                     f"{_closest(str(body.get('along')), axes)}")
            if body.get("direction") not in ("increasing", "decreasing"):
                add(at + ("direction",), f"claim {cid}: 'direction' is increasing or decreasing")
        extra = set(body) - {"ratio": {"axis", "of", "to", "range"}, "order": {"axis", "series"},
                             "trend": {"axis", "series", "along", "direction"},
                             "value": {"axis", "series", "range"}}[kind]
        for key in sorted(extra):
            add(at + (key,), f"claim {cid}: {kind} has no {key!r}")
    return problems
