// Command lines printed for a person to paste into a POSIX shell (the scontrol drain line, a job
// that failed): every argument comes back as exactly the bytes it was, whatever a node name, a
// reason or a comment holds ($(...), backticks, quotes, newlines).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::launcher {

// `word` as one shell word: as it is when it holds only characters no shell treats specially,
// else in single quotes, each ' as '\''. An argument of the form NAME=VALUE keeps NAME= outside
// the quotes (reason='...'), which the shell joins back into the same single argument.
std::string shell_word(std::string_view word);

// The argument vector as one line: the words separated by spaces; the first is quoted whole (a
// leading NAME=VALUE would be an assignment).
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace gpudirect::launcher
