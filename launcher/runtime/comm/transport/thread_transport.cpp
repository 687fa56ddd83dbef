#include "comm/transport/thread_transport.hpp"

#include "comm/communicator.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpudirect::comm {
namespace {

// Messages for one rank, in arrival order per (sender, tag).
struct Mailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<std::pair<int, std::uint32_t>, std::deque<std::vector<char>>> messages;
};

struct Mailboxes {
  explicit Mailboxes(int size) : boxes(static_cast<std::size_t>(size)) {}
  std::vector<Mailbox> boxes;
};

class ThreadTransport final : public Transport {
 public:
  ThreadTransport(std::shared_ptr<Mailboxes> shared, int rank, std::chrono::milliseconds timeout, bool remote_reads, bool pieces,
                  std::vector<std::string> hosts)
      : shared_(std::move(shared)),
        rank_(rank),
        timeout_(timeout),
        remote_reads_(remote_reads),
        pieces_(pieces),
        hosts_(std::move(hosts)) {}

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(shared_->boxes.size()); }
  std::vector<std::string> hosts() const override { return hosts_; }

  void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                std::uint32_t tag) override {
    if (to >= 0 && send_bytes > 0) post(to, send, send_bytes, tag);
    if (from >= 0 && recv_bytes > 0) take(from, recv, recv_bytes, tag);
  }

  bool overlaps_transfers() const override { return pieces_; }
  // Every piece its own message (same tag: a mailbox keeps arrival order), each received piece
  // handed over as soon as it is taken.
  void exchange_pieces(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes, std::uint32_t tag,
                       std::size_t piece_bytes, const std::function<void(std::size_t, std::size_t)>& received) override {
    if (!pieces_ || piece_bytes == 0) throw std::logic_error("thread transport: exchange in pieces not enabled");
    auto pieces = [&](std::size_t bytes) { return (bytes + piece_bytes - 1) / piece_bytes; };
    if (pieces(send_bytes) > kMaxPieces || pieces(recv_bytes) > kMaxPieces)
      throw CommError("thread transport: more than kMaxPieces pieces");
    for (std::size_t at = 0; to >= 0 && at < send_bytes; at += piece_bytes)
      post(to, static_cast<const char*>(send) + at, std::min(piece_bytes, send_bytes - at), tag);
    for (std::size_t at = 0; from >= 0 && at < recv_bytes; at += piece_bytes) {
      const std::size_t bytes = std::min(piece_bytes, recv_bytes - at);
      take(from, static_cast<char*>(recv) + at, bytes, tag);
      received(at, bytes);
    }
  }
  bool can_read_remote() const override { return remote_reads_; }
  RemoteRegion expose(const void* data, std::size_t) override { return {reinterpret_cast<std::uintptr_t>(data), 0}; }
  void read(int peer, const RemoteRegion& region, std::size_t offset, void* local, std::size_t bytes) override {
    check_peer(peer);
    if (bytes) std::memcpy(local, reinterpret_cast<const char*>(static_cast<std::uintptr_t>(region.address)) + offset, bytes);
  }

 private:
  void check_peer(int peer) const {
    if (peer >= size())
      throw CommError("thread transport: rank " + std::to_string(peer) + " is not a rank (0.." + std::to_string(size() - 1) + ")");
  }

  void post(int to, const void* data, std::size_t bytes, std::uint32_t tag) {
    check_peer(to);
    Mailbox& box = shared_->boxes[static_cast<std::size_t>(to)];
    std::vector<char> message(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
    {
      std::lock_guard lock(box.mutex);
      box.messages[{rank_, tag}].push_back(std::move(message));
    }
    box.arrived.notify_all();
  }

  void take(int from, void* data, std::size_t bytes, std::uint32_t tag) {
    check_peer(from);
    Mailbox& box = shared_->boxes[static_cast<std::size_t>(rank_)];
    std::unique_lock lock(box.mutex);
    const auto key = std::make_pair(from, tag);
    const bool ready = box.arrived.wait_for(lock, timeout_, [&] {
      const auto it = box.messages.find(key);
      return it != box.messages.end() && !it->second.empty();
    });
    if (!ready)
      throw CommError("thread transport: rank " + std::to_string(rank_) + " got no message from rank " + std::to_string(from) + " (tag " +
                      std::to_string(tag) + ") within " + std::to_string(timeout_.count()) + " ms");
    auto it = box.messages.find(key);
    std::vector<char> message = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) box.messages.erase(it);
    lock.unlock();
    if (message.size() != bytes)
      throw CommError("thread transport: rank " + std::to_string(rank_) + " expected " + std::to_string(bytes) + " bytes from rank " +
                      std::to_string(from) + " (tag " + std::to_string(tag) + "), got " + std::to_string(message.size()));
    std::memcpy(data, message.data(), bytes);
  }

  std::shared_ptr<Mailboxes> shared_;
  int rank_;
  std::chrono::milliseconds timeout_;
  bool remote_reads_;
  bool pieces_;
  std::vector<std::string> hosts_;
};

}  // namespace

std::vector<std::unique_ptr<Transport>> make_thread_transports(int size, std::chrono::milliseconds timeout, bool remote_reads, bool pieces,
                                                               const std::vector<std::string>& hosts) {
  if (size < 1) throw std::invalid_argument("thread transport: size " + std::to_string(size) + " must be at least 1");
  if (!hosts.empty() && hosts.size() != static_cast<std::size_t>(size))
    throw std::invalid_argument("thread transport: " + std::to_string(hosts.size()) + " hosts for " + std::to_string(size) + " ranks");
  auto shared = std::make_shared<Mailboxes>(size);
  std::vector<std::unique_ptr<Transport>> transports;
  for (int rank = 0; rank < size; ++rank)
    transports.push_back(std::make_unique<ThreadTransport>(shared, rank, timeout, remote_reads, pieces, hosts));
  return transports;
}

}  // namespace gpudirect::comm
