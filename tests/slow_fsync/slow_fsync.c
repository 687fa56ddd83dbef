/* A slow disk under one file, for the supervisor's test of a fault during a checkpoint write
 * (tests/integration/test_train_supervised.sh): preloaded into the training ranks, it makes fsync
 * of a file whose path contains SLOW_FSYNC_MATCH sleep SLOW_FSYNC_SECONDS first, so the write is in
 * flight long enough for the test to end the writer in the middle of it, and long enough to need
 * the supervisor's checkpoint allowance. Every other fsync is the libc's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int fsync(int fd) {
  static int (*real_fsync)(int);
  if (!real_fsync) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  const char* match = getenv("SLOW_FSYNC_MATCH");
  const char* seconds = getenv("SLOW_FSYNC_SECONDS");
  if (match && *match && seconds) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, path, sizeof path - 1);
    if (n > 0) {
      path[n] = '\0';
      if (strstr(path, match)) {
        const double s = atof(seconds);
        struct timespec wait = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        while (nanosleep(&wait, &wait) != 0) {
        }
      }
    }
  }
  return real_fsync(fd);
}
