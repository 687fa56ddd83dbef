#include "comm/communicator_factory.hpp"

#include "comm/host_communicator.hpp"
#include "comm/transport/loopback_transport.hpp"

#ifdef GPUDIRECT_HAVE_NCCL
#include "comm/nccl/nccl_communicator.hpp"
#endif

#include <stdexcept>

namespace gpudirect::comm {

bool nccl_available() {
#ifdef GPUDIRECT_HAVE_NCCL
  return nccl_device_count() > 0;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_communicator(const CommunicatorOptions& options, bootstrap::Session& session) {
  const std::string& backend = options.backend;
  const std::string chosen = backend == "auto" ? (nccl_available() ? "nccl" : "libfabric") : backend;
  if (chosen == "nccl") {
#ifdef GPUDIRECT_HAVE_NCCL
    return make_nccl_communicator(session, options.timeout, options.stream_priority);
#else
    throw std::invalid_argument(
        "this gpudirect-launch was built without NCCL (CUDA/NCCL not found at build time): use --backend libfabric");
#endif
  }
  if (chosen != "libfabric") throw std::invalid_argument("--backend " + backend + ": expected auto, nccl or libfabric");
  if (session.context.size == 1) return make_host_communicator(std::make_unique<LoopbackTransport>(), "loopback");
  FabricOptions fabric;
  fabric.timeout = options.timeout;
  return make_fabric_communicator(session.context, *session.store, fabric, options.reporter);
}

}  // namespace gpudirect::comm
