#!/usr/bin/env python3
"""The c-fuzz smoke run: build the libFuzzer targets, replay every seed, then fuzz for a while.

    python3 c/fuzz/smoke.py [--seconds N]          (from the repository root; `make test-c-fuzz`)

1. Builds c/fuzz (clang, -fsanitize=fuzzer,address,undefined) against the working tree's c/, the
   same sources every other suite of `make test` builds, so the fuzzer checks the code under test;
   MPK_FUZZ_C_DIR=path builds against another copy (say an export of an older commit).
2. Writes every MessagePack form in spec/vectors/*.json as a seed file for fuzz_mpk, and every case
   object as JSON text for fuzz_json (make_seeds.py).
3. Replays every seed through its target: each one that runs without a crash passes.
4. Fuzzes each target from its seeds (plus the corpus kept in build/c-fuzz/<target>-corpus) with its
   dictionary, --seconds in all (fuzz_mpk 70 %, fuzz_json 30 %): each run passes when libFuzzer
   finishes its time without a crash.

Ends with "c-fuzz: N passed, M failed". Crashing inputs go to build/c-fuzz/crashes/; reproduce one
with `build/c-fuzz/out/fuzz_mpk <file>` (or fuzz_json). Standard library only.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, "build", "c-fuzz")
OUT = os.path.join(BUILD, "out")
CRASHES = os.path.join(BUILD, "crashes")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def mpk_sources():
    """The c/ to build against: MPK_FUZZ_C_DIR, else the working tree's c/."""
    override = os.environ.get("MPK_FUZZ_C_DIR")
    return os.path.abspath(override) if override else os.path.join(ROOT, "c")


def build():
    out = os.path.join(BUILD, "out")
    env = dict(os.environ, CC="clang")
    run(["cmake", "-S", HERE, "-B", out, "-DCMAKE_BUILD_TYPE=", f"-DMPK_C_DIR={mpk_sources()}"],
        env=env, stdout=subprocess.DEVNULL)
    run(["cmake", "--build", out, "--target", "fuzz_mpk", "fuzz_json", "-j2"], stdout=subprocess.DEVNULL)


def make_seeds():
    """The seed directories of fuzz_mpk and fuzz_json."""
    seeds, json_seeds = os.path.join(BUILD, "seeds"), os.path.join(BUILD, "json-seeds")
    for d in (seeds, json_seeds):
        shutil.rmtree(d, ignore_errors=True)
    run([sys.executable, os.path.join(HERE, "make_seeds.py"), os.path.join(ROOT, "spec", "vectors"), seeds,
         json_seeds], stdout=subprocess.DEVNULL)
    return seeds, json_seeds


def listing(directory):
    return sorted(os.path.join(directory, name) for name in os.listdir(directory))


def replay(target, files):
    """Run every file once; on a crash, count that file failed and go on with the next one."""
    binary = os.path.join(OUT, target)
    passed, failed = 0, []
    rest = files
    while rest:
        proc = subprocess.run([binary, f"-artifact_prefix={CRASHES}/"] + rest, capture_output=True, text=True,
                              errors="replace")
        executed = [line.split(" ", 2)[1] for line in proc.stderr.splitlines() if line.startswith("Executed ")]
        passed += len(executed)
        if proc.returncode == 0:
            break
        started = [line.split(" ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("Running: ")]
        culprit = started[-1] if started else rest[len(executed)]
        failed.append(culprit)
        sys.stdout.write(proc.stderr[-4000:])
        print(f"c-fuzz: seed {os.path.basename(culprit)} crashed; reproduce: {binary} {culprit}")
        rest = rest[rest.index(culprit) + 1:] if culprit in rest else rest[len(executed) + 1:]
    return passed, len(failed)


def fuzz(target, dictionary, corpus, seeds, seconds):
    binary = os.path.join(OUT, target)
    corpus = os.path.join(BUILD, corpus)
    os.makedirs(corpus, exist_ok=True)
    cmd = [binary, f"-max_total_time={seconds}", f"-dict={os.path.join(HERE, dictionary)}", "-max_len=16384",
           "-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={CRASHES}/", corpus, seeds]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    lines = proc.stderr.splitlines()
    summary = [line for line in lines if line.startswith(("#", "stat::number_of_executed_units", "Done"))]
    for line in summary[-3:]:
        print(f"{target}: {line}")
    if proc.returncode != 0:
        sys.stdout.write("\n".join(lines[-60:]) + "\n")
        crashes = [line for line in lines if "Test unit written to" in line]
        for line in crashes:
            path = line.split("Test unit written to ", 1)[1].strip()
            print(f"c-fuzz: crash found; reproduce: {binary} {path}")
        return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=40)
    args = parser.parse_args()
    os.makedirs(CRASHES, exist_ok=True)
    try:
        build()
    except subprocess.CalledProcessError as e:
        print(f"c-fuzz: build failed ({e})")
        print("c-fuzz: 0 passed, 1 failed")
        return 1
    seeds, json_seeds = make_seeds()
    passed = failed = 0
    mpk_seconds = max(1, round(args.seconds * 0.7))
    runs = [("fuzz_mpk", seeds, "mpk.dict", "corpus", mpk_seconds),
            ("fuzz_json", json_seeds, "json.dict", "json-corpus", max(1, args.seconds - mpk_seconds))]
    for target, seed_dir, dictionary, corpus, seconds in runs:
        files = listing(seed_dir)
        p, f = replay(target, files)
        print(f"c-fuzz: {target} replayed {len(files)} seeds: {p} passed, {f} failed")
        passed, failed = passed + p, failed + f
    for target, seed_dir, dictionary, corpus, seconds in runs:
        if fuzz(target, dictionary, corpus, seed_dir, seconds):
            passed += 1
        else:
            failed += 1
    print(f"c-fuzz: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
