/*
 * limits.c: limits and the sandbox for the scripts kvplan runs.
 * Program layer. What a script may use:
 *
 *   --max-memory SIZE  the bytes the Lua state and the C allocations made for
 *                      it (the engine's tables, the JSON parser's documents,
 *                      the CSV writer's buffers) may hold together; past it an
 *                      allocation fails and the run stops with "memory limit
 *                      exceeded". The C side is counted by wrapping malloc,
 *                      calloc, realloc and free of kvplan's own objects at link
 *                      time (-Wl,--wrap; see the Makefile) and jansson's
 *                      allocator (json_set_alloc_funcs).
 *   --timeout SECONDS  wall time, checked every 10000 Lua instructions by a
 *                      count hook; at the deadline SIGALRM also stops a
 *                      sweep's C loop (kvl_poll); any other loop in C still
 *                      running two seconds later is ended: the reports'
 *                      temporaries are removed and kvplan exits with status 1.
 *                      The limit holds until the state is closed: a
 *                      finaliser or a to-be-closed variable run by lua_close
 *                      (where Lua runs no hook) still looping at the deadline
 *                      ends the run there and then (kvp_cli_closing). In a
 *                      batch each script runs in a process of its own
 *                      (main.c run_apart), so that end is the script's.
 *   --max-rows N       a sweep that would write more rows refuses before it
 *                      writes one (default 1e9; 0: no limit).
 *   --sandbox          for scripts you did not write: no os.execute, io.popen,
 *                      os.remove, os.rename, os.exit, os.tmpname, os.getenv,
 *                      os.setlocale, io.tmpfile, package.loadlib, C modules or debug
 *                      library, and no other program (kv.plot); files are read
 *                      only under the script's directory and the paths named
 *                      on the command line that lie below the working
 *                      directory, written only under the output directory
 *                      (or to the one device -o names). Every function that
 *                      opens a path asks l_check: io.open, io.lines, io.input,
 *                      io.output, loadfile, dofile, require and
 *                      package.searchpath here, the engine's readers and
 *                      writers through KVL_FILE_CHECK (docs/reliability.md
 *                      has the table).
 *   --allow-binary     accept precompiled (binary) chunks; refused by default:
 *                      Lua does not verify bytecode, and a crafted chunk crashes
 *                      the interpreter.
 *   KVPLAN_FAULT_ALLOC=N  (for the fault injection tests) the Nth allocation
 *                      of a run and every later one fail, as if memory ran
 *                      out there.
 */
#define _GNU_SOURCE /* malloc_usable_size, realpath */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lualib.h>

#include "afile.h"
#include "proc.h"
#include "cli.h"
#include "kvplan_lua.h"

static struct {
  long long max_memory;   /* bytes, 0: none */
  double timeout;         /* seconds, 0: none */
  long long max_rows;     /* -1: the default */
  int sandbox, allow_binary;
  char **roots;           /* sandbox: real paths readable */
  size_t nroot, caproot;
  char *outroot;          /* sandbox: the real path writable (NULL: none) */
  char *outfile;          /* sandbox: the device -o names, writable alone */
} lim = {0, 0, -1, 0, 0, NULL, 0, 0, NULL, NULL};

/* ---- memory ------------------------------------------------------------------ */

static size_t lua_used, c_used;   /* bytes held by the state and by C for it */
static int mem_hit;               /* an allocation was refused by the cap */
static long long fault_at = -1, nalloc; /* KVPLAN_FAULT_ALLOC */

/* Do n more bytes fit under the cap? */
static int fits(size_t n) {
  if (lim.max_memory > 0 && lua_used + c_used + n > (unsigned long long)lim.max_memory) {
    mem_hit = 1;
    return 0;
  }
  return 1;
}

/* May n more bytes be allocated? Counts the allocation for the fault hook. */
static int may_grow(size_t n) {
  if (fault_at >= 0 && ++nalloc >= fault_at) {
    mem_hit = 2;
    return 0;
  }
  return fits(n);
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

void *__wrap_malloc(size_t n) {
  if (!may_grow(n)) return errno = ENOMEM, NULL;
  void *p = __real_malloc(n);
  if (p) c_used += malloc_usable_size(p);
  return p;
}

void *__wrap_calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return errno = ENOMEM, NULL;
  if (!may_grow(n * size)) return errno = ENOMEM, NULL;
  void *p = __real_calloc(n, size);
  if (p) c_used += malloc_usable_size(p);
  return p;
}

/* What glibc may give beyond n: a block it maps itself (large ones) is
 * rounded up to whole pages, its header included, so a realloc to the
 * usable size it already has (n <= old, which was let through unchecked)
 * grew it by a page: libcsv growing a field on /dev/zero retries smaller
 * sizes until one fits, and reached 480 MB under --max-memory 8M. */
static size_t realloc_slack(void) {
  static size_t page;
  if (page == 0) {
    long ps = sysconf(_SC_PAGESIZE);
    page = ps > 0 ? (size_t)ps : 4096;
  }
  return page + 4 * sizeof(size_t);
}

void *__wrap_realloc(void *p, size_t n) {
  size_t old = p ? malloc_usable_size(p) : 0;
  size_t most = n > SIZE_MAX - realloc_slack() ? SIZE_MAX : n + realloc_slack();
  /* a growth is an allocation for the fault hook (KVPLAN_FAULT_ALLOC), as
   * before; one within the block's size is checked against the cap alone */
  if (n > old ? !may_grow(most - old) : most > old && !fits(most - old)) return errno = ENOMEM, NULL;
  void *q = __real_realloc(p, n);
  if (q != NULL || n == 0) c_used = c_used - old + (q ? malloc_usable_size(q) : 0);
  return q;
}

void __wrap_free(void *p) {
  if (p) c_used -= malloc_usable_size(p);
  __real_free(p);
}

/* The state's allocator: the same cap over the Lua side (osize is exact). */
static void *lua_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (p == NULL) osize = 0;
  if (nsize == 0) {
    __real_free(p);
    lua_used -= osize;
    return NULL;
  }
  if (nsize > osize && !may_grow(nsize - osize)) return NULL;
  void *q = __real_realloc(p, nsize);
  if (q != NULL) lua_used = lua_used - osize + nsize;
  return q;
}

static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "kvplan: unprotected error in Lua: %s\n", msg ? msg : "(not a string)");
  return 0;
}

lua_State *kvp_cli_newstate(void) {
  const char *f = getenv("KVPLAN_FAULT_ALLOC");
  fault_at = f != NULL ? atoll(f) : -1;
  nalloc = 0;
  mem_hit = 0;
  static int jansson_counted;
  if (!jansson_counted) { /* the JSON documents count too */
    json_set_alloc_funcs(__wrap_malloc, __wrap_free);
    jansson_counted = 1;
  }
  lua_State *L = lua_newstate(lua_alloc, NULL);
  if (L != NULL) lua_atpanic(L, panic);
  return L;
}

int kvp_cli_memory_hit(void) { return mem_hit; }

long long kvp_cli_max_memory(void) { return lim.max_memory; }

/* ---- options ------------------------------------------------------------------- */

/* A decimal number: digits, optionally '.' and digits, optionally an
 * exponent ("1e6"), nothing else (no sign, blank, hex, "inf" or "nan",
 * which strtod takes: "0x1p20" was a mebibyte, " 1M" one too). The end of
 * it, or NULL. */
static const char *decimal(const char *v) {
  const char *s = v;
  while (*s >= '0' && *s <= '9') s++;
  if (s == v) return NULL;
  if (*s == '.') {
    const char *d = ++s;
    while (*s >= '0' && *s <= '9') s++;
    if (s == d) return NULL;
  }
  if (*s == 'e' || *s == 'E') {
    const char *e = s + 1;
    if (*e == '+' || *e == '-') e++;
    const char *d = e;
    while (*e >= '0' && *e <= '9') e++;
    if (e != d) s = e;
  }
  return s;
}

/* "512M", "2GiB", "1.5G", "800000000": a whole number of bytes (K, M, G, T
 * binary). "1.5" (a byte and a half) and "0x10" are refused. */
int kvp_cli_set_max_memory(const char *v) {
  const char *end = decimal(v);
  errno = 0;
  double x = end != NULL ? strtod(v, NULL) : 0;
  double f = 1;
  if (end != NULL && *end != '\0') {
    const char *u = "KMGT";
    const char *at = strchr(u, *end);
    if (at != NULL) {
      for (const char *k = u; k <= at; k++) f *= 1024;
      end++;
      if (*end == 'i') end++;
      if (*end == 'B') end++;
    } else if (*end == 'B') {
      end++;
    }
  }
  if (end == NULL || *end != '\0' || errno != 0 || !(x > 0) || x * f >= 9.2e18) {
    fprintf(stderr, "kvplan: bad --max-memory '%s' (expected a size such as 512M, 2G or 2GiB)\n", v);
    return -1;
  }
  if (x * f != (double)(long long)(x * f)) {
    fprintf(stderr, "kvplan: bad --max-memory '%s': %.17g bytes is not a whole number of bytes "
            "(expected a size such as 512M, 2G or 2GiB)\n", v, x * f);
    return -1;
  }
  lim.max_memory = (long long)(x * f);
  return 0;
}

int kvp_cli_set_timeout(const char *v) {
  const char *end = decimal(v);
  errno = 0;
  double x = end != NULL ? strtod(v, NULL) : 0;
  if (end == NULL || *end != '\0' || errno != 0 || !(x > 0) || x > 1e9) {
    fprintf(stderr, "kvplan: bad --timeout '%s' (expected seconds > 0, such as 30 or 0.5)\n", v);
    return -1;
  }
  lim.timeout = x;
  return 0;
}

int kvp_cli_set_max_rows(const char *v) {
  long long x = 0;
  const char *s = v;
  if (*s == '\0') s = "x";
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || x > (LLONG_MAX - (*s - '0')) / 10) {
      fprintf(stderr, "kvplan: bad --max-rows '%s' (expected a whole number of rows below 2^63; 0: no limit)\n", v);
      return -1;
    }
    x = x * 10 + (*s - '0');
  }
  lim.max_rows = x;
  return 0;
}

void kvp_cli_set_sandbox(void) { lim.sandbox = 1; }
void kvp_cli_set_allow_binary(void) { lim.allow_binary = 1; }

long long kvp_cli_max_rows(void) { return lim.max_rows < 0 ? 1000000000LL : lim.max_rows; }

const char *kvp_cli_chunk_mode(void) { return lim.allow_binary ? "bt" : "t"; }

/* ---- time ------------------------------------------------------------------------ */

static double deadline;
static volatile sig_atomic_t alarmed, closing;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char stop_msg[96];

/* The deadline in Lua code: raised at the user's line (kvl_where_from level
 * 0, the running function, past the stdlib's frames: a deadline inside a
 * library call names the script's line that made it, as the bindings' loops
 * do through kvl_poll) and in the words of stop_msg, so that the message is
 * one whichever of the two noticed the deadline first. */
static void time_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  if (kvl_stop || now() >= deadline) {
    kvl_where_from(L, 0);
    lua_pushstring(L, stop_msg);
    lua_concat(L, 2);
    lua_error(L);
  }
}

/* At the deadline: the bindings' loops stop at their next kvl_poll (and
 * Lua at its next count hook); two seconds later a script still in C (a
 * loop that does not poll) is ended: the reports being written are dropped
 * and kvplan exits, as a signal would. */
static void on_alarm(int sig) {
  (void)sig;
  if (!closing && !alarmed) {
    alarmed = 1;
    kvl_stop = 1;
    struct itimerval grace = {{0, 0}, {2, 0}};
    setitimer(ITIMER_REAL, &grace, NULL);
    return;
  }
  static const char fin[] = "kvplan: time limit exceeded (--timeout): stopped in a finaliser at exit\n";
  static const char eng[] = "kvplan: time limit exceeded (--timeout): stopped in the engine\n";
  /* closing: in lua_close, where finalisers run without hooks */
  if (write(STDERR_FILENO, closing ? fin : eng, closing ? sizeof fin - 1 : sizeof eng - 1) < 0) alarmed = 2;
  kvp_proc_kill_all();
  kvp_afile_abandon_all(NULL, NULL);
  _exit(1);
}

static void arm_timer(void) {
  if (lim.timeout <= 0) return;
  deadline = now() + lim.timeout;
  alarmed = 0;
  closing = 0;
  kvl_stop = 0;
  snprintf(stop_msg, sizeof stop_msg, "time limit exceeded (--timeout %g s)", lim.timeout);
  kvl_stop_message = stop_msg;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  double whole = floor(lim.timeout);
  struct itimerval at = {{0, 0}, {(time_t)whole, (suseconds_t)((lim.timeout - whole) * 1e6)}};
  if (at.it_value.tv_sec == 0 && at.it_value.tv_usec == 0) at.it_value.tv_usec = 1;
  setitimer(ITIMER_REAL, &at, NULL);
}

void kvp_cli_closing(void) { closing = 1; }

void kvp_cli_disarm(void) {
  closing = 0;
  if (lim.timeout <= 0) return;
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  kvl_stop = 0;
}

/* ---- the sandbox ------------------------------------------------------------------- */

void kvp_cli_sandbox_reset(void) {
  for (size_t i = 0; i < lim.nroot; i++) free(lim.roots[i]);
  lim.nroot = 0;
  free(lim.outroot);
  lim.outroot = NULL;
  free(lim.outfile);
  lim.outfile = NULL;
}

static int under(const char *real, const char *root);

static void add_root(char **list_path, const char *real) {
  (void)list_path;
  if (lim.nroot == lim.caproot) {
    lim.caproot = lim.caproot ? 2 * lim.caproot : 8;
    char **n = realloc(lim.roots, lim.caproot * sizeof *n);
    if (n == NULL) return;
    lim.roots = n;
  }
  lim.roots[lim.nroot] = strdup(real);
  if (lim.roots[lim.nroot]) lim.nroot++;
}

/* A path given on the command line (a key=value value, a word): readable
 * in the sandbox when it exists and lies below the working directory, so
 * that naming / or /etc opens nothing a script may not read already. */
void kvp_cli_allow_read(const char *path) {
  char real[PATH_MAX], cwd[PATH_MAX];
  if (path == NULL || realpath(path, real) == NULL) return;
  if (realpath(".", cwd) == NULL || !under(real, cwd)) return;
  add_root(NULL, real);
}

/* The directory of path (the script's, or -o FILE's). */
static int dir_of(const char *path, char *real) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  if (slash == NULL) snprintf(dir, sizeof dir, ".");
  else if (slash == path) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  return realpath(dir, real) != NULL ? 0 : -1;
}

void kvp_cli_allow_read_dir_of(const char *path) {
  char real[PATH_MAX];
  if (path != NULL && dir_of(path, real) == 0) add_root(NULL, real);
}

/* Writes go under the directory of -o FILE, or under -d OUTDIR; -o naming
 * an existing file that is not a regular one (a device such as /dev/null,
 * a FIFO) makes that file alone writable, not its directory. */
void kvp_cli_allow_write(const char *output, const char *outdir) {
  char real[PATH_MAX];
  struct stat st;
  free(lim.outroot);
  lim.outroot = NULL;
  free(lim.outfile);
  lim.outfile = NULL;
  if (outdir != NULL && realpath(outdir, real) != NULL) lim.outroot = strdup(real);
  else if (output != NULL && strcmp(output, "-") != 0 && stat(output, &st) == 0 &&
           !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    if (realpath(output, real) != NULL) lim.outfile = strdup(real);
  } else if (output != NULL && strcmp(output, "-") != 0 && dir_of(output, real) == 0)
    lim.outroot = strdup(real);
  if (lim.outroot) add_root(NULL, lim.outroot);
}

static int under(const char *real, const char *root) {
  size_t n = strlen(root);
  if (strcmp(root, "/") == 0) return 1;
  return strncmp(real, root, n) == 0 && (real[n] == '\0' || real[n] == '/');
}

/* The real path of path for the check: the file itself when it exists,
 * else its directory's real path and its name. */
static int resolve(const char *path, char *real) {
  if (realpath(path, real) != NULL) return 0;
  char dir[PATH_MAX];
  if (dir_of(path, dir) < 0) return -1;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcmp(base, "..") == 0 || strcmp(base, ".") == 0) return -1;
  if (snprintf(real, PATH_MAX, "%s/%s", dir, base) >= PATH_MAX) return -1;
  return 0;
}

/* sandbox check, registered as kvplan's file access hook: (path, "r"|"w")
 * -> true, or nil and why */
static int l_check(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *mode = luaL_optstring(L, 2, "r");
  int write = strpbrk(mode, "wa+") != NULL;
  char real[PATH_MAX];
  if (resolve(path, real) == 0) {
    if (write) {
      if (lim.outroot != NULL && under(real, lim.outroot)) return lua_pushboolean(L, 1), 1;
      if (lim.outfile != NULL && strcmp(real, lim.outfile) == 0) return lua_pushboolean(L, 1), 1;
    } else {
      for (size_t i = 0; i < lim.nroot; i++)
        if (under(real, lim.roots[i])) return lua_pushboolean(L, 1), 1;
    }
  }
  luaL_pushfail(L);
  if (write && lim.outfile != NULL)
    lua_pushfstring(L, "sandbox: cannot write '%s' (only %s, which -o names)", path, lim.outfile);
  else if (write)
    lua_pushfstring(L, "sandbox: cannot write '%s' (only under the output directory%s%s)", path,
                    lim.outroot ? " " : "", lim.outroot ? lim.outroot : ": give -o FILE or -d OUTDIR");
  else
    lua_pushfstring(L, "sandbox: cannot read '%s' (only under the script's directory and the "
                    "paths on the command line below the working directory)", path);
  return 2;
}

/* io.open under the sandbox: the check, then the real io.open (upvalue) */
static int sb_open(lua_State *L) {
  int n = lua_gettop(L);
  const char *path = luaL_checkstring(L, 1);
  const char *mode = luaL_optstring(L, 2, "r");
  lua_pushcfunction(L, l_check);
  lua_pushstring(L, path);
  lua_pushstring(L, mode);
  lua_call(L, 2, 2);
  if (!lua_toboolean(L, -2)) return luaL_error(L, "%s", lua_tostring(L, -1));
  lua_settop(L, n);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* io.lines(path), io.input(path), io.output(path), dofile, loadfile: a
 * string first argument is checked (upvalue 2: the mode), then the real one */
static int sb_path_first(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    lua_pushcfunction(L, l_check);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_call(L, 2, 2);
    if (!lua_toboolean(L, -2)) return luaL_error(L, "%s", lua_tostring(L, -1));
    lua_pop(L, 2);
  }
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

static void wrap_path(lua_State *L, const char *table, const char *name, const char *mode) {
  if (table) lua_getglobal(L, table);
  else lua_pushglobaltable(L);
  lua_getfield(L, -1, name);
  lua_pushstring(L, mode);
  lua_pushcclosure(L, sb_path_first, 2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

/* The mode a load may use: the script's own ("b", "t", "bt"; default
 * "bt") less "b" unless --allow-binary. NULL when nothing is left: a mode
 * "b" asks for a binary chunk alone, refused (it was replaced by "t", so
 * load(text, name, "b") loaded the text that Lua refuses under "b"). */
static const char *chunk_mode(lua_State *L, int arg) {
  const char *m = luaL_optstring(L, arg, "bt");
  int t = strchr(m, 't') != NULL, b = strchr(m, 'b') != NULL && lim.allow_binary;
  return t && b ? "bt" : t ? "t" : b ? "b" : NULL;
}

static int refuse_mode(lua_State *L, int arg) {
  luaL_pushfail(L);
  lua_pushfstring(L, "attempt to load a chunk in mode '%s': binary chunks are refused "
                  "(--allow-binary accepts them)", luaL_optstring(L, arg, "bt"));
  return 2;
}

/* load(chunk, name, mode, env) with the mode limited to text (unless
 * --allow-binary): upvalue 1 is the real load */
static int text_load(lua_State *L) {
  lua_settop(L, 4);
  const char *mode = chunk_mode(L, 3);
  if (mode == NULL) return refuse_mode(L, 3);
  lua_pushstring(L, mode);
  lua_replace(L, 3);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 4, LUA_MULTRET);
  return lua_gettop(L);
}

/* loadfile(path, mode, env) likewise */
static int text_loadfile(lua_State *L) {
  const char *path = luaL_optstring(L, 1, NULL);
  const char *mode = chunk_mode(L, 2);
  if (mode == NULL) return refuse_mode(L, 2);
  if (lim.sandbox && path != NULL) {
    lua_pushcfunction(L, l_check);
    lua_pushstring(L, path);
    lua_call(L, 1, 2);
    if (!lua_toboolean(L, -2)) return luaL_error(L, "%s", lua_tostring(L, -1));
    lua_pop(L, 2);
  }
  int env = !lua_isnone(L, 3);
  if (luaL_loadfilex(L, path, mode) != LUA_OK) {
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
  }
  if (env) {
    lua_pushvalue(L, 3);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
  }
  return 1;
}

/* dofile(path) through text_loadfile */
static int text_dofile(lua_State *L) {
  lua_settop(L, 1);
  lua_pushcfunction(L, text_loadfile);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 2);
  if (lua_isnil(L, -2)) return lua_error(L);
  lua_pop(L, 1);
  lua_call(L, 0, LUA_MULTRET);
  return lua_gettop(L) - 1;
}

/* package.searchers[2] for Lua files: package.searchpath, the sandbox
 * check, loaded as text */
static int text_searcher(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchpath");
  lua_pushstring(L, name);
  lua_getfield(L, -3, "path");
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return 1; /* the message of the paths tried */
  lua_pop(L, 1);
  const char *file = lua_tostring(L, -1);
  lua_pushcfunction(L, text_loadfile);
  lua_pushstring(L, file);
  lua_call(L, 1, 2);
  if (lua_isnil(L, -2))
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file,
                      lua_tostring(L, -1));
  lua_pop(L, 1);
  lua_pushstring(L, file);
  return 2;
}

/* package.searchpath(name, path [, sep [, rep]]) under the sandbox: the
 * candidates are tried only when the check allows them, so a script learns
 * nothing of a file outside; the message lists every candidate, as Lua's
 * (loadlib.c searchpath) does. */
static int sb_searchpath(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const char *path = luaL_checkstring(L, 2);
  const char *sep = luaL_optstring(L, 3, ".");
  const char *dirsep = luaL_optstring(L, 4, LUA_DIRSEP);
  lua_settop(L, 4);
  if (*sep != '\0' && strchr(name, *sep) != NULL) name = luaL_gsub(L, name, sep, dirsep);
  const char *all = luaL_gsub(L, path, LUA_PATH_MARK, name);
  for (const char *p = all;;) {
    const char *semi = strchr(p, *LUA_PATH_SEP);
    size_t len = semi != NULL ? (size_t)(semi - p) : strlen(p);
    if (len > 0) {
      const char *file = lua_pushlstring(L, p, len);
      lua_pushcfunction(L, l_check);
      lua_pushvalue(L, -2);
      lua_pushliteral(L, "r");
      lua_call(L, 2, 2);
      int ok = lua_toboolean(L, -2);
      lua_pop(L, 2);
      FILE *f = ok ? fopen(file, "r") : NULL;
      if (f != NULL) {
        fclose(f);
        return 1;
      }
      lua_pop(L, 1);
    }
    if (semi == NULL) break;
    p = semi + 1;
  }
  luaL_pushfail(L);
  lua_pushliteral(L, "no file '");
  luaL_gsub(L, all, LUA_PATH_SEP, "'\n\tno file '");
  lua_pushliteral(L, "'");
  lua_concat(L, 3);
  return 2;
}

static void drop(lua_State *L, const char *table, const char *name) {
  lua_getglobal(L, table);
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

/* ---- inputs: the files the command line names ------------------------------ */

/* The regular files the run's command line names (the script, a word or a
 * key=value value), by device and inode: a report written over one
 * replaced the input with the report ('kvplan s.lua -o s.lua', `validate
 * v.log -o v.log`, `simulate trace=t.csv timeline=t.csv`). */
static struct input { dev_t dev; ino_t ino; int script, read; char *word; } *inputs;
static size_t ninput;

void kvp_cli_inputs(const char *script, int n, char *const *words) {
  for (size_t i = 0; i < ninput; i++) free(inputs[i].word);
  free(inputs);
  inputs = NULL;
  ninput = 0;
  if (n < 0) return;
  inputs = calloc((size_t)n + 1, sizeof *inputs);
  if (inputs == NULL) return;
  for (int k = -1; k < n; k++) {
    const char *word = k < 0 ? script : words[k], *path = word;
    if (word == NULL) continue;
    const char *eq = k < 0 ? NULL : strchr(word, '=');
    if (eq != NULL && eq != word) path = eq + 1;
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    char *copy = strdup(word);
    if (copy == NULL) continue;
    inputs[ninput++] = (struct input){st.st_dev, st.st_ino, k < 0, k < 0, copy};
  }
}

static struct input *input_of(const char *path) {
  struct stat st;
  if (path == NULL || strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return NULL;
  for (size_t i = 0; i < ninput; i++)
    if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino) return &inputs[i];
  return NULL;
}

const char *kvp_cli_input_named(const char *path, int *script) {
  struct input *in = input_of(path);
  if (in != NULL && script != NULL) *script = in->script;
  return in != NULL ? in->word : NULL;
}

/* KVL_INPUT_CHECK (path, mode): a read marks the input read; a report's
 * path must be no input the run has read (a word that names a file the
 * run only writes, chart=front.png of an earlier run, may be written) */
static int l_input_check(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *mode = luaL_checkstring(L, 2);
  struct input *in = input_of(path);
  if (in != NULL && mode[0] == 'r') in->read = 1;
  if (in == NULL || mode[0] == 'r' || !in->read) {
    lua_pushboolean(L, 1);
    return 1;
  }
  int script = in->script;
  const char *word = in->word;
  luaL_pushfail(L);
  lua_pushfstring(L, "cannot write '%s': it is the %s '%s' of this run, which the report would "
                  "replace (write the report to another file)", path, script ? "script" : "input", word);
  return 2;
}

/* io.open (the original, upvalue 1) marking an input opened for reading
 * read, as the binding's readers do through KVL_INPUT_CHECK: calibrate's
 * results and profiles, merge's parts and validate's logs are read with
 * io.open, so `simulate profile=p.json timeline=p.json` replaced the profile
 * with the timeline */
static int input_open(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    const char *mode = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "r";
    struct input *in = mode[0] == 'r' ? input_of(lua_tostring(L, 1)) : NULL;
    if (in != NULL) in->read = 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void kvp_cli_guard(lua_State *L) {
  if (ninput > 0) {
    lua_pushcfunction(L, l_input_check);
    lua_setfield(L, LUA_REGISTRYINDEX, KVL_INPUT_CHECK);
    lua_getglobal(L, "io");
    lua_getfield(L, -1, "open");
    lua_pushcclosure(L, input_open, 1);
    lua_setfield(L, -2, "open");
    lua_pop(L, 1);
  }
  /* every mode: text chunks only (unless --allow-binary), through load,
   * loadfile, dofile and require */
  lua_getglobal(L, "load");
  lua_pushcclosure(L, text_load, 1);
  lua_setglobal(L, "load");
  lua_pushcfunction(L, text_loadfile);
  lua_setglobal(L, "loadfile");
  lua_pushcfunction(L, text_dofile);
  lua_setglobal(L, "dofile");
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  lua_pushcfunction(L, text_searcher);
  lua_rawseti(L, -2, 2);
  if (lim.sandbox) { /* no C modules: drop the C and all-in-one searchers */
    lua_pushnil(L);
    lua_rawseti(L, -2, 4);
    lua_pushnil(L);
    lua_rawseti(L, -2, 3);
  }
  lua_pop(L, 2);
  if (lim.timeout > 0) {
    lua_sethook(L, time_hook, LUA_MASKCOUNT, 10000);
    arm_timer();
  }
  if (!lim.sandbox) return;
  static const char *const os_drop[] = {"execute", "remove", "rename", "exit", "tmpname",
                                        "getenv", "setlocale", NULL};
  for (int i = 0; os_drop[i]; i++) drop(L, "os", os_drop[i]);
  drop(L, "io", "popen");
  drop(L, "io", "tmpfile");
  drop(L, "package", "loadlib");
  lua_pushnil(L);
  lua_setglobal(L, "debug");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushnil(L);
  lua_setfield(L, -2, "debug");
  lua_pop(L, 1);
  lua_getglobal(L, "package");
  lua_pushliteral(L, "");
  lua_setfield(L, -2, "cpath");
  lua_pushcfunction(L, sb_searchpath);
  lua_setfield(L, -2, "searchpath");
  lua_pop(L, 1);
  lua_getglobal(L, "io");
  lua_getfield(L, -1, "open");
  lua_pushcclosure(L, sb_open, 1);
  lua_setfield(L, -2, "open");
  lua_pop(L, 1);
  wrap_path(L, "io", "lines", "r");
  wrap_path(L, "io", "input", "r");
  wrap_path(L, "io", "output", "w");
  /* the engine's own readers and writers (csv, json, reports) ask this */
  lua_pushcfunction(L, l_check);
  lua_setfield(L, LUA_REGISTRYINDEX, KVL_FILE_CHECK);
}

int kvp_cli_sandboxed(void) { return lim.sandbox; }
