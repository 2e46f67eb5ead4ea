"""Pass a test stage's output through unchanged and print its ten slowest tests at the end.

    some-stage 2>&1 | .venv/bin/python scripts/slowest.py STAGE

Understands the stages of scripts/test.sh: GoogleTest's `[       OK ] Suite.Test (N ms)` (and
FAILED lines), e2e's `ok   test_x.sh (N s)`, pytest's `--durations` lines (`N.NNs call  test`),
and otherwise times each `== name` header until the next one (the crash scripts' sections), or
takes the time a `== name (N s)` header states (sections that ran side by side).
"""
import re
import sys
import time

GTEST = re.compile(r"^\[\s+(?:OK|FAILED)\s+\] (\S+) \((\d+) ms\)")
E2E = re.compile(r"^(?:ok|FAIL)\s+(\S+) \((\d+) s\)")
PYTEST = re.compile(r"^(\d+(?:\.\d+)?)s (?:call|setup|teardown)\s+(\S+)")
HEADER = re.compile(r"^== (.+)")
TIMED_HEADER = re.compile(r"^== (.+) \((\d+(?:\.\d+)?) s\)$")  # a section that ran beside others


def main():
    stage = sys.argv[1] if len(sys.argv) > 1 else "stage"
    timed = {}  # test -> seconds (the largest seen: a retried test counts once)
    header, since = None, time.monotonic()

    def close_header(now):
        if header is not None:
            timed.setdefault(header, now - since)

    explicit = False  # a stage that reports its own times is not timed by headers
    for line in sys.stdin:
        sys.stdout.write(line)
        sys.stdout.flush()
        text = line.rstrip("\n")
        for pattern, scale, name_at in ((GTEST, 1e-3, 1), (E2E, 1.0, 1), (PYTEST, 1.0, 2)):
            m = pattern.match(text)
            if m:
                name = m.group(name_at)
                secs = float(m.group(2 if name_at == 1 else 1)) * scale
                timed[name] = max(timed.get(name, 0.0), secs)
                explicit = True
                break
        else:
            m = HEADER.match(text)
            if m and not explicit:
                now = time.monotonic()
                close_header(now)
                header, since = m.group(1), now
                stated = TIMED_HEADER.match(text)
                if stated:  # timed already: not by the headers
                    timed[stated.group(1)] = float(stated.group(2))
                    header = None
    if not explicit:
        close_header(time.monotonic())
    top = sorted(timed.items(), key=lambda kv: -kv[1])[:10]
    if top:
        print(f"== ten slowest of '{stage}':")
        for name, secs in top:
            print(f"   {secs:8.1f} s  {name}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
