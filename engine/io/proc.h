/*
 * proc.h: another program run without a shell (gnuplot draws the charts).
 * Output layer: no Lua; never prints or exits.
 *
 * kvp_proc_run starts argv[0] (searched in PATH) by posix_spawnp, never
 * through /bin/sh, so no word of argv and no byte of its input is a shell
 * command. Its standard input is the bytes given (an unlinked temporary
 * file, so a large input cannot block on a pipe), its standard output
 * /dev/null, its standard error another unlinked temporary read back into
 * err; nothing is left on disk whatever happens. The running child is kept
 * where a signal handler finds it (kvp_proc_kill_all): an interrupted run
 * ends it too.
 */
#ifndef KVP_PROC_H
#define KVP_PROC_H

#include <signal.h>
#include <stddef.h>

/* Run argv (NULL-terminated) with in[0..inlen) as standard input and wait.
 * Returns its exit status (0..255), 127 when the program cannot be started
 * (not installed), 128 + N when signal N ended it, -1 when running it
 * failed (reason in err) or *stop became nonzero while it ran (it is then
 * killed; err says "stopped"). err (errlen > 0) holds the start of what it
 * wrote to standard error otherwise. */
int kvp_proc_run(char *const argv[], const char *in, size_t inlen, volatile sig_atomic_t *stop,
                 char *err, size_t errlen);

/* For a signal handler: SIGKILL the running child, if any, and reap it.
 * Async-signal-safe. */
void kvp_proc_kill_all(void);

#endif
