#include "check_node/stack_check.hpp"

#include "gpudirect/mode.hpp"
#include "gpudirect/net_plugin.hpp"
#include "gpudirect/readiness.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

namespace gpudirect::launcher::check_node {
namespace {

Finding config(std::string check, std::string subject, std::string what, std::string measured, std::string expected, std::string fix) {
  return {Severity::fail,  Fault::configuration, std::move(check),    std::move(subject),
          std::move(what), std::move(measured),  std::move(expected), std::move(fix)};
}

// ncclGetVersion from the given NCCL, else from the lib dir's (the plugin's own, as TCPXO ships it),
// else from the loader's.
void read_nccl_version(const std::string& lib_dir, const std::string& given, StackFacts& facts) {
  const std::vector<std::string> candidates =
      given.empty() ? std::vector<std::string>{lib_dir + "/libnccl.so.2", "libnccl.so.2"} : std::vector<std::string>{given};
  for (const std::string& candidate : candidates) {
    if (candidate.find('/') != std::string::npos && !std::filesystem::exists(candidate)) continue;
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) continue;
    using GetVersion = int (*)(int*);  // ncclResult_t ncclGetVersion(int* version)
    const auto get_version = reinterpret_cast<GetVersion>(::dlsym(handle, "ncclGetVersion"));
    int code = 0;
    if (get_version && get_version(&code) == 0) {
      facts.nccl_library = candidate;
      facts.nccl_version = nccl_version_text(code);
    }
    ::dlclose(handle);
    if (!facts.nccl_version.empty()) return;
  }
}

}  // namespace

std::string nccl_version_text(int code) {
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::optional<Finding> judge_aperture_devices(const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error))
    return config("aperture_devices", dir, "is", "missing", "a directory of aperture devices",
                  "load the udev rule for PCI 1ae0:0084 (udevadm trigger) and start slurmd only after it is populated");
  if (std::filesystem::directory_iterator(dir, error) == std::filesystem::directory_iterator())
    return config(
        "aperture_devices", dir, "is", "empty", "the aperture devices",
        "udevadm trigger, then restart slurmd; start slurmd only after the directory is populated (as the A3 Mega blueprint does)");
  return std::nullopt;
}

StackFacts check_stack(const Expectations& expected, const PluginConfig& config_in, bool check_rxdm, std::vector<Finding>& out,
                       const std::string& nccl_library) {
  StackFacts facts;
  if (expected.mode.empty()) return facts;
  const Mode mode = parse_mode(expected.mode);
  facts.lib_dir = lib_dir_for(config_in, mode);
  const bool needs_plugin = mode != Mode::rdma;
  std::error_code error;
  if (needs_plugin && !std::filesystem::is_directory(facts.lib_dir, error)) {
    out.push_back(config("lib_dir", "NCCL net plugin", "lib dir " + facts.lib_dir, "missing", "the " + expected.mode + " plugin's files",
                         "install the plugin there (the RxDM prolog's `install --install-nccl` for TCPXO, the nccl-gib package for gIB), "
                         "or set lib_dir= in plugstack.conf"));
  } else if (needs_plugin && !std::filesystem::exists(facts.lib_dir + "/libnccl-net.so", error)) {
    out.push_back(config("net_plugin", "NCCL net plugin", facts.lib_dir + "/libnccl-net.so", "missing", "the " + expected.mode + " plugin",
                         "reinstall the " + expected.mode + " plugin in " + facts.lib_dir + ", or set lib_dir= in plugstack.conf"));
  } else if (needs_plugin) {
    // As a task of the mode gets it: its NCCL_NET, the lib dir first in LD_LIBRARY_PATH (the doctor's check).
    const char* net = mode == Mode::gib ? "gIB" : mode == Mode::tcpx ? "GPUDirectTCPX_v7" : "FasTrak";
    const auto plugin = check_net_plugin({{"NCCL_NET", net}, {"LD_LIBRARY_PATH", facts.lib_dir}});
    if (plugin && !plugin->problem.empty())
      out.push_back(config("net_plugin", "NCCL net plugin", "does not load:", plugin->problem, "loads",
                           "reinstall the " + expected.mode + " plugin in " + facts.lib_dir));
    else if (plugin)
      facts.net_plugin = plugin->library;
  }
  read_nccl_version(facts.lib_dir, nccl_library, facts);
  if (facts.nccl_version.empty() && !nccl_library.empty())
    out.push_back({Severity::warn, Fault::configuration, "nccl_version", "NCCL", nccl_library, "does not load or has no ncclGetVersion",
                   "an NCCL library", "give --nccl-library the path of the node's libnccl.so.2"});
  else if (facts.nccl_version.empty())
    out.push_back({Severity::warn, Fault::configuration, "nccl_version", "NCCL", "libnccl.so.2", "not found",
                   "in " + facts.lib_dir + " or the loader's path",
                   "jobs bring their own NCCL, or install it (the version is not checked)"});
  if (mode == Mode::tcpxo && !expected.aperture_devices.empty())
    if (auto finding = judge_aperture_devices(expected.aperture_devices)) out.push_back(std::move(*finding));
  if (check_rxdm) {
    if (config_in.rxdm_ready.empty()) {
      out.push_back({Severity::warn, Fault::configuration, "rxdm", "RxDM", "readiness", "not configured", "rxdm_ready= in plugstack.conf",
                     "set rxdm_ready= to the file or socket RxDM makes when ready"});
    } else if (const ReadinessResult ready = wait_until_ready(config_in.rxdm_ready, 0); !ready.ready) {
      out.push_back(config("rxdm", "RxDM", "not ready:", ready.detail, "ready",
                           "start RxDM in the job's prolog before this check (the receive-datapath-manager container), or see its log"));
    }
  }
  return facts;
}

}  // namespace gpudirect::launcher::check_node
