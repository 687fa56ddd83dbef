#include "comm/node_staging.hpp"

#include "gpudirect/text.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string_view>

namespace gpudirect::comm {
namespace {
// 2-rank 4 KiB all_reduce on the 2-core VM: 3.7 us yielding at once, 2.1 us with 5 us (or 50 us) of
// spin; 4 ranks on those 2 cores: 37 us yielding at once, 59 us spinning 5 us.
constexpr long kSpinMicroseconds = 5;
}  // namespace

std::string cpus_of_this_process() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "";
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) list += (list.empty() ? "" : ",") + std::to_string(cpu);
  return list;
}

std::size_t distinct_cpus(const std::vector<std::string>& cpu_lists) {
  std::set<std::string_view> cpus;
  for (const auto& list : cpu_lists)
    for (const auto cpu : split(list, ','))
      if (!cpu.empty()) cpus.insert(cpu);
  return cpus.size();
}

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
  // One answer on every rank: all on one host, staging wanted everywhere, the same slots. The CPUs
  // each rank may run on ride along (after '|').
  const std::string mine = wanted ? context.hostname + " " + std::to_string(layout.chunk_bytes) + "|" + cpus_of_this_process() : std::string();
  const auto all = store.all_gather("staging/hosts", mine);
  std::vector<std::string> cpu_lists;
  auto before_bar = [](const std::string& s) { return s.substr(0, s.find('|')); };
  for (const auto& entry : all) cpu_lists.push_back(entry.find('|') == std::string::npos ? "" : entry.substr(entry.find('|') + 1));
  if (context.size < 2 ||
      std::any_of(all.begin(), all.end(), [&](const std::string& h) { return h.empty() || before_bar(h) != before_bar(all[0]); }))
    return staging;
  if (why_not.empty()) staging.memory = map_shared_segment(store, context.rank, layout.bytes(), &why_not, layout.ranges_used_by(context.rank));
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
  staging.collectives = std::make_unique<StagedCollectives>(staging.memory->data(), layout, context.rank, std::move(wait));
  return staging;
}

}  // namespace gpudirect::comm
