// Loads a topology the way the plugin does and reports what that did to the process: whether the
// environment (the array `environ` and its entries) is what it was, which of hwloc's plugins got
// loaded, and what topology came out. A process of its own, because hwloc's plugins load once per
// process (core's first topology) and the unit-test runner has loaded them long before its cases.
//   hwloc_environment_probe single|threads live|FILE
// "threads": a second thread exists while the topology loads, as slurmstepd's message thread does.
#include "gpudirect/topology_sources.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Never destroyed, so hwloc keeps its plugins loaded past core's static destructors and
// LeakSanitizer does not report what libpciaccess still holds (as tests/unit/main.cpp does).
hwloc_topology_t keep_plugins_loaded = nullptr;

std::vector<std::pair<const char*, std::string>> environment_now() {
  std::vector<std::pair<const char*, std::string>> entries;
  for (char** entry = environ; *entry; ++entry) entries.emplace_back(*entry, *entry);
  return entries;
}

std::set<std::string> hwloc_plugins_mapped() {
  std::set<std::string> plugins;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.rfind('/');
    if (slash != std::string::npos && line.compare(slash + 1, 6, "hwloc_") == 0 && line.ends_with(".so"))
      plugins.insert(line.substr(slash + 1));
  }
  return plugins;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: hwloc_environment_probe single|threads live|FILE\n");
    return 2;
  }
  const bool with_thread = std::string(argv[1]) == "threads";
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::thread other;
  if (with_thread)
    other = std::thread([&] {
      std::unique_lock lock(mutex);
      done_cv.wait(lock, [&] { return done; });
    });

  char** const array_before = environ;
  const auto entries_before = environment_now();
  const std::string source = argv[2];
  const gpudirect::Topology topology = source == "live" ? gpudirect::load_live_topology() : gpudirect::load_topology_file(source);
  const bool same_array = environ == array_before;
  const bool same_entries = environment_now() == entries_before;
  if (hwloc_topology_init(&keep_plugins_loaded) != 0) keep_plugins_loaded = nullptr;

  if (with_thread) {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    done_cv.notify_all();
    other.join();
  }
  std::printf("environ array: %s\n", same_array ? "same" : "moved");
  std::printf("environ entries: %s\n", same_entries ? "same" : "changed");
  std::printf("plugins:");
  for (const auto& plugin : hwloc_plugins_mapped()) std::printf(" %s", plugin.c_str());
  std::printf("\ntopology: %zu GPUs, %zu NICs, %d CPUs, source %s\n", topology.gpus.size(), topology.nics.size(), topology.all_cpus.count(),
              topology.source.c_str());
  return 0;
}
