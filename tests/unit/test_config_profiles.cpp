#include <catch2/catch.hpp>

#include "gpudirect/mode.hpp"
#include "gpudirect/network_profile.hpp"
#include "gpudirect/plugin_config.hpp"
#include "gpudirect/task_setup.hpp"

#include <utility>

using namespace gpudirect;

TEST_CASE("values of the --gpu-direct option", "[mode]") {
  CHECK_FALSE(parse_mode_request("").mode);
  CHECK(*parse_mode_request("tcpxo").mode == Mode::tcpxo);
  const auto verbose = parse_mode_request("tcpx,verbose");
  CHECK(*verbose.mode == Mode::tcpx);
  CHECK(verbose.verbose);
  CHECK(parse_mode_request("verbose").verbose);
  CHECK(*parse_mode_request("auto").mode == Mode::auto_detect);
  CHECK(*parse_mode_request("gib,verbose").mode == Mode::gib);
  CHECK(to_string(Mode::gib) == "gib");
  for (const char* bad : {"tcpxx", "TCPXO", "tcpxo,", ",tcpxo", "tcpxo,tcpx", "verbose,verbose", "tcpxo,loud"})
    CHECK_THROWS_WITH(parse_mode_request(bad), Catch::Contains("expected auto, tcpxo, tcpx, gib, rdma or off"));
}

TEST_CASE("plugstack arguments", "[plugin_config]") {
  const PluginConfig c = parse_plugin_config({"default=tcpxo", "lib_dir=/opt/tcpxo", "topology=/etc/topo.xml", "cpu_bind=off",
                                              "rxdm_ready=/run/rxdm.sock", "rxdm_timeout=5", "profile.tcpxo=tcpxo-simple"});
  CHECK(c.default_mode == Mode::tcpxo);
  CHECK(lib_dir_for(c, Mode::tcpxo) == "/opt/tcpxo");
  CHECK(c.topology == "/etc/topo.xml");
  CHECK_FALSE(c.cpu_bind);
  CHECK(c.rxdm_timeout_s == 5);
  CHECK(c.tcpxo_profile == "tcpxo-simple");
  const PluginConfig d = parse_plugin_config({});
  CHECK(d.default_mode == Mode::off);
  CHECK(lib_dir_for(d, Mode::tcpxo) == "/var/lib/tcpxo/lib64");
  CHECK(lib_dir_for(d, Mode::tcpx) == "/var/lib/tcpx/lib64");
  CHECK(lib_dir_for(d, Mode::gib) == "/usr/local/gib/lib64");  // where Google's nccl-gib package installs
  CHECK(lib_dir_for(c, Mode::gib) == "/opt/tcpxo");            // lib_dir= is the node's one plugin dir
  CHECK(lib_dir_for(c, Mode::rdma).empty());
  CHECK(d.gib_machine.empty());
  CHECK(parse_plugin_config({"gib_machine=a4"}).gib_machine == "a4");
  CHECK(parse_plugin_config({"default=gib"}).default_mode == Mode::gib);
  for (const char* bad : {"gib_machine=A4", "gib_machine=a4/../x", "gib_machine=a 4"})
    CHECK_THROWS_WITH(parse_plugin_config({bad}), Catch::Contains("expected a machine name such as a3u or a4"));
  CHECK(d.topology_cache == "/run/gpudirect-slurm");
  CHECK(parse_plugin_config({"topology_cache=off"}).topology_cache.empty());
  CHECK(parse_plugin_config({"topology_cache=/var/cache/gd"}).topology_cache == "/var/cache/gd");
  CHECK_THROWS_WITH(parse_plugin_config({"topology_cache=cache"}), Catch::Contains("absolute path"));

  CHECK_THROWS_WITH(parse_plugin_config({"colour=blue"}), Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(parse_plugin_config({"default"}), Catch::Contains("expected key=value"));
  CHECK_THROWS_WITH(parse_plugin_config({"default=fast"}), Catch::Contains("'default=fast'"));
  CHECK_THROWS_WITH(parse_plugin_config({"lib_dir=relative/path"}), Catch::Contains("absolute path"));
  CHECK_THROWS_WITH(parse_plugin_config({"rxdm_timeout=-1"}), Catch::Contains("between 0 and 3600"));
  CHECK_THROWS_WITH(parse_plugin_config({"cpu_bind=maybe"}), Catch::Contains("on or off"));
  CHECK_THROWS_WITH(parse_plugin_config({"default=off", "default=tcpxo"}), Catch::Contains("twice"));
  CHECK_THROWS_WITH(parse_plugin_config({"topology="}), Catch::Contains("empty value"));
}

TEST_CASE("the shipped TCPXO profile renders Google's default environment", "[profile]") {
  const auto profile = load_profile("tcpxo", {GPUDIRECT_PROFILE_DIR});
  const ProfileInputs inputs{{"DATA_NICS", "enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0"},
                             {"CTRL_NIC", "enp0s12"},
                             {"LIB_DIR", "/var/lib/tcpxo/lib64"}};
  const auto env = apply_env(render(profile, inputs), {{"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"}, {"NCCL_DEBUG", "INFO"}});
  const std::map<std::string, std::string> expected{
      {"LD_LIBRARY_PATH", "/var/lib/tcpxo/lib64:/usr/local/cuda/lib64"},
      {"NCCL_NET", "FasTrak"},
      {"NCCL_FASTRAK_IFNAME", "enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0"},
      {"NCCL_FASTRAK_CTRL_DEV", "enp0s12"},
      {"NCCL_SOCKET_IFNAME", "enp0s12"},
      {"NCCL_CROSS_NIC", "0"},
      {"NCCL_PROTO", "Simple,LL128"},
      {"NCCL_MIN_NCHANNELS", "4"},
      {"NCCL_NVLSTREE_MAX_CHUNKSIZE", "131072"},
      {"NCCL_P2P_NET_CHUNKSIZE", "524288"},
      {"NCCL_P2P_PCI_CHUNKSIZE", "524288"},
      {"NCCL_P2P_NVL_CHUNKSIZE", "1048576"},
      {"NCCL_FASTRAK_NUM_FLOWS", "2"},
      {"NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL", "0"},
      {"NCCL_BUFFSIZE", "8388608"},
      {"NCCL_FASTRAK_USE_SNAP", "1"},
      {"NCCL_FASTRAK_USE_LLCM", "1"},
      {"NCCL_NET_GDR_LEVEL", "PIX"},
      {"NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING", "0"},
      {"NCCL_TUNER_PLUGIN", "libnccl-tuner.so"},
      {"NCCL_TUNER_CONFIG_PATH", "/var/lib/tcpxo/lib64/a3plus_tuner_config.textproto"},
      {"NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE", "/var/lib/tcpxo/lib64/a3plus_guest_config.textproto"},
      {"NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS", "600000"},
      {"NCCL_DEBUG", "INFO"},  // the user's own value wins
  };
  for (const auto& [name, value] : expected) {
    INFO(name);
    REQUIRE(env.count(name));
    CHECK(env.at(name) == value);
  }
  // Applying twice changes nothing (slurmstepd may run hooks again).
  CHECK(apply_env(render(profile, inputs), env) == env);
}

TEST_CASE("every shipped profile parses, rdma picks IB or EFA variables", "[profile]") {
  for (const char* name : {"tcpxo", "tcpxo-simple", "tcpx", "gib", "rdma"}) CHECK_NOTHROW(load_profile(name, {GPUDIRECT_PROFILE_DIR}));
  const auto rdma = load_profile("rdma", {GPUDIRECT_PROFILE_DIR});
  const auto ib = apply_env(render(rdma, {{"TASK_IB_HCAS", "mlx5_3"}, {"CTRL_NIC", "eth0"}}), {});
  CHECK(ib.at("NCCL_IB_HCA") == "=mlx5_3");
  CHECK(ib.count("FI_PROVIDER") == 0);
  CHECK(ib.at("NCCL_NET") == "IB");
  const auto efa = apply_env(render(rdma, {{"TASK_EFA_DEVICES", "rdmap18s0"}}), {});
  CHECK(efa.at("FI_PROVIDER") == "efa");
  CHECK(efa.count("NCCL_IB_HCA") == 0);
  CHECK(efa.count("NCCL_NET") == 0);
}

TEST_CASE("every GPUDirect profile names NCCL's network, so a plugin that does not load fails NCCL", "[profile]") {
  // Without NCCL_NET, NCCL that cannot load the mode's plugin runs on sockets, 4-5x slower, silently.
  const ProfileInputs inputs{{"DATA_NICS", "enp6s0"}, {"CTRL_NIC", "enp0s12"},    {"HOST_NICS", "enp0s12"}, {"LIB_DIR", "/lib"},
                             {"SLURM_JOB_ID", "7"},   {"TASK_IB_HCAS", "mlx5_0"}, {"GIB_MACHINE", "a4"}};
  for (const auto& [name, net] : {std::pair{"tcpxo", "FasTrak"}, std::pair{"tcpxo-simple", "FasTrak"},
                                  std::pair{"tcpx", "GPUDirectTCPX_v7"}, std::pair{"gib", "gIB"}}) {
    INFO(name);
    const auto env = apply_env(render(load_profile(name, {GPUDIRECT_PROFILE_DIR}), inputs), {{"NCCL_NET", "Socket"}});
    CHECK(env.at("NCCL_NET") == net);  // set, not only when unset: a stale NCCL_NET=Socket would undo the mode
  }
}

TEST_CASE("profile errors name the file and line", "[profile]") {
  CHECK_THROWS_WITH(parse_profile("NCCL_A=1\nnot a line\n", "x", "x.conf"), Catch::Contains("x.conf:2"));
  CHECK_THROWS_WITH(parse_profile("NCCL_A=${NOPE}\n", "x", "x.conf"), Catch::Contains("unknown placeholder ${NOPE}"));
  CHECK_THROWS_WITH(parse_profile("NCCL_A=${LIB_DIR\n", "x", "x.conf"), Catch::Contains("unterminated"));
  CHECK_THROWS_WITH(parse_profile("1A=2\n", "x", "x.conf"), Catch::Contains("not a valid variable name"));
  CHECK_THROWS_WITH(parse_profile("when NOPE: NCCL_A=1\n", "x", "x.conf"), Catch::Contains("unknown placeholder 'NOPE'"));
  const auto p = parse_profile("# comment\n\nNCCL_S=${CTRL_NIC}\n", "x", "x.conf");
  CHECK_THROWS_WITH(render(p, {}), Catch::Contains("${CTRL_NIC} is empty") && Catch::Contains("x.conf:3"));
  CHECK_THROWS_WITH(load_profile("nope", {"/nonexistent"}), Catch::Contains("/nonexistent/nope.conf"));
}
