// Training checkpoints: one file with the model config, the step, the optimizer's full AdamW moments,
// the data position and the seed, then the parameters and moments, then a checksum of everything.
// Written atomically (temporary file in the same directory, fsync, rename, fsync of the directory),
// so a job that dies while writing leaves the previous checkpoint valid. Rank 0 writes and reads it;
// under ZeRO-1 the moment shards are gathered to full size first, so a checkpoint does not depend on
// how the optimizer state was split.
#pragma once

#include "train/gpt_config.hpp"
#include "train/optimizer.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect::train {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointHeader {
  GptConfig config;
  long step = 0;  // optimizer steps done; the next step to run
  int world = 1;  // ranks of the run that wrote it (the data order depends on it)
  bool zero1 = false;
  std::string data;  // the data source's description ("mock (learnable)", "FILE (...)")
  std::size_t parameters = 0;
  AdamWSettings adamw;
  LrSchedule schedule;
  float grad_clip = 0;
};

struct Checkpoint {
  CheckpointHeader header;
  std::vector<float> parameters, first_moment, second_moment;
};

// Throws CheckpointError with the path and the reason (no space, permissions ...).
void write_checkpoint(const std::string& path, const CheckpointHeader& header, std::span<const float> parameters,
                      std::span<const float> first_moment, std::span<const float> second_moment);

// Throws CheckpointError for a missing, truncated or corrupt file (checksum), or one of another format.
Checkpoint read_checkpoint(const std::string& path);

// Throws CheckpointError naming the first field in which the checkpoint differs from this run
// (model shape, batch shape, world size, data, ZeRO-1 is allowed to differ).
void check_compatible(const CheckpointHeader& saved, const CheckpointHeader& run, const std::string& path);

}  // namespace gpudirect::train
