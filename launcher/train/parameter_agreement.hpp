// The end-of-run check that data parallelism kept every rank's parameters identical: one checksum per
// rank compared with rank 0's, so only eight bytes per rank cross the network.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpudirect::train {

// A 64-bit checksum of the parameter bytes (FNV-1a over the 32-bit words).
std::uint64_t parameter_checksum(std::span<const float> parameters);

// The ranks whose checksum differs from rank 0's (checksums[r] is rank r's); empty when all agree.
std::vector<int> ranks_differing_from_leader(std::span<const std::uint64_t> checksums);

}  // namespace gpudirect::train
