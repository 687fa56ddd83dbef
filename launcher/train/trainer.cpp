#include "train/trainer.hpp"

#include "train/parameter_agreement.hpp"
#include "train/rank_step_report.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace gpudirect::train {

using Clock = std::chrono::steady_clock;

Trainer::Trainer(Model& model, DataSource& data, const TrainSettings& settings, std::unique_ptr<TrainBackend> backend)
    : model_(model), data_(data), settings_(settings), backend_(std::move(backend)) {
  if (!backend_) throw std::invalid_argument("Trainer: no backend");
  const GptConfig& c = model.config();
  const auto tokens = static_cast<std::size_t>(c.micro_batch) * static_cast<std::size_t>(c.seq_len);
  inputs_.resize(tokens);
  targets_.resize(tokens);
}

void Trainer::broadcast_initial_parameters() { backend_->broadcast_parameters(); }

StepResult Trainer::step(bool stop_requested) {
  const GptConfig& c = model_.config();
  const auto start = Clock::now();
  StepResult result;
  result.step = step_;
  micro_done_.store(0, std::memory_order_relaxed);
  model_.zero_gradients();
  double loss = 0;
  const float scale = 1.0f / static_cast<float>(c.grad_accum);
  const GradientReady ready = [this](std::size_t offset, std::size_t count) { backend_->gradient_ready(offset, count); };
  for (int micro = 0; micro < c.grad_accum; ++micro) {
    data_.fill(step_, micro, inputs_, targets_);
    // Only the last micro-batch's gradients are final: its buckets travel while backward goes on.
    const bool last = micro + 1 == c.grad_accum;
    if (last) backend_->begin_gradients();
    loss += model_.forward_backward(inputs_, targets_, scale, last ? ready : GradientReady{});
    micro_done_.store(micro + 1, std::memory_order_relaxed);
  }
  loss /= c.grad_accum;
  double exposed = backend_->finish_gradients();
  const double norm = std::sqrt(backend_->global_sum_of_squares(exposed));
  const float clip = clip_scale(norm, settings_.grad_clip);
  result.lr = settings_.schedule.at(static_cast<int>(step_));
  backend_->optimizer_step(result.lr, clip, step_ + 1);
  exposed += backend_->gather_parameters();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.exposed_comm_seconds = exposed;
  result.grad_norm = norm;

  // One small all-gather per step: every rank's loss, times and stop wish.
  const RankReport mine = rank_report(loss, result, stop_requested);
  std::vector<double> all(kRankReportFields * static_cast<std::size_t>(backend_->world()));
  backend_->all_gather_host(mine.data(), all.data(), kRankReportFields, comm::DataType::float64);
  merge_rank_reports(all, result);
  ++step_;
  return result;
}

CheckpointHeader Trainer::header(const std::string& data_description) const {
  CheckpointHeader h;
  h.config = model_.config();
  h.step = step_;
  h.world = backend_->world();
  h.zero1 = backend_->zero1();
  h.data = data_description;
  h.parameters = model_.layout().total();
  h.adamw = settings_.adamw;
  h.schedule = settings_.schedule;
  h.grad_clip = settings_.grad_clip;
  return h;
}

void Trainer::save_checkpoint(const std::string& path, const std::string& data_description) {
  const std::size_t n = model_.layout().total();
  std::vector<float> m(backend_->zero1() || backend_->rank() == 0 ? n : 0), v(m.size());
  backend_->gather_moments(m, v);
  on_leader([&] { write_checkpoint(path, header(data_description), model_.parameters(), m, v); },
            "rank 0 could not write checkpoint " + path);
}

void Trainer::load_checkpoint(const std::string& path, const std::string& data_description) {
  Checkpoint checkpoint;
  on_leader(
      [&] {
        checkpoint = read_checkpoint(path);
        check_compatible(checkpoint.header, header(data_description), path);
      },
      "rank 0 refused checkpoint " + path);
  long step = checkpoint.header.step;
  backend_->broadcast_host(&step, 1, comm::DataType::int64);
  backend_->load_state(checkpoint);
  step_ = step;
}

void Trainer::on_leader(const std::function<void()>& work, const std::string& elsewhere) {
  const bool leader = backend_->rank() == 0;
  int failed = 0;
  std::string error;
  if (leader) {
    try {
      work();
    } catch (const CheckpointError& e) {
      failed = 1;
      error = e.what();
    }
  }
  if (broadcast_from_leader(failed)) throw CheckpointError(leader ? error : elsewhere);
}

int Trainer::broadcast_from_leader(int value) {
  backend_->broadcast_host(&value, 1, comm::DataType::int32);
  return value;
}

std::vector<int> Trainer::check_parameters_agree() {
  const std::uint64_t mine = parameter_checksum(model_.parameters());
  if (backend_->world() == 1) return {};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(backend_->world()));
  backend_->all_gather_host(&mine, all.data(), 1, comm::DataType::uint64);
  return ranks_differing_from_leader(all);
}

}  // namespace gpudirect::train
