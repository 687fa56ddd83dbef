#include "gpudirect/container_mounts.hpp"

#include <algorithm>

#include "gpudirect/task_setup.hpp"

#include <stdexcept>

namespace gpudirect {

ContainerNeeds container_needs(const PluginConfig& config, Mode mode, const std::map<std::string, std::string>& env) {
  if (mode == Mode::auto_detect) throw std::invalid_argument("container_needs: resolve mode auto first (resolve_mode)");
  ContainerNeeds needs;
  if (mode == Mode::off) return needs;
  const NetworkProfile profile = load_profile(profile_name_for(config, mode), profile_search_path(config));
  const auto job = env.find("SLURM_JOB_ID");
  const ProfileInputs inputs{{"LIB_DIR", lib_dir_for(config, mode)}, {"SLURM_JOB_ID", job == env.end() ? std::string() : job->second}};
  needs.mounts = render_mounts(profile, inputs);

  // Only the LD_LIBRARY_PATH lines: the rest of the environment is per task (NICs) and reaches the
  // task through the plugin, not through the container's image.
  NetworkProfile library_lines{profile.name, profile.origin, {}, {}};
  for (const ProfileLine& line : profile.lines)
    if (line.name == "LD_LIBRARY_PATH" && line.kind == EnvActionKind::prepend_path) library_lines.lines.push_back(line);
  const auto env_after = apply_env(render(library_lines, inputs), {});
  if (const auto it = env_after.find("LD_LIBRARY_PATH"); it != env_after.end()) needs.library_path = it->second;
  for (const ProfileLine& line : profile.lines)
    if (line.kind == EnvActionKind::set && std::find(needs.set_names.begin(), needs.set_names.end(), line.name) == needs.set_names.end())
      needs.set_names.push_back(line.name);
  return needs;
}

std::string pyxis_container_mounts(const std::vector<ContainerMount>& mounts) {
  std::string out;
  for (const ContainerMount& mount : mounts)
    out += (out.empty() ? "" : ",") + mount.source + ":" + mount.destination + (mount.read_only ? ":ro" : "");
  return out;
}

std::string enroot_fstab(const std::vector<ContainerMount>& mounts) {
  std::string out;
  for (const ContainerMount& mount : mounts)
    out += mount.source + " " + mount.destination + " none x-create=auto,rbind" + (mount.read_only ? ",ro" : "") + "\n";
  return out;
}

}  // namespace gpudirect
