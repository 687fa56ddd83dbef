// Communicator on host memory: a Transport plus our collective algorithms, run in issue order on
// one worker thread so calls return at once and complete in the background; a small call made
// while nothing else is queued or running runs at once in the caller's thread instead.
#pragma once

#include "bootstrap/launch_context.hpp"
#include "bootstrap/store.hpp"
#include "comm/communicator.hpp"
#include "comm/fabric_transport.hpp"
#include "comm/node_staging.hpp"
#include "comm/transport.hpp"

#include <map>
#include <memory>

namespace gpudirect::comm {

// `staging`: shared-memory collectives of the same ranks (one host), or none.
std::unique_ptr<Communicator> make_host_communicator(std::unique_ptr<Transport> transport, std::string description,
                                                     NodeStaging staging = {});

// libfabric transport + our algorithms (+ shared-memory staging where all ranks share a host).
std::unique_ptr<Communicator> make_fabric_communicator(const bootstrap::LaunchContext& context, bootstrap::Store& store,
                                                       const FabricOptions& options);

}  // namespace gpudirect::comm
