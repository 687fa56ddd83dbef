// The one Trainer over the host backend at 1, 2 and 4 ranks (threads of this process): data
// parallelism gives the single-rank run's losses and gradient norms (a sum where an average belongs
// would double the norm), ZeRO-1 gives the replicated run's checkpoint, a ZeRO-1 checkpoint resumes
// a replicated run, the initial broadcast makes ranks agree and the parameter check names a rank
// that drifted.
#include "comm/host_communicator.hpp"
#include "comm/transport/thread_transport.hpp"
#include "fake_train_model.hpp"
#include "train/checkpoint.hpp"
#include "train/host_backend.hpp"
#include "train/trainer.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>

using namespace gpudirect;
using namespace gpudirect::train;

namespace {

constexpr std::chrono::milliseconds kTimeout{20000};  // a broken collective fails the test, never hangs it

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpudirect_trainer_" + std::to_string(::getpid()) + "_" + name)).string();
}

struct Rank {
  int rank;
  testing::FakeModel& model;
  DataSource& data;
  Trainer& trainer;
};

// What a rank saw. The rank threads only record; the test's own thread asserts (Catch2's
// assertions are not thread-safe).
struct RankRun {
  std::vector<StepResult> steps;
  std::vector<float> parameters;
  std::vector<int> different;
  long step_after_load = -1;
  int broadcast_value = -1;
  std::vector<int> different_before_broadcast;
  std::vector<int> different_after_broadcast;
};

TrainSettings test_settings(bool zero1) {
  TrainSettings settings;
  settings.schedule = {1e-2f, 1e-3f, 2, 8};
  settings.zero1 = zero1;
  // Small buckets: the tiny layout gets several, of sizes that do not divide by 3 or 4.
  settings.first_bucket_bytes = 16 * 1024;
  settings.bucket_bytes = 64 * 1024;
  return settings;
}

// `world` ranks, each with micro-batch global_batch / world and 2 micro-batches per step, run `body`
// on their own model, data and Trainer; returns every rank's steps and final parameters.
std::vector<RankRun> run_ranks(int world, int global_batch, bool zero1, const std::function<void(Rank&, RankRun&)>& body) {
  auto transports = comm::make_thread_transports(world, kTimeout);
  std::vector<std::future<RankRun>> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.push_back(std::async(std::launch::async, [r, world, global_batch, zero1, &body,
                                                    transport = std::move(transports[static_cast<std::size_t>(r)])]() mutable {
      GptConfig config = preset_config("tiny");
      config.micro_batch = global_batch / world;
      config.grad_accum = 2;
      auto comm = comm::make_host_communicator(std::move(transport), "threads");
      const BatchShape shape{world, r, config.micro_batch, config.grad_accum, config.seq_len, config.vocab};
      auto data = make_mock_data(shape, config.seed, true);
      const TrainSettings settings = test_settings(zero1);
      testing::FakeModel model(config);
      Trainer trainer(model, *data, settings, make_host_backend(model, *comm, settings));
      RankRun run;
      Rank rank{r, model, *data, trainer};
      body(rank, run);
      run.parameters.assign(model.parameters().begin(), model.parameters().end());
      return run;
    }));
  }
  std::vector<RankRun> runs;
  for (auto& rank : ranks) runs.push_back(rank.get());
  return runs;
}

void run_steps(Rank& rank, RankRun& run, long until) {
  while (rank.trainer.next_step() < until) run.steps.push_back(rank.trainer.step(false));
}

bool close(double a, double b, double relative) { return std::fabs(a - b) <= relative * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

TEST_CASE("trainer: 2 and 4 ranks give the losses and gradient norms of 1 rank with the whole batch", "[train][trainer]") {
  const auto steps = [](Rank& rank, RankRun& run) {
    rank.trainer.broadcast_initial_parameters();
    run_steps(rank, run, 5);
    run.different = rank.trainer.check_parameters_agree();
  };
  const std::vector<RankRun> one = run_ranks(1, 4, false, steps);
  for (const int world : {2, 4}) {
    for (const bool zero1 : {false, true}) {
      INFO(world << " ranks" << (zero1 ? " with ZeRO-1" : ""));
      const std::vector<RankRun> many = run_ranks(world, 4, zero1, steps);
      for (const RankRun& run : many) {
        CHECK(run.different.empty());
        REQUIRE(run.steps.size() == one[0].steps.size());
        for (std::size_t s = 0; s < run.steps.size(); ++s) {
          const StepResult& expected = one[0].steps[s];
          const StepResult& got = run.steps[s];
          INFO("step " << s + 1 << ": loss " << got.loss << " vs " << expected.loss << ", norm " << got.grad_norm << " vs "
                       << expected.grad_norm);
          CHECK(got.step == static_cast<long>(s));
          CHECK(close(got.loss, expected.loss, 1e-6));
          CHECK(close(got.grad_norm, expected.grad_norm, 1e-5));
          CHECK(got.lr == expected.lr);
          CHECK(got.rank_seconds.size() == static_cast<std::size_t>(world));
          CHECK(got.rank_exposed_seconds.size() == static_cast<std::size_t>(world));
          CHECK(got.loss == many[0].steps[s].loss);  // every rank reports the same merged loss
        }
        double worst = 0;
        for (std::size_t i = 0; i < run.parameters.size(); ++i)
          worst = std::max(worst, static_cast<double>(std::fabs(run.parameters[i] - one[0].parameters[i])));
        INFO("largest parameter difference from 1 rank: " << worst);
        CHECK(worst < 1e-5);
      }
    }
  }
}

TEST_CASE("trainer: ZeRO-1 and replicated AdamW state write the same checkpoint, a ZeRO-1 one resumes a replicated run",
          "[train][trainer]") {
  const std::string sharded = temp_path("sharded"), replicated = temp_path("replicated");
  const auto save_at_3 = [](const std::string& path) {
    return [path](Rank& rank, RankRun& run) {
      run_steps(rank, run, 3);
      rank.trainer.save_checkpoint(path, rank.data.describe());
    };
  };
  run_ranks(2, 4, true, save_at_3(sharded));
  run_ranks(2, 4, false, save_at_3(replicated));
  const Checkpoint a = read_checkpoint(sharded), b = read_checkpoint(replicated);
  CHECK(a.header.zero1);
  CHECK_FALSE(b.header.zero1);
  CHECK(a.header.step == 3);
  REQUIRE(a.parameters.size() == b.parameters.size());
  for (std::size_t i = 0; i < a.parameters.size(); ++i) {
    INFO("element " << i);
    REQUIRE(a.parameters[i] == Approx(b.parameters[i]).margin(1e-7));
    REQUIRE(a.first_moment[i] == Approx(b.first_moment[i]).margin(1e-9));
    REQUIRE(a.second_moment[i] == Approx(b.second_moment[i]).margin(1e-12));
  }

  const std::vector<RankRun> straight = run_ranks(2, 4, false, [](Rank& rank, RankRun& run) { run_steps(rank, run, 6); });
  const std::vector<RankRun> resumed = run_ranks(2, 4, false, [&sharded](Rank& rank, RankRun& run) {
    std::fill(rank.model.parameters().begin(), rank.model.parameters().end(), 0.0f);  // the checkpoint must replace them
    rank.trainer.load_checkpoint(sharded, rank.data.describe());
    run.step_after_load = rank.trainer.next_step();
    run_steps(rank, run, 6);
    run.different = rank.trainer.check_parameters_agree();
  });
  for (const RankRun& run : resumed) {
    CHECK(run.step_after_load == 3);
    CHECK(run.different.empty());
    REQUIRE(run.steps.size() == 3);
    for (std::size_t s = 0; s < 3; ++s) {
      INFO("step " << s + 4);
      CHECK(run.steps[s].step == static_cast<long>(s + 3));
      CHECK(close(run.steps[s].loss, straight[0].steps[s + 3].loss, 1e-6));
      CHECK(close(run.steps[s].grad_norm, straight[0].steps[s + 3].grad_norm, 1e-5));
    }
  }
  std::filesystem::remove(sharded);
  std::filesystem::remove(replicated);
}

TEST_CASE("trainer: the initial broadcast makes the ranks agree, the parameter check names a rank that drifted", "[train][trainer]") {
  const std::vector<RankRun> runs = run_ranks(4, 4, true, [](Rank& rank, RankRun& run) {
    // Rank 0's value goes to every rank.
    run.broadcast_value = rank.trainer.broadcast_from_leader(rank.rank == 0 ? 7 : rank.rank);
    if (rank.rank != 0) rank.model.parameters()[5] += static_cast<float>(rank.rank);
    run.different_before_broadcast = rank.trainer.check_parameters_agree();
    rank.trainer.broadcast_initial_parameters();
    run.different_after_broadcast = rank.trainer.check_parameters_agree();
    run_steps(rank, run, 1);
    if (rank.rank == 2) rank.model.parameters()[1] = -1.0f;
    run.different = rank.trainer.check_parameters_agree();
  });
  for (const RankRun& run : runs) {
    CHECK(run.broadcast_value == 7);
    CHECK_FALSE(run.different_before_broadcast.empty());
    CHECK(run.different_after_broadcast.empty());
    CHECK(run.different == std::vector<int>{2});
  }
}

TEST_CASE("trainer: a rank blocked inside a small bucket's all-reduce during backward counts it as communication", "[train][trainer]") {
  // Rank 1 starts its step 0.3 s late. Rank 0's first bucket (16 KiB) is all-reduced in backward's
  // own thread, so rank 0 waits there; that wait is communication, or the straggler rule, which
  // compares compute times, would blame rank 0 as much as rank 1.
  const auto steps = [](Rank& rank, RankRun& run) {
    rank.trainer.broadcast_initial_parameters();
    if (rank.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    run_steps(rank, run, 1);
  };
  const std::vector<RankRun> runs = run_ranks(2, 4, false, steps);
  const StepResult& step = runs[0].steps.at(0);
  INFO("rank 0: step " << step.rank_seconds[0] << " s, communication " << step.rank_exposed_seconds[0] << " s");
  CHECK(step.rank_exposed_seconds[0] >= 0.25);
  CHECK(step.rank_seconds[0] - step.rank_exposed_seconds[0] < 0.15);
}
