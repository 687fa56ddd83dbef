// gpudirect-launch: the companion binary that runs under srun (or standalone).
#include "subcommands.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"gpudirect-launch: tools that run inside Slurm jobs using the gpudirect SPANK plugin"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpudirect-launch 0.1.0");
  int exit_code = 0;
  gpudirect::launcher::register_doctor(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 6;
  }
  return exit_code;
}
