// `train --layernorm-all-sms` (layernorm_partials.hpp, layernorm.cu): layernorm backward's dweight and
// dbias over column blocks x row chunks, partial sums in scratch, then a second pass adding each
// column's partials in chunk order. Here: the partition, and both kernels emulated on the host block
// by block and thread by thread through the header the kernels use, compared bit for bit with a
// fixed-order host reference written out as plain loops (and, with one chunk, with the order of the
// reference kernel, layernorm_backward_params_kernel).
#include <catch2/catch.hpp>

#include "train/cuda/launch_geometry.hpp"
#include "train/cuda/layernorm_partials.hpp"
#include "train/cuda/memory_plan.hpp"
#include "train/model.hpp"
#include "train/train_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace gpudirect::train;
using namespace gpudirect::train::cuda;

namespace {

struct Inputs {
  std::size_t N, C;
  std::vector<float> dout, inp, mean, rstd;
};

Inputs make_inputs(std::size_t N, std::size_t C) {
  Inputs in{N, C, std::vector<float>(N * C), std::vector<float>(N * C), std::vector<float>(N), std::vector<float>(N)};
  std::mt19937 rng(static_cast<unsigned>(N * 7919 + C));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : in.dout) v = u(rng);
  for (float& v : in.inp) v = u(rng) * 3.0f;
  for (float& v : in.mean) v = u(rng) * 0.1f;
  for (float& v : in.rstd) v = 1.0f + 0.5f * u(rng);
  return in;
}

struct Gradients {
  std::vector<float> dweight, dbias;
};

// Both kernels of layernorm.cu, block by block and thread by thread, with the header's loops; dweight
// and dbias start at `start` (backward adds into them). visits counts each (row, column) term.
Gradients emulate(const Inputs& in, float start, std::vector<int>* visits = nullptr) {
  const std::size_t N = in.N, C = in.C;
  const LayernormPartition p = layernorm_partition(N, C);
  std::vector<float> partials(layernorm_partials_floats(N, C), std::nanf(""));
  for (std::size_t bx = 0; bx < p.column_blocks; ++bx)
    for (std::size_t chunk = 0; chunk < p.row_chunks; ++chunk) {
      float dw_part[kWarpSize][kColumnsPerBlock + 1], db_part[kWarpSize][kColumnsPerBlock + 1];
      for (int ty = 0; ty < kWarpSize; ++ty)
        for (int tx = 0; tx < kColumnsPerBlock; ++tx) {
          const std::size_t c = bx * kColumnsPerBlock + static_cast<std::size_t>(tx);
          float dw = 0.0f, db = 0.0f;
          if (c < C) {
            for_each_chunk_row(p, N, chunk, ty, [&](std::size_t n) {
              const std::size_t at = n * C + c;
              if (visits != nullptr) ++visits->at(at);
              dw += layernorm_dweight_term(in.dout[at], in.inp[at], in.mean[n], in.rstd[n]);
              db += in.dout[at];
            });
          }
          dw_part[ty][tx] = dw;
          db_part[ty][tx] = db;
        }
      for (int tx = 0; tx < kColumnsPerBlock; ++tx) {  // after __syncthreads, thread row 0
        const std::size_t c = bx * kColumnsPerBlock + static_cast<std::size_t>(tx);
        if (c >= C) continue;
        partials.at(chunk * C + c) = fixed_order_sum(kWarpSize, [&](std::size_t y) { return dw_part[y][tx]; });
        partials.at((p.row_chunks + chunk) * C + c) = fixed_order_sum(kWarpSize, [&](std::size_t y) { return db_part[y][tx]; });
      }
    }
  Gradients g{std::vector<float>(C, start), std::vector<float>(C, start)};
  for (std::size_t c = 0; c < C; ++c) {  // the second pass, one thread per column
    g.dweight[c] += fixed_order_sum(p.row_chunks, [&](std::size_t k) { return partials.at(k * C + c); });
    g.dbias[c] += fixed_order_sum(p.row_chunks, [&](std::size_t k) { return partials.at((p.row_chunks + k) * C + c); });
  }
  return g;
}

// The fixed order written out: chunk by chunk (rows [k * per, (k + 1) * per)), within a chunk the 32
// residues y in order, within a residue rows y, y + 32, ...; each level summed from 0.0f.
Gradients reference(const Inputs& in, float start, std::size_t per) {
  const std::size_t N = in.N, C = in.C;
  Gradients g{std::vector<float>(C, start), std::vector<float>(C, start)};
  for (std::size_t c = 0; c < C; ++c) {
    float w = 0.0f, b = 0.0f;
    for (std::size_t begin = 0; begin < N; begin += per) {
      float chunk_w = 0.0f, chunk_b = 0.0f;
      for (std::size_t y = 0; y < 32; ++y) {
        float tw = 0.0f, tb = 0.0f;
        for (std::size_t n = begin + y; n < begin + per && n < N; n += 32) {
          const float d = in.dout[n * C + c];
          tw += d * (in.inp[n * C + c] - in.mean[n]) * in.rstd[n];
          tb += d;
        }
        chunk_w += tw;
        chunk_b += tb;
      }
      w += chunk_w;
      b += chunk_b;
    }
    g.dweight[c] += w;
    g.dbias[c] += b;
  }
  return g;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("layernorm all SMs: the partition covers every row once with enough blocks", "[train][cuda]") {
  for (const std::size_t N : {std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{33}, std::size_t{1000}, std::size_t{4096},
                              std::size_t{16} * 1024, std::size_t{64} * 1024})
    for (const std::size_t C : {std::size_t{1}, std::size_t{40}, std::size_t{768}, std::size_t{1600}, std::size_t{12288}}) {
      INFO("N " << N << ", C " << C);
      const LayernormPartition p = layernorm_partition(N, C);
      CHECK(p.column_blocks == column_blocks(C));
      CHECK(p.row_chunks >= 1);
      CHECK(p.row_chunks * p.rows_per_chunk >= N);           // every row in a chunk
      CHECK((p.row_chunks - 1) * p.rows_per_chunk < N);      // no empty chunk
      CHECK((p.rows_per_chunk >= 32 || p.row_chunks == 1));  // no idle thread row
      // Nearly as many blocks as aimed at (chunk rounding) where the rows allow it, and never a grid
      // past CUDA's y limit.
      if (N >= 32 * kLayernormPartialBlocks) CHECK(10 * p.column_blocks * p.row_chunks >= 9 * kLayernormPartialBlocks);
      CHECK(p.row_chunks <= 65535);
      CHECK(layernorm_partials_floats(N, C) == 2 * p.row_chunks * C);
    }
  // gpt2-124m at micro-batch 4: 24 column blocks (the reference kernel's whole grid) x 11 chunks.
  const LayernormPartition p = layernorm_partition(4 * 1024, 768);
  CHECK(p.column_blocks == 24);
  CHECK(p.row_chunks == 11);
  CHECK(p.rows_per_chunk == 373);
}

TEST_CASE("layernorm all SMs: the emulated kernels equal the fixed-order reference bit for bit", "[train][cuda]") {
  for (const auto& [N, C] : {std::pair<std::size_t, std::size_t>{1, 1}, {31, 5}, {33, 40}, {100, 33}, {1000, 64}, {4096, 768}}) {
    INFO("N " << N << ", C " << C);
    const Inputs in = make_inputs(N, C);
    std::vector<int> visits(N * C, 0);
    const LayernormPartition p = layernorm_partition(N, C);
    for (const float start : {0.0f, 0.375f}) {  // backward adds into dweight and dbias
      const Gradients got = emulate(in, start, start == 0.0f ? &visits : nullptr);
      const Gradients want = reference(in, start, p.rows_per_chunk);
      CHECK(same_bits(got.dweight, want.dweight));
      CHECK(same_bits(got.dbias, want.dbias));
      // And close to the exact sums (the order changes rounding only).
      for (std::size_t c = 0; c < C; ++c) {
        double w = start, b = start;
        for (std::size_t n = 0; n < N; ++n) {
          w += static_cast<double>(in.dout[n * C + c]) * (static_cast<double>(in.inp[n * C + c]) - in.mean[n]) * in.rstd[n];
          b += in.dout[n * C + c];
        }
        CHECK(std::abs(got.dweight[c] - w) <= 1e-4 * (1.0 + static_cast<double>(N)));
        CHECK(std::abs(got.dbias[c] - b) <= 1e-4 * (1.0 + static_cast<double>(N)));
      }
    }
    CHECK(std::count(visits.begin(), visits.end(), 1) == static_cast<long>(N * C));  // every term exactly once
  }
}

TEST_CASE("layernorm all SMs: with one chunk the order is the reference kernel's", "[train][cuda]") {
  // Rows under 64 give one chunk: thread row y sums rows y, y + 32, ... of all N, as
  // layernorm_backward_params_kernel does, and the second pass adds that one partial to 0.0f.
  const Inputs in = make_inputs(50, 70);
  REQUIRE(layernorm_partition(50, 70).row_chunks == 1);
  CHECK(same_bits(emulate(in, 0.0f).dweight, reference(in, 0.0f, 50).dweight));
}

TEST_CASE("layernorm all SMs: the switch and its scratch in the memory plan", "[train][cuda]") {
  SpeedOptions speed;
  speed.layernorm_all_sms = true;
  CHECK(speed_names(speed) == "layernorm-all-sms");
  GptConfig config = preset_config("gpt2-124m");
  config.micro_batch = 4;
  const ModelBufferSizes off = model_buffer_sizes(config), on = model_buffer_sizes(config, AttentionKind::reference, speed);
  CHECK(off.layernorm_partials == 0);
  CHECK(on.layernorm_partials == layernorm_partials_floats(4 * 1024, 768));
  CHECK(on.layernorm_partials == 2 * 11 * 768);
  const TrainSettings settings;
  const MemoryPlan a = plan_memory(config, settings, 1), b = plan_memory(config, settings, 1, AttentionKind::reference, speed);
  CHECK(b.activations - a.activations == 4 * on.layernorm_partials);
  CHECK(b.total() - a.total() == 4 * on.layernorm_partials);
}

TEST_CASE("layernorm all SMs: --layernorm-all-sms is a switch of the CUDA model only", "[train][command]") {
  using namespace gpudirect::launcher::train_command;
  TrainOptions o;
  CHECK_FALSE(speed_for(o, true, "").layernorm_all_sms);
  o.speed.layernorm_all_sms = true;
  CHECK(speed_for(o, true, "").layernorm_all_sms);
  CHECK_THROWS_WITH(speed_for(o, false, ""), Catch::Contains("--layernorm-all-sms is a switch of the CUDA model"));
}
