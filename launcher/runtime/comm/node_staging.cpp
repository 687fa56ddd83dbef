#include "comm/node_staging.hpp"

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
  // Same answer on every rank: the hosts are gathered, the setting must be the job's.
  const auto hosts = store.all_gather("staging/hosts", wanted ? context.hostname : std::string());
  if (context.size < 2 || std::any_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h.empty() || h != hosts[0]; }))
    return staging;
  StagingLayout layout;
  std::string why_not;
  try {
    layout = StagingLayout::for_ranks(context.size);
  } catch (const std::invalid_argument& e) {
    why_not = e.what();
  }
  if (why_not.empty()) staging.memory = map_shared_segment(store, context.rank, layout.bytes(), &why_not);
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
