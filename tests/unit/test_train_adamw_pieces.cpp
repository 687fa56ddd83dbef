// AdamW's pieces (train/optimizer.hpp): segments split at tensor boundaries with each tensor's decay
// flag, state offsets running on across segments. The CPU and the CUDA optimizer both use them.
#include <catch2/catch.hpp>

#include "train/optimizer.hpp"

using namespace gpudirect::train;

TEST_CASE("adamw pieces: split at tensor boundaries, decay per tensor, state packed", "[train][optimizer]") {
  const GptConfig config = preset_config("tiny");
  const ParameterLayout layout(config);
  const TensorSpan& wpe = layout.find("wpe");
  const TensorSpan& ln1w = layout.find("h.0.ln1.w");
  const TensorSpan& lnfb = layout.find("lnf.b");
  // One segment from the last 10 elements of wpe into 3 elements of h.0.ln1.w; one inside lnf.b.
  const std::vector<Segment> segments{{wpe.offset + wpe.count - 10, 13}, {lnfb.offset + 1, 4}};
  const auto pieces = adamw_pieces(layout, segments);
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0].offset == wpe.offset + wpe.count - 10);
  CHECK(pieces[0].count == 10);
  CHECK(pieces[0].decay);
  CHECK(pieces[0].state == 0);
  CHECK(pieces[1].offset == ln1w.offset);
  CHECK(pieces[1].count == 3);
  CHECK_FALSE(pieces[1].decay);
  CHECK(pieces[1].state == 10);
  CHECK(pieces[2].offset == lnfb.offset + 1);
  CHECK(pieces[2].count == 4);
  CHECK_FALSE(pieces[2].decay);
  CHECK(pieces[2].state == 13);
  CHECK_THROWS_AS(adamw_pieces(layout, {{layout.total() - 1, 2}}), std::out_of_range);
}
