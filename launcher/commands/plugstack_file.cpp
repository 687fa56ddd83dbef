#include "plugstack_file.hpp"

#include <glob.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace gpudirect::launcher {
namespace {

std::vector<std::string> expand_glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t matches{};
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  return out;
}

std::optional<std::string> search(const std::string& path, int depth) {
  std::ifstream in(path);
  if (!in || depth > 4) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first, second;
    if (!(words >> first) || first.starts_with("#")) continue;
    words >> second;
    if (first == "include") {
      for (const auto& included : expand_glob(second))
        if (auto found = search(included, depth + 1)) return found;
    } else if (second.find("spank_gpudirect") != std::string::npos) {
      return path;
    }
  }
  return std::nullopt;
}

}  // namespace

PluginConfig read_plugstack_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string control, plugin;
    if (!(words >> control >> plugin) || control.starts_with("#")) continue;
    if (plugin.find("spank_gpudirect") == std::string::npos) continue;
    std::vector<std::string> args;
    for (std::string word; words >> word;) args.push_back(word);
    try {
      return parse_plugin_config(args);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  throw std::runtime_error(path + " has no spank_gpudirect.so line");
}

std::optional<std::string> find_plugstack_file() {
  const char* conf = std::getenv("SLURM_CONF");
  const std::string slurm_conf = conf && *conf ? conf : "/etc/slurm/slurm.conf";
  std::string plugstack = slurm_conf.substr(0, slurm_conf.rfind('/') + 1) + "plugstack.conf";
  std::ifstream in(slurm_conf);
  for (std::string line; in && std::getline(in, line);) {
    const auto pos = line.find("PlugStackConfig=");
    if (pos == 0) {
      std::istringstream value(line.substr(16));
      value >> plugstack;
    }
  }
  return search(plugstack, 0);
}

}  // namespace gpudirect::launcher
