// The end-of-run parameter check (train/parameter_agreement.hpp): the checksum sees every bit of every
// parameter, and the ranks named are exactly those whose checksum differs from rank 0's.
#include <catch2/catch.hpp>

#include "train/parameter_agreement.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

using namespace gpudirect::train;

TEST_CASE("parameter checksum: equal buffers agree, one flipped bit or a swapped pair does not", "[train]") {
  std::vector<float> a(1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<float>(i));
  std::vector<float> b = a;
  CHECK(parameter_checksum(a) == parameter_checksum(b));
  b[500] = std::nextafter(b[500], 2.0f);
  CHECK(parameter_checksum(a) != parameter_checksum(b));
  b = a;
  std::swap(b[3], b[4]);
  CHECK(parameter_checksum(a) != parameter_checksum(b));
  // -0 and +0 compare equal as floats but are different parameters bit for bit.
  std::vector<float> zero{0.0f}, negative_zero{-0.0f};
  CHECK(parameter_checksum(zero) != parameter_checksum(negative_zero));
}

TEST_CASE("ranks differing from the leader: every rank whose checksum is not rank 0's, in rank order", "[train]") {
  CHECK(ranks_differing_from_leader(std::vector<std::uint64_t>{}).empty());
  CHECK(ranks_differing_from_leader(std::vector<std::uint64_t>{7}).empty());
  CHECK(ranks_differing_from_leader(std::vector<std::uint64_t>{7, 7, 7, 7}).empty());
  CHECK(ranks_differing_from_leader(std::vector<std::uint64_t>{7, 8, 7, 9}) == std::vector<int>{1, 3});
  // Rank 0 is the reference even when it is the odd one out.
  CHECK(ranks_differing_from_leader(std::vector<std::uint64_t>{1, 2, 2}) == std::vector<int>{1, 2});
}
