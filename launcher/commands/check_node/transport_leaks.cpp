#include "check_node/transport_leaks.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

extern char** environ;

namespace gpudirect::launcher::check_node {
namespace {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

std::string transport_of(const std::string& name, const std::string& value) {
  if (name.starts_with("NCCL_FASTRAK_")) return "tcpxo";
  if (name.starts_with("NCCL_GPUDIRECTTCPX_")) return "tcpx";
  if (name == "NCCL_NET") {
    if (value == "gIB") return "gib";
    if (value == "FasTrak") return "tcpxo";
    if (value.starts_with("GPUDirectTCPX")) return "tcpx";
  }
  if (name == "LD_LIBRARY_PATH") {
    for (const std::string_view dir : split(value, ':')) {
      if (is_path_within(dir, "/usr/local/gib")) return "gib";
      if (is_path_within(dir, "/var/lib/tcpxo") || is_path_within(dir, "/var/lib/fastrak")) return "tcpxo";
      if (is_path_within(dir, "/var/lib/tcpx")) return "tcpx";
    }
  }
  return "";
}

std::vector<Finding> judge_leaks(const std::vector<EnvSource>& sources, const std::string& mode) {
  std::vector<Finding> out;
  for (const EnvSource& source : sources)
    for (const auto& [name, value] : source.variables) {
      const std::string owner = transport_of(name, value);
      if (owner.empty() || owner == mode) continue;
      out.push_back({Severity::fail, Fault::configuration, "env_leak", name + " in " + source.origin, "set to",
                     "'" + quote_bounded(value, 80) + "' (a " + owner + " setting)", "unset on a " + mode + " node",
                     "remove it from " + source.origin + ": NCCL on this node would look for " + owner + "'s transport"});
    }
  return out;
}

std::map<std::string, std::string> shell_assignments(const std::string& text) {
  static const std::regex assignment(R"(^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$)");
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_match(line, match, assignment)) continue;
    std::string value(trim(match[2].str()));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    out[match[1].str()] = value;
  }
  return out;
}

std::vector<EnvSource> node_env_sources(const std::string& etc_dir) {
  std::vector<EnvSource> out;
  EnvSource own{"the environment", {}};
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string_view::npos) own.variables.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  out.push_back(std::move(own));
  const std::filesystem::path etc(etc_dir);
  if (const auto text = read_file(etc / "environment")) out.push_back({(etc / "environment").string(), shell_assignments(*text)});
  std::vector<std::filesystem::path> scripts;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(etc / "profile.d", error))
    if (entry.path().extension() == ".sh") scripts.push_back(entry.path());
  std::sort(scripts.begin(), scripts.end());
  for (const auto& script : scripts)
    if (const auto text = read_file(script)) out.push_back({script.string(), shell_assignments(*text)});
  return out;
}

}  // namespace gpudirect::launcher::check_node
