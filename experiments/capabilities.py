"""What the testbed can run today: engines, CC methods and ENGINE-CC pairs the Makefile builds
(a spec naming others is a spec error, unless it declares them pending), and the flags (with
their accepted values) a built rundb lists in --help, which the planner marks pending when a
spec declares them still to come."""
import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from experiments.results import ROOT

# Settings that choose the binary, the image folder or a two-step run rather than being
# flags rundb is given as they are.
NOT_FLAGS = ("engine", "cc", "nvm_dir", "build")

# Structural build variants a spec may ask for with `build:`: (engines that have it, make
# variables, suffix of the build folder). E.g. Zen's naive NVM space management (Figure 14).
BUILDS = {"naive": (("zen",), ["ZEN_NAIVE_ALLOC=1"], "-naive")}

# Where the missing piece is being built, so a pending reason says what to wait for.
ISSUES = {("workload", w): "issue 5" for w in ("tpcc", "smallbank")}

HELP_LINE = re.compile(r"^\s+(?:-\w,)?--([a-z0-9-]+)(?:\s+([A-Z]+)(?::(\S*))?)?")


@dataclass
class Capabilities:
    engines: set
    ccs: set
    flags: dict  # flag name without dashes -> set of accepted values, or None for any value
    source: str = ""  # which binary's --help the flags come from

    def describe(self):
        return (f"engines {' '.join(sorted(self.engines))}; cc {' '.join(sorted(self.ccs))}; "
                f"{len(self.flags)} flags from {self.source or 'nowhere'}")


def parse_help(text):
    """{'threads': None, 'profile': {'dram', ...}, 'recover': None, ...} from rundb --help."""
    flags = {}
    for line in text.splitlines():
        m = HELP_LINE.match(line)
        if not m or m.group(1) == "help":
            continue
        choices = re.search(r"\{([^}]*)\}", m.group(3) or "")
        flags[m.group(1)] = set(choices.group(1).split(",")) if choices else None
    return flags


def makefile_lists(root=ROOT):
    """(ENGINES, CC_ALGS) as the Makefile declares them."""
    text = (Path(root) / "Makefile").read_text()
    def words(name):
        m = re.search(rf"^{name}\s*:?=\s*(.*)$", text, re.M)
        return set(m.group(1).split()) if m else set()
    return words("ENGINES"), words("CC_ALGS")


@functools.lru_cache(maxsize=None)
def makefile_pairs(root=ROOT):
    """{(engine, cc)} as `make pairs` prints them; None when make cannot say."""
    try:
        proc = subprocess.run(["make", "-s", "--no-print-directory", "pairs"], cwd=root,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return {tuple(p.split("-", 1)) for p in proc.stdout.split() if "-" in p}


def pair_problem(engine, cc, pairs):
    """Why make cannot build ENGINE-CC (what each of the two goes with), or None."""
    if pairs is None or (engine, cc) in pairs:
        return None
    with_engine = sorted(c for e, c in pairs if e == engine)
    with_cc = sorted(e for e, c in pairs if c == cc)
    return (f"engine {engine} with cc {cc} is not a pair make builds ({engine} runs "
            f"{', '.join(with_engine) or 'nothing'}; {cc} runs on {', '.join(with_cc) or 'nothing'}; "
            f"`make pairs` lists them)")


def reference_binary(root=ROOT, build=False):
    """A rundb to read --help from: mmdb-no_wait (built first when asked), else the newest."""
    ref = Path(root) / "build" / "mmdb-no_wait" / "rundb"
    if build:
        subprocess.run(["make", "-s", "-j2", "ENGINE=mmdb", "CC_ALG=no_wait"], cwd=root,
                       capture_output=True)
    if ref.is_file():
        return ref
    built = sorted((Path(root) / "build").glob("*/rundb"), key=lambda p: p.stat().st_mtime)
    return built[-1] if built else None


def detect(root=ROOT, build=False):
    engines, ccs = makefile_lists(root)
    binary = reference_binary(root, build)
    flags = {}
    if binary:
        proc = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30)
        flags = parse_help(proc.stdout)
    return Capabilities(engines, ccs, flags, str(binary.relative_to(root)) if binary else "")


def _hint(kind, value):
    issue = ISSUES.get((kind, value))
    return f" ({issue})" if issue else ""


def missing(caps, settings):
    """Why these settings cannot run today (empty when they can)."""
    reasons = []
    variant = settings.get("build")
    if variant is not None and (variant not in BUILDS or settings.get("engine") not in BUILDS[variant][0]):
        known = ", ".join(f"{k} ({'/'.join(v[0])})" for k, v in BUILDS.items())
        reasons.append(f"no build variant {variant!r} for engine {settings.get('engine')} "
                       f"(variants: {known})")
    if not caps.flags:
        return reasons + ["no built rundb to check flags against (run make)"]
    for key, value in settings.items():
        if key in NOT_FLAGS or key.startswith("label."):
            continue
        flag = key.replace("_", "-")
        if flag not in caps.flags:
            reasons.append(f"rundb has no flag --{flag}")
        elif caps.flags[flag] is not None and str(value) not in caps.flags[flag]:
            reasons.append(f"needs --{flag} {value}{_hint(key, str(value))}")
    return reasons
