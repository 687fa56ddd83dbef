// A command's work directory (health's, supervise's), where its jobs write their logs and their
// results (the bench JSON of a pair, check-node's JSON of a node) and from which it decides what to
// drain. These commands often run as root or a Slurm admin: nobody else may be able to put a file
// there, a link there must not redirect a write, and a result counts only from a file the
// command's own jobs wrote.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace gpudirect::launcher {

struct WorkDirError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The directory to use. `given` empty: a new one, ./PREFIX-DATE-TIME-XXXXXX with an
// unpredictable suffix (mkdtemp), mode 0700. `given` that does not exist: created, mode 0700 (its
// parents as usual). `given` that exists: used only if it is a directory (not a link to one) owned
// by this process's effective uid and not writable by group or others; WorkDirError says why not.
std::string prepare_work_dir(const std::string& given, const std::string& prefix);

// A file of this run, for writing: whatever was at `path` (an old log, a planted link) is
// removed, then the file is created anew (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600): a link put
// there in between makes it fail instead of being followed. Returns the descriptor; throws
// std::runtime_error naming the path and the cause.
int create_run_file(const std::string& path);

// Removes whatever is at `path` (a file or a link, not followed); nothing if there is nothing.
void remove_stale(const std::string& path);

// The text of a result file, only if it is a regular file (not followed if a link) owned by this
// process's effective uid: the command's jobs run as the user who runs it, so a file someone
// else put there is not theirs and is not believed. Empty otherwise or when it cannot be read.
std::optional<std::string> read_own_file(const std::string& path);

}  // namespace gpudirect::launcher
