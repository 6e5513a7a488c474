#!/usr/bin/env python3
"""Run one test suite, show its output, and record how many tests passed and failed.

    python3 tools/suite.py NAME -- command [args...]

The counts are read from the runner's own closing lines (the plain "N passed, M failed" line,
pytest, node --test, ctest, go test -v); they go to build/results/NAME as "passed failed".
A suite that exits non-zero without reporting a failure counts one failure, so a crash or a
build error is never read as success. Exits with the command's status.
"""
import os
import re
import subprocess
import sys

RESULTS = os.path.join("build", "results")

PLAIN = re.compile(r"^(?:[\w.-]+: )?(\d+) passed, (\d+) failed(?:, \d+ skipped)?\s*$")
PYTEST = re.compile(r"^=+ (.*) in [\d.]+s.* =+$")
NODE_PASS = re.compile(r"^# pass (\d+)$")
NODE_FAIL = re.compile(r"^# fail (\d+)$")
CTEST = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)")
GO_PASS = re.compile(r"^\s*--- PASS: ")
GO_FAIL = re.compile(r"^\s*--- FAIL: ")


def count(lines):
    """Return (passed, failed) from the last summary a known runner printed, or None."""
    for line in reversed(lines):
        m = PLAIN.match(line)
        if m:
            return int(m.group(1)), int(m.group(2))
    for line in reversed(lines):
        m = PYTEST.match(line)
        if m and ("passed" in m.group(1) or "failed" in m.group(1) or "error" in m.group(1)):
            parts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (\w+)", m.group(1)))
            return parts.get("passed", 0), parts.get("failed", 0) + parts.get("error", 0) + parts.get("errors", 0)
    passed = [int(m.group(1)) for m in map(NODE_PASS.match, lines) if m]
    failed = [int(m.group(1)) for m in map(NODE_FAIL.match, lines) if m]
    if passed or failed:
        return sum(passed), sum(failed)
    ctest = [m for m in map(CTEST.match, lines) if m]
    if ctest:
        failed, total = int(ctest[-1].group(1)), int(ctest[-1].group(2))
        return total - failed, failed
    go_pass = sum(1 for line in lines if GO_PASS.match(line))
    go_fail = sum(1 for line in lines if GO_FAIL.match(line))
    if go_pass or go_fail:
        return go_pass, go_fail
    return None


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: suite.py NAME -- command [args...]")
    name, cmd = argv[0], argv[2:]
    os.makedirs(RESULTS, exist_ok=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", bufsize=1)
    lines = []
    with open(os.path.join(RESULTS, name + ".log"), "w") as log:
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            log.write(line)
            lines.append(line.rstrip("\n"))
    status = proc.wait()
    counted = count(lines)
    passed, failed = counted if counted else (0, 0)
    if status != 0 and failed == 0:
        failed = 1
        print(f"{name}: exited with status {status}", flush=True)
    if counted is None and status == 0:
        print(f"{name}: no test count found in the output", flush=True)
        failed = 1
    with open(os.path.join(RESULTS, name), "w") as f:
        f.write(f"{passed} {failed}\n")
    print(f"{name}: {passed} passed, {failed} failed", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
