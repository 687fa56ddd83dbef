// Point-to-point messages between ranks: the only thing the collective algorithms use, so they
// run unchanged over any transport.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpudirect::comm {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sends `send_bytes` to rank `to` and receives `recv_bytes` from rank `from`, both with `tag`
  // (the collective's sequence number and step), and returns when both are complete. A peer of -1
  // or 0 bytes skips that side. Throws CommError when a peer does not answer within the timeout.
  virtual void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv,
                        std::size_t recv_bytes, std::uint32_t tag) = 0;

  void send(int to, const void* data, std::size_t bytes, std::uint32_t tag) { exchange(to, data, bytes, -1, nullptr, 0, tag); }
  void recv(int from, void* data, std::size_t bytes, std::uint32_t tag) { exchange(-1, nullptr, 0, from, data, bytes, tag); }
};

}  // namespace gpudirect::comm
