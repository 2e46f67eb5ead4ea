"""What a spec may say: every key known, every value of the right type, every setting a rundb
flag (read from system/options.cpp, so no build is needed) or a flag the spec declares as
pending, every value one rundb accepts (experiments/ranges.py), every engine and CC method one
the Makefile builds or the spec declares pending. All problems are reported at once, each with
file and line."""
import difflib
import inspect
import re
from pathlib import Path

import yaml

from experiments.capabilities import NOT_FLAGS, makefile_lists
from experiments.ranges import rules as flag_rules
from experiments.results import ROOT

TOP = {"paper": str, "figure": str, "title": str, "also": list, "axes": dict, "fixed": dict,
       "scales": dict, "pending": list, "plot": (dict, list), "claims": list}
REQUIRED = ("paper", "figure", "title", "axes", "fixed", "scales", "plot")
# Spec settings that are not rundb flags: the binary (engine, cc, build), the image folder,
# and `recover: true` (a workload, then rundb --recover on its image).
SPEC_SETTINGS = set(NOT_FLAGS) | {"recover"}
FLAG = re.compile(r'add_(?:option|flag)\(\s*"([^"]+)"')
SCALAR = (str, int, float, bool)
REF = re.compile(r"^\$\{(\w+)\}$")  # "${threads}": the value of another setting of the run


def rundb_flags(root=ROOT):
    """Setting names of every flag rundb defines ('--p-ratio' -> 'p_ratio')."""
    names = set()
    for src in sorted((Path(root) / "system").glob("*.cpp")):
        for match in FLAG.finditer(src.read_text()):
            names.update(n.lstrip("!")[2:].replace("-", "_")
                         for n in match.group(1).split(",") if n.lstrip("!").startswith("--"))
    return names


def _line(node, path):
    """Line (1-based) of the value at path (keys and list indexes) in the composed YAML, or
    of the deepest part of it that exists."""
    line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = [(k, v) for k, v in node.value if k.value == part]
            if not found:
                break
            node = found[0][1]
            line = found[0][0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _closest(name, known):
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _plot_options(script):
    """Keyword options plots.<script>.plot accepts, or None when there is no such family."""
    from plots import FAMILIES
    if script not in FAMILIES:
        return None
    import importlib
    params = inspect.signature(importlib.import_module(f"plots.{script}").plot).parameters
    return set(list(params)[1:]) | {"script", "name"}


def check(spec, node, flags, rules=None, makes=None):
    """[(path, message)] for everything wrong with a loaded spec. rules: what each flag
    accepts (ranges.rules()); makes: (engines, CC methods) the Makefile builds."""
    rules = {} if rules is None else rules
    problems = []
    add = lambda path, msg: problems.append((path, msg))  # noqa: E731
    if not isinstance(spec, dict):
        return [((), "a spec is a mapping of keys (paper, figure, title, axes, ...)")]
    for key, value in spec.items():
        if key not in TOP:
            add((key,), f"unknown key {key!r}{_closest(key, TOP)}")
        elif not isinstance(value, TOP[key]) or (TOP[key] is str and not value):
            kind = TOP[key] if isinstance(TOP[key], type) else TOP[key][0]
            add((key,), f"{key!r} must be a {'non-empty ' if kind is str else ''}"
                        f"{ {str: 'string', list: 'list', dict: 'mapping'}[kind]}")
    for key in REQUIRED:
        if key not in spec:
            add((), f"missing key {key!r}")
    if problems:
        return problems  # the rest assumes the shape is right

    # Flags a spec declares as still to come: pending entries' `flags`.
    declared, labels = set(), set()
    for i, entry in enumerate(spec.get("pending", [])):
        if not isinstance(entry, dict) or not isinstance(entry.get("reason"), str):
            add(("pending", i), "a pending entry is a mapping with a 'reason' string")
            continue
        names = entry.get("flags", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            add(("pending", i, "flags"), "'flags' is a list of setting names")
        else:
            declared.update(names)
    known = flags | SPEC_SETTINGS | declared
    # Values a pending entry names (an engine, a CC method, a value rundb does not accept
    # yet) are declared to come; any other must be one the testbed has.
    to_come = {(k, str(v)) for e in spec.get("pending", []) if isinstance(e, dict)
               for k, v in e.items() if k not in ("reason", "flags") and isinstance(v, SCALAR)}
    buildable = dict(zip(("engine", "cc"), makes)) if makes else {}

    def value_problem(name, value):
        if isinstance(value, dict) or (name, str(value)) in to_come or \
                isinstance(value, str) and REF.match(value):
            return None  # a bundle, declared pending, or "${threads}" (the setting it names)
        if name in buildable and value not in buildable[name]:
            return (f"unknown {name} {value!r}{_closest(str(value), buildable[name])}: the "
                    f"Makefile builds {' '.join(sorted(buildable[name]))}; one still to come "
                    f"goes in pending: [{{{name}: {value}, reason: ...}}]")
        return rules[name].problem(value) if name in rules and value is not None else None

    def setting(path, name, value, lists=False, declared_pending=False):
        if name not in known and name not in labels:
            add(path, f"unknown setting {name!r}{_closest(name, known | labels)}: not a rundb "
                      f"flag; a flag still to come goes in pending: "
                      f"[{{flags: [{name}], reason: ...}}]")
        ok = isinstance(value, SCALAR) or value is None or (
            lists and isinstance(value, list) and value
            and all(isinstance(v, SCALAR) or isinstance(v, dict) for v in value))
        if not ok:
            add(path, f"setting {name!r} must be a single value{' or a list' if lists else ''}")
        elif not declared_pending:
            for i, v in enumerate(value if isinstance(value, list) else [value]):
                why = value_problem(name, v)
                if why:
                    add(path + ((i,) if isinstance(value, list) else ()), why)

    for axis, values in spec["axes"].items():
        if not isinstance(values, list) or not values:
            add(("axes", axis), f"axis {axis!r} must be a non-empty list")
            continue
        if any(isinstance(v, dict) for v in values):
            labels.add(axis)  # a bundle axis: its name is a label, its values set settings
            for i, bundle in enumerate(values):
                if not isinstance(bundle, dict):
                    add(("axes", axis, i), f"axis {axis!r} mixes bundles and single values")
                    continue
                for name, value in bundle.items():
                    if name != "label":
                        setting(("axes", axis, i, name), name, value)
        else:
            setting(("axes", axis), axis, values, lists=True)
    for name, value in spec["fixed"].items():
        setting(("fixed", name), name, value)
    for scale, overrides in spec["scales"].items():
        if overrides is None:
            continue
        if not isinstance(overrides, dict):
            add(("scales", scale), f"scale {scale!r} must be a mapping of settings")
            continue
        for name, value in overrides.items():
            setting(("scales", scale, name), name, value, lists=name in spec["axes"])
    for i, entry in enumerate(spec.get("pending", [])):
        if isinstance(entry, dict):
            for name, value in entry.items():
                if name not in ("reason", "flags"):
                    setting(("pending", i, name), name, value, declared_pending=True)
    for i, text in enumerate(spec.get("also", [])):
        if not isinstance(text, str):
            add(("also", i), "'also' lists other papers' figures as strings")
    bundles = [v for vs in spec["axes"].values() if isinstance(vs, list)
               for v in vs if isinstance(v, dict)]
    for key in ("engine", "cc"):
        if key not in spec["axes"] and key not in spec["fixed"] and not any(key in b for b in bundles):
            add(("axes",), f"'{key}' must be an axis, a fixed setting or in a bundle")

    from experiments.claims import validate_claims
    problems += validate_claims(spec)

    plots = spec["plot"] if isinstance(spec["plot"], list) else [spec["plot"]]
    for i, options in enumerate(plots):
        path = ("plot", i) if isinstance(spec["plot"], list) else ("plot",)
        if not isinstance(options, dict) or not isinstance(options.get("script"), str):
            add(path, "a plot is a mapping with a 'script' (a module in plots/)")
            continue
        accepted = _plot_options(options["script"])
        if accepted is None:
            from plots import FAMILIES
            add(path + ("script",), f"no plot family {options['script']!r}"
                                    f"{_closest(options['script'], FAMILIES)}")
            continue
        for name in options:
            if name not in accepted:
                add(path + (name,), f"plot {options['script']} has no option {name!r}"
                                    f"{_closest(name, accepted)}")
    return problems


def validate(path, text, flags=None):
    """(spec, problems as 'file:line: message' lines); spec is None when it is not YAML."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        spec = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        return None, [f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}"]
    if node is None:
        return None, [f"{path}:1: empty spec"]
    found = check(spec, node, rundb_flags() if flags is None else flags, flag_rules(),
                  makefile_lists())
    return spec, [f"{path}:{_line(node, p)}: {msg}" for p, msg in found]
