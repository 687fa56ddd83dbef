// Communicator on host memory: a Transport plus our collective algorithms, run in issue order on
// one worker thread so calls return at once and complete in the background; a small call made
// while nothing else is queued or running runs at once in the caller's thread instead.
#pragma once

#include "bootstrap/abort_signal.hpp"

#include "bootstrap/launch_context.hpp"
#include "bootstrap/store.hpp"
#include "comm/communicator.hpp"
#include "comm/shm/node_staging.hpp"
#include "comm/transport/fabric_transport.hpp"
#include "comm/transport/transport.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace gpudirect::comm {

// A call that is still running `grace` after the job aborted (a dead rank) is stuck where no abort
// check reaches it: inside libfabric, as when a peer on this host was killed while holding the lock
// of a shared-memory queue. The communicator then reports once and ends the process, since the call
// will never return and the rank would otherwise hang until Slurm kills it.
struct StuckCallPolicy {
  std::shared_ptr<bootstrap::AbortSignal> abort;  // none: no watch
  std::chrono::milliseconds grace{2000};
  std::string reporter = "gpudirect-launch";  // starts the report line ("gpudirect bench")
  // Gets the report line; default: writes it to stderr and _exit(3) (a communication failure).
  std::function<void(const std::string&)> on_stuck;
};

// `staging`: shared-memory collectives of the same ranks (one host), or none.
std::unique_ptr<Communicator> make_host_communicator(std::unique_ptr<Transport> transport, std::string description,
                                                     NodeStaging staging = {}, StuckCallPolicy stuck = {});

// libfabric transport + our algorithms (+ shared-memory staging where all ranks share a host);
// `reporter` names the command in the line a stuck call ends the process with.
std::unique_ptr<Communicator> make_fabric_communicator(const bootstrap::LaunchContext& context, bootstrap::Store& store,
                                                       const FabricOptions& options, const std::string& reporter = "gpudirect-launch");

}  // namespace gpudirect::comm
