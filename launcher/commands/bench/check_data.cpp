#include "bench/check_data.hpp"

#include "comm/reduce_kernels.hpp"

#include <cstring>

namespace gpudirect::bench {

using comm::DataType;
using comm::ReduceOp;

double input_value(int rank, std::size_t index, ReduceOp op) {
  const std::size_t spread = op == ReduceOp::prod ? 2 : 3;
  return 1.0 + static_cast<double>((static_cast<std::size_t>(rank) * 7 + index) % spread);
}

namespace {

void store(char* out, double value, DataType type) {
  switch (type) {
    case DataType::float32: {
      const float v = static_cast<float>(value);
      std::memcpy(out, &v, 4);
      break;
    }
    case DataType::float64:
      std::memcpy(out, &value, 8);
      break;
    case DataType::float16: {
      const auto v = comm::float_to_half(static_cast<float>(value));
      std::memcpy(out, &v, 2);
      break;
    }
    case DataType::bfloat16: {
      const auto v = comm::float_to_bfloat16(static_cast<float>(value));
      std::memcpy(out, &v, 2);
      break;
    }
    case DataType::int8: {
      const auto v = static_cast<std::int8_t>(value);
      std::memcpy(out, &v, 1);
      break;
    }
    case DataType::uint8: {
      const auto v = static_cast<std::uint8_t>(value);
      std::memcpy(out, &v, 1);
      break;
    }
    case DataType::int32: {
      const auto v = static_cast<std::int32_t>(value);
      std::memcpy(out, &v, 4);
      break;
    }
    case DataType::int64: {
      const auto v = static_cast<std::int64_t>(value);
      std::memcpy(out, &v, 8);
      break;
    }
    case DataType::uint64: {
      const auto v = static_cast<std::uint64_t>(value);
      std::memcpy(out, &v, 8);
      break;
    }
  }
}

// The reduction of every rank's block `block` (elements [block*count, (block+1)*count) of their inputs).
std::vector<char> reduced(std::size_t count, std::size_t first_index, DataType type, ReduceOp op, int ranks) {
  const std::size_t element = comm::size_of(type);
  std::vector<char> accumulator, input;
  fill_input(accumulator, count, type, 0, op, first_index);
  for (int r = 1; r < ranks; ++r) {
    fill_input(input, count, type, r, op, first_index);
    comm::reduce_into(accumulator.data(), input.data(), count, type, op == ReduceOp::avg ? ReduceOp::sum : op);
  }
  if (op == ReduceOp::avg) comm::divide_for_average(accumulator.data(), count, type, ranks);
  (void)element;
  return accumulator;
}

}  // namespace

void fill_input(std::vector<char>& out, std::size_t count, DataType type, int rank, ReduceOp op, std::size_t first_index) {
  const std::size_t element = comm::size_of(type);
  out.resize(count * element);
  for (std::size_t i = 0; i < count; ++i) store(out.data() + i * element, input_value(rank, first_index + i, op), type);
}

std::vector<char> expected_output(comm::Collective c, const RowShape& shape, DataType type, ReduceOp op, int rank, int ranks, int root) {
  const comm::ResultRule rule = comm::info_of(c).result;
  const std::size_t count = shape.call_count;
  const std::size_t first = rule.own_block ? static_cast<std::size_t>(rank) * count : 0;
  if (rule.root_only && rank != root) return {};
  std::vector<char> out, block;
  switch (rule.holds) {
    case comm::Holds::reduction:
      return reduced(count, first, type, op, ranks);
    case comm::Holds::roots_input:
      fill_input(out, count, type, root, op, first);
      return out;
    case comm::Holds::previous_ranks_input:
      fill_input(out, count, type, (rank - 1 + ranks) % ranks, op, first);
      return out;
    case comm::Holds::every_ranks_input:  // block r of the output from rank r
      for (int r = 0; r < ranks; ++r) {
        fill_input(block, count, type, r, op, first);
        out.insert(out.end(), block.begin(), block.end());
      }
      return out;
  }
  return out;
}

std::size_t count_wrong(const std::vector<char>& actual, const std::vector<char>& expected, std::size_t element) {
  std::size_t wrong = 0;
  const std::size_t n = std::min(actual.size(), expected.size()) / element;
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(actual.data() + i * element, expected.data() + i * element, element) != 0) ++wrong;
  wrong += (std::max(actual.size(), expected.size()) - std::min(actual.size(), expected.size())) / element;
  return wrong;
}

}  // namespace gpudirect::bench
