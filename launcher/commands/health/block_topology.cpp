#include "health/block_topology.hpp"

#include "gpudirect/hostlist.hpp"
#include "gpudirect/text.hpp"
#include "number_text.hpp"

#include <sstream>
#include <stdexcept>

namespace gpudirect::launcher::health {
namespace {

// The value of KEY= among the line's blank-separated words ("" when absent); keys as Slurm
// writes them, compared without case (topology.conf's names are case-insensitive).
std::string value_of(const std::string& line, std::string_view key) {
  std::istringstream words(line);
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq != key.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < eq; ++i)
      if (std::tolower(static_cast<unsigned char>(word[i])) != std::tolower(static_cast<unsigned char>(key[i]))) same = false;
    if (same) return word.substr(eq + 1);
  }
  return "";
}

const Block* block_of(const std::vector<Block>& blocks, const std::string& node) {
  for (const Block& block : blocks)
    for (const std::string& n : block.nodes)
      if (n == node) return &block;
  return nullptr;
}

std::string result_text(const SweepRun& run) {
  return run.outcome == Outcome::measured ? short_number(run.busbw) + " GB/s" : std::string(to_string(run.outcome));
}

}  // namespace

std::vector<Block> parse_block_topology(std::string_view text) {
  std::vector<Block> blocks;
  std::istringstream lines{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string name = value_of(line, "BlockName");
    if (name.empty()) continue;
    const std::string nodes = value_of(line, "Nodes");
    if (nodes.empty())
      throw std::invalid_argument("block topology line " + std::to_string(number) + ": block " + name +
                                  " has no Nodes=: give scontrol show topology's output or topology.conf's BlockName= lines");
    try {
      blocks.push_back({name, expand_hostlist(nodes)});
    } catch (const std::exception& e) {
      throw std::invalid_argument("block topology line " + std::to_string(number) + ": block " + name + ": " + e.what());
    }
  }
  return blocks;
}

PairPath pair_path(const std::vector<Block>& blocks, const std::string& a, const std::string& b) {
  const Block* first = block_of(blocks, a);
  const Block* second = block_of(blocks, b);
  if (!first || !second) return PairPath::unknown;
  return first == second ? PairPath::in_block : PairPath::across_blocks;
}

const char* to_string(PairPath path) {
  switch (path) {
    case PairPath::in_block:
      return "in_block";
    case PairPath::across_blocks:
      return "across_blocks";
    case PairPath::unknown:
      break;
  }
  return "unknown";
}

std::string block_pairs_report(const std::vector<Block>& blocks, const std::vector<SweepRun>& runs) {
  if (blocks.empty()) return "";
  std::string inside, across, unknown;
  int inside_count = 0, across_count = 0, unknown_count = 0;
  for (const SweepRun& run : runs) {
    if (run.nodes.size() != 2) continue;
    const std::string& a = run.nodes[0];
    const std::string& b = run.nodes[1];
    const Block* first = block_of(blocks, a);
    const Block* second = block_of(blocks, b);
    const std::string pair = "  " + a + " - " + b + ": " + result_text(run);
    switch (pair_path(blocks, a, b)) {
      case PairPath::in_block:
        inside += pair + " (block " + first->name + ")\n";
        ++inside_count;
        break;
      case PairPath::across_blocks:
        across += pair + " (blocks " + first->name + ", " + second->name + ")\n";
        ++across_count;
        break;
      case PairPath::unknown:
        unknown += pair + " (" + (first ? b : a) + " is in no block)\n";
        ++unknown_count;
        break;
    }
  }
  std::string out = "# block topology: " + std::to_string(blocks.size()) + " blocks\n";
  out += "# pairs inside a block (NVLink, one IMEX domain): " + std::to_string(inside_count) + "\n" + inside;
  out += "# pairs across blocks (RoCE): " + std::to_string(across_count) + "\n" + across;
  if (unknown_count) out += "# pairs with a node in no block: " + std::to_string(unknown_count) + "\n" + unknown;
  return out;
}

}  // namespace gpudirect::launcher::health
