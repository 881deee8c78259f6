/*
 * main.c: the kvplan command line.
 * Sets up the Lua state, the embedded stdlib, the script's arguments and the
 * error report; computes nothing itself.
 *
 *   kvplan [options] [SCRIPT.lua [key=value ...]]
 *   kvplan -e CODE [key=value ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lualib.h>

#include "embed.h"
#include "util_lua.h"


static const char usage[] =
  "usage: kvplan [options] [SCRIPT.lua [key=value ...]]\n"
  "Plan the GPU memory of LLM inference: run a Lua scenario script that\n"
  "writes CSV reports. Without a script, run the built-in default scenario.\n"
  "\n"
  "options:\n"
  "  -e CODE        run CODE instead of a script file\n"
  "  -o FILE        write reports to FILE (atomically) instead of stdout\n"
  "  --traceback    add a Lua traceback to error messages\n"
  "  --help         show this help\n"
  "  --version      show the version\n"
  "\n"
  "key=value pairs reach the script as a table (its first argument, '...').\n"
  "Errors print 'kvplan: file:line: message' on stderr and exit with status 1.\n";

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

/* package.loaded["kvplan.cli"] = {output = FILE, script = NAME, args = ARGS} */
static void set_cli(lua_State *L, const char *output, const char *script) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_createtable(L, 0, 4);
  if (output != NULL) {
    lua_pushstring(L, output);
    lua_setfield(L, -2, "output");
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

static int run(lua_State *L, int argc, char **argv) {
  const char *code = NULL, *output = NULL;
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
      printf("kvplan %s (%s)\n", KVPLAN_VERSION, LUA_RELEASE);
      return 0;
    } else if (strcmp(a, "--traceback") == 0) {
      traceback = 1;
    } else if ((strcmp(a, "-e") == 0 || strcmp(a, "-o") == 0)) {
      if (i + 1 >= argc) {
        fprintf(stderr, "kvplan: option '%s' needs an argument\n%s", a, usage);
        return 2;
      }
      if (a[1] == 'e') code = argv[++i]; else output = argv[++i];
    } else {
      fprintf(stderr, "kvplan: unknown option '%s' (try 'kvplan --help')\n", a);
      return 2;
    }
  }
  const char *script = code != NULL ? "(command line)" : (i < argc ? argv[i++] : NULL);

  luaL_openlibs(L);
  kvp_preload(L);

  if (script != NULL && code == NULL) add_script_dir(L, script);
  push_args(L, argc, argv, i);
  set_cli(L, output, script != NULL ? script : "(default scenario)");
  /* arg, as lua.c sets it: arg[0] the script, arg[1..] its words */
  lua_createtable(L, argc - i, 1);
  for (int k = i; k < argc; k++) {
    lua_pushstring(L, argv[k]);
    lua_rawseti(L, -2, k - i + 1);
  }
  lua_pushstring(L, script != NULL ? script : "kvplan");
  lua_rawseti(L, -2, 0);
  lua_setglobal(L, "arg");

  int status;
  if (code != NULL) {
    status = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
  } else if (script != NULL) {
    status = luaL_loadfile(L, script);
  } else {
    static const char def[] = "return require('kvplan.default')(...)";
    status = luaL_loadbuffer(L, def, sizeof def - 1, "=(default scenario)");
  }
  if (status != LUA_OK) return report(L, status) ? 1 : 0;
  lua_pushvalue(L, -2); /* the args table */
  lua_remove(L, -3);
  status = docall(L, 1);
  if (status == LUA_OK) {
    lua_pushcfunction(L, finish_reports);
    status = docall(L, 0);
  }
  return report(L, status) == LUA_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "kvplan: cannot create the Lua state: out of memory\n");
    return 1;
  }
  int rc = run(L, argc, argv);
  lua_close(L); /* unfinished reports are discarded by their __gc */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "kvplan: cannot write standard output\n");
    rc = 1;
  }
  return rc;
}
