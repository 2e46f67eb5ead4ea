"""Expand a spec at a scale into runs, each named by a hash of its settings.

A configuration is pending (reported, never run) when the spec says so, or when the built
rundb lacks a flag the spec declares still to come (see capabilities.py). An ENGINE-CC pair
make does not build is a spec error, found before any build.
"""
import hashlib
import itertools
import json
from dataclasses import dataclass, field

from experiments.capabilities import makefile_pairs, missing, pair_problem
from experiments.schema import REF, _closest  # REF: "${threads}", another setting's value
from experiments.specs import SpecError


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
    labels: dict = field(default_factory=dict, compare=False, hash=False)

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


def binary_of(settings):
    """(engine, cc), or (engine, cc, build variant) for a spec's `build:` setting."""
    pair = (settings["engine"], settings["cc"])
    return pair + (settings["build"],) if settings.get("build") is not None else pair


def binaries(runs):
    """The binaries these runs need built, as binary_of() names them, in first-use order."""
    return list(dict.fromkeys(binary_of(r.settings) for r in runs))


def describe_pending(entry):
    """'engine=wbl: not implemented yet' for a spec's pending entry ('whole spec: ...' if it
    names no setting); the reasons themselves for what the testbed lacks."""
    if "missing" in entry:
        return entry["reason"]
    match = " ".join(f"{k}={v}" for k, v in entry.items() if k != "reason")
    return f"{match or 'whole spec'}: {entry['reason']}"


def reasons(entry):
    """Each separate reason of a pending entry."""
    return entry.get("missing") or [describe_pending(entry)]


def pending_entry(spec, settings, caps=None, labels=None):
    """The spec's own pending entry for these settings (or labels), else what the testbed
    lacks to run them (when caps are given), else None."""
    named = {**settings, **(labels or {})}
    declared = {}  # flag still to come -> why, from entries with `flags`
    for entry in spec.get("pending", []):
        if "flags" in entry:  # declares names; holds nothing back while rundb has the flag
            declared.update({f"--{f.replace('_', '-')}": entry["reason"] for f in entry["flags"]})
            continue
        match = {k: v for k, v in entry.items() if k != "reason"}
        if all(_canonical(named.get(k)) == _canonical(v) for k, v in match.items()):
            return entry
    lacking = missing(caps, settings) if caps else []
    lacking = [f"{r} ({declared[r.rsplit(' ', 1)[-1]]})" if r.startswith("rundb has no flag")
               and r.rsplit(" ", 1)[-1] in declared else r for r in lacking]
    return {"reason": "; ".join(lacking), "missing": lacking} if lacking else None


def label_axes(axes):
    """Axes whose values are mappings: each value is a bundle of settings, and the axis name
    becomes a label column (`label` key, or the bundle's values joined by '/')."""
    return {k for k, values in axes.items() if any(isinstance(v, dict) for v in values)}


def _expand(axes, fixed, labels):
    for combo in itertools.product(*axes.values()):
        settings, names = dict(fixed), {}
        for axis, value in zip(axes, combo):
            if axis in labels:
                bundle = dict(value)
                names[axis] = str(bundle.pop("label", "/".join(map(str, bundle.values()))))
                settings.update(bundle)
            else:
                settings[axis] = value
        for k, v in settings.items():
            m = isinstance(v, str) and REF.match(v)
            if m:
                settings[k] = settings[m.group(1)]
        yield settings, names


DEFAULT_REPEAT = 3  # repetitions per configuration unless `run --repeat` says otherwise


def plan(spec, scale, repeat=DEFAULT_REPEAT, caps=None, pairs=None):
    """Runs of a spec at a scale. With caps (capabilities.detect()), configurations whose
    declared flags the built rundb lacks are pending with the reason. pairs: the ENGINE-CC
    pairs make builds (default `make pairs`)."""
    if scale not in spec["scales"]:
        raise SpecError([f"spec {spec['name']} has no scale {scale!r}"
                         f"{_closest(scale, spec['scales'])} (has: {', '.join(spec['scales'])})"])
    if repeat < 1:
        raise SpecError(["--repeat must be at least 1"])
    overrides = spec["scales"][scale] or {}
    # A scale may replace an axis' list (threads 1..32 at paper scale) or a fixed value.
    axes = {k: overrides.get(k, v) for k, v in spec["axes"].items()}
    for k, v in axes.items():
        if not isinstance(v, list):
            axes[k] = [v]
    fixed = {**spec["fixed"], **{k: v for k, v in overrides.items() if k not in axes}}
    labels = label_axes(axes)
    runs, pending, bad_pairs = [], [], {}
    pairs = makefile_pairs() if pairs is None else pairs
    for settings, names in _expand(axes, fixed, labels):
        entry = pending_entry(spec, settings, caps, names)
        if entry:
            pending.append((settings, entry))
            continue
        why = pair_problem(settings.get("engine"), settings.get("cc"), pairs)
        if why:
            bad_pairs[why] = None
            continue
        # Labels join the id only when present, so specs without them keep their ids.
        rid = run_id({**settings, **{f"label.{k}": v for k, v in names.items()}})
        runs += [Run(spec["name"], rid, rep, settings, names) for rep in range(repeat)]
    if bad_pairs:
        where = spec.get("path", spec["name"])
        raise SpecError([f"{where}: {why}; one still to come goes in pending: "
                         f"[{{engine: ..., cc: ..., reason: ...}}]" for why in bad_pairs])
    return Plan(spec, scale, repeat, axes, fixed, runs, pending)
