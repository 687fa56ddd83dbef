#!/usr/bin/env python3
"""Applies, one at a time, plausible one-line bugs in the rules users depend on, rebuilds the unit
tests, runs them, and checks that each bug is killed (some test case fails); every file is restored
afterwards, also on Ctrl-C. Not part of CI (a rebuild per mutation); run it after changing a rule
or its tests:

    tests/mutations/run_mutations.py BUILD_DIR [NAME...]

BUILD_DIR is a configured build tree (e.g. build/ci). Prints, per mutation, the test cases that
failed; exits 1 if any mutation survived.
"""
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[2]

# name: (file, the line(s) as written, the bug)
MUTATIONS = {
    "auto tries tcpxo before gib": (
        "core/src/mode_resolution.cpp",
        '  if (facts.gib_plugin && rdma) return {Mode::gib, gpus + ", gIB NCCL plugin present, RDMA NIC " + nic_label(*rdma)};\n'
        '  if (facts.tcpxo_plugin) return {Mode::tcpxo, gpus + ", TCPXO NCCL plugin present"};\n',
        '  if (facts.tcpxo_plugin) return {Mode::tcpxo, gpus + ", TCPXO NCCL plugin present"};\n'
        '  if (facts.gib_plugin && rdma) return {Mode::gib, gpus + ", gIB NCCL plugin present, RDMA NIC " + nic_label(*rdma)};\n'),
    "a socket that refuses connections counts as ready": (
        "core/src/readiness.cpp",
        'return {false, path + " refuses connections (',
        'return {true, path + " refuses connections ('),
    "the plugin takes the local id from the global task id": (
        "plugin/task_init.cpp",
        'get_item<std::uint32_t>(spank, S_TASK_ID)',
        'get_item<std::uint32_t>(spank, S_TASK_GLOBAL_ID)'),
    "an RDMA card may be the control NIC": (
        "core/src/binding.cpp",
        'if (nic.kind == NicKind::unusable || nic.kind == NicKind::rdma) continue;',
        'if (nic.kind == NicKind::unusable) continue;'),
    "the control NIC's tie-break on kind inverted": (
        "core/src/binding.cpp",
        '-static_cast<int>(nic.kind), n};',
        'static_cast<int>(nic.kind), n};'),
    "?= overwrites the task's own value": (
        "core/src/network_profile.cpp",
        '    case EnvActionKind::set_if_unset:\n      if (current) return std::nullopt;\n',
        '    case EnvActionKind::set_if_unset:\n'),
    "+= appends instead of prepending": (
        "core/src/network_profile.cpp",
        'return action.value + ":" + *current;',
        'return *current + ":" + action.value;'),
    "ConstrainDevices indices taken as GPU ids": (
        "core/src/gpu_selection.cpp",
        'chosen.push_back(step[static_cast<std::size_t>(v)]);',
        'chosen.push_back(v);'),
    "a multi-GPU task gets only its last GPU's CPUs": (
        "core/src/binding.cpp",
        'local = local | gpu.local_cpus;',
        'local = gpu.local_cpus;'),
    "a multi-GPU task gets the CPUs its GPUs share": (
        "core/src/binding.cpp",
        'local = local | gpu.local_cpus;',
        'local = binding.gpus.front() == g ? gpu.local_cpus : (local & gpu.local_cpus);'),
    "one uncorrected volatile ECC error passes": (
        "launcher/commands/check_node/gpu_rules.cpp",
        'if (gpu.ecc_volatile_uncorrected.value_or(0) > 0)',
        'if (gpu.ecc_volatile_uncorrected.value_or(0) > 1)'),
    "the drain reason ranks performance before GPU hardware": (
        "launcher/commands/check_node/drain_reasons.cpp",
        '  for (const Fault f : {Fault::gpu_hardware, Fault::performance, Fault::configuration})\n'
        '    for (const Finding& finding : findings)\n',
        '  for (const Fault f : {Fault::performance, Fault::gpu_hardware, Fault::configuration})\n'
        '    for (const Finding& finding : findings)\n'),
    "supervise: a normal step does not end a slow streak": (
        "launcher/commands/supervise/fault_watch.cpp",
        '  } else {\n    slow_streak_ = 0;\n',
        '  } else {\n'),
    "supervise: a checkpoint write gets no more allowance": (
        "launcher/commands/supervise/fault_watch.cpp",
        '  if (checkpoint_pending_) allowance += std::max(s_.checkpoint_s, 3 * longest_checkpoint_s_);',
        '  if (checkpoint_pending_) allowance += 0;'),
    "supervise: a survivor's 'is gone' outweighs the ranks' naming of the lost peer": (
        "launcher/commands/supervise/rank_reports.cpp",
        'return strong.order.empty() ? weak.ranked() : strong.ranked();',
        'return weak.order.empty() ? strong.ranked() : weak.ranked();'),
    "supervise: a repeated step counts as productive twice": (
        "launcher/commands/supervise/goodput.cpp",
        '    at->second = step_ms;\n',
        '    step_ms_[-step] = step_ms;\n'),
}


def failing_cases(executable):
    """Runs a Catch executable; returns the names of the failing cases (JUnit report)."""
    run = subprocess.run([executable, "--reporter", "junit"], capture_output=True, text=True)
    failed = []
    try:
        for case in ET.fromstring(run.stdout).iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed.append(case.get("name"))
    except ET.ParseError:
        failed.append(f"(the run did not finish: exit {run.returncode}, {run.stderr.strip()[-200:]})")
    return sorted(set(failed))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = pathlib.Path(sys.argv[1]).resolve()
    chosen = sys.argv[2:] or list(MUTATIONS)
    survivors = []
    for name in chosen:
        path, good, bad = MUTATIONS[name]
        source = ROOT / path
        original = source.read_text()
        if original.count(good) != 1:
            sys.exit(f"run_mutations: '{name}': the line to mutate is not exactly once in {path} (the code changed: update the list)")
        try:
            source.write_text(original.replace(good, bad))
            subprocess.run(["cmake", "--build", str(build), "--target", "unit_tests", "plugin_glue_tests"], check=True,
                           stdout=subprocess.DEVNULL)
            failed = failing_cases(build / "tests/unit_tests") + failing_cases(build / "tests/plugin_glue/plugin_glue_tests")
        finally:
            source.write_text(original)
        print(f"{'KILLED' if failed else 'SURVIVED'}: {name} ({path})", flush=True)
        for case in failed:
            print(f"    fails: {case}", flush=True)
        if not failed:
            survivors.append(name)
    subprocess.run(["cmake", "--build", str(build), "--target", "unit_tests", "plugin_glue_tests"], check=True, stdout=subprocess.DEVNULL)
    if survivors:
        sys.exit(f"run_mutations: {len(survivors)} mutation(s) survived: {', '.join(survivors)}")
    print(f"run_mutations: all {len(chosen)} mutations killed")


if __name__ == "__main__":
    main()
