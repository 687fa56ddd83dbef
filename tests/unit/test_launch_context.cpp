#include <catch2/catch.hpp>

#include "bootstrap/launch_context.hpp"
#include "bootstrap/session.hpp"

using gpudirect::bootstrap::context_from_environment;

TEST_CASE("Slurm: rank, size, local rank, rendezvous on the first host of the step", "[launch_context]") {
  const auto c = context_from_environment({{"SLURM_PROCID", "9"},
                                           {"SLURM_NTASKS", "16"},
                                           {"SLURM_STEP_NUM_TASKS", "16"},
                                           {"SLURM_LOCALID", "1"},
                                           {"SLURM_NODEID", "1"},
                                           {"SLURM_STEP_TASKS_PER_NODE", "8(x2)"},
                                           {"SLURM_STEP_NODELIST", "a3mega-[07-08]"},
                                           {"SLURM_JOB_ID", "42"},
                                           {"SLURM_STEP_ID", "0"}});
  CHECK(c.origin == "slurm");
  CHECK(c.rank == 9);
  CHECK(c.size == 16);
  CHECK(c.local_rank == 1);
  CHECK(c.local_size == 8);
  CHECK(c.node == 1);
  CHECK(c.rendezvous_host == "a3mega-07");
  CHECK(c.rendezvous_port >= 20000);
  CHECK(c.rendezvous_port < 40000);
  // Same job and step: the same port on every node; another step: (almost surely) another port.
  const auto again = context_from_environment({{"SLURM_PROCID", "0"},
                                               {"SLURM_NTASKS", "16"},
                                               {"SLURM_STEP_NODELIST", "a3mega-[07-08]"},
                                               {"SLURM_JOB_ID", "42"},
                                               {"SLURM_STEP_ID", "0"}});
  CHECK(again.rendezvous_port == c.rendezvous_port);
  const auto reserved = context_from_environment(
      {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_NODELIST", "n1"}, {"SLURM_STEP_RESV_PORTS", "12000-12015"}});
  CHECK(reserved.rendezvous_port == 12000);
}

TEST_CASE("uneven tasks per node", "[launch_context]") {
  const auto c = context_from_environment({{"SLURM_PROCID", "3"},
                                           {"SLURM_NTASKS", "4"},
                                           {"SLURM_LOCALID", "0"},
                                           {"SLURM_NODEID", "1"},
                                           {"SLURM_STEP_TASKS_PER_NODE", "3,1"},
                                           {"SLURM_STEP_NODELIST", "n[1-2]"}});
  CHECK(c.local_size == 1);
}

TEST_CASE("torchrun-style variables", "[launch_context]") {
  const auto c = context_from_environment({{"RANK", "5"},
                                           {"WORLD_SIZE", "16"},
                                           {"LOCAL_RANK", "5"},
                                           {"LOCAL_WORLD_SIZE", "8"},
                                           {"MASTER_ADDR", "10.0.0.2"},
                                           {"MASTER_PORT", "29500"}});
  CHECK(c.origin == "torchrun");
  CHECK(c.rank == 5);
  CHECK(c.rendezvous_host == "10.0.0.2");
  CHECK(c.rendezvous_port == 29500);
  CHECK_THROWS_WITH(context_from_environment({{"RANK", "0"}, {"WORLD_SIZE", "2"}}), Catch::Contains("MASTER_ADDR"));
}

TEST_CASE("our own spawn wins, nothing at all is a single rank", "[launch_context]") {
  const auto c = context_from_environment({{"GPUDIRECT_LAUNCH_RANK", "2"},
                                           {"GPUDIRECT_LAUNCH_SIZE", "4"},
                                           {"GPUDIRECT_LAUNCH_PORT", "31000"},
                                           {"SLURM_PROCID", "0"},
                                           {"SLURM_STEP_NODELIST", "n1"},
                                           {"SLURM_NTASKS", "1"}});
  CHECK(c.origin == "spawn");
  CHECK(c.rank == 2);
  CHECK(c.size == 4);
  const auto single = context_from_environment({});
  CHECK(single.origin == "single");
  CHECK(single.size == 1);
}

TEST_CASE("malformed values name the variable", "[launch_context]") {
  CHECK_THROWS_WITH(context_from_environment({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_NODELIST", "n1"}}),
                    Catch::Contains("SLURM_PROCID=x"));
  CHECK_THROWS_WITH(context_from_environment({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_NODELIST", "n1"}}),
                    Catch::Contains("SLURM_PROCID=4"));
  CHECK_THROWS_WITH(context_from_environment({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
                    Catch::Contains("MASTER_PORT=70000"));
  CHECK_THROWS_WITH(context_from_environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_NODELIST", "n[2-1]"}}),
                    Catch::Contains("invalid host list"));
}

TEST_CASE("the rendezvous override HOST:PORT is taken whole or refused", "[launch_context]") {
  const auto ok = gpudirect::bootstrap::parse_host_port("node1:29500", "--rendezvous");
  CHECK(ok.host == "node1");
  CHECK(ok.port == 29500);
  CHECK(gpudirect::bootstrap::parse_host_port("fe80::1:80", "--rendezvous").host == "fe80::1");
  for (const char* bad : {"host:80x", "host:", "host", ":80", "host: 80", "host:+80", "host:0", "host:65536", "host:99999999999"}) {
    INFO(bad);
    CHECK_THROWS_WITH(gpudirect::bootstrap::parse_host_port(bad, "--rendezvous"), Catch::StartsWith(std::string("--rendezvous ") + bad));
  }
}

TEST_CASE("the rendezvous secret comes from GPUDIRECT_RENDEZVOUS_SECRET whatever started the rank", "[launch_context]") {
  const std::string secret = "0123456789abcdef0123456789abcdef";
  CHECK(context_from_environment(
            {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}, {"GPUDIRECT_RENDEZVOUS_SECRET", secret}})
            .rendezvous_secret == secret);
  CHECK(context_from_environment({{"GPUDIRECT_LAUNCH_RANK", "0"},
                                  {"GPUDIRECT_LAUNCH_SIZE", "2"},
                                  {"GPUDIRECT_LAUNCH_PORT", "5"},
                                  {"GPUDIRECT_RENDEZVOUS_SECRET", secret}})
            .rendezvous_secret == secret);
  CHECK(
      context_from_environment({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}).rendezvous_secret.empty());
}
