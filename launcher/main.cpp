// gpudirect-launch: the companion binary that runs under srun, under torchrun-style launchers, or
// standalone with --np N local ranks.
#include "command_errors.hpp"
#include "command_registry.hpp"
#include "train/cpu/openmp_wait_policy.hpp"

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/session.hpp"
#include "gpudirect/text.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr const char* kFooter = R"(
Where a rank learns who it is, first match wins:
  --np N (this binary spawns N local ranks), Slurm (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID,
  SLURM_STEP_NODELIST: the first host is the rendezvous; port from SLURM_STEP_RESV_PORTS or derived
  from the job and step ids), torchrun-style (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
  MASTER_ADDR, MASTER_PORT), else a single rank.
Every rank proves GPUDIRECT_RENDEZVOUS_SECRET (hex, 128 bits or more, the same for all) to rank 0's
rendezvous, which serves no one else: the plugin sets one per srun and --np makes its own; otherwise
export GPUDIRECT_RENDEZVOUS_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n') before launching.
A rank that dies, a link without progress for --timeout seconds, or a rank that never reaches the
rendezvous ends every rank with one line naming that rank, its host and the collective.
Exit codes: 0 ok, 1 failure, 6 usage; bench uses nccl-tests' codes (see bench --help); train adds 8 (ranks'
parameters differ) and 10 (stopped by SIGTERM/SIGUSR1, checkpoint written; see train --help); health
exits 7 when it found bad nodes (see health --help), check-node 7 when this node fails a check (see check-node --help),
supervise 11 when a node had to be replaced and no spare was left (see supervise --help).)";

// `--np N` (or --np=N) before the subcommand: returns N and removes it from args; 0 if absent.
int take_np(std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] != '-') break;  // the subcommand: --np belongs before it
    std::string value;
    std::size_t width = 0;
    if (a == "--np" && i + 1 < args.size()) {
      value = args[i + 1];
      width = 2;
    } else if (a.rfind("--np=", 0) == 0) {
      value = a.substr(5);
      width = 1;
    } else
      continue;
    args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i + width));
    try {
      return gpudirect::parse_integer<int>(value, "--np", 1, 4096);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "gpudirect-launch: %s (the number of local ranks to start)\n", e.what());
      std::exit(gpudirect::launcher::kExitUsage);
    }
  }
  return 0;
}

// The subcommand's name: the first argument that is neither an option nor the value of one of
// the options main.cpp takes before it (--np, --rendezvous, --timeout).
std::string subcommand_of(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--np" || a == "--rendezvous" || a == "--timeout") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return a;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  // Before any thread exists: the CPU model needs OpenMP's passive wait (see openmp_wait_policy.hpp).
  if (subcommand_of(args) == "train") gpudirect::train::reexec_with_passive_openmp_wait(argv);
  if (const int ranks = take_np(args); ranks > 0) {
    try {
      return gpudirect::bootstrap::spawn_local_ranks(ranks, args);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudirect-launch: %s\n", e.what());
      return gpudirect::launcher::kExitFailure;
    }
  }

  CLI::App app{"gpudirect-launch: collective benchmarks, training steps and node checks for Slurm jobs using the gpudirect plugin"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpudirect-launch 0.1.0");
  app.add_option("--np", "start N local ranks of this command line (like mpirun on one host); must come before the subcommand");
  gpudirect::launcher::CommandContext context;
  app.add_option("--rendezvous", context.session.rendezvous, "HOST:PORT of rank 0's rendezvous, instead of the derived one")
      ->check(CLI::Validator(
          [](std::string& text) {
            try {
              gpudirect::bootstrap::parse_host_port(text, "--rendezvous");
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "HOST:PORT"));
  double timeout_s = 30;
  app.add_option("--timeout", timeout_s,
                 "seconds to wait for the rendezvous, for every rank, and for progress on a link before the job fails "
                 "naming the rank (default 30); a rank that dies is detected at once")
      ->check(CLI::Range(0.1, 86400.0));
  app.parse_complete_callback([&] { context.session.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)); });

  for (const auto& command : gpudirect::launcher::all_commands()) command.add(app, context);
  try {
    app.parse(static_cast<int>(args.size()), argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : gpudirect::launcher::kExitUsage;
  }
  return context.exit_code;
}
