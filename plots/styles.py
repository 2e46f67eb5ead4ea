"""How series look, the same in every figure: a hue per engine (shades for its CC methods),
and, so that a series reads without colour (grayscale prints, colour-blind readers), a hatch
per bar series and a marker plus line style per line series, chosen by engine and CC method."""
import matplotlib.pyplot as plt
import numpy as np

# Engines in the papers' order (zen-vldb21 Figures 5-10 and 17-20: MMDB, WBL, FOEDUS, Zen; then
# the other papers' engines), each with a hue of its own so an engine keeps its colour in every
# figure; several series of one engine (its CC methods) are shades of that hue.
ENGINE_ORDER = ["mmdb", "wbl", "foedus", "zen", "nvmvcc", "nvcaracal"]
ENGINE_CMAPS = {"mmdb": "Blues", "wbl": "Oranges", "foedus": "Purples", "zen": "Reds",
                "nvmvcc": "Greens", "nvcaracal": "Greys"}
# The CC methods of `make pairs`, the papers' main one (Cicada) first.
CC_ORDER = ["cicada", "no_wait", "silo", "wait_die", "dl_detect", "occ", "tictoc", "hstore",
            "mvcc", "hekaton", "mcsi", "pgsi", "foedus", "caracal"]

# Bars: the engine draws the lines of the hatch, the CC method adds dots or crosses to them.
ENGINE_HATCHES = {"mmdb": "", "wbl": "///", "foedus": "\\\\\\", "zen": "xx", "nvmvcc": "--",
                  "nvcaracal": "||"}
CC_HATCHES = ["", "..", "oo", "++", "**", "OO", ".", "o", "O", "+", "*", ".o", "o*", "+."]
# Lines: the engine picks the line style, the CC method the marker.
ENGINE_DASHES = {"mmdb": "-", "wbl": "--", "foedus": "-.", "zen": ":", "nvmvcc": (0, (5, 1)),
                 "nvcaracal": (0, (3, 1, 1, 1, 1, 1))}
CC_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "H"]
# Series that are not engines or CC methods (a spec's labels): in the order given.
HATCHES = ["", "//", "..", "xx", "\\\\", "oo", "--", "++", "||", "**"]
DASHES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]


def engine_of(name):
    """The engine a series name starts with: 'zen+/cicada' (Zen+, a variant of Zen) -> 'zen'."""
    return str(name).split("/")[0].rstrip("+")


def _parts(name):
    """(engine, cc) a series name is made of ('zen/cicada', 'zen', 'silo'); None where unknown."""
    parts = str(name).split("/")
    parts[0] = engine_of(name)
    engine = parts[0] if parts[0] in ENGINE_CMAPS else None
    ccs = [p for p in parts if p in CC_ORDER and p != engine]
    known = all(p in ENGINE_CMAPS or p in CC_ORDER for p in parts)
    return (engine, ccs[0] if ccs else None) if known else (None, None)


def colours(names):
    """A colour per series name. A name whose first part is an engine ('wbl/cicada', 'wbl',
    'zen+/cicada') takes a shade of the engine's hue (darkest first, in the order given); any other name a
    colour of matplotlib's cycle. Shades run from 0.85 to 0.3 of the colour map, far enough
    apart to differ in grayscale too."""
    by_engine = {}
    for n in names:
        e = engine_of(n)
        if e in ENGINE_CMAPS:
            by_engine.setdefault(e, []).append(n)
    out, other = {}, 0
    for n in names:
        e = engine_of(n)
        if e in ENGINE_CMAPS:
            group = by_engine[e]
            k = group.index(n)
            shade = 0.85 - (0.55 * k / (len(group) - 1) if len(group) > 1 else 0.0)
            out[n] = plt.get_cmap(ENGINE_CMAPS[e])(shade)
        else:
            out[n] = f"C{other % 10}"
            other += 1
    return out


def _by_parts(names, of_engine, of_cc, fallback, join):
    """A style per name from its engine and CC method; names not made of those, or any clash in
    the figure, take the fallback list in the order given (so no two series look alike)."""
    out = {}
    for n in names:
        engine, cc = _parts(n)
        if engine is None and cc is None:
            break
        out[n] = join(of_engine.get(engine, of_engine[None]),
                      of_cc[CC_ORDER.index(cc) % len(of_cc)] if cc else of_cc[0])
    if len(out) < len(names) or len(set(map(str, out.values()))) < len(names):
        out = {n: fallback(i) for i, n in enumerate(names)}
    return out


def hatches(names):
    """{series: hatch} for bars: the same engine and CC method get the same hatch everywhere."""
    return _by_parts(names, {**ENGINE_HATCHES, None: ""}, CC_HATCHES,
                     lambda i: HATCHES[i % len(HATCHES)], lambda e, c: e + c)


def lines(names):
    """{series: {marker, linestyle}} for lines, the same for an engine and CC method everywhere."""
    return _by_parts(names, {**ENGINE_DASHES, None: "-"}, CC_MARKERS,
                     lambda i: {"marker": CC_MARKERS[i % len(CC_MARKERS)],
                                "linestyle": DASHES[i % len(DASHES)]},
                     lambda e, c: {"marker": c, "linestyle": e})


def gray(colour):
    """The luminance a grayscale print gives a colour (0 black, 1 white)."""
    r, g, b = np.asarray(plt.matplotlib.colors.to_rgb(colour))
    return 0.299 * r + 0.587 * g + 0.114 * b
