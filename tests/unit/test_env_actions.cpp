// A profile line's three operators, each on its own: NAME=value replaces, NAME?=value keeps the
// task's own value (also an empty one), NAME+=dir puts dir first in a path list, once.
#include <catch2/catch.hpp>

#include "gpudirect/network_profile.hpp"

using namespace gpudirect;

namespace {

using Current = std::optional<std::string>;

EnvAction action(EnvActionKind kind, std::string value) { return {"X", std::move(value), kind}; }

}  // namespace

TEST_CASE("a profile's = ?= and += lines parse to set, set-if-unset and prepend", "[profile][env_action]") {
  const NetworkProfile profile = parse_profile("NCCL_A=1\nNCCL_B?=2\nLD_LIBRARY_PATH+=/lib\n", "p", "p.conf");
  REQUIRE(profile.lines.size() == 3);
  CHECK(profile.lines[0].name == "NCCL_A");
  CHECK(profile.lines[0].kind == EnvActionKind::set);
  CHECK(profile.lines[1].name == "NCCL_B");
  CHECK(profile.lines[1].kind == EnvActionKind::set_if_unset);
  CHECK(profile.lines[2].name == "LD_LIBRARY_PATH");
  CHECK(profile.lines[2].kind == EnvActionKind::prepend_path);
}

TEST_CASE("= replaces whatever the task has", "[env_action]") {
  CHECK(apply_env_action(action(EnvActionKind::set, "new"), std::nullopt) == Current("new"));
  CHECK(apply_env_action(action(EnvActionKind::set, "new"), Current("old")) == Current("new"));
}

TEST_CASE("?= sets only a variable the task does not have", "[env_action]") {
  CHECK(apply_env_action(action(EnvActionKind::set_if_unset, "ours"), std::nullopt) == Current("ours"));
  CHECK(apply_env_action(action(EnvActionKind::set_if_unset, "ours"), Current("theirs")) == std::nullopt);
  CHECK(apply_env_action(action(EnvActionKind::set_if_unset, "ours"), Current("")) == std::nullopt);  // set, if empty
}

TEST_CASE("+= puts the directory first, once, and keeps the rest in order", "[env_action]") {
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), std::nullopt) == Current("/lib"));
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), Current("")) == Current("/lib"));
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), Current("/a:/b")) == Current("/lib:/a:/b"));
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), Current("/lib:/a")) == std::nullopt);  // already first
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), Current("/lib")) == std::nullopt);
  // Further back, or only a prefix of another entry: not first yet.
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), Current("/a:/lib")) == Current("/lib:/a:/lib"));
  CHECK(apply_env_action(action(EnvActionKind::prepend_path, "/lib"), Current("/lib64")) == Current("/lib:/lib64"));
}
