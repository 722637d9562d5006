#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every test case is exactly one ctest entry: lists the cases of each test program (Catch2
binaries, the command-line cases, pytest's collection) and ctest's entries, and fails on any
difference, naming it. A case whose name ctest cannot carry (Catch2 splits a name at ';') or one
that was never registered shows up here instead of passing unseen.

  check_listing.py --build-dir DIR --ctest CTEST [--catch PREFIX BINARY]... [--cli SCRIPT]
                   [--pytest PYTHON TESTS_DIR]
Exit 0 when the lists agree, 1 when they differ, 77 (skipped) when pytest could not import a
test module (an optional package missing), since its cases cannot then be listed."""
import argparse
import re
import subprocess
import sys


def lines_of(command, any_exit=False):
    """The command's output lines; it must exit 0 unless `any_exit` (Catch2's --list-test-names-only
    exits with the number of cases)."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode < 0 or (done.returncode != 0 and not any_exit):
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout.splitlines()


def ctest_entries(ctest, build_dir):
    entries = set()
    for line in lines_of([ctest, "-N", "--test-dir", build_dir]):
        match = re.match(r"\s*Test\s+#\d+: (.*)$", line)
        if match:
            entries.add(match.group(1))
    return entries


def pytest_cases(python, tests_dir):
    """python.<file stem>.<function>, one per test function (its parameters run in one entry)."""
    done = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", tests_dir],
                          capture_output=True, text=True)
    if done.returncode != 0 or re.search(r"\d+ skipped", done.stdout):
        print(f"pytest could not collect every test module, so their cases cannot be listed:\n{done.stdout}{done.stderr}")
        sys.exit(77)
    cases = set()
    for line in done.stdout.splitlines():
        match = re.match(r"(?:.*/)?(test_\w+)\.py::(\w+)", line)
        if match:
            cases.add(f"python.{match.group(1)}.{match.group(2)}")
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--ctest", required=True)
    parser.add_argument("--catch", nargs=2, action="append", default=[], metavar=("PREFIX", "BINARY"))
    parser.add_argument("--cli")
    parser.add_argument("--pytest", nargs=2, metavar=("PYTHON", "TESTS_DIR"))
    args = parser.parse_args()

    expected, prefixes = set(), set()
    for prefix, binary in args.catch:
        prefixes.add(prefix)
        expected |= {prefix + name for name in lines_of([binary, "--list-test-names-only"], any_exit=True) if name.strip()}
    if args.cli:
        prefixes.add("cli.")
        expected |= {"cli." + line.split()[0] for line in lines_of(["bash", args.cli, "--list"])}
    if args.pytest:
        prefixes.add("python.")
        expected |= pytest_cases(*args.pytest)
    actual = {e for e in ctest_entries(args.ctest, args.build_dir) if any(e.startswith(p) for p in prefixes)}

    for name in sorted(expected - actual):
        print(f"a case with no ctest entry of its own: {name}")
    for name in sorted(actual - expected):
        print(f"a ctest entry that matches no case: {name}")
    print(f"{len(expected)} cases, {len(actual)} ctest entries under {', '.join(sorted(prefixes))}")
    return 0 if expected == actual and expected else 1


if __name__ == "__main__":
    sys.exit(main())
