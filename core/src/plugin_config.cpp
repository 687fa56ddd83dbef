#include "gpudirect/plugin_config.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#ifndef GPUDIRECT_DEFAULT_PROFILE_DIR
#define GPUDIRECT_DEFAULT_PROFILE_DIR "/usr/share/gpudirect-slurm/profiles"
#endif

namespace gpudirect {
namespace {

constexpr const char* kKeys =
    "default, lib_dir, profile_dir, profile.tcpxo, gib_machine, topology, topology_cache, cpu_bind, rxdm_ready, rxdm_timeout, "
    "verbose";

[[noreturn]] void reject(const std::string& arg, const std::string& why) {
  throw std::invalid_argument("plugstack argument '" + quote_bounded(arg, 128) + "': " + why);
}

bool parse_bool(const std::string& arg, const std::string& value) {
  if (value == "on" || value == "yes" || value == "true" || value == "1") return true;
  if (value == "off" || value == "no" || value == "false" || value == "0") return false;
  reject(arg, "expected on or off");
}

// The plugin reads these paths as root: absolute, printable, no '..' component, bounded length.
std::string absolute_path(const std::string& arg, const std::string& value) {
  if (value.front() != '/') reject(arg, "expected an absolute path");
  if (value.size() > 4096) reject(arg, "path longer than 4096 bytes");
  if (std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    reject(arg, "control characters in a path");
  for (const std::string_view component : split(value, '/'))
    if (component == "..") reject(arg, "'..' in a path: give the real directory");
  return value;
}

// A profile name becomes <dir>/<name>.conf: letters, digits, '-', '_', '.', not starting with '.'.
bool is_profile_name(const std::string& value) {
  return value.size() <= 64 && value.front() != '.' && std::all_of(value.begin(), value.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
         });
}

bool is_machine_name(const std::string& value) {
  return value.size() <= 32 && std::all_of(value.begin(), value.end(),
                                           [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; });
}

}  // namespace

PluginConfig parse_plugin_config(const std::vector<std::string>& args) {
  PluginConfig config;
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos) reject(arg, std::string("expected key=value with key one of: ") + kKeys);
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (value.empty()) reject(arg, "empty value");
    if (!seen.insert(key).second) reject(arg, "'" + key + "' given twice");
    if (key == "default") {
      try {
        config.default_mode = parse_mode(value);
      } catch (const std::invalid_argument&) {
        reject(arg, "expected auto, tcpxo, tcpx, gib, rdma or off");
      }
    } else if (key == "lib_dir") {
      config.lib_dir = absolute_path(arg, value);
    } else if (key == "profile_dir") {
      config.profile_dir = absolute_path(arg, value);
    } else if (key == "profile.tcpxo") {
      if (!is_profile_name(value)) reject(arg, "expected a profile name such as tcpxo-simple (letters, digits, '-', '_', '.')");
      config.tcpxo_profile = value;
    } else if (key == "gib_machine") {
      // Becomes part of a file name (tuner_config_<machine>.txtpb): a plain word.
      if (!is_machine_name(value)) reject(arg, "expected a machine name such as a3u or a4 (lowercase letters, digits, '-', '_')");
      config.gib_machine = value;
    } else if (key == "topology") {
      config.topology = absolute_path(arg, value);
    } else if (key == "topology_cache") {
      config.topology_cache = value == "off" ? std::string() : absolute_path(arg, value);
    } else if (key == "cpu_bind") {
      config.cpu_bind = parse_bool(arg, value);
    } else if (key == "rxdm_ready") {
      config.rxdm_ready = absolute_path(arg, value);
    } else if (key == "rxdm_timeout") {
      const auto seconds = try_parse_integer<int>(value, 0, 3600);
      if (!seconds) reject(arg, "expected seconds between 0 and 3600");
      config.rxdm_timeout_s = *seconds;
    } else if (key == "verbose") {
      config.verbose = parse_bool(arg, value);
    } else {
      reject(arg, std::string("unknown key; known keys: ") + kKeys);
    }
  }
  return config;
}

std::string default_lib_dir(Mode mode) {
  if (mode == Mode::tcpxo) return "/var/lib/tcpxo/lib64";
  if (mode == Mode::tcpx) return "/var/lib/tcpx/lib64";
  if (mode == Mode::gib) return "/usr/local/gib/lib64";
  return "";
}

std::string lib_dir_for(const PluginConfig& config, Mode mode) {
  if ((mode == Mode::tcpxo || mode == Mode::tcpx || mode == Mode::gib) && !config.lib_dir.empty()) return config.lib_dir;
  return default_lib_dir(mode);
}

std::string installed_profile_dir() { return GPUDIRECT_DEFAULT_PROFILE_DIR; }

std::vector<std::string> profile_search_path(const PluginConfig& config) {
  std::vector<std::string> dirs;
  if (!config.profile_dir.empty()) dirs.push_back(config.profile_dir);
  dirs.push_back(installed_profile_dir());
  return dirs;
}

std::string describe(const PluginConfig& config) {
  std::string out = "default=" + std::string(to_string(config.default_mode));
  out += " lib_dir=" + (config.lib_dir.empty() ? std::string("(per mode)") : config.lib_dir);
  if (!config.profile_dir.empty()) out += " profile_dir=" + config.profile_dir;
  out += " profile.tcpxo=" + config.tcpxo_profile;
  if (!config.gib_machine.empty()) out += " gib_machine=" + config.gib_machine;
  out += " topology=" + (config.topology.empty() ? std::string("(live hwloc)") : config.topology);
  out += " topology_cache=" + (config.topology_cache.empty() ? std::string("off") : config.topology_cache);
  out += std::string(" cpu_bind=") + (config.cpu_bind ? "on" : "off");
  if (!config.rxdm_ready.empty()) out += " rxdm_ready=" + config.rxdm_ready + " rxdm_timeout=" + std::to_string(config.rxdm_timeout_s);
  return out;
}

}  // namespace gpudirect
