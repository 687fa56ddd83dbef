// What a subcommand needs to talk to its peers: who it is, and the rendezvous store.
#pragma once

#include "bootstrap/launch_context.hpp"
#include "bootstrap/store.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace gpudirect::bootstrap {

// Plain options, filled by whoever owns the command line (main.cpp) and passed in.
struct SessionOptions {
  std::string rendezvous;                    // "HOST:PORT" overrides the derived rendezvous; "" keeps it
  std::chrono::milliseconds timeout{60000};  // bounds the rendezvous and every store wait
};

struct HostPort {
  std::string host;
  int port = 0;
};

// "HOST:PORT" (the last ':' separates; PORT 1..65535, digits only). Throws std::invalid_argument
// naming `field` and the text.
HostPort parse_host_port(const std::string& text, const std::string& field);

struct Session {
  LaunchContext context;
  std::unique_ptr<Store> store;
  SessionOptions options;
};

// Reads the environment, applies options.rendezvous, connects the store. Throws on bad input or a
// rendezvous that cannot be reached within options.timeout.
Session open_session(const SessionOptions& options);

}  // namespace gpudirect::bootstrap
