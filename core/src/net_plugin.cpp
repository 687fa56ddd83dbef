#include "gpudirect/net_plugin.hpp"

#include "gpudirect/text.hpp"

#include <dlfcn.h>

#include <filesystem>

namespace gpudirect {
namespace {

std::string env_value(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// NCCL 2.23+: NCCL_NET_PLUGIN as given (a name or a path), then libnccl-net-<value>.so; without
// it, libnccl-net.so. Older NCCL tried only the second form, which this list also covers.
std::vector<std::string> plugin_names(const std::string& setting) {
  if (setting.empty()) return {"libnccl-net.so"};
  return {setting, "libnccl-net-" + setting + ".so"};
}

// The interface versions NCCL releases look for, newest first.
bool exports_net_interface(void* handle) {
  for (int version = 11; version >= 2; --version)
    if (::dlsym(handle, ("ncclNetPlugin_v" + std::to_string(version)).c_str())) return true;
  return false;
}

std::string dl_error() {
  const char* error = ::dlerror();
  return error ? error : "unknown dlopen error";
}

}  // namespace

std::optional<NetPluginCheck> check_net_plugin(const std::map<std::string, std::string>& env) {
  const std::string net = env_value(env, "NCCL_NET");
  const std::string plugin = env_value(env, "NCCL_NET_PLUGIN");
  const bool internal_net = net.empty() || net == "IB" || net == "Socket";
  if (plugin == "none" || (internal_net && plugin.empty())) return std::nullopt;

  NetPluginCheck check;
  check.wanted = !plugin.empty() ? "NCCL_NET_PLUGIN=" + plugin : "NCCL_NET=" + net;
  check.names = plugin_names(plugin);
  const std::string library_path = env_value(env, "LD_LIBRARY_PATH");
  const std::vector<std::string_view> dirs = split(library_path, ':');
  std::string first_failure;
  for (const std::string& name : check.names) {
    std::vector<std::string> candidates;
    if (name.find('/') != std::string::npos) {
      candidates.push_back(name);
    } else {
      for (const std::string_view dir : dirs) {
        std::error_code ec;
        const std::filesystem::path path = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / name;
        if (std::filesystem::exists(path, ec)) candidates.push_back(path.string());
      }
      candidates.push_back(name);  // the loader's own search: ld.so.cache, /usr/lib ...
    }
    for (const std::string& candidate : candidates) {
      void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const std::string why = dl_error();
        // "cannot open shared object file" for a bare name only means "not here"; anything else
        // (a missing symbol, a wrong architecture) is the reason NCCL would not load it either.
        if (first_failure.empty() && (candidate != name || why.find("cannot open shared object file") == std::string::npos)) {
          check.library = candidate;
          first_failure = why;
        }
        continue;
      }
      const bool exports = exports_net_interface(handle);
      ::dlclose(handle);
      if (exports) {
        check.library = candidate;
        return check;
      }
      if (first_failure.empty()) {
        check.library = candidate;
        first_failure = "it exports no ncclNetPlugin_vN symbol: not an NCCL network plugin";
      }
    }
  }
  const std::string searched = "LD_LIBRARY_PATH=" + (library_path.empty() ? std::string("(unset)") : library_path);
  if (!first_failure.empty())
    check.problem = check.wanted + " needs NCCL's network plugin, and " + check.library + " does not load: " + first_failure;
  else
    check.problem = check.wanted + " needs NCCL's network plugin, and none of " + join(check.names, ", ") + " is in " + searched +
                    " or the loader's path: is the plugin installed, and its lib dir (plugstack lib_dir=) right?";
  return check;
}

}  // namespace gpudirect
