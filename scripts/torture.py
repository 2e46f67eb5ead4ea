#!/usr/bin/env python3
"""Crash torture: many power-failure rounds for one engine-CC pair, each recovered and checked.

A round runs rundb in power-failure mode with acknowledgement files and a random crash point
(after the Nth fence, at a random time, or at a named point inside the engine's protocol, with
a random share of dirty lines evicted early), sometimes crashes the recovery itself too, then
recovers for real and checks: every acknowledged transaction present, none partly visible, no
torn tuple (per-image checksums), the engine's own invariants. Prints a summary and exits 1 on
any violation, 2 on a round that failed to run, 4 when the rounds tested too little (fewer than
--min-crashed-share of them crashed after the load, or fewer than --min-acked acknowledged
transactions were checked).

    .venv/bin/python scripts/torture.py --engine mmdb --cc no_wait --rounds 1000
    .venv/bin/python scripts/torture.py --engine mmdb --cc silo --rounds 20 --fault drop-flush
"""
import argparse
import collections
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRASH_EXIT = 86
# Named crash points inside each engine's persistence protocol.
POINTS = {
    "mmdb": ["mmdb.before_log_fence", "mmdb.after_log_fence", "mmdb.checkpoint_before_header"],
    "zen": ["zen.slot_header", "zen.before_fence", "zen.after_fence", "zen.after_lp_flush"],
    "nvmvcc": ["nvmvcc.version_header", "nvmvcc.head_cas", "nvmvcc.payloads", "nvmvcc.commit_status"],
    # WBL: a commit's versions flushed but not fenced, fenced but no record yet (between the
    # version persist and the record), the group commit's record appended but not fenced, and
    # durable.
    "wbl": ["wbl.before_version_fence", "wbl.versions_persisted", "wbl.record_before_fence",
            "wbl.record_durable"],
    # FOEDUS: a log batch flushed but not fenced, fenced, the durable-epoch marker flushed but
    # not fenced; the gleaner after its first new page, before and after the snapshot metadata.
    "foedus": ["foedus.log_before_fence", "foedus.log_after_fence", "foedus.marker_before_fence",
               "foedus.gleaner_mid_write", "foedus.gleaner_before_metadata",
               "foedus.gleaner_after_metadata"],
    # NVCaracal: an epoch's inputs logged, halfway through core 0's execution, the cores'
    # commits fenced but no epoch number, the epoch number flushed between the two fences.
    "nvcaracal": ["nvcaracal.logged", "nvcaracal.execute", "nvcaracal.before_epoch_commit",
                  "nvcaracal.epoch_commit"],
}
# Flags an engine's rounds run with: FOEDUS acknowledges a commit once its epoch is durable, so
# short epochs (and gleanings) give a round enough acknowledged transactions to check.
ENGINE_FLAGS = {"foedus": ["--epoch-ms", "5", "--gleaner-interval-ms", "100"]}
# Where an injected fault's broken step can show, per engine and fault: its rounds crash at a
# named point, there three times in four, and never write back every dirty line early (which
# would land every line a missing fence left in flight). FOEDUS's dropped log-batch fence shows
# only when the durable-epoch marker lands without the batch it covers: a crash between the
# marker's flush and its fence.
FAULT_POINTS = {("foedus", "drop-fence"): ["foedus.marker_before_fence"]}
# Engines that fence per batch (FOEDUS's log writer, about one batch a millisecond), not per
# transaction: their fence counts and point hits are drawn 20 times smaller, so that a round's
# crash falls inside its run.
FEW_FENCES = {"foedus"}
# Named points inside recovery, for the rounds that crash the recovery itself (else it crashes
# after a random fence or time). WBL: after the scan erased the versions above cp, after the
# deletes were resolved, before and inside the append of the record that closes recovery.
RECOVERY_POINTS = {
    "nvcaracal": ["nvcaracal.replay"],  # halfway through the replay of the crashed epoch
    "wbl": ["wbl.recovery_scanned", "wbl.recovery_deletes", "wbl.recovery_before_record",
            "wbl.record_before_fence"],
    # FOEDUS: the restart's gleaning written, its snapshot metadata not yet.
    "foedus": ["foedus.restart", "foedus.gleaner_mid_write"],
}


EADR_POINTS = {"zen.slot_header"}
# Zen+'s exclusive stage (storage/engines/zen/lrt.h), for Zen with a multi-version method: G-EX
# held and the others drained, the privileged transaction's versions flushed but not fenced, and
# the end-of-stage reclamation of every thread's garbage (before it and before G-EX is unlocked),
# and each whole empty page it returns to the page manager (its page-table entry just cleared).
EXCLUSIVE_POINTS = ["zen.exclusive_enter", "zen.exclusive_persist", "zen.exclusive_reclaim",
                    "zen.exclusive_free_page", "zen.exclusive_exit"]
MV_CCS = {"mvcc", "hekaton", "cicada"}


def points_for(engine, cc, prefix):
    pts = POINTS.get(engine, []) + (EXCLUSIVE_POINTS if engine == "zen" and cc in MV_CCS else [])
    return [p for p in pts if p.startswith(prefix)]


def exclusive_flags(rows):
    # A long update of 2/5 of the table on thread 0 after every 20 normal transactions; at a
    # low alpha it is Zen+'s privileged transaction each time (condition 1), so the stage is
    # entered within the first long one.
    return ["--long-txn", "update", "--long-txn-rows", str(max(1, rows * 2 // 5)),
            "--long-txn-gap", "20", "--zen-plus", "on", "--lrt-alpha", "0.05"]


def build(engine, cc):
    subprocess.run(["make", "-s", "-j2", f"ENGINE={engine}", f"CC_ALG={cc}"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "build", f"{engine}-{cc}", "rundb")


def run(cmd, timeout=120):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def crash_spec(rng, engine, fault, points_all, prefix=""):
    # An injected fault breaks a protocol step, so crash mostly at the protocol's named points.
    kinds = ["fence", "time", "point", "point", "point", "point"] if fault != "none" else \
        ["fence", "fence", "time", "point"]
    kind = "point" if prefix or (engine, fault) in FAULT_POINTS else rng.choice(kinds)
    if kind == "fence":
        n = rng.choice([rng.randint(1, 50), rng.randint(50, 2000), rng.randint(2000, 20000)])
        if engine in FEW_FENCES:
            n = max(1, n // 20)
        elif engine == "nvcaracal":  # about ten fences per epoch, a few dozen epochs per round
            n = rng.randint(2, 300)
        return f"fence:{n}", f"fence:{len(str(n))}-digit"
    if kind == "time":
        ms = rng.randint(50, 1500)
        return f"time:{ms}", "time"
    # zen.slot_header matters under eADR, where every store persists; an injected flush or
    # fence bug runs under ADR, where the protocol's own points are the ones to hit.
    points = [p for p in points_all if fault == "none" or p not in EADR_POINTS]
    if (engine, fault) in FAULT_POINTS and not prefix and rng.random() < 0.75:
        points = FAULT_POINTS[(engine, fault)]
    point = rng.choice(points or ["none"])
    # The exclusive stage is entered once per long transaction: its points are hit a few times.
    hit = rng.randint(1, 3) if point in EXCLUSIVE_POINTS else \
        rng.choice([1, rng.randint(2, 50), rng.randint(50, 3000)])
    if engine in FEW_FENCES:
        hit = max(1, hit // 20)
    elif engine == "nvcaracal":  # each point is hit once per epoch
        hit = rng.randint(1, 30)
    return f"point:{point}:{hit}", f"point:{point}"


def acked_anything(workdir):
    for f in os.listdir(workdir):
        if f.startswith("ack.") and os.path.getsize(os.path.join(workdir, f)) > 0:
            return True
    return False


NVCARACAL_EPOCH = 500


def nvcaracal_flags(rng):
    return ["--hot-requests", str(rng.choice([0, 4, 8])),
            "--update-bytes", str(rng.choice([0, 100]))]


def check_replayed_epoch(binary, workload, j, v):
    """NVCaracal recovered an epoch beyond the acknowledged ones (replayed from its logged
    inputs): its database must be that of a run of exactly that many epochs (determinism)."""
    epoch = j["recovery"]["recovered_epoch"]
    args = list(workload)
    for flag in ("--crash-at", "--evict-prob", "--fault", "--ack-file", "--duration"):
        i = args.index(flag)
        del args[i:i + 2]
    args.remove("--power-fail")
    threads = int(args[args.index("--threads") + 1])
    img = args[args.index("--nvm-path") + 1] + ".ref"
    args[args.index("--nvm-path") + 1] = img
    rc, out, err = run([binary] + args + ["--txns", str(epoch * NVCARACAL_EPOCH // threads)])
    if os.path.exists(img):
        os.unlink(img)
    if rc != 0:
        return {**v, "violations": v["violations"] + 1, "examples": v["examples"] + [f"reference run exited {rc}: {err[-200:]}"]}
    ref = json.loads(out)["results"]["engine"]
    if ref["last_epoch"] != epoch or ref["state_checksum"] != j["recovery"]["state_checksum"]:
        return {**v, "violations": v["violations"] + 1,
                "examples": v["examples"] + [f"replayed epoch {epoch}: another database than a run of {epoch} epochs "
                                             f"({' '.join(args)})"]}
    return v


def one_round(binary, engine, rnd, rng, args, workdir):
    img = os.path.join(workdir, "img")
    ack = os.path.join(workdir, "ack")
    for f in os.listdir(workdir):
        os.unlink(os.path.join(workdir, f))
    spec, label = crash_spec(rng, engine, args.fault, points_for(engine, args.cc, args.point_prefix),
                             args.point_prefix)
    # An injected flush or fence bug leaves lines flushed but unfenced, or never flushed: with no
    # early eviction they are simply lost at the crash, with the rest of their transaction, and
    # the bug cannot show. Fault rounds therefore always evict some dirty lines early.
    evict = rng.choice([0.1, 0.5] if (engine, args.fault) in FAULT_POINTS else
                       [0.1, 0.5, 1.0] if args.fault != "none" else [0.0, 0.0, 0.1, 0.5, 1.0])
    # Under eADR every store is persistent, so a crash lands between any two stores of the
    # protocol (a torn header, half a tuple); an injected flush/fence bug cannot show there.
    domain = "eadr" if args.fault == "none" and rng.random() < 0.25 else "adr"
    if domain == "eadr":
        label += " eadr"
    # A DRAM budget that holds about a third of the rows: the rest live in volatile NVM.
    dram = 2 * args.threads * 2**20 + args.rows * 400
    if engine == "nvcaracal":  # its epochs' transient pools come on top (NVCARACAL_EPOCH below)
        dram += 64 * 2**20
    common = ["--rows", str(args.rows), "--nvm-path", img, "--threads", str(args.threads),
              "--dram-size", str(dram)]
    if engine == "nvcaracal":  # recovery sizes its pools and logs by the epoch too
        common += ["--epoch-txns", str(NVCARACAL_EPOCH)]
    workload = common + ["--read-ratio", str(rng.choice([0.0, 0.2, 0.5])),
                         "--theta", str(rng.choice([0.0, 0.6, 0.9])),
                         "--warmup", "0", "--duration", str(args.duration),
                         "--seed", str(rnd + 1), "--ack-file", ack, "--power-fail",
                         "--crash-at", spec, "--evict-prob", str(evict), "--fault", args.fault,
                         "--persist-domain", domain] + ENGINE_FLAGS.get(engine, [])
    if any(p in spec for p in EXCLUSIVE_POINTS):
        workload += exclusive_flags(args.rows)
    if engine == "nvcaracal":  # small epochs, some on hot rows, reads that modify
        workload += nvcaracal_flags(rng)
    rc, _, err = run([binary] + workload)
    if rc not in (0, CRASH_EXIT):
        return {"error": f"run exited {rc}: {err.strip()[-400:]}", "label": label}
    crashed = rc == CRASH_EXIT
    # Sometimes crash the recovery as well, then recover again: recovery must be idempotent.
    recovery_crash = rng.random() < args.recovery_crash_share
    if recovery_crash:
        rspec = rng.choice([f"fence:{rng.randint(1, 20)}", f"time:{rng.randint(1, 40)}"] +
                           [f"point:{p}" for p in RECOVERY_POINTS.get(engine, [])])
        if rspec.startswith("point:"):
            label += " + recovery " + rspec
        rc2, out2, err2 = run([binary] + common + ["--recover", "--power-fail", "--crash-at", rspec])
        if rc2 == 3:  # the recovery ran to its end and found violations of the engine's invariants
            inv = json.loads(out2)["invariants"]
            return {"label": label + " (in the crashed recovery)", "crashed": crashed, "during_load": False,
                    "recovery_crash": recovery_crash, "violations": inv["violations"],
                    "examples": inv["examples"][:3], "acked": 0}
        if rc2 not in (0, CRASH_EXIT) and "no complete" not in err2:
            return {"error": f"crashed recovery exited {rc2}: {err2.strip()[-400:]}", "label": label}
    # Power may fail after the load but before the first acknowledgement: nothing to verify
    # then, but the engine's invariants are still checked.
    verify = ["--verify-ack", ack] if acked_anything(workdir) else []
    rc3, out, err3 = run([binary] + common + ["--recover"] + verify)
    if rc3 == 1 and "no complete" in err3 and not acked_anything(workdir):
        # Power failed while loading, before the database was ever durable: nothing to recover.
        return {"label": label + " (during load)", "crashed": False, "during_load": crashed,
                "recovery_crash": recovery_crash, "violations": 0, "examples": [], "acked": 0}
    if rc3 not in (0, 3):
        return {"error": f"recovery exited {rc3}: {err3.strip()[-400:]}", "label": label}
    j = json.loads(out)
    v = j.get("verification", {"violations": 0, "examples": [], "acked_txns": 0})
    if engine == "nvcaracal" and verify and not v.get("checked_digest", True):
        v = check_replayed_epoch(binary, workload, j, v)
    inv = j["invariants"]
    return {"label": label, "crashed": crashed, "during_load": False,
            "recovery_crash": recovery_crash, "violations": v["violations"] + inv["violations"],
            "examples": v["examples"][:3] + inv["examples"][:3], "acked": v["acked_txns"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="mmdb")
    ap.add_argument("--cc", default="no_wait")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=float, default=1.5)
    ap.add_argument("--fault", default="none",
                    choices=["none", "drop-flush", "drop-fence", "reorder-lp", "early-record",
                             "skip-epoch-fence", "wrong-parity"])
    ap.add_argument("--recovery-crash-share", type=float, default=0.2)
    ap.add_argument("--point-prefix", default="",
                    help="crash only at named points starting with this (e.g. zen.exclusive_)")
    # Floors on what the rounds tested: a run whose rounds never reached their crash point (or
    # all crashed while loading) checked no acknowledged transaction against a crash and must
    # not pass. --min-crashed-share of the rounds must crash after the load, and at least
    # --min-acked acknowledged transactions be checked in all (0 and 0 turn the floors off).
    ap.add_argument("--min-crashed-share", type=float, default=0.34)
    ap.add_argument("--min-acked", type=int, default=1)
    ap.add_argument("--stop-on-violation", action="store_true",
                    help="stop at the first round with a violation (to count rounds to catch a fault)")
    args = ap.parse_args()
    if args.rounds < 1 or args.rows < 100 or args.threads < 1 or args.duration <= 0:
        ap.error("--rounds >= 1, --rows >= 100, --threads >= 1 and --duration > 0 are required")
    if args.point_prefix and not points_for(args.engine, args.cc, args.point_prefix):
        ap.error(f"no crash point of {args.engine}-{args.cc} starts with {args.point_prefix}")
    binary = build(args.engine, args.cc)
    rng = random.Random(args.seed)
    workdir = tempfile.mkdtemp(prefix="nvt-torture-", dir="/dev/shm")
    points = collections.Counter()
    totals = collections.Counter()
    first_violation = None
    try:
        for rnd in range(args.rounds):
            r = one_round(binary, args.engine, rnd, rng, args, workdir)
            points[r["label"]] += 1
            if "error" in r:
                print(f"round {rnd}: ERROR {r['error']}", file=sys.stderr)
                totals["errors"] += 1
                continue
            totals["rounds"] += 1
            totals["crashed"] += r["crashed"]
            totals["during_load"] += r["during_load"]
            totals["checked_rounds"] += r["acked"] > 0
            totals["recovery_crashes"] += r["recovery_crash"]
            totals["acked"] += r["acked"]
            if r["violations"]:
                totals["violating_rounds"] += 1
                totals["violations"] += r["violations"]
                if first_violation is None:
                    first_violation = rnd + 1
                print(f"round {rnd}: {r['violations']} violations at {r['label']}: {r['examples']}",
                      file=sys.stderr)
                if args.stop_on_violation:
                    break
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    summary = {"engine": args.engine, "cc": args.cc, "fault": args.fault,
               "rounds": totals["rounds"], "errors": totals["errors"],
               "crashed_rounds": totals["crashed"], "crashed_during_load": totals["during_load"],
               "recovery_crashes": totals["recovery_crashes"],
               "rounds_with_acks_checked": totals["checked_rounds"],
               "acked_txns_checked": totals["acked"], "distinct_crash_points": len(points),
               "crash_points": dict(sorted(points.items())),
               "violating_rounds": totals["violating_rounds"], "violations": totals["violations"],
               "first_violation_round": first_violation}
    # The floors do not apply to a run stopped at its first violation (it found what it sought).
    min_crashed = math.ceil(args.min_crashed_share * args.rounds)
    floors_met = args.stop_on_violation and totals["violations"] or (
        totals["crashed"] >= min_crashed and totals["acked"] >= args.min_acked)
    summary["floors"] = {"min_crashed_rounds": min_crashed, "min_acked_txns": args.min_acked,
                         "met": bool(floors_met)}
    print(json.dumps(summary, indent=2))
    if totals["errors"]:
        sys.exit(2)
    if totals["violations"]:
        sys.exit(1)
    if not floors_met:
        print(f"torture tested too little: {totals['crashed']} rounds crashed after the load "
              f"(floor {min_crashed}), {totals['acked']} acknowledged transactions checked "
              f"(floor {args.min_acked})", file=sys.stderr)
        sys.exit(4)
    sys.exit(0)


if __name__ == "__main__":
    main()
