// The transport of a job with one rank: every exchange is with itself.
#pragma once

#include "comm/transport/transport.hpp"

#include <cstring>

namespace gpudirect::comm {

class LoopbackTransport final : public Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes, std::uint32_t) override {
    if (to == 0 && from == 0 && send_bytes == recv_bytes && send_bytes > 0 && send != recv) std::memmove(recv, send, send_bytes);
  }
};

}  // namespace gpudirect::comm
