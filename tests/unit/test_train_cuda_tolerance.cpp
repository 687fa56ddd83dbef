// How the CUDA model is compared with the CPU reference (train/cuda/tolerance.hpp).
#include <catch2/catch.hpp>

#include "train/cuda/tolerance.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace gpudirect::train::cuda;

TEST_CASE("tolerance: relative L2 error of a whole tensor", "[train][cuda]") {
  const std::vector<float> want{1.0f, -2.0f, 3.0f, 0.5f};
  std::vector<float> got = want;
  const Tolerance t;
  Comparison c = compare(want, got);
  CHECK(c.relative_l2 == 0.0);
  CHECK(within(c, t));

  for (float& v : got) v *= 1.01f;  // 1%: bf16-sized
  c = compare(want, got);
  CHECK(c.relative_l2 == Approx(0.01).epsilon(1e-3));
  CHECK(within(c, t));

  got = want;
  got[2] = -3.0f;  // a sign error in one element
  c = compare(want, got);
  CHECK(c.max_index == 2);
  CHECK(c.max_abs == Approx(6.0));
  CHECK_FALSE(within(c, t));
  CHECK_THAT(describe(c), Catch::Contains("at [2]"));
}

TEST_CASE("tolerance: NaN, infinities and all-zero references", "[train][cuda]") {
  const Tolerance t;
  const std::vector<float> want{1.0f, 2.0f};
  const std::vector<float> nan{1.0f, std::numeric_limits<float>::quiet_NaN()};
  const Comparison c = compare(want, nan);
  CHECK_FALSE(c.finite);
  CHECK_FALSE(within(c, t));
  CHECK_THAT(describe(c), Catch::Contains("NOT FINITE"));
  CHECK_FALSE(within(compare(want, std::vector<float>{1.0f, std::numeric_limits<float>::infinity()}), t));

  const std::vector<float> zeros{0.0f, 0.0f};
  CHECK(within(compare(zeros, zeros), t));
  CHECK_FALSE(within(compare(zeros, std::vector<float>{0.0f, 1e-3f}), t));
  const std::vector<float> one{1.0f};
  CHECK_THROWS(compare(want, one));
}

TEST_CASE("tolerance: the loss within 1%", "[train][cuda]") {
  const Tolerance t;
  CHECK(loss_within(6.2, 6.25, t));
  CHECK_FALSE(loss_within(6.2, 6.4, t));
  CHECK_FALSE(loss_within(6.2, std::nan(""), t));
}
