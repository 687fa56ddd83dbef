// One row per DataType and per ReduceOp, named as nccl-tests names them.
#include "comm/communicator.hpp"

#include <array>

namespace gpudirect::comm {
namespace {

struct TypeRow {
  DataType type;
  const char* name;
  std::size_t size;
};

constexpr std::array<TypeRow, 9> kTypes{{
    {DataType::float32, "float", 4},
    {DataType::float64, "double", 8},
    {DataType::float16, "half", 2},
    {DataType::bfloat16, "bfloat16", 2},
    {DataType::int8, "int8", 1},
    {DataType::uint8, "uint8", 1},
    {DataType::int32, "int32", 4},
    {DataType::int64, "int64", 8},
    {DataType::uint64, "uint64", 8},
}};

// In the order of enum ReduceOp.
constexpr std::array<const char*, 5> kOps{"sum", "prod", "min", "max", "avg"};
static_assert(static_cast<std::size_t>(ReduceOp::avg) + 1 == kOps.size());

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kTypes.size(); ++i)
    if (static_cast<std::size_t>(kTypes[i].type) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kTypes' rows must follow enum DataType");

}  // namespace

std::size_t size_of(DataType type) {
  const auto i = static_cast<std::size_t>(type);
  return i < kTypes.size() ? kTypes[i].size : 0;
}

const char* name_of(DataType type) {
  const auto i = static_cast<std::size_t>(type);
  return i < kTypes.size() ? kTypes[i].name : "?";
}

const char* name_of(ReduceOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kOps.size() ? kOps[i] : "?";
}

}  // namespace gpudirect::comm
