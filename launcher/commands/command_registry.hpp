// Each subcommand registers itself on the launcher's CLI11 app. When the user picks it, its
// callback runs and stores the process exit status in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace gpudirect::launcher {

void register_doctor(CLI::App& app, int& exit_code);
void register_bench(CLI::App& app, int& exit_code);
void register_rendezvous_check(CLI::App& app, int& exit_code);
void register_train(CLI::App& app, int& exit_code);

}  // namespace gpudirect::launcher
