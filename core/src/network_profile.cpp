#include "gpudirect/network_profile.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gpudirect {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
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

const std::vector<std::string>& known_placeholders() {
  static const std::vector<std::string> names{"TASK_NICS",         "DATA_NICS",    "CTRL_NIC",         "HOST_NICS",
                                              "TASK_RDMA_DEVICES", "TASK_IB_HCAS", "TASK_EFA_DEVICES", "LIB_DIR",
                                              "GIB_MACHINE",       "SLURM_JOB_ID", "TASK_GPUS"};
  return names;
}

NetworkProfile parse_profile(const std::string& text, const std::string& name, const std::string& origin) {
  NetworkProfile profile{name, origin, {}};
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
    if (!valid_name(entry.name))
      throw ProfileError(where + ": '" + quote_bounded(entry.name) + "' is not a valid variable name");
    if (!allowed_name(entry.name))
      throw ProfileError(where + ": " + entry.name +
                         " is outside the variables a profile may set (NCCL_*, FI_*, GPUDIRECT_*, LD_LIBRARY_PATH)");
    entry.value_template = line.substr(eq + 1);
    if (has_control_bytes(entry.value_template))
      throw ProfileError(where + ": control characters in the value of " + entry.name);
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
