"""Sweep specs: YAML files in experiments/specs/ (or any path) naming a paper figure, checked
against experiments/schema.py before anything is planned."""
from pathlib import Path

from experiments.schema import _closest, validate

SPEC_DIR = Path(__file__).resolve().parent / "specs"


class SpecError(Exception):
    """A spec that cannot be used; args[0] is every problem found, one line each."""


def spec_path(name_or_path):
    """A spec by name (ycsb_read_ratio) or by path to a .yaml file."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        return p
    return SPEC_DIR / f"{name_or_path}.yaml"


def load_spec(name_or_path):
    path = spec_path(name_or_path)
    if not path.is_file():
        if Path(name_or_path).suffix in (".yaml", ".yml"):
            raise SpecError([f"no spec file {str(path)!r}"])
        known = [p.stem for p in sorted(SPEC_DIR.glob("*.yaml"))]
        raise SpecError([f"no spec {name_or_path!r}{_closest(str(name_or_path), known)} "
                         f"(known: {', '.join(known)})"])
    spec, problems = validate(path, path.read_text())
    if problems:
        raise SpecError(problems)
    spec.setdefault("pending", [])
    spec.setdefault("claims", [])  # the paper's claims about the figure (docs/claims.md)
    spec.setdefault("also", [])  # the same figure in another paper: "zen-plus-journal Figure 8"
    # One figure or several drawn from the same table.
    spec["plots"] = spec["plot"] if isinstance(spec["plot"], list) else [spec["plot"]]
    spec["name"] = path.stem
    spec["path"] = str(path)
    return spec


def load_all():
    """(every shipped spec that validates, every problem of those that do not)."""
    specs, problems = [], []
    for path in sorted(SPEC_DIR.glob("*.yaml")):
        try:
            specs.append(load_spec(path))
        except SpecError as exc:
            problems += exc.args[0]
    return specs, problems


def all_specs():
    specs, problems = load_all()
    if problems:
        raise SpecError(problems)
    return specs
