// Where training batches come from. Every step consumes one global batch of
// world * grad_accum * micro_batch sequences; sequence g of step s is the same whatever the world
// size, and rank r's micro-batch k of step s holds sequences
//   g = k * (world * micro_batch) + r * micro_batch + b,  b in [0, micro_batch)
// so N ranks with micro-batch B/N see exactly the batch one rank with micro-batch B sees (when
// grad_accum is 1), and a resumed run sees the batches an uninterrupted one would. Sources are
// stateless: the position is a function of the step, nothing else needs saving.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpudirect::train {

struct BatchShape {
  int world = 1, rank = 0;
  int micro_batch = 1, grad_accum = 1, seq_len = 1, vocab = 2;
  std::size_t sequences_per_step() const {
    return static_cast<std::size_t>(world) * static_cast<std::size_t>(grad_accum) * static_cast<std::size_t>(micro_batch);
  }
  // Global index of this rank's sequence b of micro-batch k.
  std::uint64_t sequence_index(long step, int micro, int b) const;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Fills inputs and targets (micro_batch x seq_len each) for this rank's micro-batch `micro` of `step`.
  virtual void fill(long step, int micro, std::span<std::int32_t> inputs, std::span<std::int32_t> targets) = 0;
  virtual std::string describe() const = 0;  // for the log and the checkpoint
};

// Mock data from a counter-based hash of (seed, sequence, position): reproducible, different per rank
// and step. `learnable`: each sequence follows x[t+1] = (a*x[t] + c) mod A over the first
// A = min(V, 64) token ids, with a, c drawn per sequence from a small set (so the next token depends
// on the context), so the loss visibly falls;
// otherwise tokens are uniform (loss stays near ln V), like a framework's mock dataset.
std::unique_ptr<DataSource> make_mock_data(const BatchShape& shape, std::uint64_t seed, bool learnable);

// A token file as llm.c and nanoGPT write them: either llm.c's .bin (a header of 256 little-endian
// int32: magic 20240520, version 1, token count; then uint16 tokens) or a raw file of uint16 tokens
// (nanoGPT's train.bin, no header). Sequence g of the run starts at token (g mod S) * seq_len where S
// is the number of whole (seq_len + 1)-token windows the file holds; targets are inputs shifted by
// one. Throws std::runtime_error naming the file for a missing, short or malformed file, or a token
// outside the vocabulary.
std::unique_ptr<DataSource> make_token_file_data(const BatchShape& shape, const std::string& path);

}  // namespace gpudirect::train
