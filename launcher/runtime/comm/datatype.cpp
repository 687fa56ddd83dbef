#include "comm/communicator.hpp"

namespace gpudirect::comm {

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::int8: case DataType::uint8: return 1;
    case DataType::float16: case DataType::bfloat16: return 2;
    case DataType::float32: case DataType::int32: return 4;
    case DataType::float64: case DataType::int64: case DataType::uint64: return 8;
  }
  return 0;
}

const char* name_of(DataType type) {
  switch (type) {
    case DataType::float32: return "float";
    case DataType::float64: return "double";
    case DataType::float16: return "half";
    case DataType::bfloat16: return "bfloat16";
    case DataType::int8: return "int8";
    case DataType::uint8: return "uint8";
    case DataType::int32: return "int32";
    case DataType::int64: return "int64";
    case DataType::uint64: return "uint64";
  }
  return "?";
}

const char* name_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
  }
  return "?";
}

}  // namespace gpudirect::comm
