// `gpudirect-launch rendezvous-check`: connects every rank through the rendezvous and prints who is
// where, so a job's wiring (ranks, hosts, local ranks, ports) can be checked before a long run.
#include "command_errors.hpp"
#include "command_registry.hpp"

#include "bootstrap/session.hpp"

#include <cstdio>

namespace gpudirect::launcher {

void register_rendezvous_check(CLI::App& app, CommandContext& context) {
  CLI::App* check =
      app.add_subcommand("rendezvous-check", "Connect every rank through the rendezvous and print rank, host and local rank from rank 0");
  check->callback([&context] {
    context.exit_code = run_command("gpudirect-launch rendezvous-check", [&] {
      bootstrap::Session session = bootstrap::open_session(context.session);
      const auto& c = session.context;
      const std::string me =
          std::to_string(c.rank) + " " + c.hostname + " " + std::to_string(c.local_rank) + "/" + std::to_string(c.local_size);
      const auto all = session.store ? session.store->all_gather("rendezvous-check", me) : std::vector<std::string>{me};
      if (c.rank == 0) {
        std::printf("# %d ranks (%s), rendezvous %s:%d%s\n# rank host local/of\n", c.size, c.origin.c_str(), c.rendezvous_host.c_str(),
                    c.rendezvous_port, session.store ? ", every rank proved the step's secret (GPUDIRECT_RENDEZVOUS_SECRET)" : "");
        for (const auto& line : all) std::printf("%s\n", line.c_str());
      }
      if (session.store) session.store->barrier("rendezvous-check/end");
      return kExitOk;
    });
  });
}

}  // namespace gpudirect::launcher
