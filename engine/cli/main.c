/*
 * main.c: the kvplan command line.
 * Sets up the Lua state, the embedded stdlib, the script's arguments and the
 * error report; computes nothing itself.
 *
 *   kvplan [options] [SCRIPT.lua [key=value ...]] [-- words for the script]
 *   kvplan COMMAND [options] [key=value ...]
 *
 * kvplan's own options are recognized anywhere on the line, before or after
 * the script, up to a `--`; everything after `--` goes to the script. Options
 * and commands are tables (`opts`, `commands` below): add a row to add one.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lualib.h>

#include "cli.h"
#include "csvw.h"
#include "afile.h"
#include "fmtw.h"
#include "htmlw.h"
#include "kvplan_lua.h"
#include "manifest.h"

#ifndef KVPLAN_SCRIPTS_DIR
#define KVPLAN_SCRIPTS_DIR "/usr/local/share/kvplan/scripts"
#endif


/* Options of one run. */
typedef struct options {
  const char *code, *output, *outdir, *manifest, *format, *config, *columns;
  int quiet;
  int commands; /* the run gets kvplan.cli.commands (kvplan completion) */
  long long shard_k, shard_n;
} options;

static int traceback = 0;

/* ---- the option table ------------------------------------------------------ */

/* Where an option applies (a command's `takes` mask). */
enum { F_RUN = 1, F_BATCH = 2, F_MERGE = 4, F_ALL = 7, F_VALIDATE = 8 };

typedef struct optdef {
  const char *name;  /* long name, without the dashes */
  char letter;       /* short name, 0 if none */
  const char *arg;   /* the argument's name in --help; NULL for a flag */
  int where;         /* F_* mask of the commands it applies to */
  /* Take the option (value NULL for a flag); 0, or -1 after printing why. */
  int (*set)(options *o, const char *value);
  const char *help;
} optdef;

static int set_code(options *o, const char *v) { o->code = v; return 0; }
/* an option whose value names a file or directory: '' names none (-o ''
 * reached the writer, which tried to rename its temporary to '') */
static int named(const char *opt, const char *v, const char *what) {
  if (*v != '\0') return 0;
  fprintf(stderr, "kvplan: option '%s' needs %s, got '' (try 'kvplan --help')\n", opt, what);
  return -1;
}
static int set_output(options *o, const char *v) { o->output = v; return named("-o", v, "a file name"); }
static int set_config(options *o, const char *v) { o->config = v; return named("--config", v, "a directory"); }
static int set_outdir(options *o, const char *v) { o->outdir = v; return named("-d", v, "a directory"); }
static int set_manifest(options *o, const char *v) { o->manifest = v; return named("-m", v, "a file name"); }
static int set_quiet(options *o, const char *v) { (void)v; o->quiet = 1; return 0; }

/* The name of a comma-separated list at *p, blanks around it dropped: its
 * start and length n; *p moves past the comma, to NULL after the last. */
static const char *list_item(const char **p, size_t *n) {
  const char *s = *p, *e = strchr(s, ',');
  size_t len = e ? (size_t)(e - s) : strlen(s);
  while (len > 0 && *s == ' ') s++, len--;
  while (len > 0 && s[len - 1] == ' ') len--;
  *p = e ? e + 1 : NULL;
  *n = len;
  return s;
}

/* --columns a,b,c: names (letters, digits, '_', '.', '-', '%'); which a
 * report has is the stdlib's to say (kvplan.report.chosen). */
static int set_columns(options *o, const char *v) {
  for (const char *at = v; at != NULL;) {
    size_t n;
    const char *p = list_item(&at, &n);
    if (n == 0) {
      fprintf(stderr, "kvplan: bad --columns '%s' (expected column names separated by commas, "
                      "e.g. --columns gpu,tp,max_concurrency)\n", v);
      return -1;
    }
    for (size_t i = 0; i < n; i++)
      if (!isalnum((unsigned char)p[i]) && strchr("_.-%", p[i]) == NULL) {
        fprintf(stderr, "kvplan: bad --columns '%s': '%.*s' is no column name (letters, digits, "
                        "'_', '.', '-')\n", v, (int)(n < 64 ? n : 64), p);
        return -1;
      }
  }
  o->columns = v;
  return 0;
}
/* limits and the sandbox: limits.c keeps them */
static int set_max_memory(options *o, const char *v) { (void)o; return kvp_cli_set_max_memory(v); }
static int set_timeout(options *o, const char *v) { (void)o; return kvp_cli_set_timeout(v); }
static int set_max_rows(options *o, const char *v) { (void)o; return kvp_cli_set_max_rows(v); }
static int set_sandbox(options *o, const char *v) { (void)o; (void)v; kvp_cli_set_sandbox(); return 0; }
static int set_allow_binary(options *o, const char *v) {
  (void)o;
  (void)v;
  kvp_cli_set_allow_binary();
  return 0;
}
static int set_traceback(options *o, const char *v) { (void)o; (void)v; traceback = 1; return 0; }
static int wide = 0;
static int set_wide(options *o, const char *v) { (void)o; (void)v; wide = 1; return 0; }
static int set_escape_formulas(options *o, const char *v) {
  (void)o;
  (void)v;
  kvp_csv_escape_formulas(1);
  return 0;
}

/* The columns of the terminal on standard output: $COLUMNS when it is a
 * number from 20 to 10000 (what the shell says, and what tests set), else
 * the terminal's own size, else 80. */
static size_t terminal_columns(void) {
  const char *e = getenv("COLUMNS");
  if (e != NULL) {
    char *end;
    long v = strtol(e, &end, 10);
    if (end != e && *end == '\0' && v >= 20 && v <= 10000) return (size_t)v;
  }
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

/* --format's names (kvplan completion offers them, auto aside) */
static const char *const format_names[] = {"csv", "table", "vertical", "json", "markdown", "html", "auto", NULL};

static int set_format(options *o, const char *v) {
  const char *const *names = format_names;
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp(v, names[i]) == 0) {
      o->format = names[i];
      kvp_csv_default_format(kvp_fmt_named(names[i]));
      return 0;
    }
  fprintf(stderr, "kvplan: bad --format '%s' (expected csv, table, vertical, json, markdown or html)\n", v);
  return -1;
}

/* A positive decimal integer below 2^63: digits only, no sign, no clamping
 * (sscanf's %lld turns 99999999999999999999 into 2^63 - 1 without a word). */
static int parse_count(const char *s, const char *end, long long *v) {
  long long x = 0;
  if (s == end) return -1;
  for (; s < end; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (x > (LLONG_MAX - (*s - '0')) / 10) return -2;
    x = x * 10 + (*s - '0');
  }
  *v = x;
  return 0;
}

/* --shard K/N with 1 <= K <= N < 2^63; the message names what is wrong. */
static int set_shard(options *o, const char *v) {
  const char *slash = strchr(v, '/');
  int rk = slash ? parse_count(v, slash, &o->shard_k) : -1;
  int rn = slash ? parse_count(slash + 1, slash + strlen(slash), &o->shard_n) : -1;
  if (rk == -2 || rn == -2) {
    fprintf(stderr, "kvplan: bad --shard '%s' (K and N must be below 2^63)\n", v);
    return -1;
  }
  if (rk < 0 || rn < 0 || o->shard_n < 1 || o->shard_k < 1 || o->shard_k > o->shard_n) {
    fprintf(stderr, "kvplan: bad --shard '%s' (expected K/N with 1 <= K <= N)\n", v);
    return -1;
  }
  return 0;
}

static const optdef opts[] = {
  {"eval", 'e', "CODE", F_RUN, set_code, "run CODE instead of a script file"},
  {"output", 'o', "FILE", F_RUN | F_MERGE, set_output,
   "write reports to FILE (atomically) instead of stdout"},
  {"outdir", 'd', "OUTDIR", F_BATCH, set_outdir, "batch: write each script's report to OUTDIR/NAME.csv"},
  {"manifest", 'm', "FILE", F_BATCH, set_manifest,
   "batch: run the lines 'SCRIPT key=value ...' of FILE"},
  {"format", 'f', "FMT", F_RUN | F_BATCH, set_format,
   "csv, table, vertical (a record a block of\n'column: value' lines), json (JSON Lines), markdown\n"
   "or html (a page: table, charts, inputs); default: a\ntable on a terminal, else by the file name (.jsonl,\n"
   ".md, .txt, .html), else csv"},
  {"shard", 0, "K/N", F_RUN | F_BATCH, set_shard, "write only the K-th of N equal slices of every sweep"},
  {"config", 0, "DIR", F_VALIDATE, set_config,
   "validate: the model from a Hugging Face directory (as config=DIR)"},
  {"quiet", 'q', NULL, F_ALL, set_quiet, "no progress line on stderr"},
  {"columns", 0, "A,B,...", F_RUN | F_BATCH, set_columns,
   "reports: only these columns, in this order (an unknown\nname is an error listing the report's)"},
  {"wide", 0, NULL, F_RUN | F_BATCH, set_wide,
   "tables on a terminal at full width (default: fitted to it,\nleft-out columns named)"},
  {"traceback", 0, NULL, F_ALL, set_traceback, "add a Lua traceback to error messages"},
  {"max-memory", 0, "SIZE", F_ALL, set_max_memory,
   "stop a script past SIZE bytes of memory (512M, 2G)"},
  {"timeout", 0, "SECONDS", F_ALL, set_timeout, "stop a script after SECONDS of wall time"},
  {"max-rows", 0, "N", F_RUN | F_BATCH, set_max_rows,
   "refuse a sweep of more than N rows (default 1e9;\n0: no limit)"},
  {"sandbox", 0, NULL, F_RUN | F_BATCH, set_sandbox,
   "for scripts you did not write: no processes, no\nenvironment, files read only beside the script\n"
   "and from the command line below the working\ndirectory, written only to the output"},
  {"allow-binary", 0, NULL, F_RUN | F_BATCH, set_allow_binary,
   "accept precompiled Lua chunks (unsafe)"},
  {"escape-formulas", 0, NULL, F_RUN | F_BATCH, set_escape_formulas,
   "CSV: a text cell that begins with = + - @, a tab or\na carriage return gets a leading ' (a spreadsheet\n"
   "shows it, does not run it); numbers are kept"},
};
#define NOPTS (sizeof opts / sizeof opts[0])

/* ---- running a script ----------------------------------------------------------- */

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  if (traceback) luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Call the function below nargs arguments in protected mode. */
static int docall(lua_State *L, int nargs) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, 0, base);
  lua_remove(L, base);
  return status;
}

/* In protected mode (the field names are strings to intern): is the
 * message at 1 the script's usage error? */
static int usage_check(lua_State *L) {
  const char *msg = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
  int usage = 0;
  if (msg != NULL && lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE &&
      lua_getfield(L, -1, "kvplan.cli") == LUA_TTABLE &&
      lua_getfield(L, -1, "usage_error") == LUA_TSTRING) {
    size_t n;
    const char *u = lua_tolstring(L, -1, &n);
    usage = strncmp(msg, u, n) == 0;
  }
  lua_pushboolean(L, usage);
  return 1;
}

/* Is the error on top of the stack the script's usage error (a bad
 * command-line argument: kvplan.options sets kvplan.cli's usage_error to
 * the message it raises)? 0 when out of memory to tell. */
static int usage_error(lua_State *L) {
  lua_pushcfunction(L, usage_check);
  lua_pushvalue(L, -2);
  int usage = lua_pcall(L, 1, 1, 0) == LUA_OK && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return usage;
}

/* In protected mode: did the script ask to keep what it wrote though it
 * fails (kvplan.cli.keep_outputs: validate, whose status 1 says that logs
 * were not read whole after a whole report)? */
static int keep_check(lua_State *L) {
  int keep = lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE &&
             lua_getfield(L, -1, "kvplan.cli") == LUA_TTABLE &&
             lua_getfield(L, -1, "keep_outputs") == LUA_TBOOLEAN && lua_toboolean(L, -1);
  lua_pushboolean(L, keep);
  return 1;
}

static int keep_outputs(lua_State *L) {
  lua_pushcfunction(L, keep_check);
  int keep = lua_pcall(L, 0, 1, 0) == LUA_OK && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return keep;
}

static void removed_one(const char *path, int err, void *ud) {
  (void)ud;
  if (err == 0)
    fprintf(stderr, "kvplan: removed '%s': the run failed after writing it (a failed run keeps "
            "none of the files it wrote)\n", path);
  else
    fprintf(stderr, "kvplan: cannot remove '%s', which the failed run wrote: %s\n", path,
            strerror(err));
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    if (kvp_cli_memory_hit() == 1) { /* the cap, not the machine */
      fprintf(stderr, "kvplan: memory limit exceeded (--max-memory %lld bytes)\n",
              kvp_cli_max_memory());
    } else if (kvl_stop && kvl_stop_message != NULL && (msg == NULL || strstr(msg, kvl_stop_message) == NULL)) {
      /* the deadline's signal cut a call short (opening a FIFO no one
       * writes: "Interrupted system call"): the limit is the reason */
      char both[4096];
      int k = snprintf(both, sizeof both, "%s: %s", kvl_stop_message, msg ? msg : "(no message)");
      kvp_cli_print_error(both, k < 0 ? 0 : (size_t)k < sizeof both ? (size_t)k : sizeof both - 1);
    } else {
      kvp_cli_print_error(msg ? msg : "(no message)", msg ? len : 12);
    }
    lua_pop(L, 1);
  }
  return status;
}

/* The script's argument table: key=value pairs by key, other words in order. */
static void push_args(lua_State *L, int n, char **words) {
  lua_newtable(L);
  lua_Integer k = 0;
  for (int i = 0; i < n; i++) {
    const char *eq = strchr(words[i], '=');
    if (eq != NULL && eq != words[i]) {
      lua_pushlstring(L, words[i], (size_t)(eq - words[i]));
      lua_pushstring(L, eq + 1);
      lua_settable(L, -3);
    } else {
      lua_pushstring(L, words[i]);
      lua_rawseti(L, -2, ++k);
    }
  }
}

/* A key given twice among words[0..n): the script's argument table keeps one
 * value a key, so the first would be dropped without a word. Says which (in
 * `where`, a manifest's file:line, when given) and returns 2, else 0. */
static int repeated_key(int n, char **words, const char *where) {
  for (int i = 0; i < n; i++) {
    const char *eq = strchr(words[i], '=');
    if (eq == NULL || eq == words[i]) continue;
    size_t len = (size_t)(eq - words[i]);
    for (int j = 0; j < i; j++)
      if (strncmp(words[j], words[i], len) == 0 && words[j][len] == '=') {
        fprintf(stderr, "kvplan: %s%sargument '%.*s' is given twice ('%.80s', then '%.80s'): give it once\n",
                where ? where : "", where ? ": " : "", (int)(len < 80 ? len : 80), words[i],
                words[j] + len + 1, eq + 1);
        return 2;
      }
  }
  return 0;
}

/* Reports written by the scripts of a batch so far: path and script, so a
 * later script cannot overwrite an earlier one's report (set_cli passes them
 * as cli.taken, note_written adds each script's). */
typedef struct written {
  char **path;
  const char **script;
  size_t n, cap;
} written;
static written taken;

/* realloc that ends the program when memory is out (the command line's own
 * small tables; scripts' memory errors are Lua errors) */
static void no_memory(void) {
  if (kvp_cli_memory_hit() == 1)
    fprintf(stderr, "kvplan: memory limit exceeded (--max-memory %lld bytes)\n",
            kvp_cli_max_memory());
  else
    fprintf(stderr, "kvplan: out of memory\n");
  exit(1);
}

static void *xrealloc(void *p, size_t n, size_t size) {
  void *q = n != 0 && size > SIZE_MAX / n ? NULL : realloc(p, n * size);
  if (q == NULL) no_memory();
  return q;
}

/* Add the report paths the script claimed (kvplan.report's `claimed` list)
 * to taken, as written by script. */
static void note_written(lua_State *L, const char *script) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "kvplan.report") == LUA_TTABLE &&
      lua_getfield(L, -1, "claimed") == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
      if (lua_geti(L, -1, i) == LUA_TSTRING) {
        if (taken.n == taken.cap) {
          taken.cap = taken.cap ? 2 * taken.cap : 16;
          taken.path = xrealloc(taken.path, taken.cap, sizeof *taken.path);
          taken.script = xrealloc(taken.script, taken.cap, sizeof *taken.script);
        }
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        taken.path[taken.n] = memcpy(xrealloc(NULL, len + 1, 1), s, len + 1);
        taken.script[taken.n++] = script;
      }
      lua_pop(L, 1);
    }
  }
  lua_settop(L, 0);
}

/* The command run (fit, models, ...; NULL for a script), for the inputs an HTML report shows. */
static const char *command_name;

/* kvplan completion: the commands and options, as the Lua table
 * kvplan.cli.commands (below the command table). */
static void push_commands(lua_State *L);

/* package.loaded["kvplan.cli"] = {output = FILE, outdir = DIR, name = NAME,
 * columns = {--columns' names}, commands = {...} (push_commands, for
 * kvplan completion),
 * script = PATH, args = ARGS, words = {the words in order}, command = NAME,
 * quiet = BOOL, shard = {K, N}, format = FMT} */
static void set_cli(lua_State *L, const options *o, const char *output, const char *name,
                    const char *script, int n, char **words) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_createtable(L, 0, 10);
  lua_createtable(L, n, 0);
  for (int k = 0; k < n; k++) {
    lua_pushstring(L, words[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, -2, "words");
  if (command_name != NULL) {
    lua_pushstring(L, command_name);
    lua_setfield(L, -2, "command");
  }
  if (output != NULL) {
    lua_pushstring(L, output);
    lua_setfield(L, -2, "output");
  }
  if (o->outdir != NULL) {
    lua_pushstring(L, o->outdir);
    lua_setfield(L, -2, "outdir");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
    /* taken[path] = the script that wrote it earlier in the batch */
    lua_createtable(L, 0, (int)(taken.n < INT_MAX ? taken.n : 0));
    for (size_t i = 0; i < taken.n; i++) {
      lua_pushstring(L, taken.script[i]);
      lua_setfield(L, -2, taken.path[i]);
    }
    lua_setfield(L, -2, "taken");
  }
  if (o->format != NULL) {
    lua_pushstring(L, o->format);
    lua_setfield(L, -2, "format");
  }
  lua_pushboolean(L, o->quiet);
  lua_setfield(L, -2, "quiet");
  if (o->columns != NULL) { /* columns = {names}, blanks around them dropped */
    lua_newtable(L);
    lua_Integer k = 0;
    for (const char *at = o->columns; at != NULL;) {
      size_t len;
      const char *p = list_item(&at, &len);
      lua_pushlstring(L, p, len);
      lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "columns");
  }
  lua_pushinteger(L, kvp_cli_max_rows());
  lua_setfield(L, -2, "max_rows");
  if (o->shard_n > 0) {
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, o->shard_k);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, o->shard_n);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, "shard");
  }
  lua_pushstring(L, script);
  lua_setfield(L, -2, "script");
  if (o->commands) {
    push_commands(L);
    lua_setfield(L, -2, "commands");
  }
  lua_pushvalue(L, -3); /* the args table */
  lua_setfield(L, -2, "args");
  lua_setfield(L, -2, "kvplan.cli");
  lua_pop(L, 1);
}

/* After a script ran: commit the reports it left open. */
static int finish_reports(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "kvplan.report") != LUA_TTABLE) return 0; /* no report made */
  lua_getfield(L, -1, "finish");
  lua_call(L, 0, 0);
  return 0;
}

/* User modules beside the script load through package.path: prepend
 * "<dir>/?.lua;" for the script's directory. */
static void add_script_dir(lua_State *L, const char *script) {
  const char *slash = strrchr(script, '/');
  lua_getglobal(L, "package");
  if (slash != NULL) lua_pushlstring(L, script, (size_t)(slash - script));
  else lua_pushliteral(L, ".");
  lua_pushliteral(L, "/?.lua;");
  lua_getfield(L, -3, "path");
  lua_concat(L, 3);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

/* What setup needs to prepare a run. */
typedef struct run_args {
  const options *o;
  const char *script, *code, *label, *output, *name;
  int n;
  char **words;
} run_args;

/* In protected mode (an allocation may fail anywhere): the libraries, the
 * stdlib, the arguments, the guards; returns the chunk and its argument. */
static int setup(lua_State *L) {
  const run_args *a = lua_touserdata(L, 1);
  lua_pop(L, 1);
  luaL_openlibs(L);
  kvp_preload(L);
  if (a->script != NULL && a->code == NULL) add_script_dir(L, a->script);
  push_args(L, a->n, a->words);
  set_cli(L, a->o, a->output, a->name, a->label, a->n, a->words);
  /* arg, as lua.c sets it: arg[0] the script, arg[1..] its words */
  lua_createtable(L, a->n, 1);
  for (int k = 0; k < a->n; k++) {
    lua_pushstring(L, a->words[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_pushstring(L, a->label);
  lua_rawseti(L, -2, 0);
  lua_setglobal(L, "arg");
  kvp_cli_guard(L);
  int status;
  if (a->code != NULL) {
    lua_pushfstring(L, "=%s", a->label);
    status = luaL_loadbufferx(L, a->code, strlen(a->code), lua_tostring(L, -1), kvp_cli_chunk_mode());
    lua_remove(L, -2);
  } else if (a->script != NULL && strcmp(a->script, "-") == 0) {
    /* kvplan -: the script piped in, named stdin in its messages */
    int c = getc(stdin);
    if (c == EOF)
      return luaL_error(L, "standard input ('-') is empty: 'kvplan -' runs the Lua script piped in");
    ungetc(c, stdin);
    status = luaL_loadfilex(L, NULL, kvp_cli_chunk_mode());
    if (status != LUA_OK && strstr(lua_tostring(L, -1), "attempt to load a binary chunk"))
      return luaL_error(L, "standard input ('-') is a precompiled (binary) chunk: refused, as Lua does "
                        "not verify bytecode (--allow-binary accepts it)");
  } else if (a->script != NULL) {
    status = luaL_loadfilex(L, a->script, kvp_cli_chunk_mode());
    if (status != LUA_OK && strstr(lua_tostring(L, -1), "attempt to load a binary chunk"))
      return luaL_error(L, "'%s' is a precompiled (binary) chunk: refused, as Lua does not "
                        "verify bytecode (--allow-binary accepts it)", a->script);
  } else {
    static const char def[] = "return require('kvplan.default')(...)";
    status = luaL_loadbuffer(L, def, sizeof def - 1, "=(default scenario)");
  }
  if (status != LUA_OK) return lua_error(L);
  lua_insert(L, -2); /* chunk, args */
  return 2;
}

/* The sandbox's roots for one run: the script's directory, every word that
 * names an existing file or directory (key=value values too), the output. */
static void sandbox_roots(const char *script, int n, char **words, const char *output) {
  if (!kvp_cli_sandboxed()) return;
  kvp_cli_sandbox_reset();
  if (script != NULL && strcmp(script, "-") != 0) kvp_cli_allow_read_dir_of(script);
  for (int k = 0; k < n; k++) {
    const char *eq = strchr(words[k], '=');
    kvp_cli_allow_read(eq ? eq + 1 : words[k]);
  }
  kvp_cli_allow_write(output, NULL);
}

/* kvplan merge's code: its output may be one of its parts (the parts are
 * read into a temporary that then replaces the file, so nothing is lost) */
static const char merge_code[] = "return require('kvplan.merge').run(...)";

/* -o FILE naming a file the run reads (the script itself, or a word or
 * key=value value naming a file: a startup log, a trace, prices, a
 * profile) replaced that input with the report: `kvplan s.lua -o s.lua`
 * left the report where the script was, `validate v.log -o v.log` the rows
 * where the log was. Refused before the run (the inputs by device and
 * inode, so a link or another spelling of the path is the same file; a
 * device or a FIFO is written through, never replaced, and passes); a
 * report the script names itself (timeline=, kv.report{path}) is refused
 * by the writers (KVL_INPUT_CHECK). 0, or 2 after saying which input. */
static int output_is_input(const char *output, int batch) {
  int script = 0;
  const char *word = kvp_cli_input_named(output, &script);
  if (word == NULL) return 0;
  size_t len = strlen(output) + strlen(word) + 160;
  char *msg = malloc(len);
  if (msg == NULL) return 2;
  int m = snprintf(msg, len, "%s '%s' is the %s '%s' of this run: the report would replace it (write "
                   "the report to another file)", batch ? "batch: the report" : "-o", output,
                   script ? "script" : "input", word);
  kvp_cli_print_error(msg, m > 0 && (size_t)m < len ? (size_t)m : strlen(msg));
  free(msg);
  return 2;
}

/* Run one script (NULL: the default scenario; code: that code, labelled
 * `label`) in a fresh state with words[0..n) as its arguments. 0, 1, or 2
 * when it failed on a bad command-line argument (usage_error). */
static int run_script(const options *o, const char *script, const char *code, const char *label,
                      int n, char **words, const char *output, const char *name) {
  kvp_cli_inputs(script, code == merge_code ? -1 : n, words);
  if (output_is_input(output, o->outdir != NULL) != 0) return 2;
  kvp_afile_forget(); /* the files this run commits, removed if it fails */
  lua_State *L = kvp_cli_newstate();
  if (L == NULL) {
    if (kvp_cli_memory_hit())
      fprintf(stderr, "kvplan: memory limit exceeded (--max-memory %lld bytes) creating the Lua "
              "state: kvplan needs more to start\n", kvp_cli_max_memory());
    else
      fprintf(stderr, "kvplan: cannot create the Lua state: out of memory\n");
    return 1;
  }
  if (label == NULL) label = script != NULL ? script : "(default scenario)";
  kvp_cli_running(label);
  sandbox_roots(script, n, words, output);
  if (kvp_cli_sandboxed() && o->outdir != NULL) kvp_cli_allow_write(NULL, o->outdir);
  run_args a = {o, script, code, label, output, name, n, words};
  lua_pushcfunction(L, setup);
  lua_pushlightuserdata(L, &a);
  int status = lua_pcall(L, 1, 2, 0);
  if (status == LUA_OK) status = docall(L, 1);
  if (status == LUA_OK) {
    lua_pushcfunction(L, finish_reports);
    status = docall(L, 0);
  }
  int usage = status != LUA_OK && !kvl_stop && usage_error(L); /* past the deadline: the limit, status 1 */
  int keep = status == LUA_OK || keep_outputs(L);
  status = report(L, status);
  /* a failed run's outputs are not to be trusted: the files it committed
   * (reports closed before the error, timelines, charts, profiles) go */
  if (!keep) kvp_afile_remove_committed(removed_one, NULL);
  if (o->outdir != NULL && script != NULL) note_written(L, script);
  kvp_cli_closing(); /* the time limit holds through the finalisers */
  lua_close(L); /* unfinished reports are discarded by their __gc */
  kvp_cli_disarm();
  return status == LUA_OK ? 0 : usage ? 2 : 1;
}

/* run_script in a process of its own (a script of a batch): a limit that
 * ends it, a crash or a finaliser that never returns ends that script
 * alone, and the batch goes on. The reports it claimed come back through a
 * pipe (NUL-ended paths) into taken, for the scripts after it. 0 or 1. */
static int run_apart(const options *o, const char *script, int n, char **words,
                     const char *output, const char *name) {
  int fd[2];
  fflush(stdout);
  fflush(stderr);
  if (pipe(fd) != 0) return run_script(o, script, NULL, NULL, n, words, output, name);
  size_t had = taken.n;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return run_script(o, script, NULL, NULL, n, words, output, name);
  }
  if (pid == 0) {
    close(fd[0]);
    int rc = run_script(o, script, NULL, NULL, n, words, output, name);
    for (size_t i = had; i < taken.n; i++) {
      const char *p = taken.path[i];
      size_t len = strlen(p) + 1;
      while (len > 0) {
        ssize_t k = write(fd[1], p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        p += k;
        len -= (size_t)k;
      }
    }
    close(fd[1]);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "kvplan: cannot write standard output\n");
      rc = 1;
    }
    fflush(stderr);
    _exit(rc);
  }
  close(fd[1]);
  kvp_cli_child(pid);
  /* read until the child closes its end (it may claim more than a pipe
   * holds), then wait */
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) buf = xrealloc(buf, cap = cap ? 2 * cap : 4096, 1);
    ssize_t k = read(fd[0], buf + len, cap - len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    len += (size_t)k;
  }
  close(fd[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  kvp_cli_child(0);
  for (size_t at = 0; at < len;) {
    size_t l = strnlen(buf + at, len - at);
    if (at + l == len) break; /* cut short: not a whole path */
    if (taken.n == taken.cap) {
      taken.cap = taken.cap ? 2 * taken.cap : 16;
      taken.path = xrealloc(taken.path, taken.cap, sizeof *taken.path);
      taken.script = xrealloc(taken.script, taken.cap, sizeof *taken.script);
    }
    taken.path[taken.n] = memcpy(xrealloc(NULL, l + 1, 1), buf + at, l + 1);
    taken.script[taken.n++] = script;
    at += l + 1;
  }
  free(buf);
  if (WIFEXITED(st)) return WEXITSTATUS(st) == 0 ? 0 : 1;
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) { /* interrupted: the batch too */
      signal(sig, SIG_DFL);
      raise(sig);
    }
    fprintf(stderr, "kvplan: %s: ended by signal %d\n", script, sig);
  }
  return 1;
}

/* ---- the command line ------------------------------------------------------------- */

/* The words of a command line that are not kvplan's options. */
typedef struct words {
  int n;
  char **w;         /* room for argc words: no fixed limit */
  int after_dashes; /* index of the first word given after `--`, or -1 */
} words;

static const optdef *find_long(const char *name, size_t len) {
  for (size_t i = 0; i < NOPTS; i++)
    if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0) return &opts[i];
  return NULL;
}

static const optdef *find_short(char c) {
  for (size_t i = 0; i < NOPTS; i++)
    if (opts[i].letter != 0 && opts[i].letter == c) return &opts[i];
  return NULL;
}

/* A word that looks like an option: '-x' or '--name', not '-' and not a
 * negative number. */
static int is_option(const char *a) {
  return a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.';
}

/* Split argv[first..] into kvplan's options (taken into o) and words, for a
 * command whose options are `where`. 0, or 2 after printing a usage error. */
static int parse(options *o, int argc, char **argv, int first, int where, const char *cmd,
                 words *out) {
  out->n = 0;
  out->after_dashes = -1;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (out->after_dashes < 0 && strcmp(a, "--") == 0) {
      out->after_dashes = out->n;
      continue;
    }
    if (out->after_dashes >= 0 || !is_option(a)) {
      out->w[out->n++] = argv[i];
      continue;
    }
    const optdef *d;
    const char *value = NULL, *shown = a;
    char name[64];
    if (a[1] == '-') { /* --name or --name=value */
      const char *eq = strchr(a + 2, '=');
      size_t len = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
      d = find_long(a + 2, len);
      if (eq != NULL) value = eq + 1;
      snprintf(name, sizeof name, "--%.*s", (int)(len < 40 ? len : 40), a + 2);
      shown = name;
    } else { /* -x or -xVALUE */
      d = a[2] == '\0' || (find_short(a[1]) && find_short(a[1])->arg) ? find_short(a[1]) : NULL;
      if (d != NULL && a[2] != '\0') value = a + 2;
      snprintf(name, sizeof name, "-%c", a[1]);
      if (d == NULL) shown = a;
      else shown = name;
    }
    if (d == NULL) {
      fprintf(stderr, "kvplan: unknown option '%s' (try 'kvplan --help'; words for the script "
                      "go after '--')\n", shown);
      return 2;
    }
    if (!(d->where & where)) {
      fprintf(stderr, "kvplan: option '%s' is not for '%s' (try 'kvplan --help')\n", shown, cmd);
      return 2;
    }
    if (d->arg != NULL && value == NULL) {
      if (i + 1 >= argc) {
        fprintf(stderr, "kvplan: option '%s' needs an argument (try 'kvplan --help')\n", shown);
        return 2;
      }
      value = argv[++i];
    } else if (d->arg == NULL && value != NULL) {
      fprintf(stderr, "kvplan: option '%s' takes no argument\n", shown);
      return 2;
    }
    if (d->set(o, value) < 0) return 2;
  }
  return 0;
}

/* The directory of the ready scripts: $KVPLAN_SCRIPTS, else beside the
 * binary (BIN/../share/kvplan/scripts installed, BIN/../scripts in the
 * source tree), else the installed path. NULL if none has them. */
static const char *scripts_dir(void) {
  static char dir[PATH_MAX + 64];
  const char *env = getenv("KVPLAN_SCRIPTS");
  if (env != NULL && env[0] != '\0') return env;
  char exe[PATH_MAX - 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  struct stat st;
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash != NULL) *slash = '\0';
    static const char *const rel[] = {"/../share/kvplan/scripts", "/../scripts"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
      snprintf(dir, sizeof dir, "%s%s/fit.lua", exe, rel[i]);
      if (stat(dir, &st) == 0) {
        snprintf(dir, sizeof dir, "%s%s", exe, rel[i]);
        char *real = realpath(dir, NULL);
        if (real != NULL && strlen(real) < sizeof dir) strcpy(dir, real);
        free(real);
        return dir;
      }
    }
  }
  snprintf(dir, sizeof dir, "%s/fit.lua", KVPLAN_SCRIPTS_DIR);
  if (stat(dir, &st) == 0) return KVPLAN_SCRIPTS_DIR;
  return NULL;
}

/* The ready script `name` (fit, capacity, ...) as a path in buf. 0 or -1. */
static int ready_script(const char *name, char *buf, size_t len) {
  const char *dir = scripts_dir();
  if (dir == NULL) {
    fprintf(stderr, "kvplan: cannot find the ready scripts (looked beside the binary and in "
                    "%s; set KVPLAN_SCRIPTS to their directory)\n", KVPLAN_SCRIPTS_DIR);
    return -1;
  }
  snprintf(buf, len, "%s/%s.lua", dir, name);
  return 0;
}

/* A script word of batch or a manifest: a ready script's name or a path. */
static const char *script_path(const char *w, char *buf, size_t len);

static int cmd_run(options *o, words *w);
static int cmd_ready(options *o, words *w, const char *name);
static int cmd_batch(options *o, words *w, const char *name);
static int cmd_merge(options *o, words *w, const char *name);
static int cmd_lua(options *o, words *w, const char *name);

typedef struct command {
  const char *name;
  int where; /* the options it takes */
  int (*run)(options *o, words *w, const char *name);
  const char *usage, *help;
  const char *more; /* kvplan COMMAND --help: this text; NULL: the general usage */
  const char *more_lua; /* or the string this Lua expression returns (built from the
                         * stdlib: the field registry), when more is NULL */
  int report;           /* it writes a report: --help ends with the formats */
} command;

/* The end of kvplan COMMAND --help for a command that writes a report. */
static const char report_help[] =
  "\nOutput: a table on a terminal, else CSV, or -f FMT (else by -o FILE's name):\n"
  "  -f vertical  each row a block of 'column: value' lines, names aligned, a\n"
  "               blank line between rows (rows too wide for a terminal)\n"
  "  -f table, csv, json (JSON Lines), markdown, html (a page with its charts);\n"
  "  --columns a,b,c picks columns, --wide keeps a terminal's table whole.\n";

static const command commands[] = {
  {"fit", F_RUN, cmd_ready, "fit model=M [context=N concurrency=N gpus=G,...]",
   "which GPUs and TP sizes hold a model at a context and concurrency", NULL, NULL, 1},
  {"capacity", F_RUN, cmd_ready, "capacity model=M [context=N gpus=G,... kv=F,...]",
   "KV cache tokens and maximum concurrency per GPU, TP and KV format", NULL, NULL, 1},
  {"ledger", F_RUN, cmd_ready, "ledger model=M gpu=G [tp=N pp=N kv=F context=N concurrency=N]",
   "where one deployment's memory goes, per GPU", NULL, NULL, 1},
  {"best", F_RUN, cmd_ready, "best model=M context=N concurrency=N [gpus=G,... rank=gpus|cost|concurrency]",
   "the cheapest deployments over GPU x TP x PP x formats", NULL, NULL, 1},
  {"launch", F_RUN, cmd_ready,
   "launch model=M gpu=G [engine=vllm|sglang|trtllm|k8s tp=N ...]",
   "the command that starts a deployment, every flag kvplan assumed; none\n"
   "            when kvplan predicts the engine would not start", NULL,
   "require('kvplan.launch').command_help()", 0},
  {"startup", F_RUN, cmd_ready, "startup model=M gpu=G [engine=vllm|sglang max_model_len=N ...]",
   "what the engine will print at startup: its memory lines, or why it refuses", NULL, NULL, 0},
  {"simulate", F_RUN, cmd_ready,
   "simulate model=M gpu=G [requests=N prompt=N output=N rate=R engine=E ...]",
   "serve a workload step by step as its engine schedules: throughput, latencies\n"
   "            (at most 10^7 requests, about 2 GB)", NULL,
   "require('kvplan.sim').command_help()", 1},
  {"pareto", F_RUN, cmd_ready, "pareto model=M input=N output=N [gpus=G,... tpot_ms=T ttft_ms=T percentile=p90 chart=F.png]",
   "throughput per GPU against speed per user over deployments and client\n"
   "            concurrencies: the Pareto front, as a report and a chart", NULL, NULL, 1},
  {"models", F_RUN, cmd_lua, "models [PATTERN]", "list the model catalog and its key facts",
   "PATTERN: a case-insensitive part of an id, name, alias or family ('-', '_' and\n"
   "  spaces alike); none lists every model.\n"
   "One row a model: model, family, params_b and active_b (billions), layers, heads,\n"
   "  kv_heads, head_dim, dtype, max_context, kv (the KV format of kv=auto),\n"
   "  kv_bytes_per_token (all layers, one GPU, that format), weights_gib, aliases.\n"
   "-o FILE writes the rows (CSV, or -f table|vertical|markdown|json).\n"
   "Example: kvplan models qwen3\n", NULL, 1},
  {"gpus", F_RUN, cmd_lua, "gpus [PATTERN]", "list the GPU catalog and its key facts",
   "PATTERN: a case-insensitive part of an id, name, alias or vendor; none lists\n"
   "  every GPU.\n"
   "One row a GPU: memory as marketed and as the runtime shows it, bandwidth, dense\n"
   "  tensor rates, interconnect; plan_with names the device to plan with (another\n"
   "  entry for a module of several devices).\n"
   "-o FILE writes the rows (CSV, or -f table|vertical|markdown|json).\n"
   "Example: kvplan gpus h100\n", NULL, 1},
  {"plot", F_RUN, cmd_lua, "plot REPORT.csv x=COL y=COL [by=COL kind=line|scatter|bar|stacked] -o CHART.png|svg",
   "draw a report as a chart with gnuplot (width and height at most 8192)",
   "REPORT.csv  a report kvplan wrote (any CSV with a header row)\n"
   "x, y        column names (required)\n"
   "by          a column: one series per value (default: one series)\n"
   "kind        line (x numeric), scatter (x numeric, points), bar (x categories,\n"
   "            series side by side) or stacked (x categories, series stacked)\n"
   "            (default line)\n"
   "lines       scatter: the series drawn as lines through their points\n"
   "vline, vline_title  line and scatter: a dashed vertical line at x = vline,\n"
   "            named vline_title in the key\n"
   "width, height  pixels (default 800 x 500, at most 8192 each)\n"
   "title       text (default: the question the report answers, from the columns\n"
   "            of one value in every row (model, gpu, context, concurrency) and the\n"
   "            axes: 'Llama-3.1-8B: max concurrency vs context')\n"
   "xlabel, ylabel  text (default: the column's quantity and unit,\n"
   "            'max concurrency (requests)')\n"
   "logx, logy  yes, no or auto (default): logarithmic where the axis is numeric\n"
   "            and its values span two decades or more, none negative\n"
   "-o CHART    the chart: .png or .svg, written whole or not at all\n"
   "Example: kvplan plot capacity.csv x=context y=max_concurrency by=series -o cap.png\n",
   NULL, 0},
  {"validate", F_RUN | F_VALIDATE, cmd_lua, "validate LOG... [--config DIR] [summary=1] [key=value ...]",
   "check kvplan against startup logs, one row per figure (a line at most 1 MiB)", NULL,
   "require('kvplan.validate').command_help()", 1},
  {"calibrate", F_RUN, cmd_lua, "calibrate RESULT... model=M gpu=G [tp=N engine=E ...] [-o profile.json]",
   "fit the step-time factors to your benchmark results; -o writes the profile",
   "RESULT: a file of benchmark results of one deployment, one or more runs:\n"
   "  vllm bench serve --save-result or benchmarks/benchmark_serving.py JSON,\n"
   "  SGLang bench_serving JSON Lines, trtllm-bench --report_json JSON, or a CSV\n"
   "  with columns input_len,output_len,output_tok_s and optionally concurrency,\n"
   "  rate, requests, mean_ttft_ms, mean_tpot_ms. '-' reads standard input.\n"
   "key=value: the deployment, as kv.deploy's fields (model, gpu, tp, pp, weights,\n"
   "  kv, engine, engine_version, budget, utilization, max_num_seqs, ...;\n"
   "  docs/fields.md); factors=a,b fits only those (default: every factor the\n"
   "  deployment's step time reads: memory, compute, experts, link, launch_us,\n"
   "  seq_host_us, step_overhead_ms, link_latency_us); requests=N for CSV rows\n"
   "  without a requests column (1000).\n"
   "Each run is simulated (kv.simulate) at its mean lengths, request count and\n"
   "rate or concurrency; the factors are fitted within their bounds to the\n"
   "squared log errors of output tokens/s, mean TTFT and mean TPOT, with a prior\n"
   "around each factor's default. Prints each\n"
   "factor with its bounds and standard error (jackknife over the runs), the\n"
   "error of each run and its leave-one-out error, and the median |error|s.\n"
   "-o FILE writes the profile (JSON); profile=FILE on any command ('-':\n"
   "standard input), or kv.deploy{profile = FILE}, applies it. docs/time.md has\n"
   "the details.\n", NULL, 0},
  {"completion", F_RUN, cmd_lua, "completion bash|zsh",
   "print the shell completion of kvplan's commands, options, keys and values",
   "bash: source <(kvplan completion bash), or save it as\n"
   "  ~/.local/share/bash-completion/completions/kvplan\n"
   "zsh: kvplan completion zsh > ~/.zfunc/_kvplan, with ~/.zfunc in fpath before\n"
   "  compinit\n"
   "The script is generated from the commands, the options, the arguments each\n"
   "command takes (its script's defaults and the field registry: every deployment\n"
   "field completes as key=) and the values of enumerated ones (engines, formats,\n"
   "the catalogs' GPU and model ids). make install installs both under PREFIX/share.\n"
   "Example: kvplan completion bash > kvplan.bash\n", NULL, 0},
  {"batch", F_BATCH, cmd_batch, "batch -d OUTDIR SCRIPT... [key=value ...] | -m MANIFEST",
   "run scripts, each report to OUTDIR/NAME.csv", NULL, NULL, 0},
  {"merge", F_MERGE, cmd_merge, "merge -o FILE PART.csv...",
   "join shard outputs, one header (a line at most 16 MiB)", NULL, NULL, 0},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* {commands = {{name = NAME, script = PATH of a ready script, lua = true
 * for a stdlib command}, ...}, options = {{name = LONG, letter = "x",
 * arg = true when it takes one}, ...}, formats = {--format's names}}:
 * what `kvplan completion` completes, from the tables the parser reads. */
static void push_commands(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_createtable(L, (int)NCOMMANDS, 0);
  for (size_t i = 0; i < NCOMMANDS; i++) {
    char path[PATH_MAX];
    lua_createtable(L, 0, 2);
    lua_pushstring(L, commands[i].name);
    lua_setfield(L, -2, "name");
    const char *dir = commands[i].run == cmd_ready ? scripts_dir() : NULL;
    if (dir != NULL) {
      snprintf(path, sizeof path, "%s/%s.lua", dir, commands[i].name);
      lua_pushstring(L, path);
      lua_setfield(L, -2, "script");
    }
    lua_pushboolean(L, commands[i].run == cmd_lua);
    lua_setfield(L, -2, "lua");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "commands");
  lua_createtable(L, (int)NOPTS, 0);
  for (size_t i = 0; i < NOPTS; i++) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, opts[i].name);
    lua_setfield(L, -2, "name");
    if (opts[i].letter != 0) {
      lua_pushlstring(L, &opts[i].letter, 1);
      lua_setfield(L, -2, "letter");
    }
    lua_pushboolean(L, opts[i].arg != NULL);
    lua_setfield(L, -2, "arg");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "options");
  lua_newtable(L);
  for (int i = 0; format_names[i] != NULL; i++)
    if (strcmp(format_names[i], "auto") != 0) {
      lua_pushstring(L, format_names[i]);
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    }
  lua_setfield(L, -2, "formats");
}

static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

static void usage(FILE *f) {
  fputs("usage: kvplan [options] [SCRIPT.lua] [key=value ...] [-- words for the script]\n"
        "       kvplan COMMAND [options] [key=value ...]\n"
        "Plan the GPU memory of LLM inference: run a Lua scenario script that\n"
        "writes reports. Without a script, run the built-in default scenario.\n"
        "\ncommands:\n", f);
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-9s %s\n            kvplan %s\n", commands[i].name, commands[i].help,
            commands[i].usage);
  fputs("\noptions (anywhere on the line, before or after the script, up to '--'):\n", f);
  for (size_t i = 0; i < NOPTS; i++) {
    char left[64];
    if (opts[i].letter)
      snprintf(left, sizeof left, "-%c, --%s%s%s", opts[i].letter, opts[i].name,
               opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
    else
      snprintf(left, sizeof left, "    --%s%s%s", opts[i].name, opts[i].arg ? " " : "",
               opts[i].arg ? opts[i].arg : "");
    fprintf(f, "  %-22s ", left);
    for (const char *h = opts[i].help; *h; h++) { /* continuation lines under the text */
      fputc(*h, f);
      if (*h == '\n') fprintf(f, "%25s", "");
    }
    fputc('\n', f);
  }
  fputs("  -h, --help             show this help\n"
        "  -v, --version          show the version\n"
        "\nkey=value pairs reach the script as a table (its first argument, '...');\n"
        "sizes take units (80GiB, 2G), token counts suffixes (32k = 32000, 32K = 32768);\n"
        "an argument named as a deployment field (tp, utilization, activation, ...) is\n"
        "checked as that field, and the engines' names stand for them\n"
        "(tensor_parallel_size, gpu_memory_utilization, ...; docs/fields.md).\n"
        "A file name '-' is standard input, read once: 'kvplan -' runs the script\n"
        "piped in, 'kvplan validate -' a log, -m - a manifest, prices=-, trace=-.\n"
        "batch goes on past a failing script, prints a summary and exits 1 if any\n"
        "failed. Errors print 'kvplan: message' on stderr and exit with status 1;\n"
        "a bad command line (an unknown option or key=value, a value of the wrong\n"
        "form, a size without a unit) exits with status 2 ('man kvplan': EXIT STATUS).\n", f);
  const char *dir = scripts_dir();
  fprintf(f, "\nready scripts: %s\n", dir ? dir : "(not found; set KVPLAN_SCRIPTS)");
  DIR *dp = dir ? opendir(dir) : NULL;
  if (dp != NULL) { /* their names, sorted: kvplan NAME runs DIR/NAME.lua */
    char names[64][64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && n < 64) {
      size_t len = strlen(e->d_name);
      if (len > 4 && len < 64 && strcmp(e->d_name + len - 4, ".lua") == 0) {
        snprintf(names[n], sizeof names[n], "%.*s", (int)(len - 4), e->d_name);
        n++;
      }
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    fputs("  ", f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%s", names[i], i + 1 < n ? ", " : "\n");
  }
  fputs("reference: 'man kvplan', README.md and SCRIPTING.md (installed under\n"
        "share/doc/kvplan), examples under share/doc/kvplan/examples.\n", f);
}

/* kvplan COMMAND --help of a command without a text of its own: its usage
 * line and what it does, then, for a ready script, the comment that opens
 * the script (its arguments, defaults and output: the one place they are
 * written), without the comment marks and the script's own path. 0 or 1. */
static int command_help(const command *cmd) {
  printf("usage: kvplan %s\n%s\n", cmd->usage, cmd->help);
  if (cmd->run != cmd_ready) {
    printf("\n'kvplan --help' lists the options every command takes; 'man kvplan' has the rest.\n");
    return 0;
  }
  char path[PATH_MAX];
  if (ready_script(cmd->name, path, sizeof path) < 0) return 1;
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "kvplan: cannot open %s: %s\n", path, strerror(errno));
    return 1;
  }
  char line[1024];
  int first = 1;
  putchar('\n');
  while (fgets(line, sizeof line, f) != NULL && strncmp(line, "--", 2) == 0) {
    const char *t = line + 2;
    if (*t == ' ') t++;
    if (first) { /* "scripts/NAME.lua: what it does" */
      const char *colon = strstr(t, ".lua: ");
      if (colon != NULL) t = colon + 6;
      first = 0;
    }
    fputs(t, stdout);
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "kvplan: cannot read %s\n", path);
    return 1;
  }
  /* then the registry's deployment fields the script takes that its comment
   * does not describe (completion.lua fields_help), so the help lists every
   * argument; the path in a Lua long string (a path holding "]==]" is not
   * one kvplan installs) */
  if (strstr(path, "]==]") != NULL) return 0;
  char code[PATH_MAX + 128];
  snprintf(code, sizeof code, "io.stdout:write(require('kvplan.completion').fields_help([==[%s]==]))", path);
  fflush(stdout);
  options ho = {0};
  ho.quiet = 1;
  return run_script(&ho, NULL, code, "kvplan --help", 0, NULL, NULL, NULL);
}

/* kvplan [SCRIPT.lua] [key=value ...] or kvplan -e CODE [key=value ...] */
static int cmd_run(options *o, words *w) {
  if (o->outdir != NULL) {
    fprintf(stderr, "kvplan: option '-d' is for 'kvplan batch'\n");
    return 2;
  }
  int first = 0;
  const char *script = NULL;
  if (o->code == NULL && w->n > 0 && strchr(w->w[0], '=') == NULL) {
    script = w->w[0];
    first = 1;
    /* a word with no '/' or '.' that names no file meant a command */
    struct stat st;
    if (strcmp(script, "-") != 0 && strchr(script, '/') == NULL && strchr(script, '.') == NULL &&
        stat(script, &st) != 0) {
      const char *names[NCOMMANDS];
      for (size_t i = 0; i < NCOMMANDS; i++) names[i] = commands[i].name;
      const char *near = kvp_cli_nearest(script, names, NCOMMANDS);
      char msg[512];
      int m = snprintf(msg, sizeof msg, "unknown command '%.100s' (%s%s%s'kvplan --help' lists the "
                       "commands; a script is a file such as run.lua)", script,
                       near ? "did you mean '" : "", near ? near : "", near ? "'? " : "");
      kvp_cli_print_error(msg, m < 0 ? 0 : (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1);
      return 2;
    }
  }
  return run_script(o, script, o->code, o->code ? "(command line)" : NULL, w->n - first,
                    w->w + first, o->output, NULL);
}

/* kvplan fit|capacity|ledger|best [key=value ...]: a ready script by name. */
static int cmd_ready(options *o, words *w, const char *name) {
  char path[PATH_MAX];
  if (o->code != NULL) {
    fprintf(stderr, "kvplan: option '-e' is not for '%s'\n", name);
    return 2;
  }
  if (ready_script(name, path, sizeof path) < 0) return 1;
  return run_script(o, path, NULL, NULL, w->n, w->w, o->output, NULL);
}

/* kvplan models|gpus|plot ...: a stdlib function kvplan.commands.NAME(args). */
static int cmd_lua(options *o, words *w, const char *name) {
  char code[128], label[64];
  snprintf(code, sizeof code, "return require('kvplan.commands')['%s'](...)", name);
  snprintf(label, sizeof label, "kvplan %s", name);
  if (o->code != NULL) {
    fprintf(stderr, "kvplan: option '-e' is not for '%s'\n", name);
    return 2;
  }
  o->commands = strcmp(name, "completion") == 0;
  char *config = NULL;
  if (o->config != NULL) {
    /* --config DIR reaches the command as its word config=DIR; the option
     * took at least one argv slot, so w->w has room for the word */
    size_t len = strlen(o->config) + sizeof "config=";
    config = xrealloc(NULL, len, 1);
    snprintf(config, len, "config=%s", o->config);
    w->w[w->n++] = config;
  }
  int rc = run_script(o, NULL, code, label, w->n, w->w, o->output, NULL);
  free(config);
  return rc;
}

static const char *script_path(const char *w, char *buf, size_t len) {
  if (strchr(w, '/') == NULL && strchr(w, '.') == NULL) {
    for (size_t i = 0; i < NCOMMANDS; i++)
      if (commands[i].run == cmd_ready && strcmp(commands[i].name, w) == 0)
        return ready_script(w, buf, len) == 0 ? buf : NULL;
  }
  snprintf(buf, len, "%s", w);
  return buf;
}

/* One script of a batch: its path, report name and own words. */
typedef struct job {
  char path[PATH_MAX], name[256];
  const char *command; /* a ready script named by its command (fit), else NULL */
  int first, n;        /* its words: args[first..first+n) */
} job;

/* The jobs of a batch, grown as scripts come: no fixed limit. */
static job *jobs;
static int jobcap;

static int add_job(int *njob, const char *word, const char *name_given, int first) {
  if (*njob == jobcap) {
    jobcap = jobcap ? 2 * jobcap : 64;
    jobs = xrealloc(jobs, (size_t)jobcap, sizeof *jobs);
  }
  job *j = &jobs[*njob];
  if (strcmp(word, "-") == 0) {
    fprintf(stderr, "kvplan: batch: a script is a file ('-', standard input, is for the "
                    "manifest: -m -)\n");
    return -1;
  }
  if (script_path(word, j->path, sizeof j->path) == NULL) return -1;
  j->command = NULL;
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (commands[i].run == cmd_ready && strcmp(commands[i].name, word) == 0) j->command = commands[i].name;
  const char *base = strrchr(word, '/');
  base = base ? base + 1 : word;
  size_t len = strlen(base);
  if (len > 4 && strcmp(base + len - 4, ".lua") == 0) len -= 4;
  if (name_given != NULL) {
    base = name_given;
    len = strlen(name_given);
  }
  snprintf(j->name, sizeof j->name, "%.*s", (int)len, base);
  j->first = first;
  j->n = 0;
  (*njob)++;
  return 0;
}

/* OUTDIR/index.html of a batch run with -f html: job s claimed taken.path[from[s]..from[s + 1]),
 * linked relative to OUTDIR when it succeeded (a failed script's reports are
 * discarded, and a file of that name is an older run's). 0, or -1 after printing why. */
static int write_index(const char *outdir, kvp_html_job *done, const size_t *from, int njob) {
  char path[PATH_MAX + 16], err[512];
  snprintf(path, sizeof path, "%s/index.html", outdir);
  size_t dlen = strlen(outdir);
  const char **files = xrealloc(NULL, from[njob] - from[0] + 1, sizeof *files);
  for (int s = 0; s < njob; s++) {
    done[s].files = files + (from[s] - from[0]);
    done[s].nfiles = done[s].ok ? from[s + 1] - from[s] : 0;
    for (size_t i = from[s]; i < from[s + 1]; i++) {
      const char *p = taken.path[i]; /* OUTDIR/NAME.html: the part after OUTDIR/ */
      files[i - from[0]] = strncmp(p, outdir, dlen) == 0 && p[dlen] == '/' ? p + dlen + 1 : p;
    }
  }
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  int rc = -1;
  if (f != NULL) {
    int w = kvp_html_index(f, "kvplan batch", KVPLAN_VERSION, done, (size_t)njob);
    if (w == -2) no_memory();
    if (w == 0) rc = kvp_afile_commit(f, err, sizeof err);
    else kvp_afile_commit(f, err, sizeof err); /* fails: the write's error, the temporary removed */
  }
  free(files);
  if (rc < 0) fprintf(stderr, "kvplan: batch: cannot write the index page: %s\n", err);
  else fprintf(stderr, "kvplan: batch: index %s\n", path);
  return rc;
}

/* kvplan batch -d OUTDIR SCRIPT... [key=value ...]: every script with the
 * same pairs; or -m MANIFEST: each line 'SCRIPT key=value ...' (a first word
 * 'NAME:' names its report), the command line's pairs before the line's. */
static int cmd_batch(options *o, words *w, const char *cmdname) {
  (void)cmdname;
  int njob = 0, nargs = 0, ncommon = 0, argcap = 0;
  /* static: reachable until exit on every early return */
  static char **args, **mine, **common;
  common = xrealloc(NULL, (size_t)w->n + 1, sizeof *common);
  for (int i = 0; i < w->n; i++) {
    if (strchr(w->w[i], '=') != NULL) common[ncommon++] = w->w[i];
    else if (add_job(&njob, w->w[i], NULL, 0) < 0) return 2;
  }
  if (o->manifest != NULL) {
    /* -m -: the manifest piped in (its messages say "standard input") */
    int std_in = strcmp(o->manifest, "-") == 0;
    FILE *f = std_in ? fdopen(dup(STDIN_FILENO), "r") : fopen(o->manifest, "r");
    if (f == NULL) {
      fprintf(stderr, "kvplan: cannot open manifest '%s': %s\n", o->manifest, strerror(errno));
      return 2;
    }
    int c = getc(f);
    if (c == EOF && std_in) {
      fprintf(stderr, "kvplan: batch: standard input ('-m -') is empty: nothing was piped in\n");
      fclose(f);
      return 2;
    }
    ungetc(c, f);
    if (std_in) o->manifest = "standard input";
    /* the lines, kept until exit: the jobs' words point into them */
    static char **lines;
    static size_t nlines, linecap;
    int lineno = 0, bad = 0;
    char *copy, why[PATH_MAX + 128];
    size_t len;
    while ((copy = kvp_manifest_line(f, o->manifest, ++lineno, &len, &bad, why, sizeof why)) != NULL) {
      /* a UTF-8 byte order mark (a manifest saved by Notepad or PowerShell)
       * is no part of the first script's name ("cannot open '<BOM>a.lua'") */
      if (lineno == 1 && len >= 3 && memcmp(copy, "\xef\xbb\xbf", 3) == 0) memmove(copy, copy + 3, len - 2);
      if (nlines == linecap) lines = xrealloc(lines, linecap = linecap ? 2 * linecap : 64, sizeof *lines);
      lines[nlines++] = copy;
      char *ws[256];
      int n = kvp_manifest_split(copy, ws, 256);
      if (n < 0) {
        fprintf(stderr, "kvplan: %s:%d: unbalanced quote or too many words\n", o->manifest, lineno);
        fclose(f);
        return 2;
      }
      if (n == 0) continue;
      int k = 0;
      const char *name = NULL;
      size_t l0 = strlen(ws[0]);
      if (l0 > 1 && ws[0][l0 - 1] == ':') {
        ws[0][l0 - 1] = '\0';
        name = ws[k++];
        if (!kvp_manifest_name_ok(name, sizeof jobs->name)) {
          char msg[512];
          int m = snprintf(msg, sizeof msg, "%s:%d: report name must be letters, digits, '_', "
                           "'.' or '-' (at most %zu), got '%s'", o->manifest, lineno,
                           sizeof jobs->name - 1, name);
          kvp_cli_print_error(msg, m < 0 ? 0 : (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1);
          fclose(f);
          return 2;
        }
      }
      if (k >= n || strchr(ws[k], '=') != NULL) {
        fprintf(stderr, "kvplan: %s:%d: expected 'SCRIPT key=value ...'\n", o->manifest, lineno);
        fclose(f);
        return 2;
      }
      if (add_job(&njob, ws[k], name, nargs) < 0) {
        fclose(f);
        return 2;
      }
      char at[PATH_MAX + 32];
      snprintf(at, sizeof at, "%s:%d", o->manifest, lineno);
      if (repeated_key(n - k - 1, ws + k + 1, at) != 0) {
        fclose(f);
        return 2;
      }
      for (k++; k < n; k++) {
        if (strchr(ws[k], '=') == NULL) {
          fprintf(stderr, "kvplan: %s:%d: expected key=value, got '%s'\n", o->manifest, lineno, ws[k]);
          fclose(f);
          return 2;
        }
        if (nargs == argcap) {
          argcap = argcap ? 2 * argcap : 256;
          args = xrealloc(args, (size_t)argcap, sizeof *args);
        }
        args[nargs++] = ws[k];
        jobs[njob - 1].n++;
      }
    }
    fclose(f);
    if (bad < 0) no_memory();
    if (bad) {
      kvp_cli_print_error(why, strlen(why));
      return 2;
    }
  }
  if (o->manifest != NULL && njob == 0 && o->outdir != NULL && o->code == NULL && o->output == NULL) {
    fprintf(stderr, "kvplan: batch: manifest '%s' lists no script (expected lines "
                    "'[NAME:] SCRIPT key=value ...')\n", o->manifest);
    return 2;
  }
  if (o->outdir == NULL || njob == 0 || o->code != NULL || o->output != NULL) {
    fprintf(stderr, "kvplan: usage: kvplan batch [options] -d OUTDIR SCRIPT.lua... [key=value ...]\n"
                    "       kvplan batch [options] -d OUTDIR -m MANIFEST [key=value ...]\n");
    return 2;
  }
  for (int a = 0; a < njob; a++) /* one report file a script name */
    for (int b = 0; b < a; b++)
      if (strcmp(jobs[a].name, jobs[b].name) == 0) {
        fprintf(stderr, "kvplan: batch: '%s' and '%s' would write the same report in '%s'%s\n",
                jobs[b].path, jobs[a].path, o->outdir,
                o->manifest ? " (name one with a first word 'NAME:')" : "");
        return 2;
      }
  int html = o->format != NULL && strcmp(o->format, "html") == 0;
  for (int a = 0; html && a < njob; a++)
    if (strcmp(jobs[a].name, "index") == 0) {
      fprintf(stderr, "kvplan: batch: the report of '%s' would be named 'index', which -f html keeps "
                      "for the batch's index page (name it with a first word 'NAME:')\n", jobs[a].path);
      return 2;
    }
  if (mkdir(o->outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "kvplan: cannot create '%s': %s\n", o->outdir, strerror(errno));
    return 1;
  }
  struct stat dst; /* an OUTDIR that is a file: every script would fail on its report */
  if (stat(o->outdir, &dst) != 0 || !S_ISDIR(dst.st_mode)) {
    fprintf(stderr, "kvplan: batch: -d '%s' is not a directory (expected the directory for the reports)\n",
            o->outdir);
    return 2;
  }
  int failed = 0, most = 0;
  for (int s = 0; s < njob; s++) most = jobs[s].n > most ? jobs[s].n : most;
  mine = xrealloc(NULL, (size_t)(ncommon + most + 1), sizeof *mine);
  /* for the index page (-f html): each job's words, status and the reports it wrote (taken[from..to)) */
  static kvp_html_job *done;
  static size_t *from;
  if (html) {
    done = xrealloc(NULL, (size_t)njob, sizeof *done);
    from = xrealloc(NULL, (size_t)njob + 1, sizeof *from);
  }
  for (int s = 0; s < njob; s++) {
    char out[PATH_MAX + 300];
    int n = 0;
    for (int i = 0; i < ncommon; i++) mine[n++] = common[i];
    for (int i = 0; i < jobs[s].n; i++) mine[n++] = args[jobs[s].first + i];
    const char *ext = o->format == NULL ? ".csv" : strcmp(o->format, "json") == 0 ? ".jsonl"
                      : strcmp(o->format, "markdown") == 0 ? ".md"
                      : strcmp(o->format, "table") == 0 || strcmp(o->format, "vertical") == 0 ? ".txt"
                      : strcmp(o->format, "html") == 0 ? ".html" : ".csv";
    snprintf(out, sizeof out, "%s/%s%s", o->outdir, jobs[s].name, ext);
    if (html) from[s] = taken.n;
    command_name = jobs[s].command; /* its page's inputs say 'kvplan fit', not the script's path */
    int rc = run_apart(o, jobs[s].path, n, mine, out, jobs[s].name);
    fprintf(stderr, "kvplan: batch: %s %s\n", rc == 0 ? "ok    " : "FAILED", jobs[s].path);
    failed += rc != 0;
    if (html) {
      size_t len = 1;
      for (int i = 0; i < n; i++) len += strlen(mine[i]) + 1;
      char *said = xrealloc(NULL, len, 1);
      said[0] = '\0';
      for (int i = 0; i < n; i++) {
        if (i > 0) strcat(said, " ");
        strcat(said, mine[i]);
      }
      done[s] = (kvp_html_job){jobs[s].name, jobs[s].command ? jobs[s].command : jobs[s].path, said,
                               rc == 0, 0, NULL};
    }
  }
  if (html) {
    from[njob] = taken.n;
    if (write_index(o->outdir, done, from, njob) < 0) failed++;
  }
  fprintf(stderr, "kvplan: batch: %d scripts, %d ok, %d failed\n", njob, njob - failed, failed);
  free(mine);
  free(common);
  free(args);
  return failed ? 1 : 0;
}

/* kvplan merge -o FILE PART... : the stdlib joins them (kvplan.merge). */
static int cmd_merge(options *o, words *w, const char *name) {
  (void)name;
  if (o->output == NULL || w->n == 0) {
    fprintf(stderr, "kvplan: usage: kvplan merge -o FILE PART.csv...\n");
    return 2;
  }
  return run_script(o, NULL, merge_code, "(command line)", w->n, w->w, o->output, NULL);
}

/* Standard input can be read once: at most one word up to `--` names it
 * ('-', or a value '-' as in trace=-), with -m - counted. 0, or 2 after
 * naming the two that do. */
static int one_stdin(const options *o, const words *w) {
  const char *first = o->manifest != NULL && strcmp(o->manifest, "-") == 0 ? "-m -" : NULL;
  int end = w->after_dashes >= 0 ? w->after_dashes : w->n;
  for (int i = 0; i < end; i++) {
    const char *eq = strchr(w->w[i], '=');
    if (strcmp(eq != NULL && eq != w->w[i] ? eq + 1 : w->w[i], "-") != 0) continue;
    if (first == NULL) {
      first = w->w[i];
      continue;
    }
    fprintf(stderr, "kvplan: '%s' and '%s' both read standard input ('-'), which can be read "
                    "once: give one of them a file\n", first, w->w[i]);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  static options o;
  static words w;
  const command *cmd = NULL;
  int first = 1;
  kvp_cli_signals();
  w.w = xrealloc(NULL, (size_t)argc, sizeof *w.w);
  /* the command: the first word that is not an option or an option's value
   * (kvplan --quiet fit ...); it is taken out of argv */
  int at = 1;
  while (at < argc && strcmp(argv[at], "--") != 0 && is_option(argv[at])) {
    const char *a = argv[at];
    const optdef *d = a[1] == '-' ? (strchr(a, '=') ? NULL : find_long(a + 2, strlen(a + 2)))
                                  : (a[2] == '\0' ? find_short(a[1]) : NULL);
    at += d != NULL && d->arg != NULL ? 2 : 1;
  }
  if (at < argc)
    for (size_t i = 0; i < NCOMMANDS; i++)
      if (strcmp(argv[at], commands[i].name) == 0) cmd = &commands[i];
  if (cmd != NULL) {
    for (int i = at; i + 1 < argc; i++) argv[i] = argv[i + 1];
    argc--;
  }
  for (int i = first; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      if (cmd != NULL && cmd->more != NULL) {
        printf("usage: kvplan %s\n%s\n\n%s", cmd->usage, cmd->help, cmd->more);
        int rc = 0;
        if (cmd->run == cmd_lua) { /* and the registry's fields it takes (calibrate: every one) */
          char code[256];
          snprintf(code, sizeof code, "io.stdout:write(require('kvplan.completion').fields_help(nil, '%s'))",
                   cmd->name);
          fflush(stdout);
          options ho = {0};
          ho.quiet = 1;
          rc = run_script(&ho, NULL, code, "kvplan --help", 0, NULL, NULL, NULL);
        }
        if (rc == 0 && cmd->report) fputs(report_help, stdout);
        return fflush(stdout) == 0 ? rc : 1;
      }
      if (cmd != NULL && cmd->more_lua != NULL) {
        char code[256];
        snprintf(code, sizeof code, "io.stdout:write(%s)", cmd->more_lua);
        options ho = {0};
        ho.quiet = 1;
        int rc = run_script(&ho, NULL, code, "kvplan --help", 0, NULL, NULL, NULL);
        if (rc == 0 && cmd->report) fputs(report_help, stdout);
        return fflush(stdout) == 0 ? rc : 1;
      }
      if (cmd != NULL) {
        int rc = command_help(cmd);
        if (rc == 0 && cmd->report) fputs(report_help, stdout);
        return fflush(stdout) == 0 ? rc : 1;
      }
      usage(stdout);
      return fflush(stdout) == 0 ? 0 : 1;
    }
    if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-v") == 0) {
      printf("kvplan %s (%s)\n", KVPLAN_VERSION, LUA_RELEASE);
      return 0;
    }
  }
  int rc = parse(&o, argc, argv, first, cmd ? cmd->where : F_RUN, cmd ? cmd->name : "kvplan", &w);
  if (rc == 0) rc = one_stdin(&o, &w);
  if (rc == 0) rc = repeated_key(w.n, w.w, NULL);
  if (rc == 0 && !wide && isatty(STDOUT_FILENO)) kvp_fmtw_fit(terminal_columns());
  if (cmd != NULL && cmd->run != cmd_batch && cmd->run != cmd_merge) command_name = cmd->name;
  if (rc == 0) rc = cmd ? cmd->run(&o, &w, cmd->name) : cmd_run(&o, &w);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "kvplan: cannot write standard output\n");
    rc = 1;
  }
  return rc;
}
