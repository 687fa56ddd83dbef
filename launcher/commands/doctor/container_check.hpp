// Inside a container, the paths a task's environment names (the plugin dir, device and socket
// directories) exist only where they were mounted. The doctor finds out whether it runs in a
// container and which of the mode's mounts are missing there, and names the mount that fixes it.
#pragma once

#include "gpudirect/network_profile.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher {

// The file that shows `root` is a container's root file system ("/.dockerenv", "/run/.containerenv",
// "/.enroot", or "/etc/rc" as enroot's image import writes it); "" when there is none.
std::string container_marker(const std::string& root);

struct MissingMount {
  ContainerMount mount;
  std::vector<std::string> named_by;  // the variables whose values name a path in it
};

// The mounts whose destination does not exist under `root`, with the variables of `env` that name it.
std::vector<MissingMount> missing_mounts(const std::string& root, const std::vector<ContainerMount>& mounts,
                                         const std::vector<EnvAction>& env);

// "in a container (MARKER) without DEST (named by A, B): mount it, e.g. srun --container-mounts=..."
std::string describe_missing_mount(const MissingMount& missing, const std::string& marker);

}  // namespace gpudirect::launcher
