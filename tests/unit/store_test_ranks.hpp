// The launch context of rank `rank` of `size` local test ranks whose rendezvous is 127.0.0.1:port,
// all holding the same rendezvous secret (kTestSecret).
#pragma once

#include "bootstrap/launch_context.hpp"

#include <string>

namespace gpudirect::bootstrap::testing {

inline const std::string kTestSecret = "00112233445566778899aabbccddeeff0123456789abcdef0011223344556677";

inline LaunchContext rank_of(int rank, int size, int port) {
  LaunchContext c;
  c.rank = rank;
  c.size = size;
  c.rendezvous_host = "127.0.0.1";
  c.rendezvous_port = port;
  c.hostname = "host" + std::to_string(rank);
  c.rendezvous_secret = kTestSecret;
  return c;
}

}  // namespace gpudirect::bootstrap::testing
