// The profiles' `mount` lines: parsing, rendering, errors, the shipped profiles' mounts, and the
// forms pyxis and enroot take them in (docs/profiles.md, docs/containers.md).
#include <catch2/catch.hpp>

#include "gpudirect/container_mounts.hpp"
#include "gpudirect/network_profile.hpp"
#include "gpudirect/plugin_config.hpp"
#include "gpudirect/text.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace gpudirect;

namespace {

const ProfileInputs kNode{{"LIB_DIR", "/var/lib/tcpxo/lib64"},
                          {"SLURM_JOB_ID", "4242"},
                          {"CTRL_NIC", "enp0s12"},
                          {"DATA_NICS", "enp6s0"},
                          {"HOST_NICS", "enp0s12"},
                          {"TASK_IB_HCAS", "mlx5_0"},
                          {"GIB_MACHINE", "a4"}};

std::vector<ContainerMount> shipped_mounts(const std::string& name, const ProfileInputs& inputs = kNode) {
  return render_mounts(load_profile(name, {GPUDIRECT_PROFILE_DIR}), inputs);
}

PluginConfig shipped_config(const std::string& lib_dir = "") {
  PluginConfig config;
  config.profile_dir = GPUDIRECT_PROFILE_DIR;
  config.lib_dir = lib_dir;
  return config;
}

}  // namespace

TEST_CASE("mount lines: source, destination, ro or rw, conditions", "[profile][mounts]") {
  const auto profile = parse_profile(
      "NCCL_A=1\n"
      "mount ${LIB_DIR} ro\n"
      "mount /dev/aperture_devices\n"
      "  mount\t/run/tcpx-${SLURM_JOB_ID}   /run/tcpx rw\n"
      "when SLURM_JOB_ID: mount /srv/job-${SLURM_JOB_ID} ro\n"
      "NCCL_B=2\n",
      "x", "x.conf");
  REQUIRE(profile.lines.size() == 2);  // the environment is the env lines only
  REQUIRE(profile.mounts.size() == 4);
  CHECK(profile.mounts[0].line_number == 2);
  CHECK(profile.mounts[0].source_template == "${LIB_DIR}");
  CHECK(profile.mounts[0].destination_template == "${LIB_DIR}");
  CHECK(profile.mounts[0].read_only);
  CHECK_FALSE(profile.mounts[1].read_only);  // rw unless the line says ro, as pyxis
  CHECK(profile.mounts[2].destination_template == "/run/tcpx");
  CHECK(profile.mounts[3].condition == "SLURM_JOB_ID");

  const std::vector<ContainerMount> expected{{"/opt/lib", "/opt/lib", true},
                                             {"/dev/aperture_devices", "/dev/aperture_devices", false},
                                             {"/run/tcpx-7", "/run/tcpx", false},
                                             {"/srv/job-7", "/srv/job-7", true}};
  CHECK(render_mounts(profile, {{"LIB_DIR", "/opt/lib"}, {"SLURM_JOB_ID", "7"}}) == expected);
  // The environment renders as it did: mount lines add nothing to it.
  const auto env = render(profile, {});
  REQUIRE(env.size() == 2);
  CHECK(env[0].name == "NCCL_A");
  CHECK(env[1].name == "NCCL_B");
}

TEST_CASE("mount rendering: conditions, repeats, conflicts, order", "[profile][mounts]") {
  const auto conditional = parse_profile("when SLURM_JOB_ID: mount /run/x-${SLURM_JOB_ID}\nmount /a ro\n", "x", "x.conf");
  CHECK(render_mounts(conditional, {}) == std::vector<ContainerMount>{{"/a", "/a", true}});

  // The same mount twice (two conditions that both hold) is mounted once.
  const auto repeated = parse_profile("mount /a ro\nwhen LIB_DIR: mount /a ro\n", "x", "x.conf");
  CHECK(render_mounts(repeated, {{"LIB_DIR", "/l"}}).size() == 1);

  CHECK_THROWS_WITH(render_mounts(parse_profile("mount /a ro\nmount /a rw\n", "x", "x.conf"), {}),
                    Catch::Contains("x.conf:2") && Catch::Contains("/a is mounted already (x.conf:1)"));
  CHECK_THROWS_WITH(render_mounts(parse_profile("mount /b /a\nmount /c /a\n", "x", "x.conf"), {}),
                    Catch::Contains("x.conf:2") && Catch::Contains("mounted already"));
  // A parent after its child would hide the child's mount.
  CHECK_THROWS_WITH(render_mounts(parse_profile("mount /usr/local/gib/lib64 ro\nmount /usr/local/gib ro\n", "x", "x.conf"), {}),
                    Catch::Contains("x.conf:2") && Catch::Contains("would hide the one on /usr/local/gib/lib64 (x.conf:1)") &&
                        Catch::Contains("put the outer one first"));
  CHECK(render_mounts(parse_profile("mount /usr/local/gib ro\nmount /usr/local/gib/lib64 ro\nmount /usr/local/gibber\n", "x", "x.conf"), {})
            .size() == 3);
}

TEST_CASE("mount line errors name the file and line", "[profile][mounts]") {
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_profile(text, "x", "x.conf");
    } catch (const ProfileError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(error_of("NCCL_A=1\nmount\n"),
             Catch::Contains("x.conf:2") && Catch::Contains("expected 'mount SOURCE [DESTINATION] [ro|rw]'"));
  CHECK_THAT(error_of("mount ro\n"), Catch::Contains("x.conf:1") && Catch::Contains("no SOURCE"));
  CHECK_THAT(error_of("mount /a /b /c\n"), Catch::Contains("'/c' is neither a path nor ro or rw"));
  CHECK_THAT(error_of("mount /a ro rw\n"), Catch::Contains("ro or rw comes once, last"));
  CHECK_THAT(error_of("mount /a ro /b\n"), Catch::Contains("ro or rw comes once, last"));
  CHECK_THAT(error_of("mount /a /b ro extra\n"), Catch::Contains("expected 'mount SOURCE"));
  CHECK_THAT(error_of("mount /a RO\n"), Catch::Contains("mount path 'RO' is not an absolute path"));
  CHECK_THAT(error_of("mount lib64\n"), Catch::Contains("mount path 'lib64' is not an absolute path"));
  CHECK_THAT(error_of("\n\nmount /a/../etc\n"), Catch::Contains("x.conf:3") && Catch::Contains("holds a '..' component"));
  CHECK_THAT(error_of("mount /a//b\n"), Catch::Contains("holds '//'"));
  CHECK_THAT(error_of("mount /a/\n"), Catch::Contains("ends in '/'"));
  CHECK_THAT(error_of("mount /\n"), Catch::Contains("is the whole root file system"));
  // pyxis splits its list at ',' and ':'; enroot's fstab expands ${...} and splits at blanks.
  CHECK_THAT(error_of("mount /a,b\n"), Catch::Contains("holds ','"));
  CHECK_THAT(error_of("mount /a:/b\n"), Catch::Contains("holds ':'"));
  CHECK_THAT(error_of("mount /a$b\n"), Catch::Contains("holds '$'"));
  CHECK_THAT(error_of("mount /a\x01\n"), Catch::Contains("control characters"));
  CHECK_THAT(error_of("mount ${NOPE}\n"), Catch::Contains("unknown placeholder ${NOPE}"));
  CHECK_THAT(error_of("mount ${LIB_DIR\n"), Catch::Contains("unterminated"));
  CHECK_THAT(error_of("mount lib-${LIB_DIR}\n"), Catch::Contains("is not an absolute path"));
  // A container serves every task of the node: per-task values cannot name its mounts.
  CHECK_THAT(error_of("mount /sys/class/net/${TASK_NICS}\n"),
             Catch::Contains("a mount may use only ${LIB_DIR}, ${SLURM_JOB_ID}, not ${TASK_NICS}"));
  CHECK_THAT(error_of("when TASK_IB_HCAS: mount /dev/infiniband\n"),
             Catch::Contains("a mount's condition may use only ${LIB_DIR}, ${SLURM_JOB_ID}, not 'TASK_IB_HCAS'"));
  CHECK_THAT(error_of("when NOPE: mount /a\n"), Catch::Contains("unknown placeholder 'NOPE'"));
}

TEST_CASE("rendered mount paths must be plain absolute paths", "[profile][mounts]") {
  const auto profile = parse_profile("# lib\nmount ${LIB_DIR} ro\n", "x", "x.conf");
  CHECK_THROWS_WITH(render_mounts(profile, {}), Catch::Contains("x.conf:2") && Catch::Contains("${LIB_DIR} is empty here"));
  CHECK_THROWS_WITH(render_mounts(profile, {{"LIB_DIR", "/opt/a:b"}}),
                    Catch::Contains("x.conf:2") && Catch::Contains("'/opt/a:b' (from ${LIB_DIR}) holds ':'"));
  CHECK_THROWS_WITH(render_mounts(profile, {{"LIB_DIR", "/opt/a b"}}), Catch::Contains("holds ' '"));
  CHECK_THROWS_WITH(render_mounts(profile, {{"LIB_DIR", "relative"}}), Catch::Contains("is not an absolute path"));
  const auto job = parse_profile("mount /run/tcpx-${SLURM_JOB_ID}\n", "x", "x.conf");
  CHECK_THROWS_WITH(render_mounts(job, {}), Catch::Contains("${SLURM_JOB_ID} is empty") && Catch::Contains("run it inside the job"));
  CHECK_THROWS_WITH(render_mounts(job, {{"SLURM_JOB_ID", "../../etc"}}), Catch::Contains("holds a '..' component"));
}

TEST_CASE("the shipped profiles name the host paths their environment points at", "[profile][mounts]") {
  const std::vector<ContainerMount> tcpxo{{"/var/lib/tcpxo/lib64", "/var/lib/tcpxo/lib64", true},
                                          {"/dev/aperture_devices", "/dev/aperture_devices", false}};
  CHECK(shipped_mounts("tcpxo") == tcpxo);
  CHECK(shipped_mounts("tcpxo-simple") == tcpxo);
  CHECK(shipped_mounts("tcpx", {{"LIB_DIR", "/var/lib/tcpx/lib64"}, {"SLURM_JOB_ID", "4242"}}) ==
        std::vector<ContainerMount>{{"/var/lib/tcpx/lib64", "/var/lib/tcpx/lib64", true}, {"/run/tcpx-4242", "/run/tcpx-4242", false}});
  CHECK(shipped_mounts("gib", {{"LIB_DIR", "/usr/local/gib/lib64"}}) ==
        std::vector<ContainerMount>{{"/usr/local/gib/lib64", "/usr/local/gib/lib64", true},
                                    {"/usr/local/gib/configs", "/usr/local/gib/configs", true}});
  CHECK(shipped_mounts("rdma").empty());

  // Every absolute path a GPUDirect profile's environment names lies in one of its mounts: what the
  // plugin tells a task, a container with these mounts can see.
  for (const char* name : {"tcpxo", "tcpxo-simple", "tcpx", "gib"}) {
    INFO(name);
    const auto profile = load_profile(name, {GPUDIRECT_PROFILE_DIR});
    const auto mounts = render_mounts(profile, kNode);
    for (const EnvAction& action : render(profile, kNode)) {
      if (!action.value.starts_with("/")) continue;
      INFO(action.name << "=" << action.value);
      bool covered = false;
      for (const ContainerMount& mount : mounts)
        covered = covered || action.value == mount.destination || action.value.starts_with(mount.destination + "/");
      CHECK(covered);
    }
  }
}

TEST_CASE("container needs of a mode, in pyxis's and enroot's forms", "[profile][mounts]") {
  const auto tcpxo = container_needs(shipped_config(), Mode::tcpxo, {});
  CHECK(tcpxo.library_path == "/var/lib/tcpxo/lib64");
  CHECK(pyxis_container_mounts(tcpxo.mounts) == "/var/lib/tcpxo/lib64:/var/lib/tcpxo/lib64:ro,/dev/aperture_devices:/dev/aperture_devices");
  CHECK(enroot_fstab(tcpxo.mounts) ==
        "/var/lib/tcpxo/lib64 /var/lib/tcpxo/lib64 none x-create=auto,rbind,ro\n"
        "/dev/aperture_devices /dev/aperture_devices none x-create=auto,rbind\n");

  // lib_dir= from the plugstack line, the job id from the environment.
  const auto tcpx = container_needs(shipped_config("/opt/tcpx"), Mode::tcpx, {{"SLURM_JOB_ID", "17"}});
  CHECK(pyxis_container_mounts(tcpx.mounts) == "/opt/tcpx:/opt/tcpx:ro,/run/tcpx-17:/run/tcpx-17");
  CHECK(tcpx.library_path == "/opt/tcpx");
  CHECK_THROWS_WITH(container_needs(shipped_config(), Mode::tcpx, {}),
                    Catch::Contains("tcpx.conf") && Catch::Contains("${SLURM_JOB_ID} is empty"));
  CHECK(container_needs(shipped_config(), Mode::gib, {}).library_path == "/usr/local/gib/lib64");

  // The names set outright: NCCL_DEBUG?= (the user's own value wins) and LD_LIBRARY_PATH+= are not.
  const auto& names = tcpxo.set_names;
  CHECK(names.front() == "NCCL_NET");
  CHECK(std::find(names.begin(), names.end(), "NCCL_SOCKET_IFNAME") != names.end());
  CHECK(std::find(names.begin(), names.end(), "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS") != names.end());
  CHECK(std::find(names.begin(), names.end(), "NCCL_DEBUG") == names.end());
  CHECK(std::find(names.begin(), names.end(), "LD_LIBRARY_PATH") == names.end());

  const auto rdma = container_needs(shipped_config(), Mode::rdma, {});
  CHECK(rdma.mounts.empty());
  CHECK(rdma.library_path.empty());
  CHECK(pyxis_container_mounts({}).empty());
  CHECK(enroot_fstab({}).empty());
  CHECK(container_needs(shipped_config(), Mode::off, {}).mounts.empty());
  CHECK_THROWS_AS(container_needs(shipped_config(), Mode::auto_detect, {}), std::invalid_argument);

  PluginConfig missing = shipped_config();
  missing.profile_dir = "/nonexistent";
  missing.tcpxo_profile = "tcpxo-nowhere";
  CHECK_THROWS_WITH(container_needs(missing, Mode::tcpxo, {}), Catch::Contains("network profile 'tcpxo-nowhere' not found"));
}

TEST_CASE("pyxis's syntax: SRC:DST[:FLAGS] joined by ',', absolute paths without ',' or ':'", "[profile][mounts]") {
  for (const Mode mode : {Mode::tcpxo, Mode::tcpx, Mode::gib}) {
    const std::string value = pyxis_container_mounts(container_needs(shipped_config(), mode, {{"SLURM_JOB_ID", "9"}}).mounts);
    INFO(value);
    for (const std::string_view entry : split(value, ',')) {
      const auto fields = split(entry, ':');
      REQUIRE((fields.size() == 2 || fields.size() == 3));
      CHECK(fields[0].starts_with("/"));
      CHECK(fields[1].starts_with("/"));
      if (fields.size() == 3) CHECK(fields[2] == "ro");
    }
  }
}
