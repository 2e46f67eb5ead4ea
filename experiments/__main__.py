from experiments.cli import main

# The guard matters: Dask's worker processes are spawned and re-import the main module.
if __name__ == "__main__":
    raise SystemExit(main())
