"""The values rundb accepts per flag, read from system/options.cpp as schema.py reads the flag
names (no build needed): CLI::Range(a, b), CLI::IsMember({...}), fraction(...), a size, a
finite number, a boolean flag. A spec value outside them is a spec error before any run."""
import ast
import operator
import re
from pathlib import Path

from experiments.results import ROOT

OPTION = re.compile(r'add_(option|flag)\(\s*"([^"]+)"')
RANGE = re.compile(r"CLI::Range\(([^;]*?)\)\)?(?=->|;|\)$)")
NAMED_RANGE = re.compile(r"CLI::Range\s+(\w+)\(([^;]*)\);")
MEMBERS = re.compile(r"IsMember\(\{([^}]*)\}\)")
FRACTION = re.compile(r"fraction\(([^)]*)\)")
SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*[KMGTkmgt]?i?[Bb]?\s*$")
CAST = re.compile(r"u?int\d+_t\(([^()]*)\)")
OPS = {ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Mult: operator.mul,
       ast.Add: operator.add, ast.Sub: operator.sub}


def _number(text):
    """1 << 40, uint64_t(1) << 36, 65536 * 100, 0.01 -> the number; ~... -> None (unbounded)."""
    text = CAST.sub(r"\1", CAST.sub(r"\1", text.strip()))
    if "~" in text:
        return None

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in OPS:
            return OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(text)
    return ev(ast.parse(text, mode="eval").body)


def _split_bounds(args):
    """'uint64_t(1), uint64_t(1) << 36' -> the two bound texts (commas inside casts stay)."""
    depth, parts, cur = 0, [], ""
    for ch in args:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


class Rule:
    """What one flag accepts; problem(value) is why a value is refused, or None."""

    def __init__(self, flag, is_flag):
        self.flag, self.is_flag = flag, is_flag
        self.lo = self.hi = self.members = self.fraction = None
        self.whole = self.size = self.finite = False

    def problem(self, value):
        if self.is_flag:
            return None if isinstance(value, bool) else f"--{self.flag} is a switch: true or false"
        if self.members is not None:
            return None if str(value) in self.members else \
                f"--{self.flag} takes one of {', '.join(sorted(self.members))}, not {value!r}"
        if self.size:
            return None if isinstance(value, int) or SIZE.match(str(value)) else \
                f"--{self.flag} is a size like 512M or 2G, not {value!r}"
        if not (self.finite or self.lo is not None or self.fraction):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"--{self.flag} is a number, not {value!r}"
        if self.whole and value != int(value):
            return f"--{self.flag} is a whole number, not {value!r}"
        if self.lo is not None and value < self.lo or self.hi is not None and value > self.hi:
            where = f"in [{self.lo:g}, {self.hi:g}]" if self.hi is not None else f"at least {self.lo:g}"
            return f"--{self.flag} must be {where}, not {value!r}"
        if self.fraction:
            lo, lo_open, hi, hi_open = self.fraction
            if (value <= lo if lo_open else value < lo) or (value >= hi if hi_open else value > hi):
                return (f"--{self.flag} is a fraction in {'(' if lo_open else '['}{lo:g}, {hi:g}"
                        f"{')' if hi_open else ']'}, not {value!r} (write 0.95 for 95%)")
        return None


def rules(root=ROOT):
    """{setting name ('p_ratio'): Rule} for every flag whose accepted values the source states."""
    text = "\n".join(p.read_text() for p in sorted((Path(root) / "system").glob("*.cpp")))
    named = {m.group(1): m.group(2) for m in NAMED_RANGE.finditer(text)}
    found = {}
    matches = list(OPTION.finditer(text))
    for i, m in enumerate(matches):
        # The option's statement: up to the next add_option (lambdas hold ';' of their own).
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[m.end():end]
        names = [n.lstrip("!")[2:] for n in m.group(2).split(",") if n.lstrip("!").startswith("--")]
        if not names or names[0].startswith("no-"):
            continue
        rule = Rule(names[0], m.group(1) == "flag")
        rule.finite = "check(finite)" in body
        rule.size = "check(size)" in body
        bounds = [b for b in re.findall(r"check\((\w+)\)", body) if b in named]
        rng = RANGE.search(body)
        args = rng.group(1) if rng else (named[bounds[0]] if bounds else None)
        if args:
            lo, hi = _split_bounds(args)[:2]
            try:
                rule.lo, rule.hi = _number(lo), _number(hi)
                rule.whole = "." not in lo + hi
            except (ValueError, SyntaxError):
                pass
        members = MEMBERS.search(body)
        if members:
            rule.members = set(re.findall(r'"([^"]*)"', members.group(1)))
        frac = FRACTION.search(body)
        if frac and "lambda" not in frac.group(1) and frac.group(1).count(",") == 3:
            lo, lo_open, hi, hi_open = (s.strip() for s in frac.group(1).split(","))
            rule.fraction = (float(lo), lo_open == "true", float(hi), hi_open == "true")
        found[names[0].replace("-", "_")] = rule
    return found
