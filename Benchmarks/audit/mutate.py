#!/usr/bin/env python3
"""Hand-picked mutation testing of the event engine and containment (one mutant at a time).

Usage (from the package root, after `swift build --build-tests`):
    python3 Benchmarks/audit/mutate.py Benchmarks/audit/mutants.txt [ID ...] [--full]

Each line of the mutants file (tab-separated; '#' starts a comment line):
    ID  FILE  LINE  OLD  NEW  CLASSES
OLD must occur exactly once on line LINE of FILE; it is replaced by NEW (where a literal backslash-n
starts a new line), the tests are rebuilt
incrementally (debug) and run straight from the xctest bundle: first CLASSES (comma-separated
FenceEngineTests class names, or Target.Class, may be '-'), then the oracle classes, stopping at the first failing
test (the mutant is killed). With --full a survivor is run again against the whole of
FenceEngineTests and FenceIOTests. The file is restored with `git checkout -- FILE` afterwards; a
file with uncommitted changes is refused, so wanted edits are never lost. Results are appended to
Benchmarks/audit/results.tsv (ID, file:line, outcome, the killing test or a note, seconds).
"""
import os
import re
import signal
import subprocess
import sys
import time

ORACLES = [
    "EventScenarioTests", "ContainmentOracleTests", "EventOracleExpiryTests", "EventOracleTests",
    "EventOracleExtraTests", "EventOracleReplacementTests",
]
BUNDLE = ".build/debug/FenceEnginePackageTests.xctest"
FAIL = re.compile(r"error: -\[(\S+) (\S+)\]|: error: (\S+) : ")


def run_tests(filters, timeout=1800):
    """Runs the bundle on `filters`; returns the first failing test's name, or None."""
    p = subprocess.Popen([BUNDLE, ",".join(filters)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    start = time.time()
    try:
        for line in p.stdout:
            m = FAIL.search(line)
            if m or "Fatal error" in line or "Illegal instruction" in line:
                return (m.group(1) + "." + m.group(2)) if m and m.group(1) else line.strip()[:160]
            if time.time() - start > timeout:
                return "timeout"
        rc = p.wait()
        return None if rc == 0 else f"exit status {rc}"
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    full = "--full" in sys.argv
    spec, wanted = args[0], set(args[1:])
    results = open("Benchmarks/audit/results.tsv", "a")
    for raw in open(spec):
        if not raw.strip() or raw.startswith("#"):
            continue
        mid, path, line, old, new, classes = raw.rstrip("\n").split("\t")
        if wanted and mid not in wanted:
            continue
        if subprocess.run(["git", "diff", "--quiet", "--", path]).returncode != 0:
            sys.exit(f"{path} has uncommitted changes; commit or restore it first")
        lines = open(path).read().split("\n")
        n = int(line) - 1
        if lines[n].count(old) != 1:
            print(f"{mid}: '{old}' is not once on {path}:{line}: {lines[n].strip()}", flush=True)
            results.write(f"{mid}\t{path}:{line}\tbad-spec\t\t0\n")
            continue
        lines[n] = lines[n].replace(old, new.replace("\\n", "\n"))
        open(path, "w").write("\n".join(lines))
        start = time.time()
        try:
            b = subprocess.run(["swift", "build", "--build-tests"], capture_output=True, text=True)
            if b.returncode != 0:
                outcome, note = "stillborn", "does not compile"
            else:
                first = [c if "." in c else f"FenceEngineTests.{c}" for c in classes.split(",") if c and c != "-"]
                killer = run_tests(first) if first else None
                if killer is None:
                    killer = run_tests([f"FenceEngineTests.{c}" for c in ORACLES if c not in classes.split(",")])
                if killer is None and full:
                    # Every class of the two targets: the bundle takes Target.Class names (a bare
                    # target name selects no test at all).
                    listed = subprocess.run([BUNDLE, "--list-tests"], capture_output=True, text=True).stdout.split()
                    whole = sorted({t.split("/")[0] for t in listed if t.startswith(("FenceEngineTests.", "FenceIOTests."))})
                    killer = run_tests(whole, timeout=3600)
                outcome, note = ("killed", killer) if killer else ("survived", "full" if full else "targeted")
        finally:
            subprocess.run(["git", "checkout", "--", path], check=True)
        secs = int(time.time() - start)
        print(f"{mid}\t{path}:{line}\t{outcome}\t{note}\t{secs}s", flush=True)
        results.write(f"{mid}\t{path}:{line}\t{outcome}\t{note}\t{secs}\n")
        results.flush()


if __name__ == "__main__":
    main()
