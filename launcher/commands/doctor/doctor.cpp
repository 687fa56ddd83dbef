// `gpudirect-launch doctor`: the node's binding table exactly as the plugin computes it (same core
// calls), and inside a task a check that the task got what the plugin meant to give it.
#include "command_errors.hpp"
#include "command_registry.hpp"
#include "plugstack_file.hpp"

#include "bootstrap/launch_context.hpp"
#include "doctor/container_check.hpp"
#include "doctor/container_env_check.hpp"
#include "doctor/glibc_check.hpp"
#include "doctor/imex_check.hpp"
#include "gpudirect/container_mounts.hpp"
#include "gpudirect/mode_resolution.hpp"
#include "gpudirect/gpu_selection.hpp"
#include "gpudirect/gpu_visibility.hpp"
#include "gpudirect/net_plugin.hpp"
#include "gpudirect/slurm_task_placement.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/text.hpp"
#include "gpudirect/topology_sources.hpp"

#include <nlohmann/json.hpp>

#include <gnu/libc-version.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <stdexcept>

namespace gpudirect::launcher {
namespace {

struct DoctorOptions {
  std::string topology;
  std::string plugstack;
  std::string profile_dir;
  std::string mode;  // as --gpu-direct=MODE would ask; "" = the plugstack default
  bool json = false;
  bool check = false;
  std::string container_mounts;  // "pyxis" or "fstab": print the mode's mounts in that form; "" = no
  bool container_library_path = false;
  bool container_env_names = false;
};

// Where the container check looks for markers and mounts: "/", or a directory standing in for a
// container's root in tests (never set in production).
std::string container_root(const std::map<std::string, std::string>& env) {
  const auto it = env.find("GPUDIRECT_TEST_CONTAINER_ROOT");
  return it == env.end() || it->second.empty() ? std::string("/") : it->second;
}

// Why the task is in a container (container_check.hpp); "" when it is not. A stand-in root (tests)
// is a root of its own, not slurmstepd's.
std::string task_container_reason(const std::string& root) {
  const auto stepd = slurmstepd_ancestor("/proc", ::getpid());
  const auto stepd_root = stepd ? root_mount_of("/proc", *stepd) : std::nullopt;
  const auto own = root == "/" ? root_mount_of("/proc", ::getpid()) : std::optional<RootMount>(RootMount{"stand-in", root});
  return container_reason(own, stepd_root, container_marker(root));
}

// Where the IMEX check looks for /proc/devices and the channel devices: "/", or a stand-in root in
// tests (never set in production).
std::string imex_root(const std::map<std::string, std::string>& env) {
  const auto it = env.find("GPUDIRECT_TEST_IMEX_ROOT");
  return it == env.end() || it->second.empty() ? std::string("/") : it->second;
}

int job_nodes(const std::map<std::string, std::string>& env) {
  const auto it = env.find("SLURM_JOB_NUM_NODES");
  if (it == env.end()) return 1;
  try {
    return std::stoi(it->second);
  } catch (const std::exception&) {
    return 1;
  }
}

// The plugin planned from the step's GPUs it read in slurmstepd (GPUDIRECT_STEP_GPUS) and the doctor
// plans from the same list: check it against what Slurm gave this task, so a plugin that read
// another list is caught. Under ConstrainDevices a task's SLURM_STEP_GPUS is its own GPUs (on 22.05
// the step's first ones): every one of them is among the step's.
std::string step_gpus_problem(const std::map<std::string, std::string>& env) {
  const auto step = env.find(kStepGpusVariable);
  const auto given = env.find("SLURM_STEP_GPUS");
  if (step == env.end() || step->second.empty() || given == env.end() || given->second.empty()) return "";
  try {
    const std::vector<int> on_node = parse_index_list(step->second, kStepGpusVariable);
    for (int gpu : parse_index_list(given->second, "SLURM_STEP_GPUS"))
      if (std::find(on_node.begin(), on_node.end(), gpu) == on_node.end())
        return std::string(kStepGpusVariable) + " is '" + step->second +
               "' (the step's GPUs on this node, as the plugin read them), but Slurm gave this task SLURM_STEP_GPUS=" + given->second;
  } catch (const std::invalid_argument&) {
    return "";  // UUIDs: plan_task reads them through NVML and reports what it cannot
  }
  return "";
}

// What the plugin bound (GPUDIRECT_GPUS) against the node's tasks (gpu_visibility.hpp).
std::string every_gpu_problem(const std::map<std::string, std::string>& env, int node_gpus) {
  const auto bound = env.find("GPUDIRECT_GPUS");
  if (bound == env.end() || bound->second.empty()) return "";
  try {
    const int local_size = slurm_task_placement(env).local_size;
    return every_gpu_while_sharing_problem(local_size, static_cast<int>(parse_index_list(bound->second, "GPUDIRECT_GPUS").size()),
                                           node_gpus);
  } catch (const std::invalid_argument&) {
    return "";  // plan_task names a malformed variable
  }
}

std::string nic_list(const Topology& topology, const std::vector<int>& nics) {
  std::string out;
  for (int n : nics) out += (out.empty() ? "" : ",") + nic_label(topology.nics[static_cast<std::size_t>(n)]);
  return out.empty() ? "-" : out;
}

std::string mode_text(const ModeDecision& decision) {
  return std::string(to_string(decision.mode)) + (decision.reason.empty() ? "" : " [" + decision.reason + "]") +
         (decision.wait_for_rxdm ? ", waits for RxDM" : "");
}

// The machine the table describes: the file's own host when it records one, never this machine's
// name for someone else's topology.
std::string described_host(const Topology& topology, bool from_file) {
  if (!topology.host.empty()) return topology.host;
  if (!from_file) return host_name();
  return "unknown (the topology file records no host name)";
}

void print_table(const Topology& topology, const NodePlan& plan, const std::string& host, const ModeDecision& decision) {
  std::printf("# gpudirect doctor: node %s, topology %s\n", host.c_str(), topology.source.c_str());
  std::printf("# mode: %s\n", mode_text(decision).c_str());
  std::printf("# %3s  %-12s  %4s  %-20s  %s\n", "GPU", "bus id", "NUMA", "CPUs", "NICs");
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    const Gpu& gpu = topology.gpus[g];
    const GpuPlacement& placement = plan.gpus[g];
    const std::string cpus = gpu.local_cpus.empty() ? "unknown" : gpu.local_cpus.to_list();  // an NCCL <cpu> without affinity
    std::printf("  %3zu  %-12s  %4d  %-20s  %s%s\n", g, gpu.address.to_string().c_str(), gpu.numa_node, cpus.c_str(),
                nic_list(topology, placement.nics).c_str(),
                placement.nic_fallback ? (" (fallback: " + placement.nic_note + ")").c_str() : "");
  }
  if (topology.gpus.empty()) {
    std::printf("  (no GPUs on this node: no NVIDIA or AMD display, 3D or accelerator PCI device)\n");
    for (const std::string& note : topology.notes) std::printf("  (skipped %s)\n", note.c_str());
  }
  for (const Nic& nic : topology.nics)
    std::printf("# NIC %-12s  %-20s  NUMA %2d  %-10s  %s\n", nic_bus_id(nic).c_str(), nic_label(nic).c_str(), nic.numa_node,
                std::string(to_string(nic.kind)).c_str(), nic.kind_reason.c_str());
  if (plan.control_nic) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(*plan.control_nic)];
    std::printf("# control NIC: %s (%s, %s)\n", nic_label(nic).c_str(), nic_bus_id(nic).c_str(), std::string(to_string(nic.kind)).c_str());
  } else {
    std::printf("# control NIC: none (%s)\n", plan.control_note.c_str());
  }
}

nlohmann::json nic_json(const Nic& nic) {
  return {{"name", nic_label(nic)},
          {"netdev", nic.interface_name},
          {"rdma_device", nic.rdma_device},
          {"bus_id", nic.address ? nlohmann::json(nic.address->to_string()) : nlohmann::json()},
          {"kind", std::string(to_string(nic.kind))},
          {"numa", nic.numa_node}};
}

nlohmann::json table_json(const Topology& topology, const NodePlan& plan, const std::string& host, const ModeDecision& decision) {
  nlohmann::json out{{"host", host},
                     {"topology", topology.source},
                     {"gpus", nlohmann::json::array()},
                     {"mode",
                      {{"requested", std::string(to_string(decision.requested))},
                       {"resolved", std::string(to_string(decision.mode))},
                       {"reason", decision.reason},
                       {"waits_for_rxdm", decision.wait_for_rxdm}}}};
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    const Gpu& gpu = topology.gpus[g];
    nlohmann::json nics = nlohmann::json::array();
    for (int n : plan.gpus[g].nics) nics.push_back(nic_json(topology.nics[static_cast<std::size_t>(n)]));
    out["gpus"].push_back({{"index", g},
                           {"bus_id", gpu.address.to_string()},
                           {"numa", gpu.numa_node},
                           {"cpus", gpu.local_cpus.to_list()},
                           {"nics", nics},
                           {"nic_fallback", plan.gpus[g].nic_fallback},
                           {"nic_note", plan.gpus[g].nic_note}});
  }
  out["nics"] = nlohmann::json::array();
  for (const Nic& nic : topology.nics) out["nics"].push_back(nic_json(nic));
  out["control_nic"] = plan.control_nic ? nic_json(topology.nics[static_cast<std::size_t>(*plan.control_nic)]) : nlohmann::json();
  if (!plan.control_nic) out["control_note"] = plan.control_note;
  return out;
}

// Compares the task's real environment and affinity with what plan_task says it should have.
int check_task(const Topology& topology, const NodePlan& plan, const PluginConfig& config, const std::map<std::string, std::string>& env,
               const std::string& host, nlohmann::json* json) {
  TaskSetupInput input;
  input.config = config;
  input.request.mode = parse_mode(env.at("GPUDIRECT_MODE"));
  input.env = env;
  input.allowed_cpus = CpuSet::of_this_thread();
  input.hostname = host;
  input.facts = probe_node_facts(config);
  const std::string root = container_root(env);
  const std::string in_container = input.request.mode == Mode::off ? "" : task_container_reason(root);
  // In a container the plugin dir is the host's, seen only where it is mounted. The plugin found it
  // on the host (the task started); its absence here is the missing mount's warning below, not a
  // reason to plan the task differently from the plugin.
  if (!in_container.empty()) {
    if (input.request.mode == Mode::tcpxo) input.facts.tcpxo_plugin = true;
    if (input.request.mode == Mode::tcpx) input.facts.tcpx_plugin = true;
    if (input.request.mode == Mode::gib) input.facts.gib_plugin = true;
  }
  std::vector<std::string> problems;
  TaskSetup setup;
  try {
    setup = plan_task(topology, plan, input);
  } catch (const TaskSetupError& e) {
    problems.push_back(e.what());
  }
  // In a container a variable that is not what the plugin set is the runtime's doing (the image's
  // value won, or the job's did not arrive): name the runtime's fix (doctor/container_env_check.hpp).
  const ContainerRuntime runtime = container_runtime(root, env);
  for (const EnvMismatch& mismatch : env_mismatches(setup.env, env))
    problems.push_back(in_container.empty()
                           ? mismatch.name + " is '" + mismatch.value.value_or("(unset)") + "', expected '" + mismatch.expected + "'"
                           : describe_env_mismatch(mismatch, runtime, std::string(to_string(setup.mode)), in_container));
  // NCCL that cannot load the network plugin its environment names would fail (with NCCL_NET) or
  // fall back to sockets without a word (without it): catch both before the job's NCCL does.
  const auto net_plugin = check_net_plugin(env);
  if (net_plugin && !net_plugin->problem.empty()) problems.push_back(net_plugin->problem);
  // A plugin built for a newer glibc than the task runs with (doctor/glibc_check.hpp).
  std::vector<std::string> warnings;
  if (net_plugin && net_plugin->library.find('/') != std::string::npos) {
    try {
      const GlibcCheck glibc = check_glibc_needs(net_plugin->library, elf_version_needs(net_plugin->library), ::gnu_get_libc_version(),
                                                 in_container.empty() ? "this node's" : "the container's");
      if (!glibc.problem.empty()) problems.push_back(glibc.problem);
    } catch (const ElfError& e) {
      warnings.push_back("cannot read the net plugin's glibc needs: " + std::string(e.what()));
    }
  }
  // A multi-node job in an NVLink domain needs its IMEX channel (doctor/imex_check.hpp).
  const ImexCheck imex = check_imex_channels(imex_root(env), host, job_nodes(env));
  if (!imex.problem.empty()) problems.push_back(imex.problem);
  const CpuSet actual = CpuSet::of_this_thread();
  if (setup.set_affinity && !(actual == setup.binding.cpus))
    problems.push_back("CPU affinity is " + actual.to_list() + ", expected " + setup.binding.cpus.to_list());
  // In a container the profile's paths exist only where they were mounted (a job without the
  // enroot hook or --container-mounts): say which mount is missing rather than leave NCCL to fail.
  if (const std::string problem = step_gpus_problem(env); !problem.empty()) problems.push_back(problem);
  if (const std::string problem = every_gpu_problem(env, static_cast<int>(topology.gpus.size())); !problem.empty())
    problems.push_back(problem);
  if (!setup.gpu_visibility_warning.empty()) warnings.push_back(setup.gpu_visibility_warning);
  if (!in_container.empty() && setup.mode != Mode::off) {
    try {
      for (const MissingMount& missing : missing_mounts(root, container_needs(config, setup.mode, env).mounts, setup.env))
        warnings.push_back(describe_missing_mount(missing, in_container));
    } catch (const ProfileError& e) {
      problems.push_back(e.what());
    }
  }
  const std::string who = "task " + (env.count("SLURM_PROCID") ? env.at("SLURM_PROCID") : std::string("?")) + " on " + host;
  if (!json)
    for (const auto& warning : warnings) std::printf("gpudirect doctor: %s: WARNING: %s\n", who.c_str(), warning.c_str());
  if (json) {
    (*json)["task"] = {{"ok", problems.empty()},
                       {"problems", problems},
                       {"warnings", warnings},
                       {"mode", env.at("GPUDIRECT_MODE")},
                       {"gpus", env.count("GPUDIRECT_GPUS") ? env.at("GPUDIRECT_GPUS") : ""},
                       {"nics", env.count("GPUDIRECT_NICS") ? env.at("GPUDIRECT_NICS") : ""},
                       {"cpus", actual.to_list()},
                       {"net_plugin", net_plugin ? nlohmann::json(net_plugin->library) : nlohmann::json()},
                       {"imex_channels", imex.applies ? nlohmann::json(imex.channels) : nlohmann::json()}};
  } else if (problems.empty()) {
    std::printf(
        "gpudirect doctor: %s: OK (mode %s, gpus %s, nics %s, cpus %s%s)\n", who.c_str(), env.at("GPUDIRECT_MODE").c_str(),
        env.count("GPUDIRECT_GPUS") ? env.at("GPUDIRECT_GPUS").c_str() : "",
        env.count("GPUDIRECT_NICS") ? env.at("GPUDIRECT_NICS").c_str() : "", actual.to_list().c_str(),
        (std::string(net_plugin ? ", net plugin " + net_plugin->library : "") + (imex.applies ? ", IMEX " + join(imex.channels) : ""))
            .c_str());
  } else {
    for (const auto& problem : problems) std::printf("gpudirect doctor: %s: MISMATCH: %s\n", who.c_str(), problem.c_str());
  }
  return problems.empty() ? kExitOk : kExitFailure;
}

// --container-mounts / --container-library-path: what a container needs for the mode asked with
// --mode, else the task's GPUDIRECT_MODE, else the plugstack default. Reads no topology unless the
// mode is auto.
int print_container_needs(const DoctorOptions& options, const PluginConfig& config, const std::map<std::string, std::string>& env) {
  ModeRequest request;
  if (!options.mode.empty()) {
    request.mode = parse_mode(options.mode);
  } else if (const auto it = env.find("GPUDIRECT_MODE"); it != env.end()) {
    try {
      request.mode = parse_mode(it->second);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("GPUDIRECT_MODE: " + std::string(e.what()));
    }
  }
  Mode mode = requested_mode(request, config);
  if (mode == Mode::auto_detect) {
    const Topology topology = config.topology.empty() ? load_live_topology() : load_topology_file(config.topology);
    mode = resolve_mode(request, config, topology, probe_node_facts(config)).mode;
  }
  const ContainerNeeds needs = container_needs(config, mode, env);
  if (options.container_library_path) {
    if (!needs.library_path.empty()) std::printf("%s\n", needs.library_path.c_str());
  } else if (options.container_env_names) {
    for (const std::string& name : needs.set_names) std::printf("%s\n", name.c_str());
  } else if (options.container_mounts == "fstab") {
    std::fputs(enroot_fstab(needs.mounts).c_str(), stdout);
  } else if (!needs.mounts.empty()) {
    // Apptainer's --bind takes the same SRC:DST[:ro] entries joined by ',' as pyxis.
    std::printf("%s\n", pyxis_container_mounts(needs.mounts).c_str());
  }
  // stdout stays empty for --container-mounts=$(...) in a job script: say why on stderr (the
  // fstab form is for the enroot hook, which needs no note).
  if (needs.mounts.empty() && (options.container_mounts == "pyxis" || options.container_mounts == "apptainer"))
    std::fprintf(stderr, "gpudirect doctor: mode %s needs no container mounts%s\n", std::string(to_string(mode)).c_str(),
                 options.mode.empty() && !env.count("GPUDIRECT_MODE") ? " (the plugstack default; give --mode MODE)" : "");
  return kExitOk;
}

int run_doctor(const DoctorOptions& options) {
  PluginConfig config;
  std::string plugstack = options.plugstack;
  if (plugstack.empty())
    if (auto found = find_plugstack_file()) plugstack = *found;
  if (!plugstack.empty()) config = read_plugstack_config(plugstack);
  if (!options.topology.empty()) config.topology = options.topology;
  if (!options.profile_dir.empty()) config.profile_dir = options.profile_dir;
  if (!options.container_mounts.empty() || options.container_library_path || options.container_env_names)
    return print_container_needs(options, config, bootstrap::current_environment());
  Topology topology = config.topology.empty() ? load_live_topology() : load_topology_file(config.topology);
  const std::string host = described_host(topology, !config.topology.empty());
  const NodePlan plan = plan_node(topology);
  ModeRequest request;
  if (!options.mode.empty()) request.mode = parse_mode(options.mode);
  // The same call the plugin makes before it decides whether to wait for RxDM and what to apply.
  const ModeDecision decision = resolve_mode(request, config, topology, probe_node_facts(config));
  const auto env = bootstrap::current_environment();
  const bool in_task = env.count("GPUDIRECT_MODE") > 0;
  if (options.check && !in_task) {
    std::fprintf(stderr, "gpudirect doctor: --check needs a task started with srun --gpu-direct (GPUDIRECT_MODE is not set)\n");
    return kExitFailure;
  }
  nlohmann::json json;
  int status = 0;
  if (options.json) json = table_json(topology, plan, host, decision);
  // Inside a task print one line per task (a table per task would repeat the node's table 8 times).
  if (in_task) {
    status = check_task(topology, plan, config, env, host_name(), options.json ? &json : nullptr);
  } else if (!options.json) {
    print_table(topology, plan, host, decision);
  }
  if (options.json) std::cout << json.dump(2) << "\n";
  return status;
}

}  // namespace

void register_doctor(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* doctor = app.add_subcommand("doctor",
                                        "Print this node's GPU/NIC/CPU binding table as the plugin computes it; inside a task started with "
                                        "srun --gpu-direct, check that the task's environment and CPU affinity match it (exit 1 if not).");
  doctor->add_option("--topology", options->topology, "hwloc XML or NCCL topology XML file instead of live discovery");
  doctor->add_option("--plugstack", options->plugstack,
                     "read topology=, lib_dir=, profile_dir= ... from the spank_gpudirect.so line of this plugstack.conf "
                     "(default: the one Slurm uses, found through $SLURM_CONF or /etc/slurm)");
  doctor->add_option("--profile-dir", options->profile_dir, "directory with network profiles (as profile_dir=)");
  doctor
      ->add_option("--mode", options->mode,
                   "show what --gpu-direct=MODE resolves to on this node (auto, tcpxo, tcpx, gib, rdma, off; "
                   "default: the plugstack default)")
      ->check(CLI::IsMember({"auto", "tcpxo", "tcpx", "gib", "rdma", "off"}));
  doctor->add_flag("--json", options->json, "print JSON instead of a table");
  doctor->add_flag("--check", options->check, "fail unless run inside a task started with --gpu-direct");
  CLI::Option* mounts = doctor
                            ->add_flag("--container-mounts{pyxis}", options->container_mounts,
                                       "print the host paths a container needs for the mode (--mode, else the task's GPUDIRECT_MODE, else "
                                       "the plugstack default), from its profile's mount lines: as pyxis's --container-mounts value "
                                       "(SRC:DST[:ro],...), with =apptainer as apptainer's --bind value (the same form), or with =fstab "
                                       "as enroot fstab lines (docs/containers.md)")
                            ->check(CLI::IsMember({"pyxis", "apptainer", "fstab"}));
  doctor
      ->add_flag("--container-library-path", options->container_library_path,
                 "print the directories the mode's profile puts first in LD_LIBRARY_PATH (for the enroot hook)")
      ->excludes(mounts);
  doctor
      ->add_flag("--container-env-names", options->container_env_names,
                 "print the names the mode's profile sets outright (NAME=value lines), one a line: the enroot hook takes an "
                 "image's own values of these out of the container's environment, so each task keeps the plugin's")
      ->excludes(mounts)
      ->excludes("--container-library-path");
  doctor->callback([options, &context] { context.exit_code = run_command("gpudirect doctor", [&] { return run_doctor(*options); }); });
}

}  // namespace gpudirect::launcher
