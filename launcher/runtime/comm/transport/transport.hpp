// Point-to-point messages between ranks, and (where the transport can) one-sided reads of a peer's
// memory: the only things the collective algorithms use, so they run unchanged over any transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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
  // The host of every rank, where the transport knows (a job across hosts then runs its
  // all_reduce by host: algorithms/host_groups.hpp); empty where it does not.
  virtual std::vector<std::string> hosts() const { return {}; }
  // Sends `send_bytes` to rank `to` and receives `recv_bytes` from rank `from`, both with `tag`
  // (the collective's sequence number and step), and returns when both are complete. A peer of -1
  // or 0 bytes skips that side. Throws CommError when a peer does not answer within the timeout.
  virtual void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                        std::uint32_t tag) = 0;

  // A network moves data while the caller computes (the kernel or the NIC does it), so an exchange
  // may run in pieces, all under way at once: each piece of `piece_bytes` (the last one shorter) of
  // the send and of the receive is its own message, and `received(offset, bytes)` runs in this
  // thread for each received piece, in order, as soon as it and the ones before it are in, while
  // later pieces still travel. The ring reduces a piece there, and never waits for a round trip per
  // piece. Both sides pass the same piece size; at most kMaxPieces pieces a side. Only where
  // overlaps_transfers() (over shared memory the caller's own thread copies, so nothing overlaps).
  virtual bool overlaps_transfers() const { return false; }
  static constexpr std::size_t kMaxPieces = 256;  // within every provider's queue of posted receives
  virtual void exchange_pieces(int /*to*/, const void* /*send*/, std::size_t /*send_bytes*/, int /*from*/, void* /*recv*/,
                               std::size_t /*recv_bytes*/, std::uint32_t /*tag*/, std::size_t /*piece_bytes*/,
                               const std::function<void(std::size_t, std::size_t)>& /*received*/) {
    throw std::logic_error("transport without exchanges in pieces");
  }

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
