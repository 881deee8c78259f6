/*
 * proc.c: another program run without a shell (see proc.h).
 * Output layer: no Lua; never prints or exits.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

extern char **environ;

/* The running child (0: none), for kvp_proc_kill_all. */
static volatile pid_t child;

void kvp_proc_kill_all(void) {
  pid_t p = child;
  if (p > 0 && kill(p, SIGKILL) == 0) waitpid(p, NULL, 0); /* reaped: gone before we die */
}

/* An unlinked temporary file holding in[0..n), positioned at 0; -1. */
static int temp_with(const char *in, size_t n) {
  FILE *f = tmpfile();
  if (f == NULL) return -1;
  int fd = dup(fileno(f));
  fclose(f);
  if (fd < 0) return -1;
  while (n > 0) {
    ssize_t k = write(fd, in, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      int e = k < 0 ? errno : ENOSPC;
      close(fd);
      errno = e;
      return -1;
    }
    in += k;
    n -= (size_t)k;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

int kvp_proc_run(char *const argv[], const char *in, size_t inlen, volatile sig_atomic_t *stop,
                 char *err, size_t errlen) {
  err[0] = '\0';
  int fin = temp_with(in, inlen), ferr = temp_with("", 0), fnull = open("/dev/null", O_WRONLY);
  if (fin < 0 || ferr < 0 || fnull < 0) {
    snprintf(err, errlen, "cannot make the temporary files to run %s: %s", argv[0],
             strerror(errno));
    if (fin >= 0) close(fin);
    if (ferr >= 0) close(ferr);
    if (fnull >= 0) close(fnull);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fin, 0);
  posix_spawn_file_actions_adddup2(&fa, fnull, 1);
  posix_spawn_file_actions_adddup2(&fa, ferr, 2);
  /* the child starts with the default signal handlers, nothing blocked */
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGINT);
  sigaddset(&dfl, SIGTERM);
  sigaddset(&dfl, SIGHUP);
  sigaddset(&dfl, SIGALRM);
  sigaddset(&dfl, SIGPIPE);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &dfl);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  /* block the catchable signals until child is recorded, so a handler
   * never misses it */
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
  if (rc == 0) child = pid;
  sigprocmask(SIG_SETMASK, &old, NULL);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(fin);
  close(fnull);
  if (rc != 0) {
    close(ferr);
    if (rc == ENOENT || rc == EACCES) return 127;
    snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
    return -1;
  }
  int status = 0, stopped = 0;
  for (;;) {
    if (stop != NULL && *stop && !stopped) {
      kill(pid, SIGKILL);
      stopped = 1;
    }
    pid_t w = waitpid(pid, &status, 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      snprintf(err, errlen, "cannot wait for %s: %s", argv[0], strerror(errno));
      child = 0;
      close(ferr);
      return -1;
    }
  }
  child = 0;
  if (stopped) {
    close(ferr);
    snprintf(err, errlen, "stopped");
    return -1;
  }
  ssize_t n = 0;
  if (errlen > 1 && lseek(ferr, 0, SEEK_SET) == 0) {
    n = read(ferr, err, errlen - 1);
    if (n < 0) n = 0;
  }
  err[n] = '\0';
  close(ferr);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}
