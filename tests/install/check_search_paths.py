#!/usr/bin/env python3
"""Every ELF executable and shared object under the given directories (or given itself): its
RUNPATH and RPATH (readelf -d) must have no entry the loader resolves against the current directory, that is no
empty entry (a leading, trailing or doubled ':') and no relative one that does not start with
$ORIGIN. With --installed, every absolute entry must also be a directory (or, where it does not
exist, the nearest existing parent) owned by root and writable by no one else, and so must every
directory above it, as root runs these binaries.

Usage: check_search_paths.py [--installed] [--expect NAME]... DIR_OR_FILE...
Prints one line per ELF (its path and search path); exits 1 naming every bad entry, or when an
--expect'ed file name is not among the ELFs found (so an empty directory cannot pass)."""
import argparse
import os
import re
import stat
import subprocess
import sys

ELF_MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3
SEARCH_PATH_LINE = re.compile(r"\((RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]\s*$")


def is_elf_program_or_library(path):
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        header = f.read(18)
    if len(header) < 18 or header[:4] != ELF_MAGIC:
        return False
    return int.from_bytes(header[16:18], "little" if header[5] == 1 else "big") in (ET_EXEC, ET_DYN)


def elf_files(root):
    """Executables and shared objects (not object files) under root (or root itself), links not followed."""
    if os.path.isfile(root):
        paths = [root]
    else:
        paths = (os.path.join(directory, name) for directory, _, names in os.walk(root) for name in names)
    yield from (path for path in paths if is_elf_program_or_library(path))


def search_paths(path):
    """[(tag, value)] of the file's RUNPATH and RPATH entries."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    if out.returncode != 0:
        raise SystemExit(f"readelf -d {path} failed: {out.stderr.strip()}")
    return [m.groups() for m in map(SEARCH_PATH_LINE.search, out.stdout.splitlines()) if m]


def writable_by_others(directory):
    """Why someone other than root could put a library into directory (or replace it or a parent), or None."""
    while not os.path.lexists(directory):
        directory = os.path.dirname(directory)
    while True:
        st = os.stat(directory)
        if st.st_uid != 0:
            return f"{directory} is owned by uid {st.st_uid}"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{directory} is writable by its group or by everyone ({stat.filemode(st.st_mode)})"
        if directory == "/":
            return None
        directory = os.path.dirname(directory)


def problems(tag, value, installed):
    found = []
    for entry in value.split(":"):
        if entry == "":
            found.append(f"{tag} '{value}' has an empty entry: the current directory")
        elif entry.startswith("$ORIGIN") or entry.startswith("${ORIGIN}"):
            continue
        elif not entry.startswith("/"):
            found.append(f"{tag} entry '{entry}' is relative: resolved against the current directory")
        elif installed:
            why = writable_by_others(entry)
            if why:
                found.append(f"{tag} entry '{entry}': {why}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--installed", action="store_true", help="also check that root alone can write each absolute entry")
    parser.add_argument("--expect", action="append", default=[], help="a file name that must be among the ELFs found")
    parser.add_argument("roots", nargs="+")
    args = parser.parse_args()

    failures = []
    names = set()
    count = 0
    for root in args.roots:
        if not os.path.exists(root):
            raise SystemExit(f"no file or directory {root}")
        for path in sorted(elf_files(root)):
            count += 1
            names.add(os.path.basename(path))
            paths = search_paths(path)
            shown = "; ".join(f"{tag} [{value}]" for tag, value in paths) or "no RUNPATH or RPATH"
            print(f"{path}: {shown}")
            failures += [f"{path}: {p}" for tag, value in paths for p in problems(tag, value, args.installed)]
    failures += [f"no ELF file named {name} under {', '.join(args.roots)}" for name in args.expect if name not in names]
    if count == 0:
        failures.append(f"no ELF executable or shared object under {', '.join(args.roots)}")
    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{count} ELF files, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
