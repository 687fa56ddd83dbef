#include "doctor/container_check.hpp"

#include "gpudirect/container_mounts.hpp"
#include "gpudirect/text.hpp"

#include <filesystem>
#include <fstream>

namespace gpudirect::launcher {
namespace {

std::string under(const std::string& root, const std::string& path) {
  return root.empty() || root == "/" ? path : (root.back() == '/' ? root.substr(0, root.size() - 1) : root) + path;
}

bool exists(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored);
}

// enroot's import starts /etc/rc with "# enroot-provenance: URI" (enroot src/docker.sh).
bool enroot_imported(const std::string& root) {
  std::ifstream rc(under(root, "/etc/rc"));
  std::string first;
  return rc && std::getline(rc, first) && first.starts_with("# enroot-provenance:");
}

}  // namespace

std::string container_marker(const std::string& root) {
  // Docker, Podman/CRI-O, an enroot bundle: each leaves its own file at the root.
  for (const char* marker : {"/.dockerenv", "/run/.containerenv", "/.enroot"})
    if (exists(under(root, marker))) return marker;
  if (enroot_imported(root)) return "/etc/rc of an enroot image";
  return "";
}

std::vector<MissingMount> missing_mounts(const std::string& root, const std::vector<ContainerMount>& mounts,
                                         const std::vector<EnvAction>& env) {
  std::vector<MissingMount> missing;
  for (const ContainerMount& mount : mounts) {
    if (exists(under(root, mount.destination))) continue;
    MissingMount entry{mount, {}};
    for (const EnvAction& action : env) {
      // Values are path lists (':') or name lists (','): any item in the mount names it.
      bool named = false;
      for (const std::string_view path_item : split(action.value, ':'))
        for (const std::string_view item : split(path_item, ',')) named = named || is_path_within(item, mount.destination);
      if (named) entry.named_by.push_back(action.name);
    }
    missing.push_back(std::move(entry));
  }
  return missing;
}

std::string describe_missing_mount(const MissingMount& missing, const std::string& marker) {
  const std::string& path = missing.mount.destination;
  return "in a container (" + marker + ") without " + path +
         (missing.named_by.empty() ? std::string() : " (named by " + join(missing.named_by, ", ") + ")") +
         ": mount it, e.g. srun --container-mounts=" + pyxis_container_mounts({missing.mount}) +
         ", or install gpudirect-slurm's enroot hook on the node (docs/containers.md)";
}

}  // namespace gpudirect::launcher
