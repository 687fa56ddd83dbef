#include "doctor/container_check.hpp"

#include "gpudirect/container_mounts.hpp"
#include "gpudirect/text.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpudirect::launcher {
namespace {

std::string under(const std::string& root, const std::string& path) {
  return root.empty() || root == "/" ? path : (root.back() == '/' ? root.substr(0, root.size() - 1) : root) + path;
}

bool exists(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored);
}

// The first line of `path` under `root` starts with `text`.
bool starts_with_line(const std::string& root, const std::string& path, const std::string& text) {
  std::ifstream file(under(root, path));
  std::string first;
  return file && std::getline(file, first) && first.starts_with(text);
}

// enroot's import starts /etc/rc with "# enroot-provenance: URI" (enroot after 4.1.2,
// src/docker.sh); enroot 4.1.2 and before write an /etc/rc.local that starts with this comment.
bool enroot_imported(const std::string& root) {
  return starts_with_line(root, "/etc/rc", "# enroot-provenance:") ||
         starts_with_line(root, "/etc/rc.local", "# This file is sourced by /etc/rc when the container starts.");
}

}  // namespace

std::string container_marker(const std::string& root) {
  // Docker, Podman/CRI-O, an enroot bundle, an Apptainer image: each leaves its own file at the root.
  for (const char* marker : {"/.dockerenv", "/run/.containerenv", "/.enroot", "/.singularity.d"})
    if (exists(under(root, marker))) return marker;
  if (enroot_imported(root)) return "/etc/rc of an enroot image";
  return "";
}

std::optional<RootMount> root_mount(const std::string& mountinfo) {
  // "36 35 98:0 /dir /mount/point options... - fstype source options": fields 3, 4 and 5.
  std::optional<RootMount> found;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, directory, mount_point;
    if (fields >> id >> parent >> device >> directory >> mount_point && mount_point == "/") found = RootMount{device, directory};
  }
  return found;
}

std::optional<RootMount> root_mount_of(const std::string& proc, int pid) {
  std::ifstream file(proc + "/" + std::to_string(pid) + "/mountinfo");
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return root_mount(text.str());
}

std::optional<int> slurmstepd_ancestor(const std::string& proc, int pid) {
  // /proc/PID/stat is "PID (COMM) STATE PPID ..."; COMM may hold spaces and parentheses, so the
  // fields after it start at the last ')'.
  for (int depth = 0; depth < 64 && pid > 1; ++depth) {
    std::ifstream file(proc + "/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!file || !std::getline(file, stat)) return std::nullopt;
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    if (depth > 0 && stat.substr(open + 1, close - open - 1) == "slurmstepd") return pid;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    int parent = 0;
    if (!(rest >> state >> parent)) return std::nullopt;
    pid = parent;
  }
  return std::nullopt;
}

std::string container_reason(const std::optional<RootMount>& task, const std::optional<RootMount>& slurmstepd, const std::string& marker) {
  if (task && slurmstepd) return *task == *slurmstepd ? "" : "its root is not its slurmstepd's";
  return marker;
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

std::string describe_missing_mount(const MissingMount& missing, const std::string& reason) {
  const std::string& path = missing.mount.destination;
  return "in a container (" + reason + ") without " + path +
         (missing.named_by.empty() ? std::string() : " (named by " + join(missing.named_by, ", ") + ")") +
         ": mount it, e.g. srun --container-mounts=" + pyxis_container_mounts({missing.mount}) +
         ", or install gpudirect-slurm's enroot hook on the node (docs/containers.md)";
}

}  // namespace gpudirect::launcher
