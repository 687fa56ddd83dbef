#!/usr/bin/env python3
"""Checks that every Catch2 case is exactly one ctest entry, and no entry is anything else.

catch_discover_tests turns each case into an entry whose filter is the case's name; a name that
discovery mangles (Catch2 2.13 splits at ';') gives entries whose filter matches nothing. Such an
entry fails when it runs (Catch2 2 with --warn NoTests; Catch2 3 by itself, and with --warn
UnmatchedTestSpec); this check also fails at once, before anything runs, naming the cases that are
not entries of their own.

usage: check_catch_entries.py CTEST BUILD_DIR CATCH_EXECUTABLE...
"""
import json
import os
import shlex
import subprocess
import sys

# Cross-compiled, the executables run under an emulator (qemu-user), here and in ctest's commands.
EMULATOR = shlex.split(os.environ.get("GPUDIRECT_TEST_EMULATOR", ""))


def catch_cases(executable):
    # Catch2 2 exits with the number of cases listed, so the exit status says nothing here;
    # Catch2 3 has no --list-test-names-only and lists names alone at quiet verbosity.
    run = subprocess.run([*EMULATOR, executable, "--list-test-names-only"], capture_output=True, text=True)
    if "--list-test-names-only" in run.stderr + run.stdout:
        run = subprocess.run([*EMULATOR, executable, "--list-tests", "--verbosity", "quiet"], capture_output=True, text=True)
    cases = [line for line in run.stdout.splitlines() if line.strip()]
    if not cases:
        sys.exit(f"check_catch_entries: {executable} --list-test-names-only listed no case (exit {run.returncode}): {run.stderr}")
    return cases


def ctest_entries(ctest, build_dir):
    out = subprocess.run([ctest, "--test-dir", build_dir, "-N", "--show-only=json-v1"], check=True, capture_output=True,
                         text=True).stdout
    entries = {}
    for test in json.loads(out)["tests"]:
        command = test.get("command") or [""]
        if EMULATOR and command[:len(EMULATOR)] == EMULATOR:
            command = command[len(EMULATOR):] or [""]
        entries.setdefault(command[0], []).append((test["name"], command[1:]))
    return entries


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ctest, build_dir, executables = sys.argv[1], sys.argv[2], sys.argv[3:]
    entries = ctest_entries(ctest, build_dir)
    failed = False
    for executable in executables:
        cases = catch_cases(executable)
        mine = entries.get(executable, [])
        # The entry's first argument is the case's name as a Catch test spec (',', '[' and ']' escaped).
        filters = [args[0].replace("\\,", ",").replace("\\[", "[").replace("\\]", "]") for _, args in mine if args]
        missing = [case for case in cases if filters.count(case) != 1]
        unknown = [f for f in filters if f not in cases]
        print(f"{executable}: {len(cases)} Catch cases, {len(mine)} ctest entries")
        for case in missing:
            print(f"  case not exactly one entry: {case!r}")
        for f in unknown:
            print(f"  entry that names no case: {f!r}")
        if missing or unknown or len(mine) != len(cases):
            failed = True
    if failed:
        sys.exit("check_catch_entries: some Catch cases would not run as ctest entries of their own "
                 "(a case name with ';' is one cause: rename it)")


if __name__ == "__main__":
    main()
