-- stdlib/kvplan/init.lua: the kvplan package, require "kvplan".
-- Stdlib layer: gathers the modules under one table.
--
--   local kv = require "kvplan"
--   local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 2, kv = "fp8"}
--   print(d:ledger():max_concurrency(32768))

local core = require "kvplan.core"

local M = {
  version = core.version,
  core = core,
  util = require "kvplan.util",
  units = require "kvplan.units",
  formats = require "kvplan.formats",
  models = require "kvplan.models",
  gpus = require "kvplan.gpus",
  report = require "kvplan.report",
  csv = require "kvplan.csv",
  optim = require "kvplan.optim",
  workload = require "kvplan.workload",
}

local deploy = require "kvplan.deploy"
local sweep = require "kvplan.sweep"

--- kv.sweep{axes..., columns = {...}}: a cartesian sweep (see sweep.lua).
M.sweep = sweep.new
M.deployments = deploy

--- kv.simulate{...}: a serving simulation (see sim.lua).
M.simulate = function(opts) return require("kvplan.sim").simulate(opts) end
--- kv.simulations{...}: simulations over axes, one report row each (see sim.lua).
M.simulations = function(spec) return require("kvplan.sim").sweep(spec) end

--- kv.deploy{...}: a Deployment (see deploy.lua).
M.deploy = deploy.new
--- kv.model(t or name): a Model from a table, or the catalog's by name.
M.model = function(t) return M.models.get(t) end
--- kv.gpu(t or name): a GPU from a table, or the catalog's by name.
M.gpu = function(t) return M.gpus.get(t) end
--- kv.format(name or table): a storage format.
M.format = function(f) return M.formats.get(f) end
--- kv.options(args, defaults): a script's key=value arguments, checked;
--- kv.options.at_least(min, default) a number argument of at least min;
--- kv.options.deployment_fields(defaults) adds every deployment field of the
--- registry a command does not take itself, kv.options.given_fields(opt,
--- names, base) the ones given, kv.options.length(v) a max_model_len given as
--- tokens (nil for none or auto), kv.options.output(name, path) a file an
--- argument names for the run to write, checked now, kv.options.as_usage(opt,
--- f, ...) f's error naming a given argument as that argument's usage error
--- (options.lua).
local options_mod = require "kvplan.options"
M.options = setmetatable({required = options_mod.required, at_least = options_mod.at_least, bad = options_mod.bad,
                          deployment_fields = options_mod.deployment_fields,
                          given_fields = options_mod.given_fields, length = options_mod.length,
                          output = options_mod.output, as_usage = options_mod.as_usage},
                         {__call = function(_, ...) return require("kvplan.options").parse(...) end})
--- kv.validate(text [, opts]): kvplan against an engine startup log (validate.lua).
M.validate = function(text, opts) return require("kvplan.validate").check(text, opts) end
--- kv.best{model, context, concurrency, ...}: ranked deployments (best.lua).
M.best = function(spec) return require("kvplan.best").search(spec) end
--- kv.plan{model, input, output, rate, ttft_ms, tpot_ms, ...}: the deployments and
--- replicas that serve a rate under an SLA, ranked (plan.lua); kv.plan.capacity(d, wl,
--- sla) the highest rate one replica sustains, and the module's other fields.
M.plan = setmetatable({}, {__index = function(_, k) return require("kvplan.plan")[k] end,
                           __call = function(_, spec) return require("kvplan.plan").search(spec) end})
--- kv.pareto{model, gpus, input, output, tpot_ms, ...}: points of deployments x client
--- concurrencies, marked on the front of tokens/s per GPU against tokens/s per user
--- (pareto.lua); kv.pareto.front(points, x, y) marks a front of any points;
--- kv.pareto.chart(points, info, {output = ...}) draws them.
M.pareto = setmetatable({front = function(...) return require("kvplan.pareto").front(...) end,
                         chart = function(...) return require("kvplan.pareto").chart(...) end},
                        {__call = function(_, spec) return require("kvplan.pareto").search(spec) end})
--- kv.calibrate{deployment, results, ...}: step-time factors fitted to benchmark results
--- (calibrate.lua); kv.calibrate.read(path) reads a result file's points.
M.calibrate = setmetatable({read = function(...) return require("kvplan.calibrate").read(...) end},
                           {__call = function(_, spec) return require("kvplan.calibrate").calibrate(spec) end})
--- kv.plot{data, x, y, by, kind, output, ...}: a chart by gnuplot (plot.lua).
M.plot = function(spec) return require("kvplan.plot").plot(spec) end
--- kv.columns: what report columns measure and their units (columns.lua).
M.columns = require "kvplan.columns"
--- kv.launch.command(d, engine) / kv.launch.parse(text, engine): launch
--- commands that start (launch.lua).
M.launch = setmetatable({}, {__index = function(_, k) return require("kvplan.launch")[k] end})
--- kv.bytes("80 GiB") -> 85899345920
M.bytes = M.units.bytes

return M
