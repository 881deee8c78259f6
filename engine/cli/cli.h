/*
 * cli.h: what the command line's files offer each other (engine/cli/).
 * The program layer: signals, limits and the sandbox of scripts.
 */
#ifndef KVP_CLI_H
#define KVP_CLI_H

#include <stddef.h>
#include <sys/types.h>

#include <lua.h>

/* SIGINT, SIGTERM, SIGHUP: remove every open report temporary (afile.h),
 * say what was interrupted, and die of the signal (signals.c). */
void kvp_cli_signals(void);
/* What is being run, for the message of an interrupted run (a static or
 * long-lived string; NULL: nothing named). */
void kvp_cli_running(const char *what);
/* The process running a script of a batch (0: none): a signal is passed
 * on to it, which says what was interrupted, and kvplan dies after it. */
void kvp_cli_child(pid_t pid);

/* Print "kvplan: MSG" on stderr: every byte of msg (NULs too), control
 * characters escaped, long messages cut (message.c). */
void kvp_cli_print_error(const char *msg, size_t len);
/* The name of names[0..n) nearest to word (at most a third of its letters
 * changed, inserted or deleted, and at least one kept), or NULL (message.c). */
const char *kvp_cli_nearest(const char *word, const char *const *names, size_t n);

/* ---- limits and the sandbox (limits.c) ---- */
/* A Lua state whose allocator counts against --max-memory (with the C
 * allocations made for it) and fails the KVPLAN_FAULT_ALLOC-th allocation. */
lua_State *kvp_cli_newstate(void);
/* After luaL_openlibs and the stdlib: text chunks only, the --timeout hook,
 * the --sandbox restrictions. */
void kvp_cli_guard(lua_State *L);
/* Before lua_close: from here the deadline ends the run at once (Lua runs
 * finalisers without hooks); kvp_cli_disarm after it stops the timer. */
void kvp_cli_closing(void);
void kvp_cli_disarm(void);
/* 1 when the memory cap refused an allocation, 2 when the fault hook did. */
int kvp_cli_memory_hit(void);
long long kvp_cli_max_memory(void);
long long kvp_cli_max_rows(void);
const char *kvp_cli_chunk_mode(void);
int kvp_cli_sandboxed(void);
int kvp_cli_set_max_memory(const char *v);
int kvp_cli_set_timeout(const char *v);
int kvp_cli_set_max_rows(const char *v);
void kvp_cli_set_sandbox(void);
void kvp_cli_set_allow_binary(void);
/* Sandbox roots: a path from the command line, the directory of a path,
 * the output (the directory of -o FILE, or -d OUTDIR). */
void kvp_cli_sandbox_reset(void);
/* The regular files a run's command line names (script, words, key=value
 * values), checked by every report writer (KVL_INPUT_CHECK); n < 0 clears
 * them. kvp_cli_input_named: the word naming the same file as path (by
 * device and inode; *script set when it is the script), or NULL. */
void kvp_cli_inputs(const char *script, int n, char *const *words);
const char *kvp_cli_input_named(const char *path, int *script);
void kvp_cli_allow_read(const char *path);
void kvp_cli_allow_read_dir_of(const char *path);
void kvp_cli_allow_write(const char *output, const char *outdir);

#endif
