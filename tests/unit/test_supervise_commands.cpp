#include <catch2/catch.hpp>

#include "supervise/node_checks.hpp"
#include "supervise/supervise_options.hpp"
#include "supervise/training_step.hpp"

#include "command_errors.hpp"

using namespace gpudirect::launcher;
using namespace gpudirect::launcher::supervise;
using V = std::vector<std::string>;

namespace {

SuperviseOptions options() {
  SuperviseOptions o;
  o.spare_nodes = 2;
  o.ntasks_per_node = 2;
  o.srun_args = {"--gpus-per-task=1", "--gpu-direct=tcpxo"};
  o.rank_timeout_s = 10;
  o.launcher = "/usr/bin/gpudirect-launch";
  o.train_args = {"--preset", "tiny", "--steps", "400", "--checkpoint", "/shared/run.ckpt", "--checkpoint-every=20"};
  return o;
}

}  // namespace

TEST_CASE("supervise reads the checkpoint, its interval and the steps from train's options", "[supervise]") {
  const TrainPlan plan = check_options(options());
  CHECK(plan.checkpoint == "/shared/run.ckpt");
  CHECK(plan.checkpoint_every == 20);
  CHECK(plan.steps == 400);
}

TEST_CASE("supervise refuses what would break a restart or what it sets itself", "[supervise]") {
  SuperviseOptions o = options();
  o.train_args = {"--steps", "10"};
  CHECK_THROWS_WITH(check_options(o), Catch::Contains("train needs --checkpoint PATH on storage every node sees"));
  o.train_args = {"--checkpoint", "run.ckpt"};
  CHECK_THROWS_WITH(check_options(o), Catch::Contains("must be an absolute path"));
  o = options();
  o.train_args.push_back("-J");
  o.train_args.push_back("x.jsonl");
  CHECK_THROWS_WITH(check_options(o), Catch::Contains("give supervise -J FILE"));
  o = options();
  o.train_args = {"--checkpoint", "/c", "--steps", "many"};
  CHECK_THROWS_WITH(check_options(o), Catch::Contains("train's --steps 'many' is not a whole number"));
  o = options();
  o.train_args.clear();
  CHECK_THROWS_AS(check_options(o), UsageError);
  o = options();
  o.watch.slow_factor = 1;
  CHECK_THROWS_WITH(check_options(o), Catch::Contains("--slow-factor must be over 1"));
  o = options();
  o.spare_nodes = -1;
  CHECK_THROWS_AS(check_options(o), UsageError);
}

TEST_CASE("a training step: srun on the chosen nodes, train with the ranks' timeout, --resume and its own JSON", "[supervise]") {
  Attempt a;
  a.number = 3;
  a.nodes = {"node1", "node3", "node4", "node6"};
  a.json_path = "/shared/run.ckpt.supervise/attempt-3.jsonl";
  CHECK(training_step_command(options(), a) == V{"srun",
                                                 "--nodes=4",
                                                 "--nodelist=node1,node3,node4,node6",
                                                 "--ntasks=8",
                                                 "--ntasks-per-node=2",
                                                 "--overlap",
                                                 "--kill-on-bad-exit=1",
                                                 "--job-name=gpudirect-train-3",
                                                 "--gpus-per-task=1",
                                                 "--gpu-direct=tcpxo",
                                                 "/usr/bin/gpudirect-launch",
                                                 "--timeout",
                                                 "10",
                                                 "train",
                                                 "--preset",
                                                 "tiny",
                                                 "--steps",
                                                 "400",
                                                 "--checkpoint",
                                                 "/shared/run.ckpt",
                                                 "--checkpoint-every=20",
                                                 "--resume",
                                                 "-J",
                                                 "/shared/run.ckpt.supervise/attempt-3.jsonl"});
  SuperviseOptions given = options();
  given.train_args.push_back("--resume");
  const V argv = training_step_command(given, a);
  CHECK(std::count(argv.begin(), argv.end(), "--resume") == 1);
}

TEST_CASE("a node check: check-node on that node alone, its JSON in a file, and without a machine type only a step", "[supervise]") {
  SuperviseOptions o = options();
  o.node_check = "a3-megagpu-8g";
  o.node_check_args = {"--check-rxdm"};
  CHECK(node_check_command("node3", o, "/w/check-node3.json") == V{"srun", "--nodes=1", "--nodelist=node3", "--ntasks=1", "--overlap",
                                                                   "--job-name=gpudirect-node-check", "--output=/w/check-node3.json",
                                                                   "/usr/bin/gpudirect-launch", "check-node", "--machine-type",
                                                                   "a3-megagpu-8g", "--json", "--check-rxdm"});
  o.node_check.clear();
  o.node_check_program = "/opt/check.sh";
  const V plain = node_check_command("node3", o, "/w/x.json");
  CHECK(V(plain.end() - 2, plain.end()) == V{"/opt/check.sh", "--version"});
}

TEST_CASE("the pair test's bad nodes, with health's evidence as the comment and PERFORMANCE as the reason", "[supervise]") {
  const std::string report = R"({"nodes": [
    {"node": "node1", "verdict": "good", "pairs": []},
    {"node": "node3", "verdict": "bad", "pairs": [], "drain_reason": "gpudirect health: all_gather 0.0017 GB/s with node5, threshold 0.0365"},
    {"node": "node4", "verdict": "suspect", "pairs": []}], "runs": []})";
  const std::vector<NodeFinding> bad = bad_nodes_in_sweep(report);
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].node == "node3");
  CHECK(bad[0].reason == "PERFORMANCE");
  CHECK(bad[0].comment == "gpudirect health: all_gather 0.0017 GB/s with node5, threshold 0.0365");
  CHECK(bad_nodes_in_sweep("not json").empty());
  CHECK(bad_nodes_in_sweep(R"({"nodes": 3})").empty());
}
