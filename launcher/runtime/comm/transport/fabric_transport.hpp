// Transport over libfabric RDM tagged endpoints: shm between ranks of one host; across hosts the
// net provider (libfabric 1.17's native RDM over TCP sockets) where libfabric has it, else
// tcp;ofi_rxm; or whatever FI_PROVIDER names.
#pragma once

#include "bootstrap/launch_context.hpp"
#include "bootstrap/store.hpp"
#include "comm/transport/transport.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace gpudirect::comm {

struct FabricOptions {
  std::string provider;                      // "" = FI_PROVIDER, else shm when every rank is on one host, else net or tcp;ofi_rxm
  std::string interface;                     // "" = FI_TCP_IFACE, else the first of GPUDIRECT_NICS, else libfabric's choice
  std::chrono::milliseconds timeout{30000};  // no progress for this long: the peer is unreachable
};

std::unique_ptr<Transport> make_fabric_transport(const bootstrap::LaunchContext& context, bootstrap::Store& store,
                                                 const FabricOptions& options, std::string* description);

}  // namespace gpudirect::comm
