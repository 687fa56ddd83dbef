#include "train/trainer.hpp"

#include "train/rank_step_report.hpp"

#include <chrono>
#include <cmath>

namespace gpudirect::train {

using Clock = std::chrono::steady_clock;

Trainer::Trainer(Model& model, comm::Communicator& comm, DataSource& data, const TrainSettings& settings)
    : model_(model),
      comm_(comm),
      data_(data),
      settings_(settings),
      sync_(comm, model.layout(), settings.zero1, settings.first_bucket_bytes, settings.bucket_bytes),
      adamw_(model.layout(), sync_.owned(), settings.adamw) {
  const GptConfig& c = model.config();
  const auto tokens = static_cast<std::size_t>(c.micro_batch) * static_cast<std::size_t>(c.seq_len);
  inputs_.resize(tokens);
  targets_.resize(tokens);
}

void Trainer::broadcast_initial_parameters() { broadcast_parameters(comm_, model_.parameters()); }

StepResult Trainer::step(bool stop_requested) {
  const GptConfig& c = model_.config();
  const auto start = Clock::now();
  StepResult result;
  result.step = step_;
  micro_done_.store(0, std::memory_order_relaxed);
  model_.zero_gradients();
  double loss = 0;
  const float scale = 1.0f / static_cast<float>(c.grad_accum);
  for (int micro = 0; micro < c.grad_accum; ++micro) {
    data_.fill(step_, micro, inputs_, targets_);
    const bool last = micro + 1 == c.grad_accum;
    if (last) sync_.begin(model_.gradients());
    loss += model_.forward_backward(inputs_, targets_, scale, last ? sync_.on_ready() : GradientReady{});
    micro_done_.store(micro + 1, std::memory_order_relaxed);
  }
  loss /= c.grad_accum;
  double exposed = sync_.finish();
  const double norm = std::sqrt(sync_.global_sum_of_squares(model_.gradients(), exposed));
  const float clip = clip_scale(norm, settings_.grad_clip);
  result.lr = settings_.schedule.at(static_cast<int>(step_));
  adamw_.step(model_.parameters(), model_.gradients(), result.lr, clip, step_ + 1);
  exposed += sync_.gather_parameters(model_.parameters());
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.exposed_comm_seconds = exposed;
  result.grad_norm = norm;

  // One small all-gather per step: every rank's loss, times and stop wish.
  const RankReport mine = rank_report(loss, result, stop_requested);
  std::vector<double> all(kRankReportFields * static_cast<std::size_t>(comm_.size()));
  if (comm_.size() == 1) std::copy(mine.begin(), mine.end(), all.begin());
  else comm_.all_gather(mine.data(), all.data(), kRankReportFields, comm::DataType::float64)->wait();
  merge_rank_reports(all, result);
  ++step_;
  return result;
}

CheckpointHeader Trainer::header(const std::string& data_description) const {
  CheckpointHeader h;
  h.config = model_.config();
  h.step = step_;
  h.world = comm_.size();
  h.zero1 = sync_.zero1();
  h.data = data_description;
  h.parameters = model_.layout().total();
  h.adamw = settings_.adamw;
  h.schedule = settings_.schedule;
  h.grad_clip = settings_.grad_clip;
  return h;
}

void Trainer::save_checkpoint(const std::string& path, const std::string& data_description) {
  const std::size_t n = model_.layout().total();
  std::vector<float> m(sync_.zero1() || comm_.rank() == 0 ? n : 0), v(m.size());
  if (sync_.zero1()) {
    sync_.gather_state(adamw_.first_moment(), m);
    sync_.gather_state(adamw_.second_moment(), v);
  } else if (comm_.rank() == 0) {
    std::copy(adamw_.first_moment().begin(), adamw_.first_moment().end(), m.begin());
    std::copy(adamw_.second_moment().begin(), adamw_.second_moment().end(), v.begin());
  }
  // Rank 0 writes; the others learn whether it worked so every rank reports the same outcome.
  int failed = 0;
  std::string error;
  if (comm_.rank() == 0) {
    try {
      write_checkpoint(path, header(data_description), model_.parameters(), m, v);
    } catch (const CheckpointError& e) {
      failed = 1;
      error = e.what();
    }
  }
  if (comm_.size() > 1) comm_.broadcast(&failed, &failed, 1, comm::DataType::int32, 0)->wait();
  if (failed) throw CheckpointError(comm_.rank() == 0 ? error : "rank 0 could not write checkpoint " + path);
}

void Trainer::load_checkpoint(const std::string& path, const std::string& data_description) {
  const std::size_t n = model_.layout().total();
  Checkpoint checkpoint;
  int failed = 0;
  std::string error;
  if (comm_.rank() == 0) {
    try {
      checkpoint = read_checkpoint(path);
      check_compatible(checkpoint.header, header(data_description), path);
    } catch (const CheckpointError& e) {
      failed = 1;
      error = e.what();
    }
  }
  if (comm_.size() > 1) comm_.broadcast(&failed, &failed, 1, comm::DataType::int32, 0)->wait();
  if (failed) throw CheckpointError(comm_.rank() == 0 ? error : "rank 0 refused checkpoint " + path);
  if (comm_.rank() != 0) {
    checkpoint.parameters.resize(n);
    checkpoint.first_moment.resize(n);
    checkpoint.second_moment.resize(n);
  }
  long step = checkpoint.header.step;
  if (comm_.size() > 1) {
    comm_.broadcast(&step, &step, 1, comm::DataType::int64, 0)->wait();
    for (auto* buffer : {&checkpoint.parameters, &checkpoint.first_moment, &checkpoint.second_moment})
      comm_.broadcast(buffer->data(), buffer->data(), n, comm::DataType::float32, 0)->wait();
  }
  std::copy(checkpoint.parameters.begin(), checkpoint.parameters.end(), model_.parameters().begin());
  sync_.scatter_state(checkpoint.first_moment, adamw_.first_moment());
  sync_.scatter_state(checkpoint.second_moment, adamw_.second_moment());
  step_ = step;
}

int Trainer::broadcast_from_leader(int value) {
  if (comm_.size() > 1) comm_.broadcast(&value, &value, 1, comm::DataType::int32, 0)->wait();
  return value;
}

std::vector<int> Trainer::check_parameters_agree() { return ranks_with_different_parameters(comm_, model_.parameters()); }

}  // namespace gpudirect::train
