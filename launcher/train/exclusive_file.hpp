// A new file in a directory that other users may be able to write to (a shared checkpoint
// directory, /tmp): created under a random name, exclusively, never through a link. A guessable
// name opened with O_TRUNC would let another user plant a symbolic link there and have this
// process truncate and overwrite any file of the link's choosing that it may write.
#pragma once

#include <string>

namespace gpudirect::train {

struct NewFile {
  int fd = -1;       // open for writing, close-on-exec
  std::string path;  // where it was created
};

// Creates `path` only if nothing (no file, no link, not even a dangling one) is there yet:
// O_CREAT|O_EXCL|O_NOFOLLOW. Returns the descriptor, or -1 with errno set (EEXIST if taken).
int create_exclusively(const std::string& path, unsigned mode);

// Creates "<directory>/<prefix><16 random hex digits>" exclusively, trying new names while a name
// is taken. Throws std::system_error naming the directory when it cannot create one.
NewFile create_unique_file(const std::string& directory, const std::string& prefix, unsigned mode);

}  // namespace gpudirect::train
