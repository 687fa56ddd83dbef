// A Transport over some of another transport's ranks (a host's ranks, or one rank of every host):
// rank i of the group is members[i] of the parent, and every message goes through the parent, so
// collective algorithms run on the group unchanged. Messages of a group's collectives must not be
// mistaken for the parent's: Collectives over it take their own tag channel.
#pragma once

#include "comm/transport/transport.hpp"

#include <vector>

namespace gpudirect::comm {

class GroupTransport final : public Transport {
 public:
  // `members`: parent ranks, distinct, including the parent's own rank (std::invalid_argument otherwise).
  GroupTransport(Transport& parent, std::vector<int> members);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  void exchange(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes, std::uint32_t tag) override;
  bool overlaps_transfers() const override { return parent_.overlaps_transfers(); }
  void exchange_pieces(int to, const void* send, std::size_t send_bytes, int from, void* recv, std::size_t recv_bytes, std::uint32_t tag,
                       std::size_t piece_bytes, const std::function<void(std::size_t, std::size_t)>& received) override;
  bool can_read_remote() const override { return parent_.can_read_remote(); }
  RemoteRegion expose(const void* data, std::size_t bytes) override { return parent_.expose(data, bytes); }
  void read(int peer, const RemoteRegion& region, std::size_t offset, void* local, std::size_t bytes) override;

 private:
  int parent_rank(int member) const { return member < 0 ? -1 : members_[static_cast<std::size_t>(member)]; }

  Transport& parent_;
  std::vector<int> members_;
  int rank_ = -1;
};

}  // namespace gpudirect::comm
