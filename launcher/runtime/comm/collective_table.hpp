// One row per collective, as nccl-tests keeps them: everything that differs between collectives
// (names, buffer sizes, reduction and root, bus bandwidth, in-place layout, the expected result,
// how to start one), so that code for all of them looks it up instead of switching.
#pragma once

#include "comm/communicator.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace gpudirect::comm {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };

// A rank's send or receive buffer: one block of `count` elements, or one block per rank.
enum class Blocks { one, per_rank };

// In place (one buffer, as NCCL defines it): the input lies where the output does, or it is this
// rank's block of the output (all_gather), or the output is this rank's block of the input
// (reduce_scatter).
enum class InPlace { same, input_is_own_block, output_is_own_block };

// What a rank's output holds after the call, in terms of every rank's inputs (the bench checks it).
enum class Holds { reduction, roots_input, previous_ranks_input, every_ranks_input };
struct ResultRule {
  Holds holds;
  bool own_block;  // of the inputs' block at this rank's index, else of their first block
  bool root_only;  // only the root's output is defined
};

struct CollectiveInfo {
  Collective collective;
  const char* name;   // as the bench prints it (its table header, JSON, metrics) and failures say it
  const char* alias;  // another name parse_collective accepts, or ""
  bool reduces;       // takes a ReduceOp (the redop column says "none" otherwise)
  bool has_root;      // takes a root rank (the root column says -1 otherwise)
  Blocks send, recv;
  double (*bus_factor)(int ranks);  // busbw = algbw * bus_factor: nccl-tests' rule
  InPlace in_place;
  ResultRule result;
  // Starts the call on `comm`; `op` and `root` are passed only where the collective takes them.
  std::unique_ptr<Request> (*start)(Communicator& comm, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                                    int root);

  std::size_t send_blocks(int ranks) const { return send == Blocks::one ? 1 : static_cast<std::size_t>(ranks); }
  std::size_t recv_blocks(int ranks) const { return recv == Blocks::one ? 1 : static_cast<std::size_t>(ranks); }
  // The larger buffer: what nccl-tests' size and count columns show, and a call's size in messages.
  std::size_t total_blocks(int ranks) const { return std::max(send_blocks(ranks), recv_blocks(ranks)); }
  std::size_t send_elements(std::size_t count, int ranks) const { return count * send_blocks(ranks); }
  std::size_t recv_elements(std::size_t count, int ranks) const { return count * recv_blocks(ranks); }
  std::size_t total_elements(std::size_t count, int ranks) const { return count * total_blocks(ranks); }
  // In place: where the input and the output start in the one buffer, in elements.
  std::size_t in_place_input_offset(std::size_t count, int rank) const {
    return in_place == InPlace::input_is_own_block ? static_cast<std::size_t>(rank) * count : 0;
  }
  std::size_t in_place_output_offset(std::size_t count, int rank) const {
    return in_place == InPlace::output_is_own_block ? static_cast<std::size_t>(rank) * count : 0;
  }
};

const CollectiveInfo& info_of(Collective c);
std::span<const CollectiveInfo> collective_table();  // in the order of the enum
inline const char* name_of(Collective c) { return info_of(c).name; }

// A name as the bench takes it: "all_reduce", "allreduce", "all_reduce_perf" (nccl-tests' binary),
// or an alias ("bcast").
std::optional<Collective> parse_collective(const std::string& name);

}  // namespace gpudirect::comm
