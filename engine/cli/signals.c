/*
 * signals.c: an interrupted run leaves no temporary behind.
 * Program layer. On SIGINT, SIGTERM or SIGHUP the handler removes the
 * temporary of every report still being written (afile.c keeps the list)
 * and ends the program it runs, if any (gnuplot, proc.c),
 * so the previous file stays as it was, prints what was interrupted and
 * which reports were dropped, then dies of the same signal (the shell sees
 * 128 + the signal number, as for any program killed by it). While a
 * batch's script runs in its own process the signal is passed to it, which
 * does the above, and kvplan then dies of the signal too.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afile.h"
#include "proc.h"
#include "cli.h"

static const char *volatile running;
static volatile pid_t child;

void kvp_cli_running(const char *what) { running = what; }
void kvp_cli_child(pid_t pid) { child = pid; }

/* write(2) of a C string: async-signal-safe, errors ignored */
static void say(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t k = write(STDERR_FILENO, s, n);
    if (k <= 0) return;
    s += k;
    n -= (size_t)k;
  }
}

static void dropped(const char *target, void *ud) {
  (void)ud;
  say("kvplan: '");
  say(target);
  say("' not written (left as it was)\n");
}

static void on_signal(int sig) {
  pid_t c = child;
  if (c > 0) { /* a batch's script: it tells, we follow */
    kill(c, sig);
    waitpid(c, NULL, 0);
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
  say("\nkvplan: interrupted by ");
  say(name);
  if (running != NULL) {
    say(" while running ");
    say(running);
  }
  say("\n");
  kvp_proc_kill_all(); /* gnuplot drawing a chart */
  kvp_afile_abandon_all(dropped, NULL);
  signal(sig, SIG_DFL);
  raise(sig);
}

void kvp_cli_signals(void) {
  /* past a file size limit (ulimit -f) write(2) then fails with EFBIG, a
   * clean error, instead of the signal killing kvplan mid-report */
  signal(SIGXFSZ, SIG_IGN);
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigfillset(&sa.sa_mask); /* one handler at a time */
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old;
    /* a signal ignored when we started (nohup) stays ignored */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sigs[i], &sa, NULL);
  }
}
