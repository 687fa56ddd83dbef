// bf16 round-to-nearest-even on the host (train/cuda/bf16.hpp), which predicts the device's stores.
#include <catch2/catch.hpp>

#include "train/cuda/bf16.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

using namespace gpudirect::train::cuda;

namespace {

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// The nearest bf16 by brute force: the two candidates around x, compared in double; ties to the even one.
std::uint16_t nearest_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t down = bits & 0xffff0000u, up = down + 0x10000u;
  const double dx = x, d_down = std::fabs(static_cast<double>(from_bits(down)) - dx),
               d_up = std::fabs(static_cast<double>(from_bits(up)) - dx);
  if (d_down < d_up) return static_cast<std::uint16_t>(down >> 16);
  if (d_up < d_down) return static_cast<std::uint16_t>(up >> 16);
  return static_cast<std::uint16_t>(((down >> 16) & 1u) == 0 ? down >> 16 : up >> 16);
}

}  // namespace

TEST_CASE("bf16: values with 8 significant bits pass through unchanged", "[train][cuda]") {
  for (const float v : {0.0f, -0.0f, 1.0f, -1.5f, 0.15625f, 65536.0f, 1.0f / 1024}) CHECK(round_to_bf16(v) == v);
  CHECK(float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(bf16_bits_to_float(0x4049) == 3.140625f);
}

TEST_CASE("bf16: halfway cases round to the even neighbour, others to the nearest", "[train][cuda]") {
  CHECK(float_to_bf16_bits(from_bits(0x3f808000u)) == 0x3f80);  // 1 + 2^-8: tie, 0x3f80 is even
  CHECK(float_to_bf16_bits(from_bits(0x3f818000u)) == 0x3f82);  // tie between 0x3f81 and 0x3f82
  CHECK(float_to_bf16_bits(from_bits(0x3f808001u)) == 0x3f81);  // just above half
  CHECK(float_to_bf16_bits(from_bits(0x3f807fffu)) == 0x3f80);  // just below half
  CHECK(float_to_bf16_bits(from_bits(0xbf808000u)) == 0xbf80);  // negative tie
}

TEST_CASE("bf16: overflow rounds to infinity, infinities and NaN stay what they are", "[train][cuda]") {
  CHECK(std::isinf(round_to_bf16(std::numeric_limits<float>::max())));
  CHECK(round_to_bf16(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(round_to_bf16(-std::numeric_limits<float>::infinity()) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload is only in the dropped bits: plain rounding would make it infinity.
  CHECK(std::isnan(round_to_bf16(from_bits(0x7f800001u))));
  CHECK(std::isnan(round_to_bf16(from_bits(0xff800001u))));
}

TEST_CASE("bf16: agrees with the nearest representable value on random floats", "[train][cuda]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> any;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t bits = any(rng);
    const float x = from_bits(bits);
    if (!std::isfinite(x) || std::fabs(x) >= from_bits(0x7f7f8000u)) continue;  // the brute force cannot form the overflow case
    REQUIRE(float_to_bf16_bits(x) == nearest_bf16(x));
    ++checked;
  }
  CHECK(checked > 150000);
}
