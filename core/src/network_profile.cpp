#include "gpudirect/network_profile.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gpudirect {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// A profile may set only the families it exists for (docs/profiles.md): never PATH, LD_PRELOAD,
// or anything else that would change what the task runs.
bool allowed_name(const std::string& name) {
  return name.starts_with("NCCL_") || name.starts_with("FI_") || name.starts_with("GPUDIRECT_") || name == "LD_LIBRARY_PATH";
}

bool has_control_bytes(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f; });
}

// <dir>/<name>.conf must stay inside dir.
bool is_profile_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

bool is_known(const std::string& placeholder) {
  const auto& known = known_placeholders();
  return std::find(known.begin(), known.end(), placeholder) != known.end();
}

bool is_mount_placeholder(const std::string& placeholder) {
  const auto& names = mount_placeholders();
  return std::find(names.begin(), names.end(), placeholder) != names.end();
}

std::string mount_placeholder_list() {
  std::string out;
  for (const std::string& name : mount_placeholders()) out += (out.empty() ? "${" : ", ${") + name + "}";
  return out;
}

// Characters a mount path may hold: pyxis splits its list at ',' and ':', enroot's fstab at blanks
// and expands '$'; none of those can be escaped in both.
bool plain_path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '_' || c == '-' ||
         c == '+' || c == '@';
}

// "" when `path` is an absolute, normalised, plain path other than "/", else why not.
std::string mount_path_problem(const std::string& path) {
  if (path.empty() || path[0] != '/') return "is not an absolute path";
  if (path == "/") return "is the whole root file system";
  if (const auto bad = std::find_if_not(path.begin(), path.end(), plain_path_char); bad != path.end())
    return "holds '" + quote_bounded(std::string(1, *bad)) +
           "' (a mount path may hold only letters, digits and / . _ - + @: pyxis and enroot split at ',' ':' and blanks)";
  if (path.back() == '/') return "ends in '/'";
  for (const std::string_view part : split(std::string_view(path).substr(1), '/')) {
    if (part.empty()) return "holds '//'";
    if (part == "." || part == "..") return "holds a '" + std::string(part) + "' component";
  }
  return "";
}

// Calls `use` for each ${NAME} in the template; throws on a malformed one.
template <typename Use>
std::string expand(const std::string& value, const std::string& where, Use use) {
  std::string out;
  for (std::size_t i = 0; i < value.size();) {
    if (value.compare(i, 2, "${") == 0) {
      const auto close = value.find('}', i + 2);
      if (close == std::string::npos) throw ProfileError(where + ": unterminated ${ in '" + quote_bounded(value) + "'");
      out += use(value.substr(i + 2, close - i - 2));
      i = close + 1;
    } else {
      out += value[i++];
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& mount_placeholders() {
  static const std::vector<std::string> names{"LIB_DIR", "SLURM_JOB_ID"};
  return names;
}

const std::vector<std::string>& known_placeholders() {
  static const std::vector<std::string> names{"TASK_NICS",         "DATA_NICS",    "CTRL_NIC",         "HOST_NICS",
                                              "TASK_RDMA_DEVICES", "TASK_IB_HCAS", "TASK_EFA_DEVICES", "LIB_DIR",
                                              "GIB_MACHINE",       "GIB_IMAGE",    "SLURM_JOB_ID",     "TASK_GPUS"};
  return names;
}

namespace {

// `mount SOURCE [DESTINATION] [ro|rw]` (the words after "mount"), checked as far as the text allows:
// a path with a placeholder is checked again once rendered.
ProfileMountLine parse_mount_line(const std::string& words_text, const std::string& where) {
  static const std::string usage = "expected 'mount SOURCE [DESTINATION] [ro|rw]'";
  std::vector<std::string> words;
  std::istringstream in(words_text);
  for (std::string word; in >> word;) words.push_back(word);
  ProfileMountLine mount;
  if (words.empty() || words.size() > 3) throw ProfileError(where + ": " + usage);
  if (words.back() == "ro" || words.back() == "rw") {
    mount.read_only = words.back() == "ro";
    words.pop_back();
  }
  if (words.empty()) throw ProfileError(where + ": " + usage + ": no SOURCE");
  for (const std::string& word : words)
    if (word == "ro" || word == "rw") throw ProfileError(where + ": " + usage + ": ro or rw comes once, last");
  if (words.size() > 2) throw ProfileError(where + ": " + usage + ": '" + quote_bounded(words.back()) + "' is neither a path nor ro or rw");
  mount.source_template = words[0];
  mount.destination_template = words.size() == 2 ? words[1] : words[0];
  for (const std::string* path : {&mount.source_template, &mount.destination_template}) {
    if (has_control_bytes(*path)) throw ProfileError(where + ": control characters in a mount path");
    // Each placeholder stands for an absolute path here ("/p"), so the text around it is checked.
    const std::string shape = expand(*path, where, [&](const std::string& placeholder) {
      if (!is_known(placeholder)) throw ProfileError(where + ": unknown placeholder ${" + quote_bounded(placeholder) + "}");
      if (!is_mount_placeholder(placeholder))
        throw ProfileError(where + ": a mount may use only " + mount_placeholder_list() + ", not ${" + placeholder +
                           "}: one container serves every task of the node");
      return std::string("/p");
    });
    if (const std::string problem = mount_path_problem(shape); !problem.empty())
      throw ProfileError(where + ": mount path '" + quote_bounded(*path) + "' " + problem);
  }
  return mount;
}

}  // namespace

NetworkProfile parse_profile(const std::string& text, const std::string& name, const std::string& origin) {
  NetworkProfile profile{name, origin, {}, {}};
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    std::string line(trim(raw));
    if (line.empty() || line[0] == '#') continue;
    const std::string where = origin + ":" + std::to_string(number);
    ProfileLine entry;
    entry.line_number = number;
    if (line.starts_with("when ")) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) throw ProfileError(where + ": expected 'when PLACEHOLDER: NAME=value'");
      entry.condition = trim(line.substr(5, colon - 5));
      if (!is_known(entry.condition)) throw ProfileError(where + ": unknown placeholder '" + quote_bounded(entry.condition) + "'");
      line = trim(line.substr(colon + 1));
    }
    if (line == "mount" || line.starts_with("mount ") || line.starts_with("mount\t")) {
      ProfileMountLine mount = parse_mount_line(line.substr(5), where);
      mount.line_number = number;
      mount.condition = entry.condition;
      if (!mount.condition.empty() && !is_mount_placeholder(mount.condition))
        throw ProfileError(where + ": a mount's condition may use only " + mount_placeholder_list() + ", not '" + mount.condition +
                           "': one container serves every task of the node");
      profile.mounts.push_back(std::move(mount));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) throw ProfileError(where + ": expected NAME=value, NAME+=value or NAME?=value");
    std::string lhs = line.substr(0, eq);
    if (lhs.back() == '+') {
      entry.kind = EnvActionKind::prepend_path;
      lhs.pop_back();
    } else if (lhs.back() == '?') {
      entry.kind = EnvActionKind::set_if_unset;
      lhs.pop_back();
    }
    entry.name = trim(lhs);
    if (!valid_name(entry.name)) throw ProfileError(where + ": '" + quote_bounded(entry.name) + "' is not a valid variable name");
    if (!allowed_name(entry.name))
      throw ProfileError(where + ": " + entry.name +
                         " is outside the variables a profile may set (NCCL_*, FI_*, GPUDIRECT_*, LD_LIBRARY_PATH)");
    entry.value_template = line.substr(eq + 1);
    if (has_control_bytes(entry.value_template)) throw ProfileError(where + ": control characters in the value of " + entry.name);
    expand(entry.value_template, where, [&](const std::string& placeholder) {
      if (!is_known(placeholder)) throw ProfileError(where + ": unknown placeholder ${" + quote_bounded(placeholder) + "}");
      return std::string();
    });
    profile.lines.push_back(std::move(entry));
  }
  return profile;
}

NetworkProfile load_profile(const std::string& name, const std::vector<std::string>& dirs) {
  if (!is_profile_name(name))
    throw ProfileError("network profile name '" + quote_bounded(name) +
                       "' is not a plain name (letters, digits, '-', '_', '.'): profiles are read only from the profile directories");
  std::string looked;
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" + name + ".conf";
    std::ifstream in(path);
    if (!in) {
      looked += (looked.empty() ? "" : ", ") + path;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse_profile(text.str(), name, path);
  }
  throw ProfileError("network profile '" + name + "' not found (looked in " + looked +
                     "): install the profiles or set profile_dir= in plugstack.conf");
}

std::vector<EnvAction> render(const NetworkProfile& profile, const ProfileInputs& inputs) {
  std::vector<EnvAction> actions;
  auto value_of = [&](const std::string& placeholder) {
    const auto it = inputs.find(placeholder);
    return it == inputs.end() ? std::string() : it->second;
  };
  for (const ProfileLine& line : profile.lines) {
    if (!line.condition.empty() && value_of(line.condition).empty()) continue;
    const std::string where = profile.origin + ":" + std::to_string(line.line_number);
    EnvAction action;
    action.name = line.name;
    action.kind = line.kind;
    action.value = expand(line.value_template, where, [&](const std::string& placeholder) {
      std::string value = value_of(placeholder);
      const bool host_side = placeholder == "CTRL_NIC" || placeholder == "HOST_NICS";
      if (value.empty())
        throw ProfileError(where + ": ${" + placeholder + "} is empty on this node (" + line.name + " needs it)" +
                           (host_side ? ": no NIC outside the GPUs' PCIe switches was found" : ""));
      return value;
    });
    actions.push_back(std::move(action));
  }
  return actions;
}

std::vector<ContainerMount> render_mounts(const NetworkProfile& profile, const ProfileInputs& inputs) {
  auto value_of = [&](const std::string& placeholder) {
    const auto it = inputs.find(placeholder);
    return it == inputs.end() ? std::string() : it->second;
  };
  std::vector<ContainerMount> mounts;
  std::vector<std::string> origins;  // "file:line" of each mount, for messages
  for (const ProfileMountLine& line : profile.mounts) {
    if (!line.condition.empty() && value_of(line.condition).empty()) continue;
    const std::string where = profile.origin + ":" + std::to_string(line.line_number);
    auto render_path = [&](const std::string& path_template) {
      const std::string path = expand(path_template, where, [&](const std::string& placeholder) {
        std::string value = value_of(placeholder);
        if (value.empty())
          throw ProfileError(where + ": ${" + placeholder + "} is empty here (the mount of " + path_template + " needs it)" +
                             (placeholder == "SLURM_JOB_ID" ? ": run it inside the job, or set SLURM_JOB_ID" : ""));
        return value;
      });
      if (const std::string problem = mount_path_problem(path); !problem.empty())
        throw ProfileError(where + ": mount path '" + quote_bounded(path, 256) + "' (from " + path_template + ") " + problem);
      return path;
    };
    ContainerMount mount{render_path(line.source_template), render_path(line.destination_template), line.read_only};
    bool repeated = false;
    for (std::size_t i = 0; i < mounts.size(); ++i) {
      if (mounts[i] == mount) {
        repeated = true;  // the same mount twice (two conditions that both hold): once is enough
        break;
      }
      if (mounts[i].destination == mount.destination)
        throw ProfileError(where + ": " + mount.destination + " is mounted already (" + origins[i] +
                           ") from another source or with other flags");
      if (is_path_within(mounts[i].destination, mount.destination))
        throw ProfileError(where + ": the mount on " + mount.destination + " would hide the one on " + mounts[i].destination + " (" +
                           origins[i] + "): put the outer one first");
    }
    if (repeated) continue;
    mounts.push_back(std::move(mount));
    origins.push_back(where);
  }
  return mounts;
}

std::optional<std::string> apply_env_action(const EnvAction& action, const std::optional<std::string>& current) {
  switch (action.kind) {
    case EnvActionKind::set:
      return action.value;
    case EnvActionKind::set_if_unset:
      if (current) return std::nullopt;
      return action.value;
    case EnvActionKind::prepend_path:
      if (!current || current->empty()) return action.value;
      if (*current == action.value || current->starts_with(action.value + ":")) return std::nullopt;  // idempotent
      return action.value + ":" + *current;
  }
  return std::nullopt;
}

}  // namespace gpudirect
