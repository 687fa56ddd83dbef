#include "comm/shm/node_staging.hpp"

#include "gpudirect/cpuset.hpp"
#include "gpudirect/text.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>

namespace gpudirect::comm {
namespace {
// Where every rank has a CPU: long enough for a peer on another core to answer, short against a
// yield (measurements: docs/performance.md).
constexpr long kSpinMicroseconds = 5;
}  // namespace

std::string cpus_of_this_process() {
  // Sized by the kernel, not glibc's fixed 1024-CPU cpu_set_t (CpuSet::of_this_thread).
  std::string list;
  for (const int cpu : CpuSet::of_this_thread().cpus()) list += (list.empty() ? "" : ",") + std::to_string(cpu);
  return list;
}

std::size_t distinct_cpus(const std::vector<std::string>& cpu_lists) {
  std::set<std::string_view> cpus;
  for (const auto& list : cpu_lists)
    for (const auto cpu : split(list, ','))
      if (!cpu.empty()) cpus.insert(cpu);
  return cpus.size();
}

namespace {

// Every rank maps every other rank's probe ("PID FD TOKEN"; FD -1: no memfd there, or reads not
// wanted) and all agree, with the same smallest block read in place (`min_block_bytes`): direct
// reads for all, or for none with rank 0 saying why (unless `quiet`: switched off on purpose).
std::optional<DirectReads> agree_on_direct_reads(const bootstrap::LaunchContext& context, bootstrap::Store& store,
                                                 const std::vector<std::string>& probes, std::size_t min_block_bytes, bool quiet) {
  DirectReads direct;
  direct.min_block_bytes = min_block_bytes;
  std::string why_not;
  for (int r = 0; r < context.size && why_not.empty(); ++r) {
    const auto fields = split(probes[static_cast<std::size_t>(r)], ' ');
    if (fields.size() != 3 || fields[1] == "-1") {
      why_not = "rank " + std::to_string(r) + " has none to share";
      continue;
    }
    try {
      const auto pid = parse_integer<pid_t>(fields[0], "pid", 1, std::numeric_limits<pid_t>::max());
      direct.pids.push_back(pid);
      if (r == context.rank) continue;
      const auto fd = parse_integer<int>(fields[1], "fd", 0, std::numeric_limits<int>::max());
      const auto token = parse_integer<std::uint64_t>(fields[2], "token", 0, std::numeric_limits<std::uint64_t>::max());
      if (auto error = try_mapping_probe(pid, fd, token); !error.empty()) why_not = "rank " + std::to_string(context.rank) + ": " + error;
    } catch (const std::exception& e) {
      why_not = e.what();
    }
  }
  // Whether a block is announced must be the same decision on every rank.
  const auto answers = store.all_gather("staging/direct", why_not.empty() ? "ok " + std::to_string(min_block_bytes) : why_not);
  for (const auto& answer : answers)
    if (answer != answers[0] || answer.rfind("ok ", 0) != 0) {
      if (context.rank == 0 && !quiet)
        std::fprintf(stderr, "gpudirect-launch: collectives copy through shared memory slots, not from the peers' buffers (%s)\n",
                     answer.rfind("ok ", 0) == 0 ? "ranks differ in GPUDIRECT_COMM_DIRECT_READS_MIN_BYTES" : answer.c_str());
      return std::nullopt;
    }
  return direct;
}

}  // namespace

NodeStaging stage_on_one_host(const bootstrap::LaunchContext& context, bootstrap::Store& store, std::chrono::milliseconds timeout) {
  NodeStaging staging;
  const char* setting = std::getenv("GPUDIRECT_COMM_STAGING");
  const bool wanted = !(setting && std::strcmp(setting, "0") == 0);
  std::string why_not;
  StagingLayout layout;
  try {
    layout = StagingLayout::for_ranks(context.size);
    // GPUDIRECT_COMM_STAGING_CHUNK_BYTES: the slot size (to measure; a multiple of 64).
    if (const char* chunk = std::getenv("GPUDIRECT_COMM_STAGING_CHUNK_BYTES"))
      layout = StagingLayout::for_ranks(context.size, StagingLayout::kDefaultBudget,
                                        parse_integer<std::size_t>(chunk, "GPUDIRECT_COMM_STAGING_CHUNK_BYTES", 64, std::size_t(64) << 20));
  } catch (const std::invalid_argument& e) {
    why_not = e.what();
  }
  // One answer on every rank: all on one host, staging wanted everywhere, the same slots. After '|':
  // the CPUs each rank may run on, then its pid and a probe of its memory for direct reads.
  const char* reads = std::getenv("GPUDIRECT_COMM_DIRECT_READS");
  const bool reads_wanted = wanted && !(reads && std::strcmp(reads, "0") == 0);
  const std::uint64_t token = (std::uint64_t(std::random_device{}()) << 32) | std::random_device{}();
  // Open until every rank has probed it, or staging is off (all return together).
  struct ProbeFd {
    int fd;
    ~ProbeFd() {
      if (fd >= 0) ::close(fd);
    }
  } const probe{reads_wanted ? make_probe_fd(token) : -1};
  const std::string mine = wanted ? context.hostname + " " + std::to_string(layout.chunk_bytes) + "|" + cpus_of_this_process() + "|" +
                                        std::to_string(::getpid()) + " " + std::to_string(probe.fd) + " " + std::to_string(token)
                                  : std::string();
  const auto all = store.all_gather("staging/hosts", mine);
  std::vector<std::string> cpu_lists, probes;
  for (const auto& entry : all) {
    const auto fields = split(entry, '|');
    cpu_lists.emplace_back(fields.size() > 1 ? fields[1] : "");
    probes.emplace_back(fields.size() > 2 ? fields[2] : "");
  }
  auto before_bar = [](const std::string& s) { return s.substr(0, s.find('|')); };
  if (context.size < 2 ||
      std::any_of(all.begin(), all.end(), [&](const std::string& h) { return h.empty() || before_bar(h) != before_bar(all[0]); }))
    return staging;
  if (why_not.empty())
    staging.memory = map_staging_segment(store, context.rank, layout.bytes(), &why_not, layout.ranges_used_by(context.rank));
  if (!staging.memory) {
    if (context.rank == 0)
      std::fprintf(stderr, "gpudirect-launch: collectives go over libfabric messages only, not shared memory (%s)\n", why_not.c_str());
    return staging;
  }
  StagingWait wait;
  wait.timeout = timeout;
  wait.abort = store.abort_signal();
  wait.on_failure = [&store](const std::string& message) { store.abort(message); };
  wait.host = context.hostname;
  // GPUDIRECT_COMM_STAGING_SPIN_US: the spin before yielding (to measure; 0 never spins).
  const bool own_cpus = distinct_cpus(cpu_lists) >= static_cast<std::size_t>(context.size);
  wait.spin = std::chrono::microseconds(own_cpus ? kSpinMicroseconds : 0);
  if (const char* spin = std::getenv("GPUDIRECT_COMM_STAGING_SPIN_US"))
    wait.spin = std::chrono::microseconds(parse_integer<long>(spin, "GPUDIRECT_COMM_STAGING_SPIN_US", 0, 1000000));
  // The owner of a block read in place waits for its readers: one more hand-off per call, which
  // costs a context switch where ranks share cores. With a core each direct reads win at every
  // size; on shared cores only from 64 KiB blocks (measurements: docs/performance.md).
  std::size_t min_block_bytes = own_cpus ? 0 : 64 * 1024;
  // GPUDIRECT_COMM_DIRECT_READS_MIN_BYTES: the smallest block read in place (to measure).
  if (const char* least = std::getenv("GPUDIRECT_COMM_DIRECT_READS_MIN_BYTES"))
    min_block_bytes = parse_integer<std::size_t>(least, "GPUDIRECT_COMM_DIRECT_READS_MIN_BYTES", 0, std::size_t(1) << 50);
  auto direct = agree_on_direct_reads(context, store, probes, min_block_bytes, !reads_wanted);
  if (direct) {
    staging.shareable = std::make_unique<ShareableMemory>();
    direct->own = staging.shareable.get();
  }
  staging.collectives =
      std::make_unique<StagedCollectives>(staging.memory->data(), layout, context.rank, std::move(wait), std::move(direct));
  return staging;
}

}  // namespace gpudirect::comm
