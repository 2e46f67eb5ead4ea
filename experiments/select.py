"""--only engine=zen,cc=silo|cicada: the runs of a plan to do. Keys are settings or labels (a
bundle axis' name); several key=value pairs must all match, a value list (a|b) any of them."""
from experiments.planner import _canonical
from experiments.schema import _closest


class UsageError(Exception):
    """A command-line value that cannot be used (one line; exit 2)."""


def _norm(value):
    """'0.50', 0.5 -> '0.5'; '1.0', 1 -> '1'; 'True', True -> 'true': as a user would type it."""
    try:
        value = _canonical(float(value)) if not isinstance(value, bool) else value
    except (TypeError, ValueError):
        pass
    return str(value).lower()


def parse_only(text, runs):
    """A predicate run -> bool for --only TEXT, checked against the runs' settings and labels."""
    wanted = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key or not value:
            raise UsageError(f"--only takes KEY=VALUE[|VALUE...] pairs separated by commas, "
                             f"not {part!r}")
        wanted[key.strip()] = {_norm(v.strip()) for v in value.split("|")}
    if not wanted:
        raise UsageError("--only needs at least one KEY=VALUE")
    seen = {}  # key -> the values runs have
    for run in runs:
        for k, v in {**run.settings, **run.labels}.items():
            seen.setdefault(k, set()).add(_norm(v))
    for key, values in wanted.items():
        if key not in seen:
            raise UsageError(f"--only: no setting or label {key!r}{_closest(key, seen)} "
                             f"(has: {', '.join(sorted(seen))})")
        if not values & seen[key]:
            raise UsageError(f"--only {key}={'|'.join(sorted(values))} matches no run "
                             f"({key} takes: {', '.join(sorted(seen[key]))})")

    def select(run):
        named = {**run.settings, **run.labels}
        return all(_norm(named.get(k)) in vs for k, vs in wanted.items())
    if not any(select(r) for r in runs):
        raise UsageError(f"--only {text} matches no run (each value exists, not together)")
    return select
