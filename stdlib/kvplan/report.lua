-- stdlib/kvplan/report.lua: reports (CSV, tables, JSON Lines, Markdown, HTML
-- pages) and the standard ledger row.
-- Stdlib layer: report shapes live here; the writer is engine/io/csvw.c (libcsv
-- quoting, exact integers, atomic file replace).
--
--   local r = kv.report{columns = {"model", {"kv_gib", precision = 2}}, path = "x.csv"}
--   r:row{model = "llama-3.1-8b", kv_gib = 2.5}
--   r:close()
--
-- Without `path` a report goes to the file given by `kvplan -o FILE`, else to
-- standard output; under `kvplan batch -d DIR`, to DIR/SCRIPT.csv, or to
-- DIR/SCRIPT-NAME.csv for a report given a `name`. A report the script leaves
-- open is committed when the script ends; after an error it is discarded and
-- no file is left behind. Under `--shard K/N` the rows a script writes itself
-- go to shard 1 only (sweeps are sliced; see sweep.lua).

local csv = require "kvplan.csv"
local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

local Report = {}
Report.__index = Report
Report.__name = "kvplan.Report"

local open_reports = {} -- in opening order
local used_paths = {}

local function cli() return package.loaded["kvplan.cli"] or {} end

--- The file name extension of a report in format f (batch outputs).
function M.extension(f)
  return ({json = ".jsonl", markdown = ".md", table = ".txt", vertical = ".txt", html = ".html"})[f] or ".csv"
end

M.formats = {csv = true, table = true, vertical = true, json = true, markdown = true, html = true, auto = true}

--- Where a report or sweep goes: path if given, else the batch file for
--- `name`, else `kvplan -o FILE`; nil is standard output.
function M.output_path(path, name)
  local c = cli()
  if path == nil and name ~= nil and c.outdir ~= nil then
    if type(name) ~= "string" or not name:match("^[%w_.-]+$") then
      util.raise("report name must be letters, digits, '_', '.' or '-', got '%s'", util.shown(name))
    end
    path = c.outdir .. "/" .. c.name .. "-" .. name .. M.extension(c.format)
  end
  if path == nil then path = c.output end
  if path == "-" then path = nil end
  if path ~= nil and type(path) ~= "string" then
    util.raise("field 'path' must be a string, got %s", type(path))
  end
  return path
end

--- Where a report opened with {path =, name =, format =} goes, as text
--- written beside it needs to know: its format ("csv", "table", "json" or
--- "markdown"), whether it is standard output, and the columns a table
--- there is fitted to (nil: not fitted: a file, a pipe, --wide).
function M.destination(opts)
  opts = opts or {}
  local path = M.output_path(opts.path, opts.name)
  local f, width = csv.format_of(path, opts.format)
  return f, path == nil, path == nil and width > 0 and width or nil
end

--- Paths claimed by this run, in order (the batch command reads them so a
--- later script cannot overwrite them).
M.claimed = {}

local written_paths = {} -- paths an earlier report of this run was written to

--- Mark path as written by an open report (nil: standard output). Under
--- `kvplan batch`, a path an earlier script of the batch wrote is refused.
--- given is the path the script named (nil: path is the run's destination,
--- `-o FILE` or the batch's file): a destination an earlier report of this
--- run wrote to a file is refused too. A path the script names itself may
--- be written again (written, read back, rewritten).
function M.claim(path, given)
  if path == nil then return end
  if used_paths[path] then util.raise("report path '%s' is already used by an open report", path) end
  -- a second report to the run's destination file would rename over the
  -- first, which would be lost with status 0 (-o FILE, or a batch script's
  -- two unnamed reports); standard output and devices take both in turn
  if given == nil and written_paths[path] and csv.replaces(path) then
    util.raise("report path '%s' was already written by an earlier report of this run: this one "
               .. "would replace it (give each report its own path, or a name under kvplan batch)", path)
  end
  local taken = cli().taken
  if taken ~= nil and taken[path] ~= nil then
    util.raise("report '%s' was already written by '%s' in this batch", path, taken[path])
  end
  used_paths[path] = true
  if given == nil then written_paths[path] = true end
  M.claimed[#M.claimed + 1] = path
end

function M.release(path)
  if path ~= nil then used_paths[path] = nil end
end

-- Columns as names, precisions and units: a list of names or {name,
-- precision = p, unit = "GiB"}.
local function parse_columns(cols)
  local names, prec, index, unit = {}, {}, {}, {}
  for i, c in ipairs(cols) do
    local name, p = c, nil
    if type(c) == "table" then
      util.check_keys(c, {[1] = true, precision = true, unit = true}, "column " .. i)
      name, p = c[1], c.precision
      if c.unit ~= nil and type(c.unit) ~= "string" then
        util.raise("unit of column %d must be a string, got %s", i, type(c.unit))
      end
      unit[i] = c.unit
    end
    if type(name) ~= "string" or name == "" then
      util.raise("column %d must be named by a non-empty string, got %s", i, util.shown(name))
    end
    if index[name] then util.raise("column '%s' appears twice", name) end
    if p ~= nil then p = util.count(p, "precision of column '" .. name .. "'", 0) end
    names[i], prec[i], index[name] = name, p, i
  end
  return names, prec, index, unit
end

--- The unit of column `name`: the one its declaration gives ({name, unit
--- = ...}), else the column registry's (columns.lua: context tokens,
--- *_gib GiB, *_ms_pNN ms, a deployment field's unit), else nil.
function M.column_unit(name, declared)
  if declared ~= nil then return declared end
  return (select(2, require("kvplan.columns").quantity(name)))
end

-- An option's value as the inputs show it: lists joined by commas.
local function shown(v)
  if type(v) ~= "table" then return tostring(v) end
  local parts = {}
  for i, x in ipairs(v) do
    if type(x) == "table" then return nil end
    parts[i] = tostring(x)
  end
  return table.concat(parts, ",")
end

--- What an HTML page of report r with these columns shows beside its table
--- (csv.open's page): its title (r.title, else the command or the script),
--- kvplan's version, the inputs (the command and its words, the options in
--- effect that have a value) and each column's unit.
function M.page(r, names, unit)
  local c = cli()
  local words = table.concat(c.words or {}, " ")
  local given = rawget(_G, "arg") -- a stock lua5.4's, when kvplan did not run the script
  local script = c.script and tostring(c.script)
                 or type(given) == "table" and given[0] and tostring(given[0]) or "(default scenario)"
  local run = c.command and ("kvplan " .. c.command) or ("kvplan " .. script)
  local inputs = {{"command", run .. (words ~= "" and (" " .. words) or "")}}
  if c.command == nil then inputs[#inputs + 1] = {"script", script} end
  if type(c.options) == "table" then -- those with a value, by name
    local set = {}
    for _, k in ipairs(util.sorted_keys(c.options)) do
      local v = shown(c.options[k])
      if type(k) == "string" and v ~= nil and v ~= "" then set[#set + 1] = k .. "=" .. v end
    end
    if #set > 0 then inputs[#inputs + 1] = {"options in effect", table.concat(set, " ")} end
  end
  local units = {}
  for i, n in ipairs(names) do units[i] = M.column_unit(n, unit and unit[i]) end
  return {title = r.title or run, version = require("kvplan.core").version, inputs = inputs,
          units = units}
end

--- Write a command's text (kvplan startup, kvplan launch) where a report
--- would go (`-o FILE`, else standard output), whole and atomically: as
--- it is, or as an HTML page (-f html, FILE.html) of the inputs and the
--- text. opts: title (the page's), name (under kvplan batch), format.
function M.text(text, opts)
  if type(text) ~= "string" and type(text) ~= "number" then
    util.raise("report text needs a string, got %s", type(text))
  end
  opts = opts or {}
  util.check_keys(opts, {title = true, name = true, format = true}, "report text")
  local path = M.output_path(nil, opts.name)
  M.claim(path)
  local page = (csv.format_of(path, opts.format)) == "html" and M.page({title = opts.title}, {}) or nil
  local ok, err = pcall(csv.text, path, text, opts.format, page)
  M.release(path)
  if not ok then util.raise("%s", util.shown(err):gsub("^.-:%d+: ", "", 1)) end
end

--- The columns `kvplan --columns a,b,c` chose of a report's columns
--- `names`: their indices in names, in the order given; nil without
--- --columns. A name the report lacks, or one given twice, is a usage error
--- naming it, the nearest of the report's columns and all of them.
function M.chosen(names)
  local want = cli().columns
  if want == nil then return nil end
  local index, out, seen = {}, {}, {}
  for i, n in ipairs(names) do index[n] = i end
  for _, w in ipairs(want) do
    if index[w] == nil then
      require("kvplan.options").bad("--columns: unknown column '%s'%s; the report's columns: %s", w,
                                    util.suggest(w, names), table.concat(names, ", "))
    end
    if seen[w] then require("kvplan.options").bad("--columns: column '%s' given twice", w) end
    out[#out + 1], seen[w] = index[w], true
  end
  return out
end

-- Open the writer of report r with these columns (only those --columns
-- chose: r.pos[i] is where column i goes, nil when it is left out).
local function open_writer(r, names, prec, unit)
  local pick = M.chosen(names)
  if pick then
    local n, p, u = {}, {}, {}
    r.pos = {}
    for k, i in ipairs(pick) do n[k], p[k], u[k], r.pos[i] = names[i], prec[i], unit and unit[i], k end
    names, prec, unit = n, p, u
  end
  local ok, w = pcall(csv.open, r.path, names, prec, r.format, r.html and M.page(r, names, unit) or nil)
  if not ok then
    M.release(r.path)
    util.raise("%s", util.shown(w):gsub("^.-:%d+: ", "", 1))
  end
  r.writer = w
end

-- A chart spec of a report: kv.plot's fields but data and output.
function M.check_chart(c, i)
  if type(c) ~= "table" then util.raise("field 'chart' item %d must be a table of kv.plot's fields", i) end
  if c.output ~= nil then
    util.raise("field 'chart' item %d: a report's chart is drawn into its page: no 'output'", i)
  end
  for _, f in ipairs{"x", "y"} do
    if c[f] == nil then util.raise("field 'chart' item %d needs '%s'", i, f) end
  end
end

--- A report with the given columns: names, or {name, precision = digits}.
--- `format`: csv, table, vertical (a record a block), json (JSON Lines),
--- markdown or html (default: the
--- command line's --format, else by the file name, else a table on a
--- terminal and CSV otherwise). `columns = "used"` keeps the rows until the
--- report closes and writes only the columns some row fills (not nil, not
--- ""), in the order of `order` (a columns list, e.g. kv.optim.columns(...);
--- default: the ledger's and the optimizations' columns), then by name.
function M.new(opts)
  util.opts_of(opts, {columns = true, path = true, name = true, format = true, order = true,
                      title = true, chart = true}, "report")
  if opts.format ~= nil and not M.formats[opts.format] then
    util.raise("field 'format' must be csv, table, vertical, json, markdown or html, got %s", util.shown(opts.format))
  end
  if opts.title ~= nil and type(opts.title) ~= "string" then
    util.raise("field 'title' must be a string, got %s", type(opts.title))
  end
  local charts = opts.chart
  if charts ~= nil then
    if type(charts) ~= "table" then
      util.raise("field 'chart' must be a table of kv.plot's fields or a list of them")
    end
    if charts[1] == nil then charts = {charts} end
    for i, c in ipairs(charts) do M.check_chart(c, i) end
  end
  local cols = opts.columns
  local used = cols == "used"
  if not used and (type(cols) ~= "table" or #cols == 0) then
    util.raise("field 'columns' must be a non-empty list of column names, or \"used\"")
  end
  if opts.order ~= nil and not used then util.raise("field 'order' goes with columns = \"used\"") end
  local path = M.output_path(opts.path, opts.name)
  M.claim(path, opts.path)
  local shard = cli().shard
  local r = setmetatable({path = path, format = opts.format, title = opts.title,
                          silent = shard ~= nil and shard[1] ~= 1}, Report)
  -- an HTML page draws its charts from the rows, kept for them
  r.html = (csv.format_of(path, opts.format)) == "html"
  if r.html and charts then r.charts, r.rows = charts, {} end
  if used then
    local order = opts.order
    if order == nil then
      order = {}
      for _, c in ipairs(M.ledger_columns) do order[#order + 1] = c end
      for _, c in ipairs(require("kvplan.optim").row_columns) do order[#order + 1] = c end
    end
    r.order, r.kept = {parse_columns(order)}, {}
  else
    local unit
    r.names, r.prec, r.index, unit = parse_columns(cols)
    open_writer(r, r.names, r.prec, unit)
  end
  open_reports[#open_reports + 1] = r
  return r
end

--- Write one row: a table keyed by column name; every column must be there.
function Report:row(t)
  if type(t) ~= "table" then
    util.raise("r:row needs a table of the row's values keyed by column name, e.g. r:row{%s = 1}, got %s",
               self.names and self.names[1] or "a", type(t))
  end
  if self.closed then util.raise("report is already closed") end
  if self.kept then
    if not self.silent then
      local copy = util.copy(t)
      self.kept[#self.kept + 1] = copy
    end
    return
  end
  if not self.writer:isopen() then util.raise("report is already closed") end
  if self.silent then return end
  if self.rows then
    local copy = util.copy(t)
    self.rows[#self.rows + 1] = copy
  end
  local vals = {}
  for k, v in util.sorted_pairs(t) do -- of several unknown columns, the same one every run
    local i = self.index[k]
    if i == nil then
      util.raise("row has a value for unknown column '%s'%s", util.shown(k),
                 util.suggest(util.shown(k), self.names))
    end
    vals[i] = v
  end
  local pos = self.pos
  if pos then -- the columns --columns chose, in its order
    local out = {}
    for i, v in pairs(vals) do
      if pos[i] then out[pos[i]] = v end
    end
    vals = out
  end
  self.writer:row(vals)
end

-- columns = "used": the columns some kept row fills, and the writer.
local function write_kept(r)
  local filled = {}
  for _, row in ipairs(r.kept) do
    for k, v in pairs(row) do
      if v ~= nil and v ~= "" then filled[k] = true end
    end
  end
  local onames, oprec, ounit = r.order[1], r.order[2], r.order[4]
  local names, prec, unit, seen = {}, {}, {}, {}
  for i, n in ipairs(onames) do
    if filled[n] then
      names[#names + 1], seen[n] = n, true
      prec[#names], unit[#names] = oprec[i], ounit[i]
    end
  end
  for _, k in ipairs(util.sorted_keys(filled)) do
    if not seen[k] then
      if type(k) ~= "string" then util.raise("row has a value for a column named %s", util.shown(k)) end
      names[#names + 1] = k
    end
  end
  if #names == 0 then names[1] = "(no columns)" end
  r.names = names
  open_writer(r, names, prec, unit)
  if r.rows then r.rows = r.kept end
  for _, row in ipairs(r.kept) do
    local vals = {}
    for i, n in ipairs(names) do
      local at = r.pos == nil and i or r.pos[i]
      if at then
        local v = row[n]
        vals[at] = v == nil and "" or v
      end
    end
    r.writer:row(vals)
  end
  r.kept = nil
end

local function forget(r)
  for i, o in ipairs(open_reports) do
    if o == r then table.remove(open_reports, i) break end
  end
  M.release(r.path)
end

--- The caption of a page's chart: its title, else what it draws.
function M.chart_title(c)
  return c.title or (tostring(c.y) .. (c.by and (" by " .. tostring(c.by)) or "") .. " against " .. tostring(c.x))
end

--- Commit the report: flush and rename the file into place.
function Report:close()
  if self.closed then return end
  forget(self)
  self.closed = true
  if self.kept then write_kept(self) end
  if self.charts and self.writer:isopen() then
    local plot = require "kvplan.plot"
    for _, c in ipairs(self.charts) do
      local svg, why = plot.svg(c, self.rows, self.path)
      self.writer:chart(M.chart_title(c), svg, why)
    end
  end
  if self.writer:isopen() then self.writer:close() end
end

--- Drop the report: nothing is written to its path.
function Report:discard()
  if self.closed then return end
  forget(self)
  self.closed = true
  if self.writer then self.writer:discard() end
end

Report.__close = Report.discard

--- Commit every report the script left open (the CLI calls this at the end).
function M.finish()
  while #open_reports > 0 do open_reports[1]:close() end
end

-- ---- the ledger report ------------------------------------------------------

local function gib(c) return {c, precision = 2} end

--- The standard columns of a ledger row.
M.ledger_columns = {
  "model", "gpu", "tp", "pp", "weights", "kv", "context", "concurrency",
  gib "gpu_gib", gib "usable_gib_per_gpu", gib "weights_gib_per_gpu", gib "activation_gib_per_gpu",
  gib "overhead_gib_per_gpu", gib "kv_budget_gib_per_gpu", "kv_bytes_per_token_per_gpu",
  "kv_blocks", "kv_tokens",
  "max_concurrency", "max_context", "fits", "why",
}

-- d must be a deployment: an error naming the function, not an index error
-- inside it. Its ledger.
local function ledger_of(d, what)
  if not util.is_a(d, require("kvplan.deploy").Deployment) then
    util.raise("%s needs a deployment (kv.deploy{...}), got %s", what, type(d))
  end
  return d:ledger()
end

--- The ledger of deployment d as one row for `concurrency` requests of
--- `context` tokens (defaults: the model's max context, 1 request). Extra
--- columns may be added to the returned table.
function M.ledger_row(d, context, concurrency)
  local l = ledger_of(d, "ledger_row")
  context = util.count(context or l.max_model_len, "context")
  concurrency = util.count(concurrency or 1, "concurrency")
  local fits, why = l:fit(context, concurrency) -- the verdict: the engine's refusal included
  local maxc = l:max_concurrency(context)
  local maxl = l:max_context(concurrency)
  return {
    model = d.model.id, gpu = d.gpu.id, tp = d.tp, pp = d.pp, weights = d.weights.name,
    kv = d.kv.name, context = context, concurrency = concurrency,
    gpu_gib = units.gib(l.total), usable_gib_per_gpu = units.gib(l.usable),
    weights_gib_per_gpu = units.gib(l.weights), activation_gib_per_gpu = units.gib(l.activation),
    overhead_gib_per_gpu = units.gib(l.overhead), kv_budget_gib_per_gpu = units.gib(l.kv_budget),
    kv_bytes_per_token_per_gpu = l.kv_bytes_per_token, kv_blocks = l.kv_blocks, kv_tokens = l.kv_tokens,
    max_concurrency = maxc, max_context = maxl, fits = fits, why = why,
  }
end

--- The step-time columns a ledger row may add (d:time, engine/core/roofline.c).
M.time_columns = {
  {"tpot_ms", precision = 3}, {"ttft_ms", precision = 2}, {"tokens_per_s", precision = 1},
  "bound", {"kv_read_share", precision = 4}, {"usd_per_mtok", precision = 4},
}

--- The step times of deployment d at `concurrency` requests of `context`
--- tokens as the fields of M.time_columns, added to `row` when given:
--- usd_per_mtok is "" without a price (price_per_hour, or the catalog's).
function M.time_fields(d, context, concurrency, row)
  local t = ledger_of(d, "time_fields"):time(context, concurrency)
  row = row or {}
  row.tpot_ms, row.ttft_ms, row.tokens_per_s = t.tpot_ms, t.ttft_ms, t.tokens_per_s
  row.bound, row.kv_read_share = t.bound, t.kv_read_share
  row.usd_per_mtok = t.usd_per_mtok > 0 and t.usd_per_mtok or ""
  return row
end

--- Where the memory of one GPU of deployment d goes with `concurrency`
--- requests of `context` tokens (the tightest pipeline stage): a list of
--- {item, bytes, note} for weights, lora (vLLM's LoRA slots, when
--- enable_lora), rotary (vLLM's rotary cos/sin caches), kv_used, kv_free, activation, overhead,
--- system (system_memory, when given or the GPU's memory is unified), margin (1 - utilization) and kv_short (what the requests need beyond the
--- KV budget, 0 when they fit; its note is the verdict, l:fit: "fits", why
--- not, or the engine's refusal to start). All but kv_short add up to the
--- GPU's memory.
function M.ledger_items(d, context, concurrency)
  local l = ledger_of(d, "ledger_items")
  context = util.count(context or l.max_model_len, "context")
  concurrency = util.count(concurrency or 1, "concurrency")
  local out = {}
  local function item(name, bytes, note) out[#out + 1] = {item = name, bytes = bytes, note = note} end
  local own, shared = l:request_bytes(context)
  -- past 2^63 bytes a float: Lua's integers wrap ('concurrency=1e15' read
  -- kv_used and kv_short 0.00 GiB)
  local need
  if own > 0 and concurrency > (math.maxinteger - shared) // own then
    need = own * 1.0 * concurrency + shared
  else
    need = own * concurrency + shared
  end
  local fits, why, limit = l:fit(context, concurrency)
  local held = fits or limit == "starts" -- the KV budget holds them (the engine may refuse)
  local stages = d.pp > 1 and string.format(", the tightest of %d stages", d.pp) or ""
  -- the weights every TP rank holds whole (models.lua replicated_params),
  -- named when they show at two decimals
  local rep = d.tp > 1 and (d.replicated_bytes or 0) or 0
  local whole = rep >= 0.005 * units.GiB
                and string.format(" (%.2f GiB of them whole on every GPU)", rep / units.GiB) or ""
  item("weights", l.weights - l.lora - l.rotary, string.format("%s weights / tp %d%s%s",
                                                              d.weights.name, d.tp, whole, stages))
  if l.lora > 0 then
    -- vLLM loads them with the weights ("Model loading took" counts them)
    local lo = d.lora
    item("lora", l.lora, string.format("%d LoRA slot%s of rank %d (max_loras, max_lora_rank)%s",
                                       lo.max_loras, lo.max_loras == 1 and "" or "s", lo.max_rank,
                                       lo.fully_sharded and ", fully sharded" or ""))
  end
  if l.rotary > 0 then
    -- vLLM builds them with the model ("Model loading took" counts them):
    -- engines.vllm_rotary
    local parts = {}
    for _, t in ipairs(d.rotary_tables or {}) do
      parts[#parts + 1] = string.format("%d x %d %s", t.rows, t.dim, t.elem == 4 and "fp32"
                                        or d.model:auto_kv_format().name)
    end
    item("rotary", l.rotary, string.format("rotary cos/sin cache%s %s, whole on every GPU",
                                           #parts == 1 and "" or "s", table.concat(parts, " + ")))
  end
  local used = held and need or math.max(0, math.min(need, l.kv_budget))
  item("kv_used", used, held and string.format("%d x %d tokens, %s, blocks of %d", concurrency, context,
                                               d.kv.name, l.block) or "the whole KV budget")
  item("kv_free", held and l.kv_budget - need or 0, held and string.format(
       "room for %d more requests of %d tokens", l:max_concurrency(context) - concurrency, context)
       or "none")
  local enc = d.activation_range and d.activation_range.encoder
  -- each engine's own words: vLLM profiles a dummy run; SGLang keeps
  -- activations and CUDA graphs in its 1 - mem_fraction_static reserve (the
  -- margin; docs/predictions.md); TensorRT-LLM sizes its KV cache after a dry
  -- run, free_gpu_memory_fraction of the memory then free (docs/optimizations.md)
  local run = d.budget == "trtllm" and "TensorRT-LLM's dry-run peak, "
              or d.budget == "sglang" and "SGLang's, "
              or "vLLM's profiling-run peak, "
  item("activation", l.activation, d.activation_source == "given" and "given"
       or d.budget == "sglang" and l.activation == 0
          and "none apart: SGLang keeps activations in its 1 - mem_fraction_static reserve (margin)"
       or run .. (d.activation_source or "predicted")
       .. (enc and string.format(" (the vision encoder's dummy batch included: %d item%s)",
                                 enc.items, enc.items == 1 and "" or "s") or ""))
  item("overhead", l.overhead, "non-torch memory (CUDA context, NCCL), " .. (d.overhead_source or "given"))
  -- memory others hold (system_memory): under vLLM's startup check it lies
  -- in what utilization holds back (ledger.c); the other rules' margin is
  -- what the items leave
  local in_margin = 0
  if l.system > 0 then
    in_margin = (d.budget == "vllm" and (d.vllm_system_rule or 0) ~= 1) and l.system or 0
    item("system", l.system, "held by others on the GPU (system_memory: the OS on unified memory, "
         .. "other processes)")
  elseif d.gpu.unified_memory then
    item("system", 0, "unified memory: what the OS and other processes hold is not counted "
         .. "(give system_memory)")
  end
  -- kv_cache_memory_bytes > 0 is the KV budget, utilization plays no part
  -- (vllm/config/cache.py: "kv_cache_memory_bytes (when not-None) ignores
  -- gpu_memory_utilization"; ledger.c usable = the whole GPU)
  local pinned = (d.kv_cache_memory_bytes or 0) > 0
  if d.budget ~= "vllm" and l.kv_budget > 0 then
    -- SGLang's and TensorRT-LLM's fractions are not of the whole GPU: the
    -- margin is what the other items leave, so that they add up to it
    item("margin", l.total - l.weights - l.activation - l.overhead - l.system - l.kv_budget,
         string.format(d.budget == "trtllm"
                       and "held back: free_gpu_memory_fraction %.2f of the memory free after loading"
                       or "held back: SGLang's 1 - mem_fraction_static, its activations and CUDA graphs (fraction %.2f)",
                       d.utilization or 0.9))
  else
    item("margin", math.max(0, l.total - l.usable - in_margin), pinned
         and "none held back: kv_cache_memory_bytes ignores gpu_memory_utilization"
         or string.format("held back by utilization %.2f", d.utilization or 0.9)
            .. (d.kv_cache_memory_note and (" (" .. d.kv_cache_memory_note .. ")") or "")
            -- engines.lua cudagraph_estimate: measured by vLLM, not modelled
            .. (d.vllm_cudagraph_estimate and "; vLLM " .. tostring(d.engine_version)
                .. " also takes its CUDA graphs' measured estimate off the KV budget, not modelled"
                .. " (kv_free is high by it)" or ""))
  end
  item("kv_short", held and 0 or math.max(0, need - math.max(0, l.kv_budget)),
       fits and "fits" or held and why or "does not fit: " .. why)
  return out
end

setmetatable(M, {__call = function(_, opts) return M.new(opts) end})

-- a method called with something else as self: an error at the user's line
util.methods(Report)

return M
