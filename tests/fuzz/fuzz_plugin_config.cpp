// The plugstack.conf arguments: whitespace-separated key=value words, as Slurm hands them over.
#include "fuzz_input.hpp"

#include "gpudirect/plugin_config.hpp"

#include <sstream>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream words(gpudirect::fuzz::as_text(data, size));
  std::vector<std::string> args;
  for (std::string word; words >> word;) args.push_back(word);
  try {
    const auto config = gpudirect::parse_plugin_config(args);
    (void)gpudirect::describe(config);
    (void)gpudirect::profile_search_path(config);
    (void)gpudirect::lib_dir_for(config, gpudirect::Mode::tcpxo);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
