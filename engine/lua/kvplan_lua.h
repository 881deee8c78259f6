/*
 * kvplan_lua.h: what the binding layer offers (engine/lua/).
 * The only layer that sees <lua.h>: it checks arguments, converts, calls the
 * core (engine/core/kvplan.h) and the report writer (engine/io/csvw.h), and
 * raises Lua errors. No accounting here.
 *
 * To the program (engine/cli/): luaopen_kvplan and kvp_preload, which make
 * require "kvplan" work, and the error helpers. To the binding files: the
 * openers of the C modules and the checked conversions below.
 */
#ifndef KVP_KVPLAN_LUA_H
#define KVP_KVPLAN_LUA_H

#include <lua.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdint.h>

#include "kvplan.h"

/* ---- the package --------------------------------------------------------- */

/* require "kvplan": register the stdlib and C modules, run kvplan.init. */
int luaopen_kvplan(lua_State *L);
/* Register every stdlib module and C module of kvplan in package.preload,
 * "kvplan" included, so require finds them without touching the file
 * system; returns the index of the init module or -1. */
int kvp_preload(lua_State *L);

/* The C modules, one opener each (registered by kvplan_lua.c). */
int luaopen_kvplan_core(lua_State *L);
int luaopen_kvplan_csv(lua_State *L);
int luaopen_kvplan_json(lua_State *L);
int luaopen_kvplan_sweep_core(lua_State *L);
int luaopen_kvplan_optim_core(lua_State *L);
int luaopen_kvplan_sim_core(lua_State *L);
int luaopen_kvplan_predict_core(lua_State *L);

/* ---- helpers shared by the binding files ---------------------------------- */

/* Push "file:line: " of the innermost frame that is user code: not C and
 * not the embedded stdlib ("@stdlib/..."), so every error points at the
 * line of the user's script that caused it. */
void kvl_where(lua_State *L);
/* The same from stack level `level` on (0: the running function, as a
 * hook sees it; kvl_where is level 1, a C function's caller). */
void kvl_where_from(lua_State *L, int level);
/* The registry key of the program's file access check (the sandbox): a
 * function (path, mode) -> true | nil, message. Absent: every path is
 * allowed (a stock lua5.4 loading kvplan.so, kvplan without --sandbox). */
#define KVL_FILE_CHECK "kvplan.file_check"
/* The registry key of the program's check of a report's path against the
 * files its command line names as inputs: a function (path, mode) -> true |
 * nil, message (a read marks the input read; a write over an input read is
 * refused). Absent: no check (a stock lua5.4, kvplan merge). */
#define KVL_INPUT_CHECK "kvplan.input_check"
/* The file name at idx (a string; NULL for nil or none when optional),
 * refused when it holds a NUL byte: C would open the name cut at it
 * (kv.report{path = "x\0y.csv"} wrote the file x). */
const char *kvl_path_arg(lua_State *L, int idx, int optional);
/* Raise unless the program allows opening path ("r" read, "w" write; a
 * write also must not replace an input of the command line);
 * NULL and "-" (standard output) always pass. */
void kvl_check_file(lua_State *L, const char *path, const char *mode);
/* Set by the program (from a signal handler: a time limit) to stop the
 * bindings' long C loops: kvl_poll raises kvl_stop_message at the next
 * check. */
extern volatile sig_atomic_t kvl_stop;
extern const char *kvl_stop_message;
void kvl_poll(lua_State *L);
/* An HTML report's page described from the Lua table at idx: {title,
 * version, inputs = {{name, value}, ...}, units = {[column] = unit}}
 * (csv_lua.c; htmlw.h); nothing when w writes another format or idx holds
 * no table. Before the header row is flushed. */
typedef struct kvp_csv kvp_csv;
void kvl_html_page(lua_State *L, int idx, kvp_csv *w);
/* Raise a formatted error located at the user's line. */
int kvl_error(lua_State *L, const char *fmt, ...);
/* Raise the error of a failed core call: the diag message if any. */
int kvl_core_error(lua_State *L, kvp_err e, const kvp_diag *d, const char *what);
/* Raise "WHAT: arithmetic overflow past 2^63" naming the inputs of deployment d
 * that cause it (the ledger, then the fit, max_concurrency and max_context of
 * `concurrency` requests of `context` tokens; core_lua.c ledger_error). */
int kvl_overflow_error(lua_State *L, const char *what, const kvp_deploy *d, int64_t context,
                       int64_t concurrency);
/* "got 2.5", "got nan", "got string 'x'", "got nil" for value at idx. */
const char *kvl_got(lua_State *L, int idx);

/* Value at idx as an exact integer (integral floats accepted), else error
 * "field 'name' must be an integer, got ..." */
int64_t kvl_toint(lua_State *L, int idx, const char *name);
/* Finite number at idx, else error naming the field. */
double kvl_tonum(lua_State *L, int idx, const char *name);

/* Field of the options table at idx: absent gives def, present must be an
 * integer (kvl_toint). */
int64_t kvl_int_field(lua_State *L, int idx, const char *name, int64_t def);
double kvl_num_field(lua_State *L, int idx, const char *name, double def);
/* t[k] = v for the table t on top of the stack. */
void kvl_set_int(lua_State *L, const char *k, int64_t v);
void kvl_set_num(lua_State *L, const char *k, double v);
/* The registry's metatable `name` of a userdata class, made once: the
 * methods `meth` (NULL-ended) its __index, gc its __gc and __close. */
void kvl_new_class(lua_State *L, const char *name, const luaL_Reg *meth, lua_CFunction gc);
/* Reject keys of the table at idx that are not in the NULL-ended list
 * (what names the table in the message). */
void kvl_check_keys(lua_State *L, int idx, const char *const *keys, const char *what);

/* ---- conversions of deployments and performance parameters (convert_lua.c) -- */

/* The userdata metatable of a model (core.model, core_lua.c). */
#define KVL_MODEL_MT "kvplan.Model"
/* The format table at idx ({bits, group, scale, zero}), checked. */
kvp_format kvl_check_format(lua_State *L, int idx, const char *field);
/* The layer kind named at idx (full, sliding, ...); what names the field. */
kvp_kind kvl_check_kind(lua_State *L, int idx, const char *what);
/* Fill d from the deployment table at idx, every field checked. */
void kvl_check_deploy(lua_State *L, int idx, kvp_deploy *d);
/* core.deploy_keys(): the keys kvl_check_deploy takes, as a list. */
int kvl_deploy_keys(lua_State *L);
/* A GPU's rates for step times ({hbm_gbps, tflops, link_gbps, mem_eff, ...}),
 * checked. */
kvp_perf kvl_check_perf(lua_State *L, int idx);
/* Push the step times of ledger l under perf p at the context and
 * concurrency at stack positions cidx, nidx, as the table d:time returns
 * (errors raise). */
int kvl_time_of(lua_State *L, const kvp_ledger *l, const kvp_perf *p, int cidx, int nidx);
/* Raise the error of a failed kvp_time_at of cost c (t as it filled it): the
 * price named when the times are finite and usd_per_mtok is not. */
int kvl_time_error(lua_State *L, const kvp_cost *c, const kvp_time *t, int64_t ctx, int64_t conc);

/* ---- other conversions ---------------------------------------------------------- */

/* A length distribution table ({kind, lo, hi, mu, sigma, values}) at idx,
 * checked; empirical values stay alive on the stack (optim_lua.c). */
kvp_dist kvl_check_dist(lua_State *L, int idx);
/* The non-torch memory rule's constants from the table at idx
 * (engines.lua non_torch: {tp1 =, tpn =, context = {lo, point, hi}}). */
void kvl_check_non_torch(lua_State *L, int idx, kvp_non_torch *nt);
/* A deployment's engine rule from the table at idx (deploy.lua). */
void kvl_check_engine_rule(lua_State *L, int idx, kvp_engine_rule *r);
/* A GPU's facts for the engine rules ({a100 =, mx = {layout}}, deploy.lua
 * gpu_facts) from the table at idx. */
void kvl_check_gpu_facts(lua_State *L, int idx, kvp_gpu_facts *g);

#endif
