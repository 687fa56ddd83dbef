#include "train/cuda/multi_tensor_adamw.hpp"

namespace gpudirect::train::cuda {

MultiTensorTable multi_tensor_table(const std::vector<AdamWPiece>& pieces, float weight_decay) {
  MultiTensorTable table;
  for (const AdamWPiece& piece : pieces) {
    if (piece.count == 0) continue;
    table.pieces.push_back({table.total, piece.offset, piece.state, piece.decay ? weight_decay : 0.0f});
    table.total += piece.count;
  }
  return table;
}

}  // namespace gpudirect::train::cuda
