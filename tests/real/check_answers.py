#!/usr/bin/env python3
"""Runs `gpudirect-launch doctor --topology FILE --json` on every real topology file under
tests/fixtures/real/ and compares each GPU's NUMA node, local CPUs and NICs with the answer file a
person wrote from the file's PCI tree (format: tests/fixtures/real/README.md).

Usage: check_answers.py GPUDIRECT_LAUNCH FIXTURES_REAL_DIR
Exit 0 when every checked field agrees; 1 with one line per disagreement otherwise."""
import json
import os
import pathlib
import shlex
import subprocess
import sys

# Cross-compiled, gpudirect-launch runs under an emulator (qemu-user), as ctest's own commands do.
EMULATOR = shlex.split(os.environ.get("GPUDIRECT_TEST_EMULATOR", ""))


def cpu_set(text):
    cpus = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def read_answer(path):
    """{bus id: {"numa": str, "cpus": str, "nics": str}} from the answer's gpu lines."""
    gpus = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) != 8 or words[0] != "gpu" or words[2:7:2] != ["numa", "cpus", "nics"]:
            raise SystemExit(f"{path}:{number}: not 'gpu BUSID numa N cpus LIST nics LIST': {line}")
        if words[1] in gpus:
            raise SystemExit(f"{path}:{number}: GPU {words[1]} answered twice")
        gpus[words[1]] = {"numa": words[3], "cpus": words[5], "nics": words[7]}
    return gpus


def nic_token(nic):
    # A NIC with no PCI function (an NCCL <nic> under <cpu>) is known by its name.
    return nic["bus_id"] or nic["netdev"] or nic["rdma_device"]


def check_file(launch, xml, answer):
    """(problems, gpus, undecided NIC pairings) for one file."""
    run = subprocess.run([*EMULATOR, launch, "doctor", "--topology", str(xml), "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        return [f"{xml.name}: doctor failed (exit {run.returncode}): {run.stderr.strip()}"], len(answer), 0
    table = json.loads(run.stdout)
    found = {gpu["bus_id"]: gpu for gpu in table["gpus"]}
    problems = []
    if set(found) != set(answer):
        missing = sorted(set(answer) - set(found))
        extra = sorted(set(found) - set(answer))
        problems.append(f"{xml.name}: GPUs differ: the answer's {missing} not found, {extra} not in the answer")
    undecided = 0
    for bus_id in sorted(set(found) & set(answer)):
        got, want = found[bus_id], answer[bus_id]
        if want["numa"] != "?" and int(want["numa"]) != got["numa"]:
            problems.append(f"{xml.name}: GPU {bus_id}: NUMA node {got['numa']}, answer {want['numa']}")
        if want["cpus"] != "?" and cpu_set("" if want["cpus"] == "-" else want["cpus"]) != cpu_set(got["cpus"]):
            problems.append(f"{xml.name}: GPU {bus_id}: CPUs {got['cpus']}, answer {want['cpus']}")
        if want["nics"] == "?":
            undecided += 1
            continue
        expected = set() if want["nics"] == "-" else set(want["nics"].split(","))
        actual = {nic_token(nic) for nic in got["nics"]}
        if expected != actual:
            problems.append(f"{xml.name}: GPU {bus_id}: NICs {','.join(sorted(actual)) or '-'}, "
                            f"answer {','.join(sorted(expected)) or '-'}")
    return problems, len(answer), undecided


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    launch, root = sys.argv[1], pathlib.Path(sys.argv[2])
    xmls = sorted(root.glob("*/*.xml"))
    answers = sorted(root.glob("*/*.answer"))
    unpaired = {p.with_suffix("") for p in xmls} ^ {p.with_suffix("") for p in answers}
    if unpaired:
        raise SystemExit(f"files without answer or answers without file: {sorted(map(str, unpaired))}")
    if not xmls:
        raise SystemExit(f"no topology files under {root}")
    problems, gpus, undecided = [], 0, 0
    for xml in xmls:
        found, count, open_count = check_file(launch, xml, read_answer(xml.with_suffix(".answer")))
        problems += found
        gpus += count
        undecided += open_count
    for problem in problems:
        print(problem)
    print(f"real topologies: {len(xmls)} files, {gpus} GPUs, {undecided} pairings left undecided by their answers, "
          f"{len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
