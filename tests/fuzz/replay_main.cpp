// Replays files through a fuzz target without libFuzzer, so the ordinary (gcc, ASan) builds run
// every seed and every regression input as a unit test: `fuzz_replay_X DIR_OR_FILE...`.
#include "fuzz_input.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path path = argv[i];
    if (fs::is_directory(path)) {
      for (const auto& entry : fs::directory_iterator(path))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else if (fs::exists(path)) {
      files.push_back(path);
    } else if (path.parent_path().filename() != "regressions") {  // no crash found yet: no directory
      std::cerr << "fuzz replay: " << path << " does not exist\n";
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << "fuzz replay: " << files.size() << " inputs ran without a crash\n";
  return 0;
}
