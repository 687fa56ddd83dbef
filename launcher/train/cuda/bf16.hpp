// bfloat16 on the host: the conversions the CUDA model's tests and checks use to predict what the
// device stores. Round-to-nearest-even as __float2bfloat16_rn does it: bf16 is the upper 16 bits of
// an IEEE float, so rounding adds 0x7fff plus the lowest kept bit and truncates. NaN stays NaN (a
// quiet one: rounding could otherwise carry a NaN's payload into infinity); infinities stay.
#pragma once

#include <bit>
#include <cstdint>

namespace gpudirect::train::cuda {

constexpr std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  const std::uint32_t lowest_kept = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + lowest_kept) >> 16);
}

constexpr float bf16_bits_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

// The float a bf16 store and load of `value` gives back.
constexpr float round_to_bf16(float value) { return bf16_bits_to_float(float_to_bf16_bits(value)); }

}  // namespace gpudirect::train::cuda
