// The exit codes every command shares (commands/command_errors.hpp): the values --help and the
// README document, and how run_command turns an exception into one.
#include <catch2/catch.hpp>

#include "command_errors.hpp"
#include "number_text.hpp"

#include <stdexcept>

using namespace gpudirect::launcher;

TEST_CASE("exit codes keep their documented values", "[command]") {
  CHECK(kExitOk == 0);
  CHECK(kExitFailure == 1);
  CHECK(kExitUsage == 6);
  CHECK((kExitCuda == 2 && kExitComm == 3 && kExitTimeout == 4 && kExitWrong == 7));  // nccl-tests'
  CHECK(kExitBadNodes == 7);
  CHECK((kExitDiverged == 8 && kExitPreempted == 10));
  CHECK((kExitCannotRun == 126 && kExitNotFound == 127));
}

TEST_CASE("run_command: the body's code, 6 for a usage error, 1 for any other failure", "[command]") {
  CHECK(run_command("gpudirect test", [] { return 7; }) == 7);
  CHECK(run_command("gpudirect test", []() -> int { throw UsageError("--steps must be at least 1"); }) == kExitUsage);
  CHECK(run_command("gpudirect test", []() -> int { throw std::invalid_argument("not a UsageError"); }) == kExitFailure);
  CHECK(run_command("gpudirect test", []() -> int { throw std::runtime_error("I/O"); }) == kExitFailure);
  const auto always_three = [](const std::exception&) { return 3; };
  CHECK(run_command(
            "gpudirect test", []() -> int { throw UsageError("x"); }, always_three) == 3);
}

TEST_CASE("numbers as the commands print them", "[command]") {
  CHECK(short_number(187.456) == "187");
  CHECK(short_number(0.41234) == "0.412");
  CHECK(short_number(1234.5) == "1.23e+03");
  CHECK(plain_number(2) == "2");
  CHECK(plain_number(1.5) == "1.5");
  CHECK(plain_number(300) == "300");
}
