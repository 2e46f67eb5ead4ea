"""Issue 25's side-by-side measurements: every engine on the same terms, before and after.

    .venv/bin/python scripts/fair_measure.py [--before DIR] [--reps N] [--only PART]

Runs rundb binaries of this tree (and, with --before, of another checkout's build/, e.g. a
worktree of an earlier commit) on the same configurations, interleaved repetition after
repetition, and prints one table per part with medians and the counters that explain them:
  ro        Figure 5's read-only column: Zen, Zen+ and MMDB (Cicada), hit rate and NVM reads
  ledger    SmallBank and TPC-C NP at P=4 for every engine: DRAM data against database / P,
            overhead, hit rate, throughput, commit-to-durable latency
Not a test: it prints numbers, it does not judge them. Emulated NVM (optane-100 model).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMG = f"/dev/shm/nvtestbed-fair-{os.getpid()}.img"

COMMON = ["--threads", "2", "--p-ratio", "4", "--profile", "optane-100", "--seed", "1"]
RO = ["--workload", "ycsb", "--rows", "200000", "--requests", "16", "--read-ratio", "1.0",
      "--checkpoint", "none", "--warmup", "0.5", "--duration", "2"]
SB = ["--workload", "smallbank", "--warmup", "0.3", "--duration", "1.5"]
TPCC = ["--workload", "tpcc", "--warehouses", "1", "--warmup", "0.3", "--duration", "1.5"]
PAIRS = ["mmdb-cicada", "zen-cicada", "wbl-cicada", "nvmvcc-mcsi", "foedus-foedus", "nvcaracal-caracal"]


def rundb(root, pair, args):
    Path(IMG).unlink(missing_ok=True)
    cmd = [str(Path(root) / "build" / pair / "rundb"), *args, "--nvm-path", IMG]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    Path(IMG).unlink(missing_ok=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout)


def get(d, path, default=None):
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return default
        d = d[part]
    return d


def med(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def fmt(v, scale=1.0, digits=1):
    return "-" if v is None else f"{v * scale:.{digits}f}"


def measure(cases, reps):
    """cases: [(name, root, pair, args)]; returns {name: [json, ...]} run interleaved."""
    out = {name: [] for name, *_ in cases}
    for rep in range(reps):
        for name, root, pair, args in cases:
            d = rundb(root, pair, args)
            out[name].append(d)
            err = d.get("error")
            print(f"  rep {rep + 1} {name}: {err or fmt(get(d, 'results.throughput_tps'), 1e-3) + 'k txn/s'}",
                  file=sys.stderr)
    return out


def part_ro(roots, reps):
    print("\n## Figure 5, read-only (zen-vldb21): 200k rows, 16 requests, P=4, 2 threads")
    cases = []
    for theta in ("0", "0.6", "0.95"):
        for tag, root in roots:
            args = [*COMMON, *RO, "--theta", theta]
            cases.append((f"{tag} mmdb theta={theta}", root, "mmdb-cicada", args))
            cases.append((f"{tag} zen (default) theta={theta}", root, "zen-cicada", args))
            if tag == "after":
                cases.append((f"{tag} zen+ theta={theta}", root, "zen-cicada", [*args, "--zen-plus", "on"]))
    res = measure(cases, reps)
    print("| run | txn/s | Met-Cache hit rate | NVM read B/txn | DRAM B/txn | variant |")
    print("|---|---|---|---|---|---|")
    for name, ds in res.items():
        ok = [d for d in ds if "error" not in d]
        if not ok:
            print(f"| {name} | error: {ds[0]['error']} | | | | |")
            continue
        print(f"| {name} | {fmt(med([get(d, 'results.throughput_tps') for d in ok]), 1e-3)}k "
              f"| {fmt(med([get(d, 'results.cache_hit_rate') for d in ok]), 1, 2)} "
              f"| {fmt(med([get(d, 'results.per_txn.nvm_read_bytes') for d in ok]), 1e-3)}k "
              f"| {fmt(med([get(d, 'results.per_txn.dram_bytes') for d in ok]), 1e-3)}k "
              f"| {get(ok[0], 'config.engine_variant', '-')} |")


def part_ledger(roots, reps):
    print("\n## SmallBank and TPC-C NP (1 warehouse) at P=4, 2 threads: the DRAM ledger")
    cases = []
    for wl, args in (("smallbank", SB), ("tpcc", TPCC)):
        for pair in PAIRS:
            for tag, root in roots:
                # NVCaracal runs TPC-C's deterministic form (all five transactions); the others NP.
                extra = (["--tpcc-mix", "deterministic" if pair.startswith("nvcaracal") else "np"]
                         if wl == "tpcc" else [])
                if pair.startswith("nvcaracal") and wl == "tpcc":
                    extra += ["--epoch-txns", "2000"]  # SmallBank: the largest its budget holds
                cases.append((f"{tag} {wl} {pair}", root, pair, [*COMMON, *args, *extra]))
    res = measure(cases, reps)
    print("| run | txn/s | database | data cap (db/P) | DRAM data | DRAM overhead | hit rate | durable p50/p99 us |")
    print("|---|---|---|---|---|---|---|---|")
    mb = 1 / (1 << 20)
    for name, ds in res.items():
        ok = [d for d in ds if "error" not in d]
        if not ok:
            print(f"| {name} | error: {ds[0]['error']} | | | | | | |")
            continue
        d = ok[0]
        m = get(d, "results.memory_bytes", {})
        data = m.get("dram_data")  # absent before the ledger marked data and overhead
        print(f"| {name} | {fmt(med([get(x, 'results.throughput_tps') for x in ok]), 1e-3)}k "
              f"| {fmt(get(d, 'config.database_bytes'), mb, 2)} MB | {fmt(m.get('dram_data_cap'), mb, 2)} MB "
              f"| {fmt(data, mb, 2)} MB | {fmt(m.get('dram_overhead'), mb, 2)} MB "
              f"| {fmt(get(d, 'results.cache_hit_rate'), 1, 2)} "
              f"| {fmt(get(d, 'results.durable_latency_us.p50'))}/{fmt(get(d, 'results.durable_latency_us.p99'))} |")
        if "foedus" in name:  # the drop-pass cadence under DRAM pressure (its waits are new)
            print(f"|   gleanings {fmt(med([get(x, 'results.engine.gleaner_measured.runs') for x in ok]), 1, 0)}, "
                  f"workers' waits for a drop pass {fmt(med([get(x, 'results.engine.volatile_pages.waits') for x in ok]), 1, 0)} "
                  f"({fmt(med([get(x, 'results.engine.volatile_pages.wait_s') for x in ok]), 1, 2)} s), "
                  f"gleaner busy {fmt(med([get(x, 'results.engine.gleaner_measured.time_s') for x in ok]), 1, 2)} s, "
                  f"epoch advances asked {fmt(med([get(x, 'results.engine.epochs.asked') for x in ok]), 1, 0)} | | | | | | | |")
        if name.startswith("before"):
            big = sorted(m.get("dram_breakdown", {}).items(), key=lambda kv: -kv[1])[:4]
            print(f"|   before's largest DRAM entries: {', '.join(f'{k} {v * mb:.2f} MB' for k, v in big)} | | | | | | | |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", help="another checkout whose build/ holds the same pairs")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=["ro", "ledger"])
    args = ap.parse_args()
    roots = [("after", ROOT)] + ([("before", Path(args.before))] if args.before else [])
    print(f"# {' vs '.join(t for t, _ in roots)}; {args.reps} repetitions, medians; emulated NVM")
    if args.only in (None, "ro"):
        part_ro(roots, args.reps)
    if args.only in (None, "ledger"):
        part_ledger(roots, args.reps)


if __name__ == "__main__":
    main()
