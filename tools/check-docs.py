#!/usr/bin/env python3
"""The `docs` suite: what the repository's Markdown promises can be found.

  - every relative link and image in a tracked *.md file points to a file or folder that exists
    (anchors and external URLs are not followed);
  - the top README's bench blocks are what bench/RESULTS.md and bench/results/ give
    (tools/readme-bench.py --check).

Prints one line per failure and ends with "docs: N passed, M failed".
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def tracked_markdown():
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if p and "node_modules/" not in p]


def links(path):
    """(line number, target) of every Markdown link outside code fences and inline code."""
    inside = False
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line.lstrip()):
                inside = not inside
                continue
            if inside:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                yield n, m.group(1)


def main():
    passed = failed = 0
    for md in tracked_markdown():
        for n, target in links(md):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue
            rel = target.split("#", 1)[0]
            if not rel:
                continue
            where = os.path.normpath(os.path.join(ROOT, rel.lstrip("/")) if rel.startswith("/")
                                     else os.path.join(ROOT, os.path.dirname(md), rel))
            if os.path.exists(where):
                passed += 1
            else:
                failed += 1
                print(f"FAIL {md}:{n}: link to {target} points to nothing")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "readme-bench.py"), "--check"], cwd=ROOT)
    if r.returncode == 0:
        passed += 1
    else:
        failed += 1
        print("FAIL README.md: bench blocks differ from the committed results")
    print(f"docs: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
