#include "doctor/plugstack_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace gpudirect::launcher {

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

}  // namespace gpudirect::launcher
