""".venv/bin/python -m experiments {list,run,check,report}. User errors end in one line on stderr starting
"error:", never a traceback: exit 2 for a bad spec or command line (usage), 1 for a results
folder that cannot be used (or is in use by another sweep) or a machine without room for the
scale, 130 when interrupted; `check` exits 3 when a claim that ran was not reproduced."""
import argparse
import os
import shlex
import signal
import sys
import time
from collections import Counter

from experiments.capabilities import detect
from experiments.planner import DEFAULT_REPEAT, plan, reasons
from experiments.results import ResultsError, writable_dir
from experiments.select import UsageError, parse_only
from experiments.specs import SpecError, load_all, load_spec


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's one error form: 'error: ...' on one line, exit 2."""

    def error(self, message):
        print(f"error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def positive_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def cmd_list(args):
    if args.markdown:  # the README's table (experiments/spectable.py)
        from experiments.spectable import markdown
        from experiments.specs import all_specs
        print(markdown(all_specs()), end="")
        return 0
    caps = detect()
    print(f"testbed today: {caps.describe()}\n")
    ready = 0
    specs, problems = load_all()
    for spec in specs:
        also = f" (also {', '.join(spec['also'])})" if spec["also"] else ""
        print(f"{spec['name']}: {spec['paper']} {spec['figure']}{also}: {spec['title']}")
        for scale in spec["scales"]:
            p = plan(spec, scale, repeat=1, caps=caps)
            print(f"  {scale}: {len(p.runs)} runs per repetition, {len(p.pending)} pending, "
                  f"binaries {', '.join('-'.join(pair) for pair in p.pairs) or 'none'}")
        p = plan(spec, "small", repeat=1, caps=caps)
        ready += bool(p.runs)
        total = len(p.runs) + len(p.pending)
        counts = Counter(r for _, e in p.pending for r in reasons(e))
        for text, count in counts.most_common():
            share = "all" if count == total else f"{count} of {total}"
            print(f"  pending ({share} configs): {text}")
    print(f"\n{ready} specs can run today (some configurations at least); the rest wait for "
          f"what they name.")
    if problems:
        raise SpecError(problems)
    return 0


def python():
    """This interpreter as the user would type it (.venv/bin/python from the repository)."""
    exe = sys.executable
    return os.path.relpath(exe) if exe.startswith(os.getcwd() + os.sep) else exe


def resume_command(argv):
    """The command line that ran this sweep, which also resumes it."""
    return shlex.join([python(), "-m", "experiments", *argv])


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM ends a sweep the way Ctrl-C does


def say(line):
    print(line, flush=True)  # progress shows as it happens, also through a pipe


def cmd_run(args):
    from experiments.lock import sweep_lock
    from experiments.room import problems
    from experiments.runner import INTERRUPTED, run_sweep

    signal.signal(signal.SIGTERM, _terminate)
    spec = load_spec(args.spec)
    # Names, values, pairs, --only and room are checked before anything is built.
    p = plan(spec, args.scale, args.repeat)
    select = parse_only(args.only, p.runs) if args.only else None
    chosen = [r for r in p.runs if select is None or select(r)]
    if args.dry_run:
        from experiments.dryrun import describe
        print(f"{spec['name']} [{args.scale}]: dry run, nothing is built or run")
        for line in describe(p, os.path.join(args.results, spec["name"]), chosen):
            print(line)
        return 0
    # Room on this machine, where local runs (and a LocalCluster's) put their images.
    here = args.executor == "local" or (args.cluster == "local" and not args.scheduler)
    room = problems(chosen, args.nvm_dir, args.scale) if here else []
    if room:
        raise ResultsError(room[0])
    writable_dir(args.results)
    # The folder's lock before the first build: a second sweep into it stops at once.
    with sweep_lock(os.path.join(args.results, spec["name"]), resume_command(args.argv)):
        # Build the reference rundb first so flags are checked against the current source.
        say("building mmdb-no_wait, whose --help the flags are checked against ...")
        start = time.monotonic()
        caps = detect(build=True)
        say(f"building mmdb-no_wait ... done in {time.monotonic() - start:.0f} s")
        p = plan(spec, args.scale, args.repeat, caps=caps)
        slurm = {"queue": args.slurm_queue, "walltime": args.slurm_walltime,
                 "memory": args.slurm_memory, "account": args.slurm_account}
        summary = run_sweep(p, args.results, executor=args.executor, scheduler=args.scheduler,
                            workers=args.workers, nvm_dir=args.nvm_dir, timeout=args.timeout,
                            cluster=args.cluster, hosts=args.hosts and args.hosts.split(","),
                            slurm=slurm, select=select, command=resume_command(args.argv),
                            echo=say)
    if summary.interrupted:
        print(f"interrupted: {summary.ran} run(s) finished now, {summary.ran + summary.skipped} of "
              f"{summary.planned} done in all (table: {summary.csv}); resume with: "
              f"{resume_command(args.argv)}", file=sys.stderr)
        return INTERRUPTED
    print(f"ran {summary.ran}, skipped {summary.skipped} already done, "
          f"failed {len(summary.failed)}")
    for key, error in summary.failed:
        print(f"  failed {key}: {error}", file=sys.stderr)
    print(f"table: {summary.csv}")
    for fig in summary.figures:
        print(f"figure: {fig}")
    if spec["claims"]:
        from experiments.claims import check_spec, print_verdicts
        print_verdicts(check_spec(spec, args.results))
    return 1 if summary.failed else 0


NOT_ALL_REPRODUCED = 3  # `check`: a claim that ran was not reproduced (docs/claims.md)


def cmd_check(args):
    from experiments.claims import NOT_RUN, REPRODUCED, check_spec, print_verdicts

    if not os.path.isdir(args.results):
        raise ResultsError(f"no results folder {args.results!r}: run a sweep first "
                           f"({python()} -m experiments run SPEC --results {args.results})")
    specs = [load_spec(name) for name in args.specs] if args.specs else \
        [s for s in load_all()[0] if os.path.isdir(os.path.join(args.results, s["name"]))]
    verdicts = [v for spec in specs for v in check_spec(spec, args.results)]
    print_verdicts(verdicts)
    ran = [v for v in verdicts if v.verdict != NOT_RUN]
    return 0 if all(v.verdict == REPRODUCED for v in ran) else NOT_ALL_REPRODUCED


def cmd_report(args):
    from experiments.report import write_report

    if not os.path.isdir(args.results):
        raise ResultsError(f"no results folder {args.results!r}: run a sweep first "
                           f"({python()} -m experiments run SPEC --results {args.results})")
    path, count = write_report(args.results)
    print(f"report: {path} ({count} sweeps)")
    return 0


def main(argv=None):
    from experiments.runner import DEFAULT_NVM_DIR

    ap = Parser(prog=f"{python()} -m experiments",
                description="Run nvtestbed sweeps and plot them.")
    sub = ap.add_subparsers(dest="command", required=True)
    lister = sub.add_parser("list", help="list specs, their run counts and pending entries")
    lister.add_argument("--markdown", action="store_true",
                        help="print the README's table of specs instead (small scale, from "
                             "the specs alone)")
    run = sub.add_parser("run", help="build, run (resuming) and plot one sweep",
                         formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    run.add_argument("spec", help="spec name in experiments/specs, or a path to a .yaml")
    run.add_argument("--scale", default="small", help="a scale the spec defines (small, paper)")
    run.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help="repetitions per configuration")
    run.add_argument("--executor", choices=["local", "dask"], default="local")
    run.add_argument("--scheduler", help="dask scheduler address (scheduler and workers need PYTHONPATH=<this repo>); "
                          "a LocalCluster when omitted")
    run.add_argument("--cluster", choices=["local", "ssh", "slurm"], default="local",
                     help="with --executor dask and no --scheduler: the cluster to start "
                          "(experiments/clusters.py)")
    run.add_argument("--workers", type=int, default=1,
                     help="workers (LocalCluster processes or Slurm jobs), each running one "
                          "benchmark at a time")
    run.add_argument("--hosts", help="--cluster ssh: SCHEDULER,WORKER[,WORKER...] host names")
    run.add_argument("--slurm-queue", help="--cluster slurm: partition")
    run.add_argument("--slurm-account", help="--cluster slurm: account")
    run.add_argument("--slurm-walltime", default="02:00:00", help="--cluster slurm: per job")
    run.add_argument("--slurm-memory", default="16GB", help="--cluster slurm: per job")
    run.add_argument("--results", default="results", help="results folder")
    run.add_argument("--nvm-dir", default=DEFAULT_NVM_DIR,
                     help="where NVM images go (a DAX mount for real NVM)")
    run.add_argument("--timeout", type=positive_seconds, default=1800,
                     help="seconds before a run is killed (more than 0)")
    run.add_argument("--dry-run", action="store_true",
                     help="list the configurations, their count and a time estimate; build "
                          "and run nothing")
    run.add_argument("--only", metavar="KEY=VALUE[,...]",
                     help="run a subset: settings or labels, e.g. engine=zen,cc=silo|cicada "
                          "(the table and figures still cover every finished run)")
    check = sub.add_parser("check", help="check the specs' claims on their sweeps' tables (the scorecard)")
    check.add_argument("specs", nargs="*", help="spec names (default: every spec with results)")
    check.add_argument("--results", default="results")
    report = sub.add_parser("report", help="write RESULTS/report.html")
    report.add_argument("--results", default="results")
    args = ap.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return {"list": cmd_list, "run": cmd_run, "check": cmd_check,
                "report": cmd_report}[args.command](args)
    except SpecError as exc:
        for line in exc.args[0]:
            print(f"error: {line}", file=sys.stderr)
        return 2
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ResultsError, OSError) as exc:  # OSError: a results file that cannot be written
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # before any run started (reading specs, building rundb)
        print(f"interrupted before any run finished; start again with: "
              f"{resume_command(args.argv)}", file=sys.stderr)
        return 130
