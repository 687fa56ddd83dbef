#include "comm/node_staging.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace gpudirect::comm {

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
  // One answer on every rank: all on one host, staging wanted everywhere, the same slots.
  const std::string mine = wanted ? context.hostname + " " + std::to_string(layout.chunk_bytes) : std::string();
  const auto all = store.all_gather("staging/hosts", mine);
  if (context.size < 2 || std::any_of(all.begin(), all.end(), [&](const std::string& h) { return h.empty() || h != all[0]; }))
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
  staging.collectives = std::make_unique<StagedCollectives>(staging.memory->data(), layout, context.rank, std::move(wait));
  return staging;
}

}  // namespace gpudirect::comm
