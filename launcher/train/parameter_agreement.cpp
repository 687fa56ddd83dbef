#include "train/parameter_agreement.hpp"

#include <cstring>

namespace gpudirect::train {

std::uint64_t parameter_checksum(std::span<const float> parameters) {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a over 32-bit words
  for (const float value : parameters) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof(bits));
    hash = (hash ^ bits) * 1099511628211ULL;
  }
  return hash;
}

std::vector<int> ranks_differing_from_leader(std::span<const std::uint64_t> checksums) {
  std::vector<int> different;
  for (std::size_t r = 1; r < checksums.size(); ++r)
    if (checksums[r] != checksums[0]) different.push_back(static_cast<int>(r));
  return different;
}

}  // namespace gpudirect::train
