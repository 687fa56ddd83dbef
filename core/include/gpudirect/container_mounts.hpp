// What a container (enroot/pyxis, a GKE pod) must see of the host for a mode to work: the mode's
// profile names it in its `mount` lines, next to the environment that points at those paths, so
// the two cannot drift apart. Printed by `gpudirect-launch doctor --container-mounts` in pyxis's
// and enroot's forms; applied by the enroot hook (scripts/enroot/50-gpudirect.sh).
#pragma once

#include "gpudirect/mode.hpp"
#include "gpudirect/network_profile.hpp"
#include "gpudirect/plugin_config.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpudirect {

struct ContainerNeeds {
  std::vector<ContainerMount> mounts;
  // The directories the profile puts first in LD_LIBRARY_PATH (':'-separated; "" = none): a
  // container's environment comes from its image, which must not hide them (see the hook).
  std::string library_path;
  // The names the profile sets outright (NAME=value lines, not ?= or +=), in its order: the task's
  // values of these must win over an image's own (NGC images set NCCL_*), so the hook takes the
  // image's lines for them out of the container's environment and pyxis leaves each task its own.
  std::vector<std::string> set_names;
};

// For a resolved mode (not auto): the mode's profile (profile_name_for, profile_search_path)
// rendered with this node's lib dir (lib_dir_for) and env's SLURM_JOB_ID. Mode off needs nothing.
// Throws ProfileError (no profile, a bad mount line) naming the file and line.
ContainerNeeds container_needs(const PluginConfig& config, Mode mode, const std::map<std::string, std::string>& env);

// pyxis's --container-mounts value: SRC:DST[:ro] joined by ',' ("" for no mounts). pyxis adds
// x-create=auto,rbind itself.
std::string pyxis_container_mounts(const std::vector<ContainerMount>& mounts);

// enroot's fstab lines (doc/image-format.md: DST inside the rootfs), one per mount, each ending in
// '\n': "SRC DST none x-create=auto,rbind[,ro]", the entry pyxis writes for the same mount.
std::string enroot_fstab(const std::vector<ContainerMount>& mounts);

}  // namespace gpudirect
