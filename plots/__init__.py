"""One module per figure family; each has plot(df, ...) -> Figure and render(csv, ...) -> files.

Families: ycsb_bars (grouped bars), scalability (lines against a swept setting), stacked
(recovery steps, memory breakdowns), timeline (throughput over time), table (maximum or
at-a-point values, as the papers' tables)."""
import importlib

FAMILIES = ("ycsb_bars", "scalability", "stacked", "timeline", "table")
# Figures are saved at DPI and at most MAX_WIDTH inches wide (three panels of two-line tick
# labels need 12.6); the report shows the widest at the page's width and the others to scale,
# so the text of every figure has one size on the page.
DPI = 150
MAX_WIDTH = 13.0


def render(options, csv_path):
    """Draw one figure as a spec's plot entry says; returns the files written."""
    options = dict(options)
    module = importlib.import_module(f"plots.{options.pop('script')}")
    return module.render(csv_path, **options)


def render_all(spec, csv_path):
    """Every figure of a spec: the first is named after the table, the others by their name."""
    files = []
    for i, options in enumerate(spec["plots"]):
        options = dict(options)
        if i and "name" not in options:
            options["name"] = options["script"]
        files += render(options, csv_path)
    return files
