"""Sweep specs: YAML files in experiments/specs/ (or any path) naming a paper figure."""
from pathlib import Path

import yaml

SPEC_DIR = Path(__file__).resolve().parent / "specs"
REQUIRED = ("paper", "figure", "title", "axes", "fixed", "scales", "plot")


def spec_path(name_or_path):
    """A spec by name (ycsb_read_ratio) or by path to a .yaml file."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        return p
    return SPEC_DIR / f"{name_or_path}.yaml"


def load_spec(name_or_path):
    path = spec_path(name_or_path)
    if not path.is_file():
        known = ", ".join(s["name"] for s in all_specs())
        raise SystemExit(f"no spec {name_or_path!r} (known: {known})")
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SystemExit(f"{path}: not valid YAML: {exc}")
    missing = [k for k in REQUIRED if k not in spec]
    if missing:
        raise SystemExit(f"{path}: missing keys {missing}")
    for name, values in spec["axes"].items():
        if not isinstance(values, list) or not values:
            raise SystemExit(f"{path}: axis {name!r} must be a non-empty list")
    bundles = [v for values in spec["axes"].values() for v in values if isinstance(v, dict)]
    for key in ("engine", "cc"):
        if key not in spec["axes"] and key not in spec["fixed"] and \
                not any(key in b for b in bundles):
            raise SystemExit(f"{path}: '{key}' must be an axis, a fixed setting or in a bundle")
    spec.setdefault("pending", [])
    spec.setdefault("also", [])  # the same figure in another paper: "zen-plus-journal Figure 8"
    for entry in spec["pending"]:  # settings to match (none: the whole spec) and a reason
        if "reason" not in entry:
            raise SystemExit(f"{path}: pending entry {entry} needs a reason")
    # One figure or several drawn from the same table.
    spec["plots"] = spec["plot"] if isinstance(spec["plot"], list) else [spec["plot"]]
    spec["name"] = path.stem
    spec["path"] = str(path)
    return spec


def all_specs():
    return [load_spec(p) for p in sorted(SPEC_DIR.glob("*.yaml"))]
