// health --work-dir: health often runs as root or a Slurm admin, and what its jobs write there
// decides which nodes it drains. The real command, with stand-ins for sinfo and srun on PATH: a
// directory someone else owns or may write is refused, a link left at a log's path is not
// followed, and a check-node verdict that this run's job did not write is not believed.
#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "work_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpudirect::launcher;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

struct Scratch {
  fs::path root = fs::temp_directory_path() / ("gpudirect-health-workdir-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(root);
    fs::create_directories(root / "bin");
    // sinfo: two idle nodes. srun: the node check's job writes node1's passing result where
    // --output says, and a planted failing verdict for node2 (a file of another user, as someone
    // who could write the directory would leave it); the pair's job fails.
    write(root / "bin" / "sinfo", "#!/bin/sh\nprintf 'node1|idle|none\\nnode2|idle|none\\n'\n");
    write(root / "bin" / "srun",
          "#!/bin/sh\n"
          "echo \"srun stand-in: $*\"\n"
          "for a in \"$@\"; do case $a in --output=*) out=${a#--output=};; esac; done\n"
          "case $out in *check-node-%N.json)\n"
          "  n1=$(echo \"$out\" | sed 's/%N/node1/'); n2=$(echo \"$out\" | sed 's/%N/node2/')\n"
          "  echo '{\"ok\": true, \"facts\": {}}' >\"$n1\"\n"
          "  echo '{\"ok\": false, \"drain\": {\"reason\": \"XID\", \"comment\": \"planted verdict\"}, \"facts\": {}}' >\"$n2\"\n"
          "  chown 65534 \"$n2\"\n"
          "  exit 0;;\n"
          "esac\n"
          "exit 3\n");
  }
  ~Scratch() { fs::remove_all(root); }
  static void write(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_all);
  }
  // health on node1,node2 with its node check, in `work`; exit status and output.
  std::pair<int, std::string> health(const fs::path& work) const {
    return run_capture({"sh", "-c",
                        "PATH='" + (root / "bin").string() + "':$PATH exec '" GPUDIRECT_LAUNCH_BINARY "' health --nodelist node1,node2 " +
                            "--threshold 1 --pair-timeout 20 --node-check local-test --work-dir '" + work.string() + "' 2>&1"});
  }
};

std::string text_of(const fs::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("health refuses a work dir another user owns or may write", "[health][security]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot give a directory to another uid");
    return;
  }
  const Scratch scratch;
  const fs::path theirs = scratch.root / "theirs";
  fs::create_directories(theirs);
  REQUIRE(::chown(theirs.c_str(), kNobody, kNobody) == 0);
  auto [status, output] = scratch.health(theirs);
  CHECK(status == 6);
  CHECK_THAT(output, Catch::Contains("is owned by uid 65534, not by this user (uid 0): refused"));
  CHECK_THAT(output, !Catch::Contains("srun stand-in"));

  const fs::path shared = scratch.root / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
  std::tie(status, output) = scratch.health(shared);
  CHECK(status == 6);
  CHECK_THAT(output, Catch::Contains("is writable by its group or by others (mode 1777): refused"));

  fs::create_directory_symlink(theirs, scratch.root / "link");
  std::tie(status, output) = scratch.health(scratch.root / "link");
  CHECK(status == 6);
  CHECK_THAT(output, Catch::Contains("is a symbolic link: refused"));
}

TEST_CASE("health follows no link planted at a log path and believes no verdict its job did not write", "[health][security]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot plant another uid's file");
    return;
  }
  const Scratch scratch;
  const fs::path work = scratch.root / "work";
  fs::create_directories(work);
  fs::permissions(work, fs::perms::owner_all);
  Scratch::write(scratch.root / "precious", "precious\n");
  fs::create_symlink(scratch.root / "precious", work / "check-node.log");
  fs::create_symlink(scratch.root / "precious", work / "1-node1-node2.log");
  const auto [status, output] = scratch.health(work);
  INFO(output);
  CHECK(text_of(scratch.root / "precious") == "precious\n");
  CHECK_FALSE(fs::is_symlink(work / "check-node.log"));
  CHECK_THAT(text_of(work / "check-node.log"), Catch::Contains("srun stand-in"));
  CHECK_THAT(output, Catch::Contains("node check: node2 gave no result"));
  CHECK_THAT(output, !Catch::Contains("planted verdict"));
  CHECK_THAT(output, Catch::Contains("pair node1+node2 failed"));
}

TEST_CASE("a new work dir is private and its name unpredictable", "[health][security]") {
  const Scratch scratch;
  const fs::path old = fs::current_path();
  fs::current_path(scratch.root);
  const std::string a = prepare_work_dir("", "gpudirect-health"), b = prepare_work_dir("", "gpudirect-health");
  fs::current_path(old);
  CHECK(a != b);
  CHECK(a.rfind("gpudirect-health-", 0) == 0);
  struct stat st {};
  REQUIRE(::stat((scratch.root / a).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  const fs::path given = scratch.root / "deeper" / "given";
  CHECK(prepare_work_dir(given.string(), "gpudirect-health") == given.string());
  REQUIRE(::stat(given.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(prepare_work_dir(given.string(), "gpudirect-health") == given.string());  // again: it is ours
}
