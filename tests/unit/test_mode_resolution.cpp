#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/mode_resolution.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"

using namespace gpudirect;

namespace {

Topology fixture(const std::string& name) { return load_topology_file(gpudirect::testing::fixture_path(name)); }

ModeRequest ask(std::optional<Mode> mode) {
  ModeRequest request;
  request.mode = mode;
  return request;
}

PluginConfig with_rxdm(Mode default_mode = Mode::off) {
  PluginConfig config;
  config.default_mode = default_mode;
  config.rxdm_ready = "/run/tcpxo/rxdm.ready";
  return config;
}

}  // namespace

TEST_CASE("auto on a TCPXO node resolves to tcpxo and waits for RxDM", "[mode]") {
  const Topology mega = fixture("a3-megagpu-8g.xml");
  const ModeDecision d = resolve_mode(ask(Mode::auto_detect), with_rxdm(), mega, {true, false});
  CHECK(d.requested == Mode::auto_detect);
  CHECK(d.mode == Mode::tcpxo);
  CHECK(d.reason == "auto: tcpxo (8 GPUs, TCPXO NCCL plugin present)");
  CHECK(d.wait_for_rxdm);
  CHECK_FALSE(resolve_mode(ask(Mode::auto_detect), PluginConfig{}, mega, {true, false}).wait_for_rxdm);  // no rxdm_ready=
}

TEST_CASE("auto off TCPXO: tcpx, rdma or off, and never an RxDM wait", "[mode]") {
  const Topology mega = fixture("a3-megagpu-8g.xml"), nd = fixture("nd-h100-v5-like.xml"), none = fixture("gpu-less.xml");
  const auto tcpx = resolve_mode(ask(Mode::auto_detect), with_rxdm(), mega, {false, true});
  CHECK(tcpx.mode == Mode::tcpx);
  CHECK_FALSE(tcpx.wait_for_rxdm);
  const auto rdma = resolve_mode(ask(Mode::auto_detect), with_rxdm(), nd, {false, false});
  CHECK(rdma.mode == Mode::rdma);
  CHECK_FALSE(rdma.wait_for_rxdm);
  const auto bare = resolve_mode(ask(Mode::auto_detect), with_rxdm(), mega, {false, false});
  CHECK(bare.mode == Mode::off);
  CHECK_FALSE(bare.wait_for_rxdm);
  // The TCPXO plugin is installed, RxDM is configured, but the node has no GPU: auto is off, and
  // nothing may wait for an RxDM that will never come.
  const auto gpu_less = resolve_mode(ask(Mode::auto_detect), with_rxdm(), none, {true, true});
  CHECK(gpu_less.mode == Mode::off);
  CHECK(gpu_less.reason == "auto: off (no GPUs on this node)");
  CHECK_FALSE(gpu_less.wait_for_rxdm);
}

TEST_CASE("explicit modes are taken as asked, off never waits", "[mode]") {
  const Topology mega = fixture("a3-megagpu-8g.xml");
  const auto tcpxo = resolve_mode(ask(Mode::tcpxo), with_rxdm(), mega, {false, false});
  CHECK(tcpxo.mode == Mode::tcpxo);  // plan_task then reports the missing plugin
  CHECK(tcpxo.reason.empty());
  CHECK(tcpxo.wait_for_rxdm);
  for (Mode mode : {Mode::tcpx, Mode::gib, Mode::rdma, Mode::off}) {
    const auto d = resolve_mode(ask(mode), with_rxdm(), mega, {true, true});
    CHECK(d.mode == mode);
    CHECK_FALSE(d.wait_for_rxdm);
  }
}

TEST_CASE("without --gpu-direct=MODE the plugstack default is what is asked", "[mode]") {
  const Topology mega = fixture("a3-megagpu-8g.xml");
  CHECK(requested_mode(ask(std::nullopt), with_rxdm(Mode::auto_detect)) == Mode::auto_detect);
  CHECK(requested_mode(ask(Mode::off), with_rxdm(Mode::tcpxo)) == Mode::off);
  const auto d = resolve_mode(ask(std::nullopt), with_rxdm(Mode::auto_detect), mega, {true, false});
  CHECK(d.requested == Mode::auto_detect);
  CHECK(d.mode == Mode::tcpxo);
  CHECK(resolve_mode(ask(std::nullopt), with_rxdm(), mega, {true, false}).mode == Mode::off);
}

TEST_CASE("plan_task runs the mode resolve_mode picks", "[mode]") {
  const Topology mega = fixture("a3-megagpu-8g.xml"), none = fixture("gpu-less.xml");
  for (const Topology* topology : {&mega, &none})
    for (const NodeFacts facts : {NodeFacts{true, false}, NodeFacts{false, false}}) {
      TaskSetupInput in;
      in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
      in.request = ask(Mode::auto_detect);
      in.facts = facts;
      in.env = {{"SLURM_LOCALID", "0"}, {"SLURM_LOCAL_TASKS", "1"}, {"SLURM_STEP_GPUS", "0"}, {"CUDA_VISIBLE_DEVICES", "0"}};
      in.allowed_cpus = CpuSet::range(0, 207);
      const ModeDecision d = resolve_mode(in.request, in.config, *topology, facts);
      const TaskSetup setup = plan_task(*topology, plan_node(*topology), in);
      CHECK(setup.mode == d.mode);
      CHECK(setup.mode_reason == d.reason);
    }
}

TEST_CASE("auto with the gIB and TCPXO plugins both installed: gib on a node with RDMA NICs, tcpxo on one without", "[mode]") {
  // An image built for several machine types may carry both plugins; the RDMA NICs decide.
  const Topology a4 = fixture("a4-highgpu-8g.xml"), mega = fixture("a3-megagpu-8g.xml");
  for (const NodeFacts facts : {NodeFacts{true, false, true}, NodeFacts{true, true, true}}) {
    const ModeDecision on_a4 = resolve_mode(ask(Mode::auto_detect), with_rxdm(), a4, facts);
    CHECK(on_a4.mode == Mode::gib);
    CHECK_FALSE(on_a4.wait_for_rxdm);
    CHECK(resolve_mode(ask(Mode::auto_detect), with_rxdm(), mega, facts).mode == Mode::tcpxo);
  }
}
