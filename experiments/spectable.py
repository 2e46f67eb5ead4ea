"""`list --markdown`: the README's table of specs, one row per spec: the paper figure, the
engines it compares, its runs at small scale with the default repetitions and the dry run's
time for them on a fresh clone (every binary built from scratch), and its claims.

Only what the specs say counts (no built rundb is asked), so the table is the same on every
machine; tests/python/test_readme.py fails when the README's copy differs from it."""
from experiments.dryrun import estimate_s, minutes
from experiments.planner import DEFAULT_REPEAT, plan

SCALE = "small"
BEGIN = "<!-- specs-table:begin: .venv/bin/python -m experiments list --markdown -->"
END = "<!-- specs-table:end -->"


def engines(p):
    """The engines a plan's configurations run or hold pending, in the spec's order; Zen with
    --zen-plus on is zen+."""
    names = []
    for settings in [r.settings for r in p.runs] + [s for s, _ in p.pending]:
        engine = settings.get("engine", "?")
        names.append("zen+" if engine == "zen" and settings.get("zen_plus") == "on" else engine)
    return list(dict.fromkeys(names))


def row(spec):
    p = plan(spec, SCALE, DEFAULT_REPEAT)
    also = f" (also {', '.join(spec['also'])})" if spec["also"] else ""
    paper = "testbed:" if spec["paper"].startswith("none") else spec["paper"]  # no paper has it
    runs = str(len(p.runs))
    if p.pending:
        runs += f" ({len(p.pending)} configs pending)"
    time = f"~{minutes(estimate_s(p.runs, len(p.pairs)))}" if p.runs else "-"
    cells = [f"`{spec['name']}`", f"{paper} {spec['figure']}{also}", spec["title"],
             ", ".join(engines(p)), runs, time, str(len(spec["claims"]))]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown(specs):
    """The table with its two marker lines, as the README holds it."""
    head = ["spec", "paper figure", "what", "engines",
            f"runs at {SCALE} (x{DEFAULT_REPEAT} repetitions)", "time (dry run)", "claims"]
    lines = [BEGIN, "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [row(spec) for spec in specs]
    return "\n".join(lines + [END]) + "\n"
