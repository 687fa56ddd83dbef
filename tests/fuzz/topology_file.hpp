// The topology loaders read a path (the plugin's topology= file): each input is written to one
// private temporary file per process, rewritten for every run.
#pragma once

#include "gpudirect/binding.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace gpudirect::fuzz {

inline const std::string& topology_file_with(const std::uint8_t* data, std::size_t size) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/gpudirect-fuzz-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) std::abort();
    ::close(fd);
    return pattern;
  }();
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
  std::fclose(out);
  return path;
}

// What the plugin does with a loaded topology: plan the node, bind every GPU alone and all GPUs
// together.
inline void plan_and_bind_every_gpu(const Topology& topology) {
  const NodePlan plan = plan_node(topology);
  std::vector<int> all;
  for (int gpu = 0; gpu < static_cast<int>(topology.gpus.size()); ++gpu) {
    (void)bind_task(topology, plan, {gpu}, topology.all_cpus);
    all.push_back(gpu);
  }
  (void)bind_task(topology, plan, all, {});
}

}  // namespace gpudirect::fuzz
