#!/usr/bin/env python3
"""Sum the counts that tools/suite.py recorded and print the closing line of `make test`.

    python3 tools/total.py RESULTS_DIR SUITE...

A suite that left no record (its build failed before it ran) counts as one failure.
Exits non-zero when anything failed.
"""
import os
import sys


def main(argv):
    results, suites = argv[0], argv[1:]
    passed = failed = 0
    print()
    for name in suites:
        path = os.path.join(results, name)
        if os.path.exists(path):
            p, f = (int(x) for x in open(path).read().split())
        else:
            p, f = 0, 1
            print(f"  {name}: did not run")
        print(f"  {name:<10} {p:>6} passed {f:>4} failed")
        passed += p
        failed += f
    print(f"total: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
