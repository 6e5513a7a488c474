#!/usr/bin/env python3
"""Assemble bench/RESULTS.md from the per-implementation tables in bench/results/*.md.

Each implementation's bench writes only its own file, so benches can run (and be re-run) one at a
time; this keeps the report in one place, in a fixed order.
"""
import glob
import os

ORDER = ["c", "cpp", "python", "ruby", "js", "go"]
HEADER = """# Benchmark results

Measured with `make bench` on the project's 2-core machine (shared, so noisy): every table gives
medians of repeated runs, and every ratio compares libraries measured in the same run. Each section
comes from one implementation's bench (`bench/results/<name>.md`), with its date and the versions
of every library in it. Regenerate one section with `make bench-<name>`, all with `make bench`.
"""


def nest(section):
    """Shift a section's headings so that its top one is level 2, under the report's title."""
    levels = [len(line) - len(line.lstrip("#")) for line in section.splitlines() if line.startswith("#")]
    shift = 2 - min(levels) if levels else 0
    if shift <= 0:
        return section
    return "\n".join("#" * shift + line if line.startswith("#") else line for line in section.splitlines())


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    results = os.path.join(here, "..", "bench", "results")
    files = {os.path.splitext(os.path.basename(p))[0]: p for p in glob.glob(os.path.join(results, "*.md"))}
    names = [n for n in ORDER if n in files] + sorted(n for n in files if n not in ORDER)
    parts = [HEADER]
    for name in names:
        with open(files[name], encoding="utf-8") as f:
            parts.append(nest(f.read().strip()) + "\n")
    with open(os.path.join(here, "..", "bench", "RESULTS.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    print(f"bench/RESULTS.md: {', '.join(names) or 'no sections yet'}")


if __name__ == "__main__":
    main()
