#include "node_drain.hpp"

#include "child_process.hpp"
#include "shell_words.hpp"

#include "gpudirect/text.hpp"

#include <stdexcept>

namespace gpudirect::launcher {

std::string clean_slurm_text(std::string text, std::size_t max_bytes) {
  for (char& c : text)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '\'';
  if (text.size() > max_bytes) text.resize(max_bytes);
  return text;
}

std::vector<std::string> drain_command(const std::string& node, const std::string& reason, const std::string& comment) {
  std::vector<std::string> argv{"scontrol", "update", "nodename=" + node, "state=drain", "reason=" + reason};
  if (!comment.empty()) argv.push_back("comment=" + comment);
  return argv;
}

std::vector<std::string> resume_command(const std::string& node) { return {"scontrol", "update", "nodename=" + node, "state=resume"}; }

std::string drain_line(const std::string& node, const std::string& reason, const std::string& comment) {
  return shell_line(drain_command(node, reason, comment));
}

void run_scontrol(const std::vector<std::string>& argv) {
  const auto [status, output] = run_capture(argv);
  if (status != 0)
    throw std::runtime_error(shell_line(argv) + " failed (exit " + std::to_string(status) + "): " + quote_bounded(output, 300) +
                             " (drain and resume need a Slurm admin: run as root or SlurmUser)");
}

}  // namespace gpudirect::launcher
