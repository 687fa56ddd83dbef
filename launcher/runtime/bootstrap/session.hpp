// What a subcommand needs to talk to its peers: who it is, and the rendezvous store.
#pragma once

#include "bootstrap/launch_context.hpp"
#include "bootstrap/store.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace gpudirect::bootstrap {

struct GlobalOptions {
  std::string rendezvous;              // "HOST:PORT" overrides the derived rendezvous
  std::chrono::milliseconds timeout{30000};
};

GlobalOptions& global_options();

struct Session {
  LaunchContext context;
  std::unique_ptr<Store> store;
};

// Reads the environment, applies --rendezvous, connects the store. Throws on bad input or a
// rendezvous that cannot be reached within the timeout.
Session open_session();

}  // namespace gpudirect::bootstrap
