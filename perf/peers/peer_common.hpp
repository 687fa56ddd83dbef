// Shared by the peer drivers: the same sizes and the same timing as `gpudirect-launch bench`
// (pre-faulted buffers reused, warm-up, mean time per iteration over -n iterations on rank 0).
#pragma once

#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace peer {

struct Args {
  std::string collective = "all_reduce";
  std::size_t min_bytes = 4096, max_bytes = 256u << 20;
  int iters = 20, warmup = 5;
};

inline Args parse(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "-c")
      a.collective = v;
    else if (k == "-b")
      a.min_bytes = std::stoull(v);
    else if (k == "-e")
      a.max_bytes = std::stoull(v);
    else if (k == "-n")
      a.iters = std::stoi(v);
    else if (k == "-w")
      a.warmup = std::stoi(v);
  }
  return a;
}

inline float* buffer(std::size_t bytes) {
  void* p = mmap(nullptr, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  std::memset(p, 0, bytes);
  return static_cast<float*>(p);
}

// Runs fn(bytes) for every size: warm-up, barrier, timed iterations; rank 0 prints "bytes us".
template <typename Fn, typename Barrier>
void sweep(const Args& a, int rank, Fn fn, Barrier barrier) {
  for (std::size_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 4) {
    for (int i = 0; i < a.warmup; ++i) fn(bytes);
    barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < a.iters; ++i) fn(bytes);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / a.iters;
    if (rank == 0) std::printf("%zu %.2f\n", bytes, us);
    std::fflush(stdout);
  }
}

}  // namespace peer
