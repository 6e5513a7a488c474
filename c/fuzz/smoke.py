#!/usr/bin/env python3
"""The c-fuzz smoke run: build the libFuzzer target, replay every seed, then fuzz for a while.

    python3 c/fuzz/smoke.py [--seconds N]          (from the repository root; `make test-c-fuzz`)

1. Builds c/fuzz (clang, -fsanitize=fuzzer,address,undefined) against the mpk sources of the last
   commit (`git archive HEAD c`, re-exported only when c/ changed), so that someone's uncommitted
   edits in c/ cannot break it; MPK_FUZZ_C_DIR=path builds against another copy (e.g. `c`).
2. Writes every MessagePack form in spec/vectors/*.json as a seed file (make_seeds.py).
3. Replays every seed through the target: each one that runs without a crash passes.
4. Fuzzes from the seeds (plus the corpus kept in build/c-fuzz/corpus) for --seconds with the
   head-byte dictionary: the run passes when libFuzzer finishes its time without a crash.

Ends with "c-fuzz: N passed, M failed". Crashing inputs go to build/c-fuzz/crashes/; reproduce one
with `build/c-fuzz/out/fuzz_mpk <file>`. Standard library only.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, "build", "c-fuzz")
BINARY = os.path.join(BUILD, "out", "fuzz_mpk")
CRASHES = os.path.join(BUILD, "crashes")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def mpk_sources():
    """The c/ to build against: MPK_FUZZ_C_DIR, else a snapshot of c/ at HEAD."""
    override = os.environ.get("MPK_FUZZ_C_DIR")
    if override:
        return os.path.abspath(override)
    tree = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD:c"], capture_output=True, text=True)
    if tree.returncode != 0:
        return os.path.join(ROOT, "c")  # not a git checkout: the tree as it is
    snapshot = os.path.join(BUILD, "snapshot")
    stamp = os.path.join(snapshot, "TREE")
    tree_id = tree.stdout.strip()
    if not (os.path.exists(stamp) and open(stamp).read() == tree_id):
        shutil.rmtree(snapshot, ignore_errors=True)
        os.makedirs(snapshot)
        archive = subprocess.Popen(["git", "-C", ROOT, "archive", "HEAD", "c"], stdout=subprocess.PIPE)
        run(["tar", "-x", "-C", snapshot], stdin=archive.stdout)
        if archive.wait() != 0:
            raise subprocess.CalledProcessError(archive.returncode, "git archive")
        with open(stamp, "w") as f:
            f.write(tree_id)
    return os.path.join(snapshot, "c")


def build():
    out = os.path.join(BUILD, "out")
    env = dict(os.environ, CC="clang")
    run(["cmake", "-S", HERE, "-B", out, "-DCMAKE_BUILD_TYPE=", f"-DMPK_C_DIR={mpk_sources()}"],
        env=env, stdout=subprocess.DEVNULL)
    run(["cmake", "--build", out, "--target", "fuzz_mpk", "-j2"], stdout=subprocess.DEVNULL)


def make_seeds():
    seeds = os.path.join(BUILD, "seeds")
    shutil.rmtree(seeds, ignore_errors=True)
    run([sys.executable, os.path.join(HERE, "make_seeds.py"), os.path.join(ROOT, "spec", "vectors"), seeds],
        stdout=subprocess.DEVNULL)
    return seeds, sorted(os.path.join(seeds, name) for name in os.listdir(seeds))


def replay(files):
    """Run every file once; on a crash, count that file failed and go on with the next one."""
    passed, failed = 0, []
    rest = files
    while rest:
        proc = subprocess.run([BINARY, f"-artifact_prefix={CRASHES}/"] + rest, capture_output=True, text=True,
                              errors="replace")
        executed = [line.split(" ", 2)[1] for line in proc.stderr.splitlines() if line.startswith("Executed ")]
        passed += len(executed)
        if proc.returncode == 0:
            break
        started = [line.split(" ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("Running: ")]
        culprit = started[-1] if started else rest[len(executed)]
        failed.append(culprit)
        sys.stdout.write(proc.stderr[-4000:])
        print(f"c-fuzz: seed {os.path.basename(culprit)} crashed; reproduce: {BINARY} {culprit}")
        rest = rest[rest.index(culprit) + 1:] if culprit in rest else rest[len(executed) + 1:]
    return passed, len(failed)


def fuzz(seeds, seconds):
    corpus = os.path.join(BUILD, "corpus")
    os.makedirs(corpus, exist_ok=True)
    cmd = [BINARY, f"-max_total_time={seconds}", f"-dict={os.path.join(HERE, 'mpk.dict')}", "-max_len=16384",
           "-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={CRASHES}/", corpus, seeds]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    lines = proc.stderr.splitlines()
    summary = [line for line in lines if line.startswith(("#", "stat::number_of_executed_units", "Done"))]
    for line in summary[-3:]:
        print(line)
    if proc.returncode != 0:
        sys.stdout.write("\n".join(lines[-60:]) + "\n")
        crashes = [line for line in lines if "Test unit written to" in line]
        for line in crashes:
            path = line.split("Test unit written to ", 1)[1].strip()
            print(f"c-fuzz: crash found; reproduce: {BINARY} {path}")
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
    seeds, files = make_seeds()
    passed, failed = replay(files)
    print(f"c-fuzz: replayed {len(files)} seeds: {passed} passed, {failed} failed")
    if fuzz(seeds, args.seconds):
        passed += 1
    else:
        failed += 1
    print(f"c-fuzz: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
