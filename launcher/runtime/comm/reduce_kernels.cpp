#include "comm/reduce_kernels.hpp"

#include <algorithm>
#include <cstring>

namespace gpudirect::comm {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf / nan
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t exponent = (bits >> 23) & 0xffu;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow: inf
  if (e <= 0) {                                                      // subnormal or zero
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(sign | half);
}

float bfloat16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t float_to_bfloat16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

namespace {

// out = a op b element-wise; out may be a or b (each element is read before it is written). The
// file is built with -O3 (see runtime's CMakeLists.txt) so these loops are vectorized.
template <typename T, typename Op>
void apply(T* out, const T* a, const T* b, std::size_t count, Op f) {
  // Separate loops for in place: a runtime alias check would send out == a to the scalar loop.
  if (out == a) {
    for (std::size_t i = 0; i < count; ++i) out[i] = f(out[i], b[i]);
  } else if (out == b) {
    for (std::size_t i = 0; i < count; ++i) out[i] = f(a[i], out[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
  }
}

// out = a op b element-wise; out may be a or b. The file is built with -O3 (runtime's
// CMakeLists.txt) so these loops are vectorized.
template <typename T>
void combine(T* out, const T* a, const T* b, std::size_t count, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      apply(out, a, b, count, [](T x, T y) { return static_cast<T>(x + y); });
      break;
    case ReduceOp::prod:
      apply(out, a, b, count, [](T x, T y) { return static_cast<T>(x * y); });
      break;
    case ReduceOp::min:
      apply(out, a, b, count, [](T x, T y) { return std::min(x, y); });
      break;
    case ReduceOp::max:
      apply(out, a, b, count, [](T x, T y) { return std::max(x, y); });
      break;
  }
}

template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void combine16(std::uint16_t* out, const std::uint16_t* acc, const std::uint16_t* in, std::size_t count, ReduceOp op) {
  for (std::size_t i = 0; i < count; ++i) {
    const float a = ToFloat(acc[i]), b = ToFloat(in[i]);
    float r = 0;
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg:
        r = a + b;
        break;
      case ReduceOp::prod:
        r = a * b;
        break;
      case ReduceOp::min:
        r = std::min(a, b);
        break;
      case ReduceOp::max:
        r = std::max(a, b);
        break;
    }
    out[i] = FromFloat(r);
  }
}

template <typename T>
void divide(T* buffer, std::size_t count, int ranks) {
  for (std::size_t i = 0; i < count; ++i) buffer[i] = static_cast<T>(buffer[i] / static_cast<T>(ranks));
}

}  // namespace

void reduce_pair(void* out, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) {
  switch (type) {
#define GPUDIRECT_COMBINE(T)                                                                    \
  combine(static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b), count, op); \
  break
    case DataType::float32:
      GPUDIRECT_COMBINE(float);
    case DataType::float64:
      GPUDIRECT_COMBINE(double);
    case DataType::int8:
      GPUDIRECT_COMBINE(std::int8_t);
    case DataType::uint8:
      GPUDIRECT_COMBINE(std::uint8_t);
    case DataType::int32:
      GPUDIRECT_COMBINE(std::int32_t);
    case DataType::int64:
      GPUDIRECT_COMBINE(std::int64_t);
    case DataType::uint64:
      GPUDIRECT_COMBINE(std::uint64_t);
#undef GPUDIRECT_COMBINE
    case DataType::float16:
      combine16<half_to_float, float_to_half>(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
                                              static_cast<const std::uint16_t*>(b), count, op);
      break;
    case DataType::bfloat16:
      combine16<bfloat16_to_float, float_to_bfloat16>(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
                                                      static_cast<const std::uint16_t*>(b), count, op);
      break;
  }
}

void reduce_into(void* accumulator, const void* input, std::size_t count, DataType type, ReduceOp op) {
  reduce_pair(accumulator, accumulator, input, count, type, op);
}

void divide_for_average(void* buffer, std::size_t count, DataType type, int ranks) {
  switch (type) {
    case DataType::float32:
      divide(static_cast<float*>(buffer), count, ranks);
      break;
    case DataType::float64:
      divide(static_cast<double*>(buffer), count, ranks);
      break;
    case DataType::int8:
      divide(static_cast<std::int8_t*>(buffer), count, ranks);
      break;
    case DataType::uint8:
      divide(static_cast<std::uint8_t*>(buffer), count, ranks);
      break;
    case DataType::int32:
      divide(static_cast<std::int32_t*>(buffer), count, ranks);
      break;
    case DataType::int64:
      divide(static_cast<std::int64_t*>(buffer), count, ranks);
      break;
    case DataType::uint64:
      divide(static_cast<std::uint64_t*>(buffer), count, ranks);
      break;
    case DataType::float16: {
      auto* h = static_cast<std::uint16_t*>(buffer);
      for (std::size_t i = 0; i < count; ++i) h[i] = float_to_half(half_to_float(h[i]) / static_cast<float>(ranks));
      break;
    }
    case DataType::bfloat16: {
      auto* b = static_cast<std::uint16_t*>(buffer);
      for (std::size_t i = 0; i < count; ++i) b[i] = float_to_bfloat16(bfloat16_to_float(b[i]) / static_cast<float>(ranks));
      break;
    }
  }
}

}  // namespace gpudirect::comm
