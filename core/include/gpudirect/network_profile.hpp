// Network profiles are data: one file per profile (profiles/tcpxo.conf ...), so a new TCPXO
// release's changed defaults need an edited file, not a rebuild. Line format (docs/profiles.md):
//   # comment
//   NAME=value                 set, replacing what the task had
//   NAME+=value                prepend to a ':'-separated list (LD_LIBRARY_PATH)
//   NAME?=value                set only if the task does not have it already (the user wins)
//   when PLACEHOLDER: LINE     the line applies only when the placeholder is non-empty
//   mount SOURCE [DEST] [ro|rw] a host path a container needs (container_mounts.hpp); not part of
//                              the task's environment
// Values may use ${PLACEHOLDER}; see known_placeholders(). Mount paths only the node-wide ones of
// mount_placeholders(): one container serves all the node's tasks.
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

// `mount SOURCE [DESTINATION] [ro|rw]`: DESTINATION defaults to SOURCE, the flag to rw.
struct ProfileMountLine {
  int line_number = 0;
  std::string condition;  // as ProfileLine::condition
  std::string source_template;
  std::string destination_template;
  bool read_only = false;
};

struct NetworkProfile {
  std::string name;
  std::string origin;                    // the file it came from, for messages
  std::vector<ProfileLine> lines;        // the environment, in order
  std::vector<ProfileMountLine> mounts;  // what a container must see, in order
};

// A host path bind-mounted into a container at `destination`.
struct ContainerMount {
  std::string source;
  std::string destination;
  bool read_only = false;
  bool operator==(const ContainerMount&) const = default;
};

using ProfileInputs = std::map<std::string, std::string>;

const std::vector<std::string>& known_placeholders();
// The placeholders a mount line may use: the same on every task of a node (LIB_DIR, SLURM_JOB_ID).
const std::vector<std::string>& mount_placeholders();

// Throws ProfileError naming origin and line.
NetworkProfile parse_profile(const std::string& text, const std::string& name, const std::string& origin);
// Looks for <dir>/<name>.conf in each dir in order; the error lists where it looked.
NetworkProfile load_profile(const std::string& name, const std::vector<std::string>& dirs);

// Substitutes placeholders. A placeholder that is used but empty is a ProfileError naming it.
std::vector<EnvAction> render(const NetworkProfile& profile, const ProfileInputs& inputs);

// The profile's mounts with placeholders filled, in order, each once. Throws ProfileError naming
// file and line for an empty placeholder, or a path that is not absolute and plain (letters, digits,
// '/', '.', '_', '-', '+', '@'; no '..'): pyxis's SRC:DST[:FLAGS],... and enroot's fstab could not
// carry it. Two mounts on one destination, or one inside a later one (hidden by it), are errors too.
std::vector<ContainerMount> render_mounts(const NetworkProfile& profile, const ProfileInputs& inputs);

// The variable's new value given its current one (nullopt = unset); nullopt = leave it alone.
std::optional<std::string> apply_env_action(const EnvAction& action, const std::optional<std::string>& current);

}  // namespace gpudirect
