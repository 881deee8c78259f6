/*
 * cli.h: what the command line's files offer each other (engine/cli/).
 * The program layer: signals, limits and the sandbox of scripts.
 */
#ifndef KVP_CLI_H
#define KVP_CLI_H

#include <stddef.h>

/* SIGINT, SIGTERM, SIGHUP: remove every open report temporary (afile.h),
 * say what was interrupted, and die of the signal (signals.c). */
void kvp_cli_signals(void);
/* What is being run, for the message of an interrupted run (a static or
 * long-lived string; NULL: nothing named). */
void kvp_cli_running(const char *what);

/* Print "kvplan: MSG" on stderr: every byte of msg (NULs too), control
 * characters escaped, long messages cut (message.c). */
void kvp_cli_print_error(const char *msg, size_t len);

#endif
