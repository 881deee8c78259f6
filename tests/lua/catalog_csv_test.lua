-- tests/lua/catalog_csv_test.lua: user catalogs from CSV (catalog_csv.lua):
-- values, units, layer syntax and aliases of good files; the exact text of
-- every error, located at file:line:column.
local kv = require "kvplan"
local check = require "check"
local catalog_csv = require "kvplan.catalog_csv"

local dir = "tests/fixtures/csv/"
local GiB = kv.units.GiB

-- ---- every catalog field has a column type -------------------------------------
for f in pairs(kv.gpus.fields) do
  assert(catalog_csv.gpu_columns[f], "gpu field '" .. f .. "' has no CSV column")
end
for f in pairs(kv.models.fields) do
  assert(catalog_csv.model_columns[f] or f == "mla", "model field '" .. f .. "' has no CSV column")
end

-- ---- good GPUs -----------------------------------------------------------------
local ngpus = #kv.gpus.all()
local added = kv.gpus.load_csv(dir .. "gpus.csv")
check.eq(#added, 3, "gpus added")
check.eq(#kv.gpus.all(), ngpus + 3, "catalog grows")
local a4000 = added[1]
check.eq(a4000.id, "rtx-a4000", "id")
check.eq(a4000.memory_bytes, 16 * GiB, "memory_bytes '16 GiB'")
check.eq(a4000.visible_bytes, 16 * GiB, "no visible_bytes: the marketed size")
check.eq(a4000.memory_basis, "marketed", "basis")
check.eq(a4000.memory_marketed, "16 GB", "text column")
check.eq(a4000.hbm_gbps, 448, "number column")
check.eq(math.type(a4000.hbm_gbps), "integer", "448 stays an integer")
check.eq(a4000.tdp_w, 140, "tdp")
check.eq(a4000.interconnect, "PCIe 4.0 x16, no NVLink", "quoted cell with a comma")
check.eq(a4000.visible_source, nil, "empty cell = absent")
check.eq(added[2].hbm_gbps, 2450, "gaudi2 bandwidth")
check.eq(added[2].memory_bytes, 96 * GiB, "gaudi2 memory")
-- the row after a blank line and a comment
check.eq(added[3].id, "lab-card-24g", "third row")
check.eq(added[3].visible_bytes, 47 * GiB // 2, "memory '23.5 GiB'")
check.eq(added[3].memory_basis, "visible", "memory is what the runtime shows")
check.eq(added[3].aliases, nil, "empty aliases")

-- lookups of CSV entries: id and aliases, any case
check.eq(kv.gpu("RTX-A4000"), a4000, "id, any case")
check.eq(kv.gpu("a4000"), a4000, "alias")
check.eq(kv.gpu("nvidia rtx a4000"), a4000, "alias with spaces, any case")
check.eq(kv.gpu("HL-225H"), added[2], "alias of gaudi2")
check.eq(#a4000.aliases, 2, "aliases split on ';'")

-- ---- good models ---------------------------------------------------------------
local nmodels = #kv.models.all()
local ms = kv.models.load_csv(dir .. "models.csv")
check.eq(#ms, 5, "models added")
check.eq(#kv.models.all(), nmodels + 5, "model catalog grows")

local tiny = ms[1]
check.eq(tiny.id, "tinyllama-1.1b", "id")
check.eq(tiny.aliases[1], "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "first alias")
check.eq(tiny.aliases[2], "tinyllama", "alias trimmed")
check.eq(tiny.tie_embeddings, false, "bool false")
check.eq(tiny.params, 1100048384, "params")
check.eq(tiny.active, 1100048384, "active defaults to params")
check.eq(tiny.head_dim, nil, "empty head_dim stays absent")
-- 2 (K, V) x 22 layers x 4 KV heads x 64 (2048 / 32) x 2 B
check.eq(tiny:kv_bytes_per_token("bf16"), 2 * 22 * 4 * 64 * 2, "tinyllama bf16")
check.eq(tiny:kv_bytes_per_token("bf16"), 22528, "tinyllama bf16, the number")
check.eq(tiny:kv_bytes_per_token("bf16", 8), 2 * 22 * 1 * 64 * 2, "tp 8 replicates the 4 heads")
check.eq(kv.model("TINYLLAMA"), tiny, "alias of a CSV model, any case")
check.eq(kv.model("tinyllama/tinyllama-1.1b-chat-v1.0"), tiny, "hf alias")

local lg = ms[2]
check.eq(lg.params, 1200000000, "params '1.2e9'")
check.eq(math.type(lg.params), "integer", "a whole float becomes an integer")
check.eq(#lg.layer_kinds, 2, "two runs")
check.eq(lg.layer_kinds[1].kind, "sliding", "run 1 kind")
check.eq(lg.layer_kinds[1].window, 1024, "run 1 window")
check.eq(lg.layer_kinds[1].n, 5, "run 1 count")
check.eq(lg.layer_kinds[2].kind, "full", "run 2 after ', '")
check.eq(lg.layer_kinds[2].n, nil, "run 2 count defaults to 1")
check.eq(lg:kinds().sliding, 10, "12 layers: 10 sliding")
check.eq(lg:kinds().full, 2, "12 layers: 2 full")
check.eq(lg:layer(6).kind, "full", "layer 6 is global")
check.eq(lg:layer(7).window, 1024, "layer 7 is local again")
-- one layer-token: 2 (K, V) x 2 KV heads x 128 x 2 B = 1024 B; local layers hold 1024 tokens
check.eq(lg:kv_bytes(4096), 10 * 1024 * 1024 + 2 * 4096 * 1024, "windows cap the local layers")

local mla = ms[3]
check.eq(mla.mla.kv_lora_rank, 512, "mla rank")
check.eq(mla.mla.rope_dim, 64, "mla rope")
check.eq(mla.kv_lora_rank, nil, "no stray field")
check.eq(mla:kv_bytes_per_token("bf16"), 4 * 576 * 2, "MLA: one latent, no factor 2")
check.eq(mla:kv_bytes_per_token("bf16", 8), 4 * 576 * 2, "MLA on every rank")
check.eq(mla:native_format().name, "fp8-b128", "dtype fp8")
check.eq(kv.model("Test-Latent"), mla, "alias")

local hy = ms[4]
check.eq(hy.tie_embeddings, true, "bool 'yes'")
check.eq(hy.layer_kinds[1].state_bytes, 1072 * 1024, "state '1072KiB'")
check.eq(hy.layer_kinds[1].state_heads, 16, "state_heads")
check.eq(hy.layer_kinds[1].n, 3, "state run count")
check.eq(hy.layer_kinds[2].head_dim_v, 64, "run override")
check.eq(hy:kinds().state, 6, "8 layers: 6 state")
-- full layers: 2 KV heads x (256 + 64) x 2 B; state layers hold no per-token KV
check.eq(hy:kv_bytes_per_token("bf16"), 2 * 2 * (256 + 64) * 2, "hybrid per token")
check.eq(hy:kv_bytes(1), 2 * 2 * (256 + 64) * 2 + 6 * 1072 * 1024, "state once per sequence")

local q = ms[5]
check.eq(q.weight_bytes, 3 * GiB // 2, "weight_bytes '1.5 GiB'")
check.eq(q:weight_size(), 3 * GiB // 2, "recorded size")
check.eq(q:native_format().name, "int4-g128", "weight_format")
check.eq(q.kv_heads, 4, "kv_heads defaults to heads")

-- a deployment of a CSV model on a CSV GPU
local d = kv.deploy{model = "tinyllama", gpu = "a4000"}
check.eq(d:ledger().total, 16 * GiB, "CSV GPU memory in the ledger")

-- ---- errors of the fixture files ----------------------------------------------
local function gerr(file, text) check.error(text, kv.gpus.load_csv, dir .. file) end
local function merr(file, text) check.error(text, kv.models.load_csv, dir .. file) end

-- the caller's line comes first, then the file's line and column
check.error("catalog_csv_test.lua:123: tests/fixtures/csv/gpus_bad_number.csv:3:3: bad number 'eighty' in column 'memory' (expected bytes such as '80 GiB', '80 GB' or 85899345920)",
            function() kv.gpus.load_csv(dir .. "gpus_bad_number.csv") end)
check.eq(kv.gpus.get("h100").id, "h100-sxm", "catalog untouched")
check.error("unknown gpu 'lab-a'", kv.gpu, "lab-a") -- row 2 was good, but the file failed
gerr("gpus_unknown_column.csv",
     "gpus_unknown_column.csv:1:2: unknown column 'memroy' (did you mean 'memory'?)")
gerr("gpus_missing_column.csv",
     "gpus_missing_column.csv:1: missing column 'memory' (or 'visible_bytes' or 'memory_bytes': every gpu needs one)")
gerr("gpus_short_row.csv", "gpus_short_row.csv:3: row has 2 cells, the header has 3")
gerr("gpus_duplicate.csv", "gpus_duplicate.csv:3:1: gpu 'h100-sxm' is already in the catalog")
merr("models_missing_column.csv", "models_missing_column.csv:1: missing column 'heads' (every model needs it)")
merr("models_bad_layers.csv",
     "models_bad_layers.csv:3:6: bad layer kinds 'slidng:4096*5,full' in column 'layer_kinds': run 1: unknown kind 'slidng' (did you mean 'sliding'?)")
merr("models_bad_count.csv",
     "models_bad_count.csv:2:2: bad number '32.5' in column 'layers' (expected an integer >= 0)")
merr("models_bad_entry.csv",
     "models_bad_entry.csv:2:5: field 'kv_heads' must be an integer >= 1, got 0")

-- a file that cannot be opened is nil, message (as io.open)
local none, msg = kv.models.load_csv(dir .. "no_such.csv")
check.eq(none, nil, "missing file")
check.eq(msg, "cannot open 'tests/fixtures/csv/no_such.csv': No such file or directory", "message")

-- ---- errors of small generated files ------------------------------------------
local tmp = check.tmpdir()
local n = 0
local function file(text)
  n = n + 1
  local p = tmp .. "/c" .. n .. ".csv"
  local f = assert(io.open(p, "w"))
  f:write(text)
  f:close()
  return p
end
local function gbad(text, want)
  local p = file(text)
  check.error(p .. want, kv.gpus.load_csv, p)
end
local function mbad(text, want)
  local p = file(text)
  check.error(p .. want, kv.models.load_csv, p)
end
local mhead = "id,layers,hidden,heads,kv_heads,layer_kinds\n"
-- want: the whole message after the file name, or from ": run" on
local function layers(cell, want)
  if want:sub(1, 6) == ": run " then
    want = ":2:6: bad layer kinds '" .. cell .. "' in column 'layer_kinds'" .. want
  end
  mbad(mhead .. 'x,8,1024,8,8,"' .. cell .. '"\n', want)
end

gbad("", ": no header row (expected the names of gpu columns)")
gbad("# only a comment\n", ": no header row (expected the names of gpu columns)")
gbad("id,memory,\nx,1 GiB,\n", ":1:3: empty column name in the header")
gbad("id,memory,id\nx,1 GiB,y\n", ":1:3: column 'id' appears twice (also column 1)")
gbad("id,memory\nx,1 GiB,extra\n", ":2: row has 3 cells, the header has 2")
gbad("id,memory\n,1 GiB\n", ":2:1: empty cell in column 'id' (every entry needs it)")
gbad("id,memory,hbm_gbps\nx,,900\n", ":2:2: gpu 'x' needs a value in column 'memory'")
gbad("id,memory\nx,0\n", ":2:2: bad number '0' in column 'memory' (expected bytes > 0)")
gbad("id,memory\nx,-80 GiB\n", ":2:2: bad number '-80 GiB' in column 'memory'")
gbad("id,memory\nx,80 GiBs\n", ":2:2: bad number '80 GiBs' in column 'memory'")
gbad("id,memory,hbm_gbps\nx,1 GiB,fast\n",
     ":2:3: bad number 'fast' in column 'hbm_gbps' (expected a number >= 0)")
gbad("id,memory,hbm_gbps\nx,1 GiB,-1\n", ":2:3: bad number '-1' in column 'hbm_gbps'")
gbad("id,memory,hbm_gbps\nx,1 GiB,0x50\n", ":2:3: bad number '0x50' in column 'hbm_gbps'")
gbad("id,memory,hbm_gbps\nx,1 GiB,nan\n", ":2:3: bad number 'nan' in column 'hbm_gbps'")
gbad("id,memory_bytes,visible_bytes\nx,16 GiB,17 GiB\n",
     ":2:3: column 'visible_bytes' (18253611008 bytes) exceeds memory_bytes (17179869184 bytes): the runtime cannot show more than the card holds")
gbad("id,memory,aliases\nx,1 GiB,\ny,1 GiB,\nx,2 GiB,\n", ":4:1: gpu 'x' is already defined on line 2")
gbad("id,memory,aliases\nx,1 GiB,z\nz,2 GiB,\n", ":3:1: gpu 'z' is already defined on line 2")
gbad("id,memory,aliases\nx,1 GiB,\nH100,2 GiB,\n", ":3:1: gpu 'H100' is already in the catalog")
gbad('id,memory\n"x,1 GiB\n', ":3: malformed CSV")

mbad("id,layers,hidden,heads\nx,8,1024,8.5\n",
     ":2:4: bad number '8.5' in column 'heads' (expected an integer >= 0)")
mbad("id,layers,hidden,heads\nx,,1024,8\n", ":2:2: empty cell in column 'layers' (every entry needs it)")
mbad("id,layers,hidden,heads,tie_embeddings\nx,8,1024,8,maybe\n",
     ":2:5: bad value 'maybe' in column 'tie_embeddings' (expected true or false)")
mbad("id,layers,hidden,heads,rope_dim\nx,8,1024,8,64\n",
     ":2:5: column 'rope_dim' needs 'kv_lora_rank' in the same row (MLA)")
mbad("id,layers,hidden,heads,dtype\nx,8,1024,8,int3\n", ":2:5: model 'x': unknown dtype 'int3'")
mbad("id,layers,hidden,heads,weight_format\nx,8,1024,8,int4-g12x\n",
     ":2:5: field 'weight_format': unknown format 'int4-g12x'")
mbad("id,layers,hidden,heads,weight_bytes\nx,8,1024,8,lots\n",
     ":2:5: bad number 'lots' in column 'weight_bytes'")
mbad("id,layers,hidden,heads\nllama-3.1-8b,8,1024,8\n", ":2:1: model 'llama-3.1-8b' is already in the catalog")
mbad("id,layer,hidden,heads\nx,8,1024,8\n", ":1:2: unknown column 'layer' (did you mean 'layers', 'mlp_layers', 'layer_kinds'?)")
mbad("id,layers,hidden,heads,mla\nx,8,1024,8,\n", ":1:5: unknown column 'mla'")
layers("sliding*5,full", ":2:6: field 'layer_kinds[1].window' must be an integer >= 1, got 0")
layers("sliding:4k*5,full",
       ":2:6: bad layer kinds 'sliding:4k*5,full' in column 'layer_kinds': run 1: window '4k' must be an integer >= 1")
layers("sliding:0", ": run 1: window '0' must be an integer >= 1")
layers("sliding:4096*0,full", ": run 1: count '0' must be an integer >= 1")
layers("full,sliding:4096*x", ": run 2: count 'x' must be an integer >= 1")
layers("full:4096", ": run 1: a full run takes no ':4096' (only sliding, chunked, cross and state runs have a size)")
layers("full,,sliding:8", ": run 2: empty run (expected runs like 'sliding:4096*5,full')")
layers("5*full", ": run 1: '5*full' does not start with a layer kind (expected runs like 'sliding:4096*5,full')")
layers("banana", ": run 1: unknown kind 'banana' (expected full, sliding, chunked, mla, state, none, cross)")
layers("sliding:", ": run 1: no size after ':' (expected runs like 'sliding:4096*5,full')")
layers("full(head_dim=64", ": run 1: '(' without ')'")
layers("full(headdim=64)", ": run 1: unknown key 'headdim' (did you mean 'head_dim'")
layers("full(head_dim)", ": run 1: 'head_dim' is not key=value")
layers("full(head_dim=big)", ": run 1: head_dim 'big' must be an integer >= 1")
layers("full x3", ": run 1: cannot read 'x3' (expected runs like 'sliding:4096*5,full')")
layers("state:lots", ": run 1: state bytes 'lots' must be bytes >= 1 (e.g. 1097728 or 1072KiB)")
layers("state:1000(state_heads=3)",
       ":2:6: field 'layer_kinds[1]': state_bytes (1000) must be >= 1 and split evenly over 3 state heads")
layers("mla", ":2:6: field 'layer_kinds[1]': MLA needs kv_lora_rank >= 1 and rope_dim >= 0, got 0 and 0")

-- the failed files added nothing
check.error("unknown model 'x'", kv.model, "x")
check.error("unknown gpu 'x'", kv.gpu, "x")

-- a state run in the overrides form, and a chunked run, load
local p = file(mhead .. 'ok1,8,1024,8,2,"chunked:8192*3,full"\n' ..
                     'ok2,4,1024,8,2,"state(state_bytes=4096 state_heads=2)*3,full"\n')
local oks = kv.models.load_csv(p)
check.eq(oks[1]:kinds().chunked, 6, "chunked runs")
check.eq(oks[2].layer_kinds[1].state_bytes, 4096, "state_bytes in parentheses")
-- a spreadsheet's UTF-8 byte order mark before the header
check.eq(kv.gpus.load_csv(file("\239\187\191id,memory\r\nbom-gpu,1 GiB\r\n"))[1].id, "bom-gpu", "BOM, CRLF")
check.eq(kv.gpu("bom-gpu").visible_bytes, GiB, "BOM file values")

for i = 1, n do os.remove(tmp .. "/c" .. i .. ".csv") end
os.remove(tmp)
print("catalog_csv: ok")

-- ---- loading is linear: each new id is one hash lookup, and "did you mean"
-- suggestions (an edit distance against every entry) are computed only for
-- an error ----------------------------------------------------------------------
do
  local util = require "kvplan.util"
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("id,layers,hidden,heads,kv_heads,params,max_context\n")
  for i = 1, 300 do f:write(string.format("linear-test-%d,32,4096,32,8,8000000000,131072\n", i)) end
  f:close()
  local distance, calls = util.distance, 0
  util.distance = function(...) calls = calls + 1; return distance(...) end
  local ok, added = pcall(kv.models.load_csv, path)
  util.distance = distance
  os.remove(path)
  assert(ok, added)
  check.eq(#added, 300, "models added")
  check.eq(calls, 0, "edit distances computed while loading good rows")
  check.eq(kv.models.find("LINEAR-TEST-7").id, "linear-test-7", "find by id, any case")
  check.eq(kv.models.find("no-such-model"), nil, "find: nil, no error")
end
-- a cross-attention run: the encoder tokens every request caches (Whisper)
do
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("id,layers,hidden,heads,kv_heads,params,max_context,layer_kinds\n")
  f:write("csv-whisper,64,1280,20,20,1543490560,448,\"full,cross:1500\"\n")
  f:close()
  kv.models.load_csv(path)
  os.remove(path)
  local m = kv.model("csv-whisper")
  check.eq(m:layer(2).kind, "cross", "a cross layer")
  check.eq(m:layer(2).window, 1500, "its encoder tokens")
  check.eq(m:kinds().cross, 32, "every other layer")
end
-- a vision tower: key=value pairs in the vision column
do
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("id,layers,hidden,heads,kv_heads,params,max_context,vision\n")
  f:write("csv-vl,28,3584,28,4,8292166656,128000,\"hidden=1280 intermediate=3420 gated=true " ..
          "patch=14 merge=2 temporal_patch=2 out_hidden=3584 proj_hidden=5120 " ..
          "max_pixels=12845056 params=676550144 model_type=qwen2_5_vl\"\n")
  f:write("csv-vl-bad,28,3584,28,4,8292166656,128000,\"hidden:1280\"\n")
  f:close()
  check.error(path .. ":3:8: bad entry 'hidden:1280' in column 'vision' (expected key=value",
              kv.models.load_csv, path)
  f = assert(io.open(path, "w"))
  f:write("id,layers,hidden,heads,kv_heads,params,max_context,vision\n")
  f:write("csv-vl,28,3584,28,4,8292166656,128000,\"hidden=1280 intermediate=3420 gated=true " ..
          "patch=14 merge=2 temporal_patch=2 out_hidden=3584 proj_hidden=5120 " ..
          "max_pixels=12845056 params=676550144 model_type=qwen2_5_vl\"\n")
  f:close()
  kv.models.load_csv(path)
  os.remove(path)
  local m = kv.model("csv-vl")
  check.eq(m.vision.gated, true, "a boolean value")
  check.eq(m.vision.max_pixels, 12845056, "an integer value")
  check.eq(m.vision.model_type, "qwen2_5_vl", "a word")
  check.eq(m:weight_class_params().vision, 676550144, "the tower's weight class")
end
