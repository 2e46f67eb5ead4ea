"""Expand a spec at a scale into runs, each named by a hash of its settings."""
import hashlib
import itertools
import json
from dataclasses import dataclass, field


def _canonical(value):
    # 0 and 0.0 (or 1 and 1.0) are the same setting and must hash the same.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def run_id(settings):
    """First 12 hex digits of sha1 over the canonical JSON of the settings."""
    canon = {k: _canonical(v) for k, v in settings.items()}
    text = json.dumps(canon, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Run:
    spec: str
    run_id: str
    rep: int
    settings: dict = field(compare=False, hash=False)

    @property
    def key(self):
        return f"{self.run_id}-r{self.rep}"


@dataclass
class Plan:
    spec: dict
    scale: str
    repeat: int
    axes: dict
    fixed: dict
    runs: list
    pending: list  # (settings, pending entry) per skipped configuration, not per repetition

    @property
    def pairs(self):
        return binaries(self.runs)


def binaries(runs):
    """The (engine, cc) pairs these runs need built, in first-use order."""
    return list(dict.fromkeys((r.settings["engine"], r.settings["cc"]) for r in runs))


def describe_pending(entry):
    """'engine=zen: not implemented yet' for a pending entry."""
    match = " ".join(f"{k}={v}" for k, v in entry.items() if k != "reason")
    return f"{match}: {entry['reason']}"


def pending_entry(spec, settings):
    for entry in spec.get("pending", []):
        match = {k: v for k, v in entry.items() if k != "reason"}
        if all(_canonical(settings.get(k)) == _canonical(v) for k, v in match.items()):
            return entry
    return None


def plan(spec, scale, repeat=3):
    if scale not in spec["scales"]:
        raise SystemExit(f"spec {spec['name']} has no scale {scale!r} "
                         f"(has: {', '.join(spec['scales'])})")
    if repeat < 1:
        raise SystemExit("--repeat must be at least 1")
    overrides = spec["scales"][scale] or {}
    # A scale may replace an axis' list (threads 1..32 at paper scale) or a fixed value.
    axes = {k: overrides.get(k, v) for k, v in spec["axes"].items()}
    for k, v in axes.items():
        if not isinstance(v, list):
            axes[k] = [v]
    fixed = {**spec["fixed"], **{k: v for k, v in overrides.items() if k not in axes}}
    runs, pending = [], []
    for combo in itertools.product(*axes.values()):
        settings = {**fixed, **dict(zip(axes, combo))}
        entry = pending_entry(spec, settings)
        if entry:
            pending.append((settings, entry))
            continue
        rid = run_id(settings)
        runs += [Run(spec["name"], rid, rep, settings) for rep in range(repeat)]
    return Plan(spec, scale, repeat, axes, fixed, runs, pending)
