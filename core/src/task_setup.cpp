#include "gpudirect/task_setup.hpp"

#include "gpudirect/gib_machine.hpp"
#include "gpudirect/gpu_selection.hpp"
#include "gpudirect/network_interfaces.hpp"
#include "gpudirect/gpu_visibility.hpp"
#include "gpudirect/slurm_task_placement.hpp"
#include "gpudirect/text.hpp"
#include "gpudirect/torch_env.hpp"

#include <algorithm>

namespace gpudirect {
namespace {

std::string env_or(const std::map<std::string, std::string>& env, const std::string& name, const std::string& fallback = "") {
  const auto it = env.find(name);
  return it == env.end() ? fallback : it->second;
}

int env_int(const std::map<std::string, std::string>& env, const std::string& name, int fallback) {
  const auto it = env.find(name);
  if (it == env.end()) return fallback;
  return try_parse_integer<int>(it->second, 0, 1 << 20).value_or(fallback);
}

bool is_efa(const std::string& rdma) { return rdma.starts_with("rdmap") || rdma.starts_with("efa"); }

// The count of SLURM_GPUS_PER_TASK: "2", or "TYPE:2" for a typed request; 0 when unset or unreadable.
int gpus_per_task(const std::map<std::string, std::string>& env) {
  const std::string text = env_or(env, "SLURM_GPUS_PER_TASK");
  const auto count = try_parse_integer<int>(std::string_view(text).substr(text.rfind(':') + 1), 1, 1 << 20);
  return count.value_or(0);
}

// The entries of the task's CUDA_VISIBLE_DEVICES (0 when unset, empty or "NoDevFiles").
int visible_gpu_count(const std::map<std::string, std::string>& env) {
  const std::string visible(trim(env_or(env, "CUDA_VISIBLE_DEVICES")));
  if (visible.empty() || visible == "NoDevFiles") return 0;
  return static_cast<int>(split(visible, ',').size());
}

// Every refusal names the node: "on <node>: <what>".
struct Fail {
  std::string node;
  TaskSetupError operator()(const std::string& what) const { return TaskSetupError("on " + node + ": " + what); }
};

// The GPUs the task owns (gpu_selection.hpp). GPU-/MIG- UUIDs name the (parent) GPUs themselves;
// Slurm's indices then count MIG slices, not GPUs, so the UUIDs alone decide.
std::vector<int> select_gpus(const Topology& topology, const TaskSetupInput& input, const SlurmTaskPlacement& placement, Mode mode,
                             const Fail& fail) {
  const auto& env = input.env;
  GpuSelectionInput selection;
  selection.slurm_step_gpus = env_or(env, "SLURM_STEP_GPUS", env_or(env, "SLURM_JOB_GPUS"));
  selection.cuda_visible_devices_set = env.count("CUDA_VISIBLE_DEVICES") > 0;
  selection.cuda_visible_devices = env_or(env, "CUDA_VISIBLE_DEVICES");
  try {
    GpuUuidResolver& resolver = input.uuid_resolver ? *input.uuid_resolver : nvml_resolver();
    const std::string step_name = env.count("SLURM_STEP_GPUS") ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";
    const std::string visible = gpu_uuids_to_indices(selection.cuda_visible_devices, "CUDA_VISIBLE_DEVICES", topology, resolver);
    if (visible != selection.cuda_visible_devices) {
      selection.cuda_visible_devices = visible;
      selection.slurm_step_gpus.clear();
    } else {
      selection.slurm_step_gpus = gpu_uuids_to_indices(selection.slurm_step_gpus, step_name, topology, resolver);
      selection.step_gpus_on_node = gpu_uuids_to_indices(placement.step_gpus_on_node, step_name, topology, resolver);
    }
  } catch (const GpuUuidError& e) {
    throw fail(e.what());
  }
  selection.gpus_on_node = env_int(env, "SLURM_GPUS_ON_NODE", 0);
  selection.gpus_per_task = gpus_per_task(env);
  selection.local_rank = placement.local_rank;
  selection.local_size = placement.local_size;
  selection.gpu_count = static_cast<int>(topology.gpus.size());
  std::vector<int> gpus;
  try {
    gpus = select_task_gpus(selection);
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  if (gpus.empty())
    throw fail("--gpu-direct=" + std::string(to_string(mode)) + " needs GPUs, but " +
               (topology.gpus.empty() ? "the topology (" + topology.source + ") has none" : std::string("this task was given none")) +
               ": request GPUs (--gpus-per-task=1) or use --gpu-direct=off");
  return gpus;
}

// The mode's NCCL net plugin must be in its lib dir.
void check_net_plugin(Mode mode, const NodeFacts& facts, const std::string& lib_dir, const Fail& fail) {
  if (mode == Mode::tcpxo && !facts.tcpxo_plugin)
    throw fail("the TCPXO NCCL plugin is missing: no libnccl-net.so in " + lib_dir +
               "; install it on the node (scripts/install-node.sh) or point lib_dir= in plugstack.conf at it");
  if (mode == Mode::tcpx && !facts.tcpx_plugin)
    throw fail("the TCPX NCCL plugin is missing: no libnccl-net.so in " + lib_dir +
               "; install it on the node or point lib_dir= in plugstack.conf at it");
  if (mode == Mode::gib && !facts.gib_plugin)
    throw fail("the gIB NCCL plugin is missing: no libnccl-net.so in " + lib_dir +
               "; install Google's nccl-gib package on the node (it installs /usr/local/gib) or point lib_dir= in "
               "plugstack.conf at its lib64");
}

// The names the profile's placeholders are given: the task's NICs and RDMA devices, and the
// node's data, control and host NICs.
struct NicNames {
  std::vector<std::string> task_nics, data_nics, host_nics, rdma, ib, efa;
  std::string control;
};

NicNames nic_names_of(const Topology& topology, const NodePlan& plan, const TaskBinding& binding) {
  const auto nic_at = [&](int n) -> const Nic& { return topology.nics[static_cast<std::size_t>(n)]; };
  NicNames names;
  for (int n : binding.nics) {
    const Nic& nic = nic_at(n);
    if (!nic.interface_name.empty()) names.task_nics.push_back(nic.interface_name);
    if (!nic.rdma_device.empty()) {
      names.rdma.push_back(nic.rdma_device);
      (is_efa(nic.rdma_device) ? names.efa : names.ib).push_back(nic.rdma_device);
    }
  }
  for (int n : plan.data_nics)
    if (const Nic& nic = nic_at(n); !nic.interface_name.empty()) names.data_nics.push_back(nic.interface_name);
  names.control = plan.control_nic ? nic_at(*plan.control_nic).interface_name : "";
  for (int n : plan.host_nics)
    if (const Nic& nic = nic_at(n); !nic.interface_name.empty()) names.host_nics.push_back(nic.interface_name);
  return names;
}

// A topology file names the NICs of the node it was saved on: on a node whose interfaces are
// named otherwise the profile would hand NCCL names that do not exist here.
void check_interfaces_exist(const Topology& topology, const NicNames& names, const std::vector<std::string>& present, const Fail& fail) {
  std::vector<std::string> named = names.data_nics;
  named.insert(named.end(), names.task_nics.begin(), names.task_nics.end());
  named.insert(named.end(), names.host_nics.begin(), names.host_nics.end());
  if (!names.control.empty()) named.push_back(names.control);
  const auto missing = missing_interfaces(named, present);
  if (missing.empty()) return;
  std::vector<std::string> here(present.begin(), present.begin() + std::min<std::ptrdiff_t>(16, std::ssize(present)));
  if (present.size() > here.size()) here.push_back("...");
  throw fail("the topology (" + topology.source + ") names network interface" + (missing.size() > 1 ? "s " : " ") +
             quote_bounded(join(missing), 128) + " that this node does not have (it has " + quote_bounded(join(here), 256) +
             "): NCCL would be given NICs that do not exist. "
             "Give the node the interface names of its machine type, or set topology= in plugstack.conf to a file saved on "
             "such a node (lstopo --of xml), or leave topology= unset so the plugin reads the node itself");
}

// rdma and gib need RDMA devices on the task's NICs.
void check_mode_has_nics(Mode mode, const NicNames& names, const Fail& fail) {
  if (mode == Mode::rdma && names.rdma.empty())
    throw fail(
        "--gpu-direct=rdma needs RDMA NICs next to the task's GPUs, and none has an RDMA device: "
        "use --gpu-direct=tcpxo/tcpx on Google A3 nodes, or off");
  if (mode == Mode::gib && names.ib.empty())
    throw fail(
        "--gpu-direct=gib needs the RoCE NICs next to the task's GPUs (A3 Ultra, A4, A4X: one per GPU), and none has an "
        "RDMA device here: check the NICs' driver (ibv_devices lists them), use --gpu-direct=tcpxo/tcpx on A3 "
        "Mega/High nodes, or off");
}

// Why a placeholder the profile uses came out empty, appended to the ProfileError's message.
std::string explain_profile_error(std::string why, const Topology& topology, const NodePlan& plan, const TaskBinding& binding,
                                  const GibMachine& machine) {
  if (why.find("${GIB_MACHINE}") != std::string::npos) {
    why += " (" + machine.why +
           "): set gib_machine= in plugstack.conf to the machine of the tuner config to use, e.g. "
           "gib_machine=a4 for /usr/local/gib/configs/tuner_config_a4.txtpb";
  } else if (why.find("${CTRL_NIC}") != std::string::npos || why.find("${HOST_NICS}") != std::string::npos) {
    // Say why there is no control NIC name rather than leave an empty one to the profile.
    if (!plan.control_nic)
      why += " (" + plan.control_note + ")";
    else
      why += " (the control NIC " + nic_bus_id(topology.nics[static_cast<std::size_t>(*plan.control_nic)]) +
             " has no network interface on this node: check its driver, or give a topology file with its name)";
  } else if ((why.find("${DATA_NICS}") != std::string::npos || why.find("${TASK_NICS}") != std::string::npos) && !binding.gpus.empty()) {
    const int g = binding.gpus.front();
    const std::string& note = plan.gpus[static_cast<std::size_t>(g)].nic_note;
    if (!note.empty()) why += " (GPU " + std::to_string(g) + ": " + note + ")";
  }
  return why;
}

// The mode's profile rendered for this task: the caller's copy when it loaded that profile already.
std::vector<EnvAction> render_profile(const Topology& topology, const NodePlan& plan, const TaskSetupInput& input, const TaskSetup& setup,
                                      const NicNames& names, const std::vector<std::string>& gpu_ids, const std::string& lib_dir,
                                      const Fail& fail) {
  // A tuner config per machine: from the plugstack line, else from the GPUs.
  const GibMachine machine = input.config.gib_machine.empty() ? gib_machine(topology) : GibMachine{input.config.gib_machine, ""};
  const ProfileInputs inputs{{"TASK_NICS", join(names.task_nics)},
                             {"DATA_NICS", join(names.data_nics)},
                             {"CTRL_NIC", names.control},
                             {"HOST_NICS", join(names.host_nics)},
                             {"TASK_RDMA_DEVICES", join(names.rdma)},
                             {"TASK_IB_HCAS", join(names.ib)},
                             {"TASK_EFA_DEVICES", join(names.efa)},
                             {"LIB_DIR", lib_dir},
                             {"GIB_MACHINE", machine.name},
                             {"GIB_IMAGE", gib_image_machine(machine)},
                             {"SLURM_JOB_ID", env_or(input.env, "SLURM_JOB_ID")},
                             {"TASK_GPUS", join(gpu_ids)}};
  const std::string profile_name = profile_name_for(input.config, setup.mode);
  try {
    if (input.profile && input.profile->name == profile_name) return render(*input.profile, inputs);
    return render(load_profile(profile_name, profile_search_path(input.config)), inputs);
  } catch (const ProfileError& e) {
    throw fail(explain_profile_error(e.what(), topology, plan, setup.binding, machine));
  }
}

// What the mode's transport calls a NIC: the RDMA device for rdma and gib (NCCL_IB_HCA), the netdev
// for socket-based transports (TCPX/TCPXO); the bus id when the NIC has neither name here.
std::vector<std::string> transport_nic_names(const Topology& topology, Mode mode, const std::vector<int>& nics) {
  std::vector<std::string> names;
  const bool verbs = mode == Mode::rdma || mode == Mode::gib;
  for (int n : nics) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(n)];
    const std::string& preferred = verbs ? nic.rdma_device : nic.interface_name;
    const std::string& other = verbs ? nic.interface_name : nic.rdma_device;
    names.push_back(!preferred.empty() ? preferred : !other.empty() ? other : nic_bus_id(nic));
  }
  return names;
}

// torch.distributed's variables (torch_env.hpp), GLOO_SOCKET_IFNAME from the task's NICs.
std::vector<EnvAction> torch_env(const Topology& topology, const TaskSetupInput& input, const TaskBinding& binding, const Fail& fail) {
  std::vector<std::string> interfaces;
  for (int n : binding.nics)
    if (const std::string& name = topology.nics[static_cast<std::size_t>(n)].interface_name; !name.empty()) interfaces.push_back(name);
  try {
    return torch_distributed_env(input.env, interfaces);
  } catch (const std::invalid_argument& e) {
    throw fail(std::string("cannot give the task torch.distributed's variables: ") + e.what() +
               " (drop ',torch' from --gpu-direct, or set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT yourself)");
  }
}

// The one verbose line.
std::string task_summary(const Topology& topology, const TaskSetupInput& input, const TaskSetup& setup, const std::string& node,
                         const std::vector<std::string>& gpu_ids, const std::vector<std::string>& nic_names) {
  const auto& env = input.env;
  std::vector<std::string> buses;
  for (int g : setup.binding.gpus) buses.push_back(topology.gpus[static_cast<std::size_t>(g)].address.to_string());
  std::vector<std::string> numa;
  for (int n : setup.binding.numa_nodes) numa.push_back(std::to_string(n));
  std::string summary = "gpudirect: " + node + " task " + env_or(env, "SLURM_PROCID", "?") + " (local " +
                        env_or(env, "SLURM_LOCALID", "?") + "): mode " + std::string(to_string(setup.mode)) + " gpus " + join(gpu_ids) +
                        " [" + join(buses) + "] nics " + join(nic_names) + " cpus " + setup.binding.cpus.to_list() +
                        (setup.set_affinity ? "" : " (not bound)") + " numa " + (numa.empty() ? std::string("?") : join(numa));
  if (!setup.mode_reason.empty()) summary += " [" + setup.mode_reason + "]";
  if (!setup.binding.warning.empty()) summary += "; warning: " + setup.binding.warning;
  if (!setup.gpu_visibility_warning.empty()) summary += "; warning: " + setup.gpu_visibility_warning;
  return summary;
}

}  // namespace

std::string profile_name_for(const PluginConfig& config, Mode mode) {
  return mode == Mode::tcpxo ? config.tcpxo_profile : std::string(to_string(mode));
}

TaskSetup plan_task(const Topology& topology, const NodePlan& plan, const TaskSetupInput& input) {
  const std::string node = input.hostname.empty() ? std::string("this node") : input.hostname;
  const Fail fail{node};

  TaskSetup setup;
  const ModeDecision decision = resolve_mode(input.request, input.config, topology, input.facts);
  setup.mode = decision.mode;
  setup.mode_reason = decision.reason;
  if (setup.mode == Mode::off) {
    setup.summary =
        "gpudirect: " + node + ": mode off" + (setup.mode_reason.empty() ? "" : " [" + setup.mode_reason + "]") + ", environment untouched";
    return setup;
  }

  SlurmTaskPlacement placement;
  try {
    placement = slurm_task_placement(input.env);
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  const std::vector<int> gpus = select_gpus(topology, input, placement, setup.mode, fail);
  try {
    setup.binding = bind_task(topology, plan, gpus, input.allowed_cpus);
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  const std::string lib_dir = lib_dir_for(input.config, setup.mode);
  check_net_plugin(setup.mode, input.facts, lib_dir, fail);
  const NicNames names = nic_names_of(topology, plan, setup.binding);
  if (input.node_interfaces) check_interfaces_exist(topology, names, *input.node_interfaces, fail);
  check_mode_has_nics(setup.mode, names, fail);

  std::vector<std::string> gpu_ids;
  for (int g : setup.binding.gpus) gpu_ids.push_back(std::to_string(g));
  setup.env = render_profile(topology, plan, input, setup, names, gpu_ids, lib_dir, fail);
  const std::vector<std::string> nic_names = transport_nic_names(topology, setup.mode, setup.binding.nics);
  setup.env.push_back({"CUDA_DEVICE_ORDER", "PCI_BUS_ID", EnvActionKind::set_if_unset});
  setup.env.push_back({"GPUDIRECT_MODE", std::string(to_string(setup.mode)), EnvActionKind::set});
  setup.env.push_back({"GPUDIRECT_GPUS", join(gpu_ids), EnvActionKind::set});
  setup.env.push_back({"GPUDIRECT_NICS", join(nic_names), EnvActionKind::set});
  setup.env.push_back({"GPUDIRECT_CPUS", setup.binding.cpus.to_list(), EnvActionKind::set});
  // What the GPUs were chosen from, for the doctor and exec inside the task (slurm_task_placement.hpp).
  if (!placement.step_gpus_on_node.empty()) setup.env.push_back({kStepGpusVariable, placement.step_gpus_on_node, EnvActionKind::set});
  if (input.request.torch) {
    const std::vector<EnvAction> torch = torch_env(topology, input, setup.binding, fail);
    setup.env.insert(setup.env.end(), torch.begin(), torch.end());
  }

  // An explicit --cpu-bind from the user wins over ours: srun exports SLURM_CPU_BIND_TYPE to the
  // task only when the user (or SLURM_CPU_BIND in the environment) asked for a binding.
  const bool user_bound = !env_or(input.env, "SLURM_CPU_BIND_TYPE").empty();
  setup.set_affinity = input.config.cpu_bind && !user_bound && !setup.binding.cpus.empty();
  setup.gpu_visibility_warning = own_gpus_only_warning(placement.local_size, visible_gpu_count(input.env), static_cast<int>(gpus.size()));
  setup.summary = task_summary(topology, input, setup, node, gpu_ids, nic_names);
  return setup;
}

std::map<std::string, std::string> apply_env(const std::vector<EnvAction>& actions, std::map<std::string, std::string> env) {
  for (const EnvAction& action : actions) {
    const auto it = env.find(action.name);
    const std::optional<std::string> current = it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    if (auto next = apply_env_action(action, current)) env[action.name] = *next;
  }
  return env;
}

}  // namespace gpudirect
