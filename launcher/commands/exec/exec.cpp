// `gpudirect-launch exec [--mode M] [--topology F] -- CMD ARGS...`: the plugin's binding for one
// process (GKE JobSet pods, Vertex AI custom jobs, torchrun workers, srun tasks). The local rank
// comes from torchrun-style variables, else from Slurm's; apply_task (task_apply.hpp), which the
// plugin's task_init calls too, decides and applies the GPUs, NICs, CPUs and network environment;
// then this process execs CMD.
#include "command_errors.hpp"
#include "command_registry.hpp"
#include "plugstack_file.hpp"

#include "bootstrap/launch_context.hpp"
#include "gpudirect/slurm_task_placement.hpp"
#include "gpudirect/task_apply.hpp"
#include "gpudirect/topology_sources.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace gpudirect::launcher {
namespace {

struct ExecOptions {
  std::string mode = "auto";
  std::string topology;
  std::string plugstack;
  std::string profile_dir;
  std::string lib_dir;
  bool verbose = false;
  std::vector<std::string> command;
};

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

// This process, as exec gives it its setup before it execs CMD.
class ThisProcess final : public TaskProcess {
 public:
  std::optional<std::string> get_env(const std::string& name) override {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  }
  bool set_env(const std::string& name, const std::string& value) override { return ::setenv(name.c_str(), value.c_str(), 1) == 0; }
};

// The message for a setup exec could not apply (the plugin words its own for slurmstepd's log).
std::string failure_message(const TaskApplyResult& applied) {
  using Failure = TaskApplyResult::Failure;
  switch (applied.failure) {
    case Failure::node_not_ready:
      return "the TCPXO receive-datapath manager (RxDM) is not ready: " + applied.detail +
             "; start the RxDM sidecar (its startup probe) first, or raise rxdm_timeout=";
    case Failure::plan:
      return applied.detail;
    case Failure::set_env:
      return "cannot set " + applied.detail + " in the environment";
    case Failure::bind_cpus:
      return "cannot bind to CPUs " + applied.setup.binding.cpus.to_list() + ": " + applied.detail +
             "; run with cpu_bind=off in the plugstack line";
    case Failure::none:
      break;
  }
  return "";
}

// Who this process is: under torchrun (or a pod that sets LOCAL_RANK) torchrun's names
// (LOCAL_RANK, LOCAL_WORLD_SIZE, RANK) go in the place plan_task reads Slurm's; a task srun started
// directly keeps Slurm's own variables.
std::map<std::string, std::string> task_environment(std::map<std::string, std::string> env) {
  const auto get = [&](const char* name, const char* fallback) {
    const auto it = env.find(name);
    return it == env.end() || it->second.empty() ? std::string(fallback) : it->second;
  };
  if (get("LOCAL_RANK", "").empty() && !get("SLURM_LOCALID", "").empty() && !get("SLURM_STEP_ID", "").empty()) return env;
  env["SLURM_LOCALID"] = get("LOCAL_RANK", "0");
  env["SLURM_LOCAL_TASKS"] = get("LOCAL_WORLD_SIZE", "1");
  env["SLURM_PROCID"] = get("RANK", env["SLURM_LOCALID"].c_str());
  // An outer srun's step (torchrun started by srun) is not this process's: its rank is torchrun's.
  for (const char* slurm : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
                            "SLURM_NODEID", "SLURM_CPU_BIND_TYPE", "SLURM_STEP_NODELIST", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS",
                            "SLURM_STEP_RESV_PORTS", "SLURM_GPUS_PER_TASK", kStepGpusVariable})
    env.erase(slurm);
  // A pod sees all its GPUs: each local rank takes its share of CUDA_VISIBLE_DEVICES, as Slurm's
  // --gpus-per-node does.
  if (const auto visible = env.find("CUDA_VISIBLE_DEVICES"); visible != env.end() && !visible->second.empty()) {
    int count = 1;
    for (char c : visible->second) count += c == ',';
    env["SLURM_GPUS_ON_NODE"] = std::to_string(count);
  }
  return env;
}

int run_exec(const ExecOptions& options) {
  if (options.command.empty()) {
    std::fprintf(stderr, "gpudirect exec: no command: give it after --, e.g. gpudirect-launch exec -- python train.py\n");
    return kExitUsage;
  }
  PluginConfig config;
  std::string plugstack = options.plugstack;
  if (plugstack.empty())
    if (auto found = find_plugstack_file()) plugstack = *found;
  if (!plugstack.empty()) config = read_plugstack_config(plugstack);
  if (!options.topology.empty()) config.topology = options.topology;
  if (!options.profile_dir.empty()) config.profile_dir = options.profile_dir;
  if (!options.lib_dir.empty()) config.lib_dir = options.lib_dir;

  TaskSetupInput input;
  input.request = parse_mode_request(options.mode);
  input.request.verbose = input.request.verbose || options.verbose;
  input.request.torch = true;  // a program exec starts is usually torch's; every variable is ?=
  input.config = config;
  input.hostname = host_name();
  input.env = task_environment(bootstrap::current_environment());
  input.allowed_cpus = CpuSet::of_this_thread();
  input.facts = probe_node_facts(config);

  const Topology topology = config.topology.empty() ? load_live_topology() : load_topology_file(config.topology);
  const NodePlan plan = plan_node(topology);
  // The plugin's rule and order: RxDM is waited for when the resolved mode needs it, before the plan.
  const NodeReadiness readiness = wait_for_node_readiness(resolve_mode(input.request, config, topology, input.facts), config);
  ThisProcess process;
  const TaskApplyResult applied = apply_task(topology, plan, input, readiness, process);
  if (applied.failure != TaskApplyResult::Failure::none) {
    std::fprintf(stderr, "gpudirect exec: %s\n", failure_message(applied).c_str());
    return kExitFailure;
  }
  const TaskSetup& setup = applied.setup;
  if (input.request.verbose) std::fprintf(stderr, "%s\n", setup.summary.c_str());

  std::vector<char*> argv;
  for (const std::string& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "gpudirect exec: cannot run %s: %s\n", argv[0], std::strerror(errno));
  return errno == ENOENT ? kExitNotFound : kExitCannotRun;
}

}  // namespace

void register_exec(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<ExecOptions>();
  CLI::App* exec =
      app.add_subcommand("exec",
                         "Give one process the plugin's binding, then exec CMD: its GPU(s) by LOCAL_RANK of LOCAL_WORLD_SIZE "
                         "(torchrun-style; CUDA_VISIBLE_DEVICES shared out the same way), or under srun without LOCAL_RANK by the "
                         "task's Slurm numbers; their NICs and local CPUs, the network environment of the mode (GKE JobSet pods, "
                         "Vertex AI custom jobs, torchrun workers), and torch.distributed's variables (RANK, WORLD_SIZE, LOCAL_RANK, "
                         "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the Slurm step; GLOO_SOCKET_IFNAME: the process's NICs), "
                         "each only where not set already.");
  exec->add_option("--mode", options->mode, "auto (default), tcpxo, tcpx, gib, rdma or off, optionally ',verbose'");
  exec->add_option("--topology", options->topology, "hwloc XML or NCCL topology XML file instead of live discovery");
  exec->add_option("--plugstack", options->plugstack,
                   "read topology=, lib_dir=, profile_dir= ... from the spank_gpudirect.so line of this plugstack.conf "
                   "(default: the one Slurm uses, if any)");
  exec->add_option("--profile-dir", options->profile_dir, "directory with network profiles (as profile_dir=)");
  exec->add_option("--lib-dir", options->lib_dir, "the TCPXO/TCPX NCCL plugin directory (as lib_dir=)");
  exec->add_flag("--verbose", options->verbose, "print the binding line on stderr before running CMD");
  exec->add_option("command", options->command, "CMD ARGS... after --")->required();
  exec->callback([options, &context] { context.exit_code = run_command("gpudirect exec", [&] { return run_exec(*options); }); });
}

}  // namespace gpudirect::launcher
