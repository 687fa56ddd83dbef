// The collective table (comm/collective_table.hpp) against every collective's facts written out
// one by one, as the bench and the communicators used them before there was a table: names and
// spellings, buffers, bus factors, in-place layouts and the bench's expected results.
#include <catch2/catch.hpp>

#include "bench/check_data.hpp"
#include "bench/collective.hpp"
#include "comm/collective_table.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace gpudirect;
using comm::Collective;
using comm::DataType;
using comm::ReduceOp;

namespace {

const Collective kAll[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::broadcast,
                           Collective::reduce,     Collective::alltoall,   Collective::sendrecv};

bool gathers_or_scatters(Collective c) {
  return c == Collective::all_gather || c == Collective::reduce_scatter || c == Collective::alltoall;
}

}  // namespace

TEST_CASE("collective table: names, spellings, reduction and root", "[bench]") {
  const std::vector<std::string> names{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"};
  REQUIRE(comm::collective_table().size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Collective c = kAll[i];
    CHECK(comm::collective_table()[i].collective == c);
    CHECK(comm::name_of(c) == names[i]);
    CHECK(comm::info_of(c).reduces == (c == Collective::all_reduce || c == Collective::reduce_scatter || c == Collective::reduce));
    CHECK(comm::info_of(c).has_root == (c == Collective::broadcast || c == Collective::reduce));
    CHECK(comm::parse_collective(names[i]) == c);
    CHECK(comm::parse_collective(names[i] + "_perf") == c);
    std::string plain = names[i];
    std::erase(plain, '_');
    CHECK(comm::parse_collective(plain) == c);
  }
  CHECK(comm::parse_collective("bcast") == Collective::broadcast);
  CHECK(comm::parse_collective("bcast_perf") == Collective::broadcast);
  CHECK(comm::parse_collective("all_to_all") == Collective::alltoall);
  CHECK_FALSE(comm::parse_collective(""));
  CHECK_FALSE(comm::parse_collective("_perf"));
  CHECK_FALSE(comm::parse_collective("gather"));
  CHECK_FALSE(comm::parse_collective("scatter"));
}

TEST_CASE("collective table: bus factors, row shapes and in-place layouts as nccl-tests has them", "[bench]") {
  for (const Collective c : kAll)
    for (int ranks = 1; ranks <= 9; ++ranks) {
      INFO(comm::name_of(c) << " at " << ranks << " ranks");
      const auto& info = comm::info_of(c);
      const double n = ranks;
      const double bus = c == Collective::all_reduce ? 2.0 * (n - 1) / n : gathers_or_scatters(c) ? (n - 1) / n : 1.0;
      CHECK(info.bus_factor(ranks) == bus);  // bit for bit: the busbw column must not move
      for (const std::size_t bytes : {std::size_t(0), std::size_t(7), std::size_t(8), std::size_t(1000), std::size_t(1) << 20}) {
        for (const std::size_t element : {std::size_t(1), std::size_t(2), std::size_t(4), std::size_t(8)}) {
          const auto shape = bench::row_shape(c, bytes, element, ranks);
          const std::size_t total = bytes / element, un = static_cast<std::size_t>(ranks);
          const std::size_t call = gathers_or_scatters(c) ? total / un : total;
          CHECK(shape.call_count == call);
          CHECK(shape.shown_count == (gathers_or_scatters(c) ? call * un : total));
          CHECK(shape.shown_bytes == shape.shown_count * element);
          CHECK(shape.send_elements == (c == Collective::reduce_scatter || c == Collective::alltoall ? call * un : call));
          CHECK(shape.recv_elements == (c == Collective::all_gather || c == Collective::alltoall ? call * un : call));
          CHECK(info.total_elements(call, ranks) == shape.shown_count);
        }
      }
      for (int rank = 0; rank < ranks; ++rank) {
        const auto own = static_cast<std::size_t>(rank) * 5;
        CHECK(info.in_place_input_offset(5, rank) == (c == Collective::all_gather ? own : 0));
        CHECK(info.in_place_output_offset(5, rank) == (c == Collective::reduce_scatter ? own : 0));
      }
    }
}

TEST_CASE("collective table: the bench's expected results per collective", "[bench]") {
  const DataType type = DataType::int32;
  const ReduceOp op = ReduceOp::sum;
  auto input = [&](int rank, std::size_t count, std::size_t first) {
    std::vector<char> out;
    bench::fill_input(out, count, type, rank, op, first);
    return out;
  };
  auto sum_of_ranks = [&](int ranks, std::size_t count, std::size_t first) {
    std::vector<std::int32_t> sum(count, 0);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t i = 0; i < count; ++i) sum[i] += static_cast<std::int32_t>(bench::input_value(r, first + i, op));
    std::vector<char> bytes(count * 4);
    std::memcpy(bytes.data(), sum.data(), bytes.size());
    return bytes;
  };
  for (int ranks = 1; ranks <= 5; ++ranks)
    for (int rank = 0; rank < ranks; ++rank)
      for (int root = 0; root < ranks; ++root)
        for (const Collective c : kAll) {
          INFO(comm::name_of(c) << " rank " << rank << " of " << ranks << ", root " << root);
          const auto shape = bench::row_shape(c, 4 * 6 * static_cast<std::size_t>(ranks), 4, ranks);
          const std::size_t count = shape.call_count, own = static_cast<std::size_t>(rank) * count;
          std::vector<char> want;
          switch (c) {
            case Collective::all_reduce:
              want = sum_of_ranks(ranks, count, 0);
              break;
            case Collective::reduce:
              if (rank == root) want = sum_of_ranks(ranks, count, 0);
              break;
            case Collective::reduce_scatter:
              want = sum_of_ranks(ranks, count, own);
              break;
            case Collective::broadcast:
              want = input(root, count, 0);
              break;
            case Collective::sendrecv:
              want = input((rank - 1 + ranks) % ranks, count, 0);
              break;
            case Collective::all_gather:
            case Collective::alltoall:
              for (int r = 0; r < ranks; ++r) {
                const auto block = input(r, count, c == Collective::alltoall ? own : 0);
                want.insert(want.end(), block.begin(), block.end());
              }
              break;
          }
          CHECK(bench::expected_output(c, shape, type, op, rank, ranks, root) == want);
        }
}
