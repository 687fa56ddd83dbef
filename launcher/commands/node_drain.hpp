// Draining a node the one way every command does it: the scontrol argument vector, the same as a
// line to copy into a shell, and the reason and comment made safe for both. health drains for a
// slow pair, check-node for a fault of the node itself.
#pragma once

#include <string>
#include <vector>

namespace gpudirect::launcher {

// Slurm stores a reason or comment as given: a double quote, a backslash or a control byte would
// break the printed line, so each becomes a single quote; at most `max_bytes` are kept.
std::string clean_slurm_text(std::string text, std::size_t max_bytes = 200);

// scontrol update nodename=N state=drain reason=R [comment=C]: the comment (Slurm 20.11 and
// later) holds the detail an operator reads with scontrol show node, when the reason must be a
// fixed word (slurm-gcp's repair acts on XID, PERFORMANCE ...).
std::vector<std::string> drain_command(const std::string& node, const std::string& reason, const std::string& comment = "");
std::vector<std::string> resume_command(const std::string& node);
// The same command as a line to paste into a shell: each argument single-quoted where it needs it
// (shell_words.hpp), so no reason or comment can run anything in the admin's shell.
std::string drain_line(const std::string& node, const std::string& reason, const std::string& comment = "");

// Runs an scontrol argument vector; throws std::runtime_error with its output and the usual fix
// (drain and resume need a Slurm admin) when it fails.
void run_scontrol(const std::vector<std::string>& argv);

}  // namespace gpudirect::launcher
