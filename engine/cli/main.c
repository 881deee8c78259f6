/*
 * main.c: the kvplan command line.
 * Sets up the Lua state, the embedded stdlib, the script's arguments and the
 * error report; computes nothing itself.
 *
 *   kvplan [options] [SCRIPT.lua [key=value ...]]
 *   kvplan -e CODE [key=value ...]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lualib.h>

#include "kvplan_lua.h"

static const char usage[] =
  "usage: kvplan [options] [SCRIPT.lua [key=value ...]]\n"
  "       kvplan batch [options] -d OUTDIR SCRIPT.lua... [key=value ...]\n"
  "       kvplan merge -o FILE PART.csv...\n"
  "Plan the GPU memory of LLM inference: run a Lua scenario script that\n"
  "writes CSV reports. Without a script, run the built-in default scenario.\n"
  "\n"
  "options:\n"
  "  -e CODE        run CODE instead of a script file\n"
  "  -o FILE        write reports to FILE (atomically) instead of stdout\n"
  "  -d OUTDIR      batch: write each script's report to OUTDIR/NAME.csv\n"
  "  --shard K/N    write only the K-th of N equal slices of every sweep\n"
  "  --quiet        no progress line on stderr\n"
  "  --traceback    add a Lua traceback to error messages\n"
  "  --help         show this help\n"
  "  --version      show the version\n"
  "\n"
  "key=value pairs reach the script as a table (its first argument, '...').\n"
  "batch runs every script, goes on past a failing one, prints a summary and\n"
  "exits 1 if any failed; merge joins shard outputs, keeping one header.\n"
  "Errors print 'kvplan: file:line: message' on stderr and exit with status 1.\n";

/* Options of one run. */
typedef struct options {
  const char *code, *output, *outdir;
  int quiet;
  long long shard_k, shard_n;
} options;

static int traceback = 0;

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

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    fprintf(stderr, "kvplan: %s\n", lua_tostring(L, -1));
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

/* The script's argument table: key=value pairs by key, other words in order. */
static void push_args(lua_State *L, int argc, char **argv, int first) {
  lua_newtable(L);
  lua_Integer n = 0;
  for (int i = first; i < argc; i++) {
    const char *eq = strchr(argv[i], '=');
    if (eq != NULL && eq != argv[i]) {
      lua_pushlstring(L, argv[i], (size_t)(eq - argv[i]));
      lua_pushstring(L, eq + 1);
      lua_settable(L, -3);
    } else {
      lua_pushstring(L, argv[i]);
      lua_rawseti(L, -2, ++n);
    }
  }
}

/* package.loaded["kvplan.cli"] = {output = FILE, outdir = DIR, name = NAME,
 * script = PATH, args = ARGS, quiet = BOOL, shard = {K, N}} */
static void set_cli(lua_State *L, const options *o, const char *output, const char *name,
                    const char *script) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_createtable(L, 0, 8);
  if (output != NULL) {
    lua_pushstring(L, output);
    lua_setfield(L, -2, "output");
  }
  if (o->outdir != NULL) {
    lua_pushstring(L, o->outdir);
    lua_setfield(L, -2, "outdir");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
  }
  lua_pushboolean(L, o->quiet);
  lua_setfield(L, -2, "quiet");
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

/* Run one script (NULL: the default scenario; o->code: that code) in a
 * fresh state, with argv[first..] as its arguments. Returns 0 or 1. */
static int run_script(const options *o, const char *script, int argc, char **argv, int first,
                      const char *output, const char *name) {
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "kvplan: cannot create the Lua state: out of memory\n");
    return 1;
  }
  luaL_openlibs(L);
  kvp_preload(L);
  if (script != NULL && o->code == NULL) add_script_dir(L, script);
  const char *label = o->code != NULL ? "(command line)" : script != NULL ? script : "(default scenario)";
  push_args(L, argc, argv, first);
  set_cli(L, o, output, name, label);
  /* arg, as lua.c sets it: arg[0] the script, arg[1..] its words */
  lua_createtable(L, argc - first, 1);
  for (int k = first; k < argc; k++) {
    lua_pushstring(L, argv[k]);
    lua_rawseti(L, -2, k - first + 1);
  }
  lua_pushstring(L, label);
  lua_rawseti(L, -2, 0);
  lua_setglobal(L, "arg");

  int status;
  if (o->code != NULL) {
    status = luaL_loadbuffer(L, o->code, strlen(o->code), "=(command line)");
  } else if (script != NULL) {
    status = luaL_loadfile(L, script);
  } else {
    static const char def[] = "return require('kvplan.default')(...)";
    status = luaL_loadbuffer(L, def, sizeof def - 1, "=(default scenario)");
  }
  if (status == LUA_OK) {
    lua_pushvalue(L, -2); /* the args table */
    lua_remove(L, -3);
    status = docall(L, 1);
  }
  if (status == LUA_OK) {
    lua_pushcfunction(L, finish_reports);
    status = docall(L, 0);
  }
  status = report(L, status);
  lua_close(L); /* unfinished reports are discarded by their __gc */
  return status == LUA_OK ? 0 : 1;
}

/* Parse one option at argv[*i]; 0 when it is not an option, -1 on a usage
 * error (reported), 1 when taken. */
static int take_option(options *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  if (a[0] != '-' || a[1] == '\0') return 0;
  if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
    o->quiet = 1;
  } else if (strcmp(a, "--traceback") == 0) {
    traceback = 1;
  } else if (strcmp(a, "-e") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "-d") == 0 ||
             strcmp(a, "--shard") == 0) {
    if (*i + 1 >= argc) {
      fprintf(stderr, "kvplan: option '%s' needs an argument (try 'kvplan --help')\n", a);
      return -1;
    }
    const char *v = argv[++*i];
    if (a[1] == 'e') o->code = v;
    else if (a[1] == 'o') o->output = v;
    else if (a[1] == 'd') o->outdir = v;
    else {
      char tail;
      if (sscanf(v, "%lld/%lld%c", &o->shard_k, &o->shard_n, &tail) != 2 || o->shard_n < 1 ||
          o->shard_k < 1 || o->shard_k > o->shard_n) {
        fprintf(stderr, "kvplan: bad --shard '%s' (expected K/N with 1 <= K <= N)\n", v);
        return -1;
      }
    }
  } else {
    fprintf(stderr, "kvplan: unknown option '%s' (try 'kvplan --help')\n", a);
    return -1;
  }
  return 1;
}

/* kvplan batch [options] -d OUTDIR SCRIPT... [key=value ...] */
static int batch(options *o, int argc, char **argv) {
  const char *scripts[1024];
  char *pairs[1024];
  int nscript = 0, npair = 0;
  for (int i = 2; i < argc; i++) {
    int t = take_option(o, argc, argv, &i);
    if (t < 0) return 2;
    if (t > 0) continue;
    if (strchr(argv[i], '=') != NULL) {
      if (npair < 1024) pairs[npair++] = argv[i];
    } else if (nscript < 1024) {
      scripts[nscript++] = argv[i];
    }
  }
  if (o->outdir == NULL || nscript == 0 || o->code != NULL || o->output != NULL) {
    fprintf(stderr, "kvplan: usage: kvplan batch [options] -d OUTDIR SCRIPT.lua... [key=value ...]\n");
    return 2;
  }
  for (int a = 0; a < nscript; a++) /* one report file a script name */
    for (int b = 0; b < a; b++) {
      const char *x = strrchr(scripts[a], '/'), *y = strrchr(scripts[b], '/');
      if (strcmp(x ? x + 1 : scripts[a], y ? y + 1 : scripts[b]) == 0) {
        fprintf(stderr, "kvplan: batch: '%s' and '%s' would write the same report in '%s'\n",
                scripts[b], scripts[a], o->outdir);
        return 2;
      }
    }
  if (mkdir(o->outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "kvplan: cannot create '%s': %s\n", o->outdir, strerror(errno));
    return 1;
  }
  int failed = 0;
  for (int s = 0; s < nscript; s++) {
    const char *base = strrchr(scripts[s], '/');
    base = base ? base + 1 : scripts[s];
    char name[256], out[4096];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(base) > 4 && strcmp(base + strlen(base) - 4, ".lua") == 0
                                               ? strlen(base) - 4 : strlen(base)), base);
    snprintf(out, sizeof out, "%s/%s.csv", o->outdir, name);
    int rc = run_script(o, scripts[s], npair, pairs, 0, out, name);
    fprintf(stderr, "kvplan: batch: %s %s\n", rc == 0 ? "ok    " : "FAILED", scripts[s]);
    failed += rc != 0;
  }
  fprintf(stderr, "kvplan: batch: %d scripts, %d ok, %d failed\n", nscript, nscript - failed,
          failed);
  return failed ? 1 : 0;
}

/* kvplan merge -o FILE PART... : the stdlib joins them (kvplan.merge). */
static int merge(options *o, int argc, char **argv) {
  static const char code[] = "return require('kvplan.merge').run(...)";
  char *parts[1024];
  int n = 0;
  for (int i = 2; i < argc; i++) {
    int t = take_option(o, argc, argv, &i);
    if (t < 0) return 2;
    if (t == 0 && n < 1024) parts[n++] = argv[i];
  }
  if (o->output == NULL || n == 0) {
    fprintf(stderr, "kvplan: usage: kvplan merge -o FILE PART.csv...\n");
    return 2;
  }
  o->code = code;
  return run_script(o, NULL, n, parts, 0, o->output, NULL);
}

int main(int argc, char **argv) {
  options o = {0};
  int rc;
  if (argc > 1 && strcmp(argv[1], "batch") == 0) {
    rc = batch(&o, argc, argv);
  } else if (argc > 1 && strcmp(argv[1], "merge") == 0) {
    rc = merge(&o, argc, argv);
  } else {
    int i = 1;
    for (; i < argc; i++) {
      if (strcmp(argv[i], "--") == 0) {
        i++;
        break;
      }
      if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
        fputs(usage, stdout);
        return 0;
      }
      if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-v") == 0) {
        printf("kvplan %s (%s)\n", KVPLAN_VERSION, LUA_RELEASE);
        return 0;
      }
      int t = take_option(&o, argc, argv, &i);
      if (t < 0) return 2;
      if (t == 0) break;
    }
    if (o.outdir != NULL) {
      fprintf(stderr, "kvplan: option '-d' is for 'kvplan batch'\n");
      return 2;
    }
    const char *script = o.code == NULL && i < argc ? argv[i++] : NULL;
    rc = run_script(&o, script, argc, argv, i, o.output, NULL);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "kvplan: cannot write standard output\n");
    rc = 1;
  }
  return rc;
}
