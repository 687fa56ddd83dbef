#include "comm/transport/group_transport.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpudirect::comm {

GroupTransport::GroupTransport(Transport& parent, std::vector<int> members) : parent_(parent), members_(std::move(members)) {
  std::vector<int> sorted = members_;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty() || sorted.front() < 0 || sorted.back() >= parent.size() ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw std::invalid_argument("group transport: members must be distinct ranks of the parent (0.." + std::to_string(parent.size() - 1) +
                                ")");
  const auto mine = std::find(members_.begin(), members_.end(), parent.rank());
  if (mine == members_.end()) throw std::invalid_argument("group transport: rank " + std::to_string(parent.rank()) + " is not a member");
  rank_ = static_cast<int>(mine - members_.begin());
}

void GroupTransport::exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                              std::uint32_t tag) {
  parent_.exchange(parent_rank(to), send, send_bytes, parent_rank(from), recv, recv_bytes, tag);
}

void GroupTransport::exchange_pieces(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes,
                                     std::uint32_t tag, std::size_t piece_bytes,
                                     const std::function<void(std::size_t, std::size_t)>& received) {
  parent_.exchange_pieces(parent_rank(to), send, send_bytes, parent_rank(from), recv, recv_bytes, tag, piece_bytes, received);
}

void GroupTransport::read(int peer, const RemoteRegion& region, std::size_t offset, void* local, std::size_t bytes) {
  parent_.read(parent_rank(peer), region, offset, local, bytes);
}

}  // namespace gpudirect::comm
