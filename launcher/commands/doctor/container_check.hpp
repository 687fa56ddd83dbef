// Inside a container, the paths a task's environment names (the plugin dir, device and socket
// directories) exist only where they were mounted. The doctor finds out whether it runs in a
// container and which of the mode's mounts are missing there, and names the mount that fixes it.
#pragma once

#include "gpudirect/network_profile.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher {

// The file that shows `root` is a container's root file system ("/.dockerenv", "/run/.containerenv",
// "/.enroot", Apptainer's "/.singularity.d", or "/etc/rc" or "/etc/rc.local" as enroot's image import writes
// them); "" when there is none.
std::string container_marker(const std::string& root);

// The mount a process sees at "/" (the last one mounted there): its file system (major:minor) and
// the directory of that file system it shows. Two processes with the same root agree on both.
struct RootMount {
  std::string device;
  std::string directory;
  bool operator==(const RootMount&) const = default;
};

// From a /proc/PID/mountinfo text; nullopt when nothing is mounted at "/" in it.
std::optional<RootMount> root_mount(const std::string& mountinfo);

// The root mount of process `pid` under `proc` ("/proc"; a stand-in directory in tests); nullopt
// when its mountinfo cannot be read.
std::optional<RootMount> root_mount_of(const std::string& proc, int pid);

// The nearest ancestor of `pid` whose command is slurmstepd; nullopt when none is seen (not under
// Slurm, or a PID namespace hides it).
std::optional<int> slurmstepd_ancestor(const std::string& proc, int pid);

// Why a task is in a container; "" when it is not. The rule: its root is not its slurmstepd's (a
// host that is itself a container, slurmd in a pod, gives its tasks its own root and marker files:
// they are not in a container of their own). Where no slurmstepd's root is known, `marker` (from
// container_marker) decides.
std::string container_reason(const std::optional<RootMount>& task, const std::optional<RootMount>& slurmstepd, const std::string& marker);

struct MissingMount {
  ContainerMount mount;
  std::vector<std::string> named_by;  // the variables whose values name a path in it
};

// The mounts whose destination does not exist under `root`, with the variables of `env` that name it.
std::vector<MissingMount> missing_mounts(const std::string& root, const std::vector<ContainerMount>& mounts,
                                         const std::vector<EnvAction>& env);

// "in a container (REASON) without DEST (named by A, B): mount it, e.g. srun --container-mounts=..."
std::string describe_missing_mount(const MissingMount& missing, const std::string& reason);

}  // namespace gpudirect::launcher
