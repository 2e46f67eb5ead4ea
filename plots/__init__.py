"""One module per figure family; each has plot(df, ...) -> Figure and render(csv, ...) -> files."""
import importlib


def render(options, csv_path):
    """Draw a sweep's figure as its spec's `plot:` section says; returns the files written."""
    options = dict(options)
    module = importlib.import_module(f"plots.{options.pop('script')}")
    return module.render(csv_path, **options)
