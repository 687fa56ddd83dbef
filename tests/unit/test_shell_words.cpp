// The drain line check-node and health print is meant to be pasted into an admin's (root's) shell;
// its reason and comment carry text from findings (a NIC's name, a job's error output). Run by
// sh, the line must pass each argument exactly and run nothing else.
#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "node_drain.hpp"
#include "shell_words.hpp"

#include <unistd.h>

#include <filesystem>

using namespace gpudirect::launcher;
namespace fs = std::filesystem;

namespace {

// The arguments `line` gives scontrol when sh runs it in `dir`, with scontrol a shell function
// that prints each argument NUL-terminated.
std::vector<std::string> arguments_in_sh(const std::string& line, const fs::path& dir) {
  const auto [status, output] = run_capture(
      {"sh", "-c", "cd '" + dir.string() + "' || exit 9\nscontrol() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; }\n" + line});
  REQUIRE(status == 0);
  std::vector<std::string> args;
  std::string current;
  for (const char c : output) {
    if (c == '\0') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  CHECK(current.empty());
  return args;
}

}  // namespace

TEST_CASE("the printed drain line passes a hostile reason and comment to scontrol as they are", "[drain][security]") {
  const fs::path dir = fs::temp_directory_path() / ("gpudirect-shell-words-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string reason = "gpudirect health: $(touch x) `touch y` it's ${HOME} \"q\" \\ \n second line";
  const std::string comment = "a;b|c&d 'e' $(touch z)\n\n* ? [a] ~ #";
  const std::string line = drain_line("node1", reason, comment);
  CHECK(line.find('\n') != std::string::npos);  // the newline is kept, inside quotes
  const auto args = arguments_in_sh(line, dir);
  CHECK(args == std::vector<std::string>{"update", "nodename=node1", "state=drain", "reason=" + reason, "comment=" + comment});
  CHECK_FALSE(fs::exists(dir / "x"));
  CHECK_FALSE(fs::exists(dir / "y"));
  CHECK_FALSE(fs::exists(dir / "z"));
  // A node name is quoted as well, and plain words stay readable.
  CHECK(arguments_in_sh(drain_line("node$(touch x)", "XID"), dir) ==
        std::vector<std::string>{"update", "nodename=node$(touch x)", "state=drain", "reason=XID"});
  CHECK_FALSE(fs::exists(dir / "x"));
  fs::remove_all(dir);
  CHECK(drain_line("node3", "gpudirect health: x") == "scontrol update nodename=node3 state=drain reason='gpudirect health: x'");
}

TEST_CASE("shell words: plain ones as they are, the rest single-quoted", "[drain]") {
  CHECK(shell_word("--nodes=2") == "--nodes=2");
  CHECK(shell_word("") == "''");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("reason=a b") == "reason='a b'");
  CHECK(shell_word("node[1-3]") == "'node[1-3]'");  // a glob unquoted
  CHECK(shell_word("~root") == "'~root'");
  CHECK(shell_line({"A=b c", "d=e f"}) == "'A=b c' d='e f'");  // not an assignment
}
