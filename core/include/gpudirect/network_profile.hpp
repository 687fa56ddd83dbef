// Network profiles are data: one file per profile (profiles/tcpxo.conf ...), so a new TCPXO
// release's changed defaults need an edited file, not a rebuild. Line format (docs/profiles.md):
//   # comment
//   NAME=value                 set, replacing what the task had
//   NAME+=value                prepend to a ':'-separated list (LD_LIBRARY_PATH)
//   NAME?=value                set only if the task does not have it already (the user wins)
//   when PLACEHOLDER: LINE     the line applies only when the placeholder is non-empty
// Values may use ${PLACEHOLDER}; see known_placeholders().
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect {

class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class EnvActionKind { set, prepend_path, set_if_unset };

struct EnvAction {
  std::string name;
  std::string value;
  EnvActionKind kind = EnvActionKind::set;
};

struct ProfileLine {
  int line_number = 0;
  std::string condition;  // placeholder that must be non-empty; "" = always
  std::string name;
  EnvActionKind kind = EnvActionKind::set;
  std::string value_template;
};

struct NetworkProfile {
  std::string name;
  std::string origin;  // the file it came from, for messages
  std::vector<ProfileLine> lines;
};

using ProfileInputs = std::map<std::string, std::string>;

const std::vector<std::string>& known_placeholders();

// Throws ProfileError naming origin and line.
NetworkProfile parse_profile(const std::string& text, const std::string& name, const std::string& origin);
// Looks for <dir>/<name>.conf in each dir in order; the error lists where it looked.
NetworkProfile load_profile(const std::string& name, const std::vector<std::string>& dirs);

// Substitutes placeholders. A placeholder that is used but empty is a ProfileError naming it.
std::vector<EnvAction> render(const NetworkProfile& profile, const ProfileInputs& inputs);

// The variable's new value given its current one (nullopt = unset); nullopt = leave it alone.
std::optional<std::string> apply_env_action(const EnvAction& action, const std::optional<std::string>& current);

}  // namespace gpudirect
