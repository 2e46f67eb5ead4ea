"""Sweeps over rundb binaries: specs, planner, runner/executors, results tables and report."""
