// `gpudirect-launch check-node`: this node's GPUs (NVML), NICs (sysfs) and GPUDirect stack against
// its machine type's expectations (expectations/*.conf), one line per finding, and with --drain
// the node drained with the reason slurm-gcp's repair acts on. Runs as Slurm's HealthCheckProgram,
// in a prolog or epilog, and by hand; the rules are in the files next to this one.
#include "command_errors.hpp"
#include "command_registry.hpp"
#include "node_drain.hpp"
#include "plugstack_file.hpp"

#include "check_node/dcgm_diag.hpp"
#include "check_node/drain_reasons.hpp"
#include "check_node/expectations.hpp"
#include "check_node/gpu_rules.hpp"
#include "check_node/gres_gpus.hpp"
#include "check_node/kernel_xids.hpp"
#include "check_node/nic_rules.hpp"
#include "check_node/node_metrics.hpp"
#include "check_node/node_report.hpp"
#include "check_node/nvml_probe.hpp"
#include "check_node/stack_check.hpp"
#include "check_node/sysfs_probe.hpp"
#include "check_node/transport_leaks.hpp"
#include "child_process.hpp"

#include "gpudirect/text.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

namespace gpudirect::launcher {
namespace {

using namespace check_node;

struct CheckNodeOptions {
  std::string machine_type;
  std::vector<std::string> expectation_dirs;
  std::string node;
  std::string plugstack;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string nccl_library;  // empty: the lib dir's, else the loader's
  std::string sysfs_root = "/sys";
  std::string etc_dir = "/etc";
  std::string kernel_log = "/dev/kmsg";
  std::string metrics_file;
  bool dcgm_diag = false;
  std::string dcgmi = "dcgmi";
  bool check_rxdm = false, no_gres = false, json = false, drain = false;
  std::vector<std::string> reasons;
};

// Slurm's name for this node: SLURMD_NODENAME in a prolog, epilog or health check, else the host
// name up to its first dot (slurm-gcp names nodes as their hosts).
std::string this_node(const CheckNodeOptions& o) {
  if (!o.node.empty()) return o.node;
  if (const char* name = std::getenv("SLURMD_NODENAME"); name && *name) return name;
  const std::string host = host_name();
  return host.substr(0, host.find('.'));
}

int run_check_node(const CheckNodeOptions& o) {
  std::vector<std::string> dirs = o.expectation_dirs;
  dirs.push_back(installed_expectations_dir());
  if (o.machine_type.empty()) {
    const auto known = known_machine_types(dirs);
    throw UsageError("give --machine-type TYPE (known: " + (known.empty() ? std::string("none") : join(known, ", ")) + ")");
  }
  ReasonMap reasons = default_reasons();
  for (const std::string& assignment : o.reasons) {
    try {
      set_reason(reasons, assignment);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (!o.metrics_file.empty()) {
    try {
      metrics::check_writable(o.metrics_file);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--metrics-file: ") + e.what());
    }
  }
  Expectations expected;
  try {
    expected = load_expectations(o.machine_type, dirs);
  } catch (const ExpectationError& e) {
    throw UsageError(e.what());
  }
  PluginConfig config;
  std::string plugstack = o.plugstack;
  if (plugstack.empty())
    if (auto found = find_plugstack_file()) plugstack = *found;
  if (!plugstack.empty()) config = read_plugstack_config(plugstack);

  NodeReport report;
  report.node = this_node(o);
  report.machine_type = expected.machine_type;
  std::optional<int> gres;
  if (!o.no_gres) {
    // Outside Slurm (no scontrol, unknown node) the gres comparison is left out, not failed.
    try {
      const auto [status, output] = run_capture({"scontrol", "show", "node", report.node, "-o"}, 20);
      if (status == 0) gres = gres_gpu_count(output);
    } catch (const std::runtime_error&) {
    }
  }
  const GpuProbe gpus = probe_gpus(o.nvml_library);
  auto add = [&report](std::vector<Finding> more) { report.findings.insert(report.findings.end(), more.begin(), more.end()); };
  add(judge_gpus(gpus, expected, gres));
  std::string log_error;
  const std::string log = read_kernel_log(o.kernel_log, log_error);
  add(judge_xids(parse_xids(log)));
  add(judge_nics(read_sysfs(o.sysfs_root, expected.data_nics), expected));
  std::vector<Finding> stack_findings;
  const StackFacts stack = check_stack(expected, config, o.check_rxdm, stack_findings, o.nccl_library);
  add(std::move(stack_findings));
  if (!expected.mode.empty()) add(judge_leaks(node_env_sources(o.etc_dir), expected.mode));
  if (o.dcgm_diag) add(run_dcgm_diag(o.dcgmi));

  nlohmann::json gpu_names = nlohmann::json::array();
  for (const GpuState& gpu : gpus.gpus) gpu_names.push_back(gpu.name);
  report.facts = {{"mode", expected.mode},
                  {"gpus", gpu_names},
                  {"gres_gpus", gres ? nlohmann::json(*gres) : nlohmann::json()},
                  {"driver_version", gpus.driver_version},
                  {"cuda_driver_version", gpus.cuda_driver_version ? nlohmann::json(*gpus.cuda_driver_version) : nlohmann::json()},
                  {"nccl_version", stack.nccl_version},
                  {"nccl_library", stack.nccl_library},
                  {"net_plugin", stack.net_plugin},
                  {"lib_dir", stack.lib_dir},
                  {"kernel_log", log_error.empty() ? o.kernel_log : "unreadable: " + log_error}};

  const bool failing = any_failure(report.findings);
  std::string drain_error;
  if (failing) {
    report.drain_reason = drain_reason(report.findings, reasons);
    report.drain_comment = drain_comment(report.findings);
    if (o.drain) {
      try {
        run_scontrol(drain_command(report.node, report.drain_reason, report.drain_comment));
        report.drained = true;
      } catch (const std::runtime_error& e) {
        drain_error = e.what();
      }
    }
  }
  bool metrics_failed = false;
  if (!o.metrics_file.empty()) {
    try {
      node_check_metrics(report, static_cast<long long>(std::time(nullptr))).write(o.metrics_file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudirect check-node: %s: cannot write --metrics-file: %s\n", report.node.c_str(), e.what());
      metrics_failed = true;
    }
  }
  if (o.json)
    std::cout << report_json(report).dump(2) << "\n";
  else
    std::fputs(report_lines(report).c_str(), stdout);
  std::fflush(stdout);
  if (!drain_error.empty())
    std::fprintf(stderr, "gpudirect check-node: %s: could not drain: %s\n", report.node.c_str(), drain_error.c_str());
  if (failing) return kExitBadNodes;
  return metrics_failed ? kExitFailure : kExitOk;
}

}  // namespace

void register_check_node(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<CheckNodeOptions>();
  CLI::App* command = app.add_subcommand(
      "check-node",
      "Check this node's GPUs (NVML: count and model against the machine type and Slurm's gres, uncorrected ECC, retired pages and "
      "row remapping pending or failed, NVLink links down or with errors, clocks held down by HW slowdown or thermal, PCIe link "
      "below its maximum, hardware XIDs in the kernel log), its data NICs (sysfs: present, up, carrier, MTU, speed; RDMA ports "
      "ACTIVE; NUMA nodes) and its GPUDirect stack (the net plugin in the lib dir loads, NCCL's version, TCPXO's aperture devices, "
      "RxDM with --check-rxdm, no other transport's variables in the environment, /etc/environment or /etc/profile.d) against "
      "the machine type's expectations file. One line per finding: node, what, measured, expected, fix. "
      "Roles: as HealthCheckProgram (slurm.conf) with --drain, which drains a failing node itself (slurmd ignores the exit "
      "code); as a prolog or epilog with --drain (a non-zero exit also makes Slurm drain the node and requeue the job); by "
      "hand, or under srun on every node, without --drain. Drain reasons are those slurm-gcp's auto-repair acts on: XID for "
      "GPU hardware faults, PERFORMANCE for a slow node, unspecified otherwise (--reason changes them); the findings go to the "
      "node's comment. Exit codes: 0 the node passes (warnings may be printed), 7 the node fails a check, 1 the check could not "
      "run, 6 usage.");
  command->add_option("--machine-type", o->machine_type, "the node's machine type: the name of its expectations file (a3-megagpu-8g ...)");
  command->add_option("--expectations-dir", o->expectation_dirs,
                      "a directory of MACHINE_TYPE.conf files, searched before the installed ones (repeat it)");
  command->add_option("--node", o->node, "the node's Slurm name (default: $SLURMD_NODENAME, else the short host name)");
  command->add_option(
      "--plugstack", o->plugstack,
      "read lib_dir= and rxdm_ready= from the spank_gpudirect.so line of this plugstack.conf (default: the one Slurm uses)");
  command->add_option("--nvml-library", o->nvml_library, "NVML to dlopen (default libnvidia-ml.so.1)");
  command->add_option("--nccl-library", o->nccl_library,
                      "the NCCL whose version to read (dlopen, ncclGetVersion; default: the lib dir's libnccl.so.2, else the loader's)");
  command->add_option("--sysfs-root", o->sysfs_root, "where sysfs is mounted (default /sys)");
  command->add_option("--etc-dir", o->etc_dir, "read environment and profile.d/*.sh here (default /etc)");
  command->add_option("--kernel-log", o->kernel_log, "read XIDs from this file instead of /dev/kmsg");
  command->add_flag(
      "--check-rxdm", o->check_rxdm,
      "also require TCPXO's RxDM to be ready (rxdm_ready= of plugstack.conf): in a job's prolog after the one that starts RxDM");
  command->add_flag("--dcgm-diag", o->dcgm_diag,
                    "also run DCGM's quick diagnostic, dcgmi diag -r 1 -j (about a minute; as slurm-gcp's gpu-test epilog): each failing "
                    "test is a finding (Deployment tests configuration, the others GPU hardware)");
  command->add_option("--dcgmi", o->dcgmi, "the dcgmi program for --dcgm-diag (default: dcgmi on PATH)");
  command->add_flag("--no-gres", o->no_gres, "do not compare the GPU count with Slurm's Gres= (scontrol show node)");
  command->add_flag("--json", o->json, "print one JSON object (findings, versions, drain) instead of lines");
  command->add_option("--metrics-file", o->metrics_file,
                      "write the result in the Prometheus text format for node_exporter's textfile collector "
                      "(gpudirect_node_check_*: passed, findings per check, drain reason, versions), e.g. "
                      "/var/lib/node_exporter/textfile/gpudirect_node_check.prom");
  command->add_flag("--drain", o->drain, "drain a failing node: scontrol update nodename=N state=drain reason=R comment=FINDINGS");
  command->add_option("--reason", o->reasons,
                      "FAULT=TEXT: the drain reason for a kind of fault (gpu_hardware, default XID; performance, default PERFORMANCE; "
                      "configuration, default unspecified); repeat it");
  command->callback([o, &context] { context.exit_code = run_command("gpudirect check-node", [&] { return run_check_node(*o); }); });
}

}  // namespace gpudirect::launcher
