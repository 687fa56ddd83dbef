// Point-to-point messages between ranks, and (where the transport can) one-sided reads of a peer's
// memory: the only things the collective algorithms use, so they run unchanged over any transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace gpudirect::comm {

// A region of a rank's memory that its peers may read: what `Transport::expose` returns and a peer
// passes to `Transport::read`. Plain data, so it travels in a message.
struct RemoteRegion {
  std::uint64_t address = 0;
  std::uint64_t key = 0;
};

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

  // One-sided reads (libfabric RMA; CMA on the shm provider): a rank reduces or copies straight from
  // its peers' buffers, in chunks that stay in its cache, instead of receiving into scratch memory
  // first. Transports without them keep the defaults and the algorithms use messages only.
  virtual bool can_read_remote() const { return false; }
  // Lets peers read [data, data + bytes) until the memory is freed; cheap to call again for the
  // same buffer (registrations are cached).
  virtual RemoteRegion expose(const void* /*data*/, std::size_t /*bytes*/) { throw std::logic_error("transport without remote reads"); }
  // Copies `bytes` from `region` of rank `peer`, starting `offset` bytes in, to `local`; returns when
  // the bytes are there. The peer does nothing (it must only keep the memory unchanged meanwhile).
  virtual void read(int /*peer*/, const RemoteRegion& /*region*/, std::size_t /*offset*/, void* /*local*/, std::size_t /*bytes*/) {
    throw std::logic_error("transport without remote reads");
  }
};

}  // namespace gpudirect::comm
