// `train --multi-tensor-adamw` (multi_tensor_adamw.hpp): the table of owned pieces, the piece lookup,
// and the whole launch emulated on the host thread by thread (its grid from launch_geometry.hpp, and a
// small grid so each thread walks across pieces): every owned element updated exactly once, none
// outside, and the result equal to AdamW::step (the CPU optimizer) bit for bit.
#include <catch2/catch.hpp>

#include "train/cuda/launch_geometry.hpp"
#include "train/cuda/memory_plan.hpp"
#include "train/cuda/multi_tensor_adamw.hpp"
#include "train/gradient_buckets.hpp"
#include "train/optimizer.hpp"
#include "train/zero1_shards.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

namespace {

// The owned segments of rank `rank` of `world` under ZeRO-1 (pieces cut inside tensors), with small
// buckets so there are many.
std::vector<Segment> zero1_segments(const ParameterLayout& layout, int world, int rank) {
  return owned_segments(plan_buckets(layout.tensors(), 4096, 16384), world, rank);
}

// adamw_multi_tensor_kernel over `blocks` x kThreadsPerBlock threads, run one thread after another.
void launch_on_host(const MultiTensorTable& table, unsigned blocks, const AdamWElement& update) {
  const std::uint64_t step = static_cast<std::uint64_t>(blocks) * kThreadsPerBlock;
  for (std::uint64_t first = 0; first < step; ++first)
    for_each_owned_element(table.pieces.data(), static_cast<int>(table.pieces.size()), table.total, first, step, update);
}

}  // namespace

TEST_CASE("multi-tensor AdamW: the table holds the non-empty pieces one after another", "[train][cuda]") {
  const std::vector<AdamWPiece> pieces{{100, 0, 5, true}, {7, 5, 0, true}, {105, 5, 3, false}, {0, 8, 2, true}};
  const MultiTensorTable table = multi_tensor_table(pieces, 0.1f);
  REQUIRE(table.pieces.size() == 3);  // the empty piece is left out
  CHECK(table.total == 10);
  CHECK(table.pieces[0].begin == 0);
  CHECK(table.pieces[1].begin == 5);
  CHECK(table.pieces[2].begin == 8);
  CHECK(table.pieces[1].offset == 105);
  CHECK(table.pieces[1].state == 5);
  CHECK(table.pieces[0].decay == 0.1f);
  CHECK(table.pieces[1].decay == 0.0f);
  // piece_of: the last piece beginning at or before i.
  const int count = static_cast<int>(table.pieces.size());
  const int want[10] = {0, 0, 0, 0, 0, 1, 1, 1, 2, 2};
  for (std::uint64_t i = 0; i < 10; ++i) CHECK(piece_of(table.pieces.data(), count, i) == want[i]);
  CHECK(piece_of(table.pieces.data(), 1, 3) == 0);
}

TEST_CASE("multi-tensor AdamW: one emulated launch equals AdamW::step, every owned element once", "[train][cuda]") {
  GptConfig config = preset_config("tiny");
  const ParameterLayout layout(config);
  const AdamWSettings settings;
  for (const auto& [world, rank] : {std::pair{1, 0}, std::pair{3, 1}, std::pair{4, 3}}) {
    const std::vector<Segment> owned = world == 1 ? std::vector<Segment>{{0, layout.total()}} : zero1_segments(layout, world, rank);
    const std::vector<AdamWPiece> pieces = adamw_pieces(layout, owned);
    const MultiTensorTable table = multi_tensor_table(pieces, settings.weight_decay);
    INFO("world " << world << " rank " << rank << ", " << table.pieces.size() << " pieces");
    REQUIRE(table.pieces.size() > 3);

    std::mt19937 rng(static_cast<unsigned>(7 + rank));
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> params(layout.total()), grads(layout.total());
    for (auto& x : params) x = normal(rng);
    for (auto& x : grads) x = normal(rng);

    AdamW cpu(layout, owned, settings);
    std::vector<float> want = params;
    for (long t = 1; t <= 3; ++t) cpu.step(want, grads, 1e-2f, 0.5f, t);

    for (const unsigned blocks : {grid_stride_blocks(table.total), 2u}) {
      std::vector<float> got = params, m(cpu.state_size(), 0.0f), v(cpu.state_size(), 0.0f);
      for (long t = 1; t <= 3; ++t) {
        const float c1 = 1.0f - std::pow(settings.beta1, static_cast<float>(t)),
                    c2 = 1.0f - std::pow(settings.beta2, static_cast<float>(t));
        launch_on_host(table, blocks,
                       AdamWElement{got.data(), grads.data(), m.data(), v.data(), 1e-2f, settings.beta1, settings.beta2, settings.epsilon,
                                    0.5f, c1, c2});
      }
      INFO(blocks << " blocks");
      CHECK(got == want);  // bit for bit, owned elements changed and the rest untouched
      CHECK(std::equal(m.begin(), m.end(), cpu.first_moment().begin()));
      CHECK(std::equal(v.begin(), v.end(), cpu.second_moment().begin()));
    }

    // Every flat index visited exactly once.
    std::vector<int> visits(table.total, 0);
    const auto count_visit = [&](const MultiTensorPiece& piece, std::uint64_t j) { ++visits[piece.begin + j]; };
    for (std::uint64_t first = 0; first < 2 * kThreadsPerBlock; ++first)
      for_each_owned_element(table.pieces.data(), static_cast<int>(table.pieces.size()), table.total, first, 2 * kThreadsPerBlock,
                             count_visit);
    CHECK(std::count(visits.begin(), visits.end(), 1) == static_cast<long>(table.total));
  }
}

TEST_CASE("multi-tensor AdamW: the memory plan counts the device table", "[train][cuda]") {
  const GptConfig config = preset_config("gpt2-124m");
  TrainSettings settings;
  SpeedOptions speed;
  speed.multi_tensor_adamw = true;
  const MemoryPlan plain = plan_memory(config, settings, 1), multi = plan_memory(config, settings, 1, AttentionKind::reference, speed);
  const std::size_t tensors = ParameterLayout(config).tensors().size();
  CHECK(multi.other - plain.other == sizeof(MultiTensorPiece) * tensors);
  CHECK(sizeof(MultiTensorPiece) == 32);
}
