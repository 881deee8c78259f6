/*
 * shim.c: an LD_PRELOAD library that makes writes fail, for the fault
 * injection tests (tests/fault/run.sh). No root, no mounts.
 *
 *   KVPLAN_FAULT_WRITE=BYTES  write(2) to a regular file fails with ENOSPC once
 *                             BYTES bytes went to regular files (a full disk)
 *   KVPLAN_FAULT_FSYNC=1      fsync(2) fails with EIO
 *   KVPLAN_FAULT_RENAME=1     rename(2) fails with EXDEV
 *
 * Writes to pipes and terminals (the messages on stderr) always pass.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long long budget = -1; /* bytes left; -1 unset */
static int loaded;

static void load(void) {
  if (loaded) return;
  loaded = 1;
  const char *w = getenv("KVPLAN_FAULT_WRITE");
  if (w != NULL) budget = atoll(w);
}

static int regular(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

ssize_t write(int fd, const void *buf, size_t n) {
  static ssize_t (*real)(int, const void *, size_t);
  if (real == NULL) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  load();
  if (budget >= 0 && regular(fd)) {
    if (budget == 0) {
      errno = ENOSPC;
      return -1;
    }
    if ((long long)n > budget) n = (size_t)budget; /* a short write, then ENOSPC */
    budget -= (long long)n;
  }
  return real(fd, buf, n);
}

int fsync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  if (getenv("KVPLAN_FAULT_FSYNC") != NULL && regular(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

int rename(const char *from, const char *to) {
  static int (*real)(const char *, const char *);
  if (real == NULL) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
  if (getenv("KVPLAN_FAULT_RENAME") != NULL) {
    errno = EXDEV;
    return -1;
  }
  return real(from, to);
}
