#include "comm/collective_table.hpp"

#include <array>

namespace gpudirect::comm {
namespace {

using Start = std::unique_ptr<Request> (*)(Communicator&, const void*, void*, std::size_t, DataType, ReduceOp, int);

// nccl-tests' bus bandwidth: what each rank's link carries, whatever the algorithm. all_reduce sends
// and receives 2(n-1)/n of the buffer, all_gather, reduce_scatter and alltoall (n-1)/n of theirs.
double twice_ring(int ranks) {
  const double n = ranks;
  return 2.0 * (n - 1) / n;
}
double ring(int ranks) {
  const double n = ranks;
  return (n - 1) / n;
}
double once(int) { return 1.0; }

constexpr Start kAllReduce = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp op, int) {
  return c.all_reduce(s, r, n, t, op);
};
constexpr Start kAllGather = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp, int) {
  return c.all_gather(s, r, n, t);
};
constexpr Start kReduceScatter = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp op, int) {
  return c.reduce_scatter(s, r, n, t, op);
};
constexpr Start kBroadcast = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp, int root) {
  return c.broadcast(s, r, n, t, root);
};
constexpr Start kReduce = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp op, int root) {
  return c.reduce(s, r, n, t, op, root);
};
constexpr Start kAlltoall = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp, int) {
  return c.alltoall(s, r, n, t);
};
constexpr Start kSendrecv = [](Communicator& c, const void* s, void* r, std::size_t n, DataType t, ReduceOp, int) {
  return c.sendrecv(s, r, n, t);
};

using enum Collective;
using enum Blocks;
using enum InPlace;
using enum Holds;

constexpr std::array<CollectiveInfo, 7> kTable{{
    //  collective      name              alias    reduces root   send      recv      bus         in place             result: holds, own
    //  block, root only   start
    {all_reduce, "all_reduce", "", true, false, one, one, twice_ring, same, {reduction, false, false}, kAllReduce},
    {all_gather, "all_gather", "", false, false, one, per_rank, ring, input_is_own_block, {every_ranks_input, false, false}, kAllGather},
    {reduce_scatter, "reduce_scatter", "", true, false, per_rank, one, ring, output_is_own_block, {reduction, true, false}, kReduceScatter},
    {broadcast, "broadcast", "bcast", false, true, one, one, once, same, {roots_input, false, false}, kBroadcast},
    {reduce, "reduce", "", true, true, one, one, once, same, {reduction, false, true}, kReduce},
    {alltoall, "alltoall", "", false, false, per_rank, per_rank, ring, same, {every_ranks_input, true, false}, kAlltoall},
    {sendrecv, "sendrecv", "", false, false, one, one, once, same, {previous_ranks_input, false, false}, kSendrecv},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].collective) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kTable's rows must follow enum Collective");

}  // namespace

const CollectiveInfo& info_of(Collective c) { return kTable[static_cast<std::size_t>(c)]; }

std::span<const CollectiveInfo> collective_table() { return kTable; }

std::optional<Collective> parse_collective(const std::string& raw) {
  std::string name = raw;
  if (name.size() > 5 && name.ends_with("_perf")) name.resize(name.size() - 5);
  std::erase(name, '_');
  for (const auto& row : kTable) {
    std::string plain = row.name;
    std::erase(plain, '_');
    if (name == plain || (*row.alias && name == row.alias)) return row.collective;
  }
  return std::nullopt;
}

}  // namespace gpudirect::comm
