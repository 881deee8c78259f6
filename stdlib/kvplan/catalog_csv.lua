-- stdlib/kvplan/catalog_csv.lua: user catalogs from CSV files, so hardware
-- and models are added without writing Lua: kv.gpus.load_csv(path) and
-- kv.models.load_csv(path).
-- Stdlib layer: the file is parsed by libcsv (kvplan.csv); this module turns
-- cells into catalog fields and every failure into "FILE:LINE:COLUMN: ...".
--
-- Format: the first row names the columns, every other row is one entry.
-- Columns are the catalog fields (gpus.lua, models.lua), in any order; an
-- empty cell means the field is absent. Rows whose first cell starts with
-- '#' are comments (still CSV: quotes must pair up); blank lines are skipped;
-- a UTF-8 byte order mark before the header is ignored. Cells by column type:
--   text     as written (surrounding spaces dropped)
--   list     aliases separated by ';'        "h100;H100 80GB HBM3"
--   count    a whole number >= 0             "80", "8.03e9" (if whole)
--   number   a number >= 0                   "989.5"
--   bytes    bytes, units allowed            "80 GiB", "80GB", "85899345920"
--   bool     true/false, yes/no, 1/0         "true"
--   layers   runs of layer kinds, cyclic over the layers (see parse_layers)
--            "sliding:4096*5,full"  5 sliding layers (window 4096), 1 full
-- Models take MLA as two count columns, kv_lora_rank and rope_dim.
--
-- A file is loaded whole or not at all: every row is checked before the
-- first one is added. Errors raise at the caller's line, e.g.
--   fit.lua:3: gpus.csv:4:3: bad number 'eighty' in column 'memory' (...)

local core = require "kvplan.core"
local csv = require "kvplan.csv"
local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

-- Column types of the GPU catalog (every field of gpus.lua).
M.gpu_columns = {
  id = "text", name = "text", vendor = "text", memory_marketed = "text",
  visible_source = "text", interconnect = "text", source = "text", notes = "text",
  aliases = "list",
  memory = "bytes", memory_bytes = "bytes", visible_bytes = "bytes",
  hbm_gbps = "number", bf16_tflops = "number", fp16_tflops = "number",
  fp8_tflops = "number", fp4_tflops = "number", int8_tops = "number", interconnect_gbps = "number",
  pcie_gbps = "number", tdp_w = "number", plan_as = "text", price_per_hour = "number",
  scaleout_gbps = "number", scaleout = "text", scaleout_source = "text",
  unified_memory = "bool",
}

-- Column types of the model catalog (every field of models.lua but `mla`,
-- which is written as the columns kv_lora_rank and rope_dim).
M.model_columns = {
  id = "text", name = "text", hf = "text", source = "text", family = "text",
  notes = "text", dtype = "text", weight_source = "text", weight_format = "text",
  activation_unmodelled = "text", other_note = "text", classes_unweighable = "text",
  aliases = "list",
  layers = "count", hidden = "count", heads = "count", kv_heads = "count",
  head_dim = "count", head_dim_v = "count", params = "count", active = "count",
  max_context = "count", intermediate = "count", vocab = "count", experts = "count",
  experts_active = "count", shared_experts = "count", moe_intermediate = "count",
  shared_intermediate = "count",
  kv_lora_rank = "count", rope_dim = "count",
  tie_embeddings = "bool", weight_bytes = "bytes", layer_kinds = "layers",
  attention_bias = "bool", dense_layers = "count", weight_formats = "classes",
  attention_layers = "count", mlp_layers = "count", mlp_matrices = "count", no_lm_head = "bool",
  vision = "pairs", kv_checkpoint = "pairs", unquantized_layers = "pairs",
  -- one rotary table, e.g. "type=yarn factor=32 original_max_position=4096"
  -- (engines.lua vllm_rotary; a list of tables or false: Lua catalogs only)
  rope = "pairs",
}

-- ---- cells ------------------------------------------------------------------

local trim = util.trim

-- A failed cell: raised as a table, located by the caller.
local function bad(col, fmt, ...)
  error({col = col, msg = string.format(fmt, ...)}, 0)
end

-- An unsigned decimal number ("80", "989.5", "8.03e9"), or nil: no sign, no
-- hex, no inf/nan (tonumber alone accepts "0x50" and " 80 ").
-- One anchored capture with nothing to backtrack over: linear in the length
-- (the alternation of patterns it replaces took seconds on 16K digits).
local function unsigned(s)
  local int, dot, frac, exp = s:match("^(%d*)(%.?)(%d*)(.*)$")
  if int == nil or (int == "" and frac == "") or (dot == "" and frac ~= "") then return nil end
  if exp ~= "" and not exp:match("^[eE][-+]?%d+$") then return nil end
  local x = tonumber(s)
  if x == nil or x ~= x or x == math.huge then return nil end
  return x
end

local function whole(x)
  if x == nil then return nil end
  if math.type(x) == "integer" then return x end
  if x == math.floor(x) and x < 2^63 then return math.tointeger(x) end
  return nil
end

local parse_layers -- below

-- Cell s of column `name` (type t), already trimmed and non-empty.
local function convert(t, name, s, col)
  if t == "text" then return s end
  if t == "list" then
    local out = {}
    for item in (s .. ";"):gmatch("([^;]*);") do
      item = trim(item)
      if item ~= "" then out[#out + 1] = item end
    end
    return out
  end
  if t == "count" then
    local v = whole(unsigned(s))
    if v == nil then bad(col, "bad number '%s' in column '%s' (expected an integer >= 0)", s, name) end
    return v
  end
  if t == "number" then
    local v = unsigned(s)
    if v == nil then bad(col, "bad number '%s' in column '%s' (expected a number >= 0)", s, name) end
    return v
  end
  if t == "bytes" then
    local ok, v = pcall(units.bytes, s, name)
    if not ok or not (s:match("^%d") or s:match("^%.%d")) then
      bad(col, "bad number '%s' in column '%s' (expected bytes such as '80 GiB', '80 GB' or 85899345920)",
          s, name)
    end
    return v
  end
  if t == "bool" then
    local l = s:lower()
    if l == "true" or l == "yes" or l == "1" then return true end
    if l == "false" or l == "no" or l == "0" then return false end
    bad(col, "bad value '%s' in column '%s' (expected true or false)", s, name)
  end
  if t == "layers" then return parse_layers(s, name, col) end
  if t == "classes" then
    -- "experts=mxfp4 attention=bf16": weight class = format, space separated
    local out = {}
    for item in s:gmatch("%S+") do
      local k, v = item:match("^([%w_]+)=([%w_%-]+)$")
      if k == nil then
        bad(col, "bad entry '%s' in column '%s' (expected class=format, e.g. experts=mxfp4)",
            item, name)
      end
      out[k] = v
    end
    return out
  end
  if t == "pairs" then
    -- "hidden=1280 intermediate=3420 gated=true ...": key = integer, true,
    -- false or a word, space separated (the model's vision tower; models.lua
    -- checks the keys and values)
    local out = {}
    for item in s:gmatch("%S+") do
      local k, v = item:match("^([%w_]+)=([%w_%-%.]+)$")
      if k == nil then
        bad(col, "bad entry '%s' in column '%s' (expected key=value, e.g. hidden=1280)", item, name)
      end
      local n = whole(unsigned(v))
      if n ~= nil then out[k] = n
      elseif v == "true" or v == "false" then out[k] = v == "true"
      else out[k] = v end
    end
    return out
  end
  error("catalog_csv: column type '" .. util.shown(t) .. "' of '" .. name .. "' is unknown")
end

-- ---- layer kinds --------------------------------------------------------------

local kinds = {"full", "sliding", "chunked", "mla", "state", "none", "cross"}
local kind_set = {}
for _, k in ipairs(kinds) do kind_set[k] = true end
-- Keys a run may set in parentheses (those of a layer_kinds run in models.lua).
local run_keys = {"kv_heads", "head_dim", "head_dim_v", "window", "kv_lora_rank", "rope_dim",
                  "state_bytes", "state_heads"}
local run_key_set = {}
for _, k in ipairs(run_keys) do run_key_set[k] = true end

M.layer_syntax = "runs like 'sliding:4096*5,full'"

--- The layer_kinds runs of a cell, the text form of models.lua's list:
---   layer_kinds = run { "," run }
---   run  = kind [":" size] ["(" key=value { " " key=value } ")"] ["*" count]
---   kind = full | sliding | chunked | mla | state | none
---   size = the window of a sliding or chunked run, the per-sequence state
---          bytes of a state run (units allowed: "1072KiB")
---   key  = kv_heads | head_dim | head_dim_v | window | kv_lora_rank |
---          rope_dim | state_bytes | state_heads (overrides for the run)
--- Runs repeat cyclically from layer 0: "sliding:1024*5,full" is Gemma 3.
function parse_layers(s, name, col)
  local runs = {}
  local function fail(i, fmt, ...)
    bad(col, "bad layer kinds '%s' in column '%s': run %d: %s", s, name, i, string.format(fmt, ...))
  end
  local syntax = " (expected " .. M.layer_syntax .. ")"
  local function int(i, what, v, min)
    local x = whole(unsigned(v))
    if x == nil or x < min then fail(i, "%s '%s' must be an integer >= %d", what, v, min) end
    return x
  end
  local function size_bytes(i, what, v)
    local ok, b = pcall(units.bytes, v, what)
    if not ok or not v:match("^%d") or b < 1 then
      fail(i, "%s '%s' must be bytes >= 1 (e.g. 1097728 or 1072KiB)", what, v)
    end
    return b
  end
  local i = 0
  for text in (s .. ","):gmatch("([^,]*),") do
    i = i + 1
    local r = trim(text)
    if r == "" then fail(i, "empty run%s", syntax) end
    local kind, rest = r:match("^(%a+)(.*)$")
    if kind == nil then fail(i, "'%s' does not start with a layer kind%s", r, syntax) end
    if not kind_set[kind] then
      local near = util.closest(kind, kinds, 1)
      fail(i, "unknown kind '%s' (%s)", kind, #near > 0 and ("did you mean '" .. near[1] .. "'?")
           or ("expected " .. table.concat(kinds, ", ")))
    end
    local run = {kind = kind}
    if rest:sub(1, 1) == ":" then -- the window, or a state's bytes
      local size
      size, rest = rest:match("^:([^(*]*)(.*)$")
      size = trim(size)
      if size == "" then fail(i, "no size after ':'%s", syntax) end
      if kind == "sliding" or kind == "chunked" then
        run.window = int(i, "window", size, 1)
      elseif kind == "cross" then -- the encoder tokens a request caches
        run.encoder_tokens = int(i, "encoder tokens", size, 1)
      elseif kind == "state" then
        run.state_bytes = size_bytes(i, "state bytes", size)
      else
        fail(i, "a %s run takes no ':%s' (only sliding, chunked, cross and state runs have a size)",
             kind, size)
      end
    end
    rest = trim(rest)
    if rest:sub(1, 1) == "(" then -- overrides for this run
      local attrs
      attrs, rest = rest:match("^%(([^)]*)%)(.*)$")
      if attrs == nil then fail(i, "'(' without ')'%s", syntax) end
      for kv in attrs:gmatch("[^%s;]+") do
        local k, v = kv:match("^([%a_]+)=(.+)$")
        if k == nil then fail(i, "'%s' is not key=value", kv) end
        if not run_key_set[k] then fail(i, "unknown key '%s'%s", k, util.suggest(k, run_keys)) end
        if k == "state_bytes" then run[k] = size_bytes(i, k, v)
        else run[k] = int(i, k, v, k == "rope_dim" and 0 or 1) end
      end
      rest = trim(rest)
    end
    if rest ~= "" then -- "*" count
      if rest:sub(1, 1) ~= "*" then fail(i, "cannot read '%s'%s", rest, syntax) end
      run.n = int(i, "count", trim(rest:sub(2)), 1)
    end
    runs[#runs + 1] = run
  end
  return runs
end

-- ---- files --------------------------------------------------------------------

-- The message of an error raised at the user's line, without that line.
local function strip_where(msg, where)
  if type(msg) ~= "string" then return tostring(msg) end
  if where ~= "" and msg:sub(1, #where) == where then return msg:sub(#where + 1) end
  return msg
end

-- Read path: the header (names and their columns) and the data rows.
local function read(path, types, what)
  if type(path) ~= "string" then
    util.raise("%ss.load_csv needs a file name, got %s", what, type(path))
  end
  local rows, lines = csv.read(path)
  if rows == nil then return nil, lines end
  local header, hline, data = nil, nil, {}
  for i, row in ipairs(rows) do
    local first = trim(row[1] or "")
    if first:sub(1, 1) == "#" or (#row == 1 and first == "") then goto continue end
    if header == nil then
      header, hline = row, lines[i]
    else
      data[#data + 1] = {cells = row, line = lines[i]}
    end
    ::continue::
  end
  if header == nil then util.raise("%s: no header row (expected the names of %s columns)", path, what) end
  local names, col = {}, {}
  for c, cell in ipairs(header) do
    local name = trim(c == 1 and cell:gsub("^\239\187\191", "") or cell) -- a UTF-8 BOM
    if name == "" then util.raise("%s:%d:%d: empty column name in the header", path, hline, c) end
    if types[name] == nil then
      util.raise("%s:%d:%d: unknown column '%s'%s", path, hline, c, name,
                 util.suggest(name, util.sorted_keys(types)))
    end
    if col[name] then
      util.raise("%s:%d:%d: column '%s' appears twice (also column %d)", path, hline, c, name, col[name])
    end
    names[c], col[name] = name, c
  end
  return {path = path, names = names, col = col, data = data, hline = hline}
end

local function require_columns(h, list, what)
  for _, name in ipairs(list) do
    if h.col[name] == nil then
      util.raise("%s:%d: missing column '%s' (every %s needs it)", h.path, h.hline, name, what)
    end
  end
end

-- The fields of one data row: {name = value}, and the row's own table of
-- cells by column name (for messages).
local function fields(h, row, types, required)
  if #row.cells ~= #h.names then
    util.raise("%s:%d: row has %d cells, the header has %d", h.path, row.line, #row.cells, #h.names)
  end
  local t = {}
  for c, name in ipairs(h.names) do
    local s = trim(row.cells[c])
    if s ~= "" then
      local ok, v = pcall(convert, types[name], name, s, c)
      if not ok then
        if type(v) == "table" then util.raise("%s:%d:%d: %s", h.path, row.line, v.col, v.msg) end
        error(v, 0)
      end
      t[name] = v
    elseif required[name] then
      util.raise("%s:%d:%d: empty cell in column '%s' (every entry needs it)", h.path, row.line,
                 c, name)
    end
  end
  return t
end

-- Run make(t) (which checks the entry); a failure is located at the row and,
-- when the message names a field that is a column, at that column.
local function build(h, row, t, make)
  local where = core.where()
  local ok, v = pcall(make, t)
  if ok then return v end
  local msg = strip_where(v, where)
  local field = msg:match("field '([%w_]+)")
  local c = field and h.col[field]
  if c then util.raise("%s:%d:%d: %s", h.path, row.line, c, msg) end
  util.raise("%s:%d: %s", h.path, row.line, msg)
end

-- Check that the entries' ids are new (in the catalog and in the file), then
-- add them all. `catalog` is gpus.lua or models.lua; `what` "gpu" or "model".
local function add_all(h, built, catalog, what)
  local seen = {}
  for _, b in ipairs(built) do
    local id = b.entry.id
    local prev = seen[id:lower()]
    if prev then
      util.raise("%s:%d:%d: %s '%s' is already defined on line %d", h.path, b.line, h.col.id,
                 what, id, prev)
    end
    -- one hash lookup each (a failed get would compute suggestions: quadratic)
    if catalog.find(id) then
      util.raise("%s:%d:%d: %s '%s' is already in the catalog", h.path, b.line, h.col.id, what, id)
    end
    seen[id:lower()] = b.line
    local acol = h.col.aliases or h.col.id
    for _, a in ipairs(b.entry.aliases or {}) do
      local k = a:lower()
      if seen[k] ~= nil and seen[k] ~= b.line then
        util.raise("%s:%d:%d: alias '%s' of %s '%s' already names an entry on line %d", h.path,
                   b.line, acol, a, what, id, seen[k])
      end
      local other = catalog.find(a)
      if other ~= nil then
        util.raise("%s:%d:%d: alias '%s' of %s '%s' already names %s '%s' in the catalog", h.path,
                   b.line, acol, a, what, id, what, other.id)
      end
      seen[k] = b.line
    end
  end
  local out = {}
  for i, b in ipairs(built) do out[i] = catalog.add(b.entry) end
  return out
end

--- Add the GPUs of a CSV file to the GPU catalog; returns the list of added
--- GPUs, or nil and a message when the file cannot be opened. Columns: the
--- fields of gpus.lua (M.gpu_columns); `id` and one of memory, visible_bytes
--- or memory_bytes are required.
function M.load_gpus(path)
  local gpus = require "kvplan.gpus"
  local h, err = read(path, M.gpu_columns, "gpu")
  if h == nil then return nil, err end
  require_columns(h, {"id"}, "gpu")
  local mem = {"memory", "visible_bytes", "memory_bytes"}
  local memcol
  for _, m in ipairs(mem) do memcol = memcol or (h.col[m] and m) end
  if memcol == nil then
    util.raise("%s:%d: missing column 'memory' (or 'visible_bytes' or 'memory_bytes': every gpu needs one)",
               path, h.hline)
  end
  local built = {}
  for _, row in ipairs(h.data) do
    local t = fields(h, row, M.gpu_columns, {id = true})
    if t.memory == nil and t.visible_bytes == nil and t.memory_bytes == nil then
      util.raise("%s:%d:%d: gpu '%s' needs a value in column '%s'", path, row.line, h.col[memcol],
                 t.id, memcol)
    end
    for _, m in ipairs(mem) do
      if t[m] == 0 then
        util.raise("%s:%d:%d: bad number '%s' in column '%s' (expected bytes > 0)", path, row.line,
                   h.col[m], trim(row.cells[h.col[m]]), m)
      end
    end
    local vis = t.visible_bytes or t.memory
    if vis and t.memory_bytes and vis > t.memory_bytes then
      local m = t.visible_bytes and "visible_bytes" or "memory"
      util.raise("%s:%d:%d: column '%s' (%d bytes) exceeds memory_bytes (%d bytes): the runtime cannot show more than the card holds",
                 path, row.line, h.col[m], m, vis, t.memory_bytes)
    end
    built[#built + 1] = {entry = build(h, row, t, gpus.new), line = row.line}
  end
  return add_all(h, built, gpus, "gpu")
end

--- Add the models of a CSV file to the model catalog; returns the list of
--- added Models, or nil and a message when the file cannot be opened.
--- Columns: the fields of models.lua (M.model_columns); id, layers, hidden
--- and heads are required.
function M.load_models(path)
  local models = require "kvplan.models"
  local h, err = read(path, M.model_columns, "model")
  if h == nil then return nil, err end
  local required = {"id", "layers", "hidden", "heads"}
  require_columns(h, required, "model")
  local req = {}
  for _, r in ipairs(required) do req[r] = true end
  local built = {}
  for _, row in ipairs(h.data) do
    local t = fields(h, row, M.model_columns, req)
    if t.kv_lora_rank ~= nil or t.rope_dim ~= nil then
      if t.kv_lora_rank == nil then
        util.raise("%s:%d:%d: column 'rope_dim' needs 'kv_lora_rank' in the same row (MLA)", path,
                   row.line, h.col.rope_dim)
      end
      t.mla = {kv_lora_rank = t.kv_lora_rank, rope_dim = t.rope_dim or 0}
      t.kv_lora_rank, t.rope_dim = nil, nil
    end
    local m = build(h, row, t, models.new)
    -- the weight format is read lazily by the ledger: check it now
    local where = core.where()
    local ok, e = pcall(m.native_format, m)
    if not ok then
      local c = h.col[t.weight_format and "weight_format" or "dtype"]
      util.raise("%s:%d:%d: %s", path, row.line, c, strip_where(e, where))
    end
    built[#built + 1] = {entry = m, line = row.line}
  end
  return add_all(h, built, models, "model")
end

return M
