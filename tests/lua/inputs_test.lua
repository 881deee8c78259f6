-- tests/lua/inputs_test.lua: hostile inputs (issue 11): every loader rejects
-- what it cannot represent, naming the file, field and value; nothing takes
-- seconds or gigabytes because a number in a file is large.
local kv = require "kvplan"
local check = require "check"

local dir = check.tmpdir()
local function put(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end
local function seconds(f)
  local t = os.clock()
  f()
  return os.clock() - t
end
local CONFIG = '{%s"hidden_size":8,"num_attention_heads":2,' ..
               '"num_hidden_layers":%s,"num_key_value_heads":1,"vocab_size":32,' ..
               '"intermediate_size":16,"max_position_embeddings":64%s}'
local function model_dir(name, layers, extra)
  local d = dir .. "/" .. name
  os.execute("mkdir -p " .. d)
  local mt = (extra or ""):find("model_type") and "" or '"model_type":"llama",'
  put(d .. "/config.json", CONFIG:format(mt, layers, extra or ""))
  return d
end

-- from_hf: the layer limit comes before any per-layer work
local d = model_dir("huge", "1000000000000")
local t = seconds(function()
  check.error("huge/config.json: field 'num_hidden_layers' must be at most 1024 (the layers kvplan plans), got 1000000000000",
              kv.models.from_hf, d)
end)
assert(t < 5, "1e12 layers took " .. t .. " s")
d = model_dir("slide", "20000", ',"sliding_window":4,"model_type":"gemma2","head_dim":4')
check.error("field 'num_hidden_layers' must be at most 1024", kv.models.from_hf, d)

-- duplicate JSON keys: which one a parser keeps differs, so neither is taken
d = model_dir("dup", '2,"num_hidden_layers":3')
check.error("dup/config.json:1:", kv.models.from_hf, d)
check.error("duplicate object key", kv.models.from_hf, d)
check.error("duplicate object key", require("kvplan.json").decode, '{"a":1,"a":2}')

-- weight_map entries outside the model directory are not opened
d = model_dir("escape", "2")
for _, bad in ipairs{"../../etc/passwd", "/etc/passwd", "sub/../../x.safetensors", ".."} do
  put(d .. "/model.safetensors.index.json",
      '{"metadata":{"total_size":100},"weight_map":{"w":"' .. bad .. '"}}')
  check.error("field 'weight_map.w' must name a file inside the model directory, got '" .. bad .. "'",
              kv.models.from_hf, d)
end

-- an empty safetensors header is no checkpoint of 0 parameters
d = model_dir("empty", "2")
for _, header in ipairs{"{}", '{"__metadata__":{"format":"pt"}}'} do
  put(d .. "/model.safetensors", string.pack("<I8", #header) .. header)
  check.error("empty/model.safetensors: the safetensors header lists no tensors", kv.models.from_hf, d)
end

-- heads: kv_heads above heads, heads that do not divide hidden (from_hf
-- rejects the same; a CSV model must not slip through)
check.error("model 'x': field 'kv_heads' (4) must be at most field 'heads' (2)", kv.model,
            {id = "x", layers = 2, hidden = 8, heads = 2, kv_heads = 4})
check.error("model 'x': field 'heads' (3) does not divide field 'hidden' (10)", kv.model,
            {id = "x", layers = 2, hidden = 10, heads = 3})
assert(kv.model{id = "x", layers = 2, hidden = 10, heads = 3, head_dim = 4}) -- head_dim given
put(dir .. "/heads.csv", "id,layers,hidden,heads,kv_heads\nbad-heads,2,8,2,4\n")
check.error("heads.csv:2:5: model 'bad-heads': field 'kv_heads' (4) must be at most field 'heads' (2)",
            kv.models.load_csv, dir .. "/heads.csv")
put(dir .. "/hidden.csv", "id,layers,hidden,heads\nbad-hidden,2,10,3\n")
check.error("hidden.csv:2:4: model 'bad-hidden': field 'heads' (3) does not divide field 'hidden' (10)",
            kv.models.load_csv, dir .. "/hidden.csv")

-- aliases name one entry
check.error("model 'y': alias 'llama-3.1-8b' already names model 'llama-3.1-8b'", kv.models.add,
            {id = "y", layers = 2, hidden = 8, heads = 2, aliases = {"llama-3.1-8b"}})
put(dir .. "/alias.csv", "id,aliases,layers,hidden,heads\na1,same,2,8,2\na2,same,2,8,2\n")
check.error("alias.csv:3:2: alias 'same' of model 'a2' already names an entry on line 2",
            kv.models.load_csv, dir .. "/alias.csv")
put(dir .. "/alias2.csv", "id,aliases,layers,hidden,heads\na3,Llama-3.1-8B,2,8,2\n")
check.error("alias2.csv:2:2: alias 'Llama-3.1-8B' of model 'a3' already names model 'llama-3.1-8b' in the catalog",
            kv.models.load_csv, dir .. "/alias2.csv")

-- a megabyte cell: the "did you mean" search and the message stay small.
-- Times are compared with reading the same bytes as a valid text cell
-- (sanitizers and valgrind slow both alike): before the fixes these took
-- minutes (a quadratic edit distance) and seconds (a backtracking pattern).
local big = ("x"):rep(1 << 20)
local nid = 0
local function baseline(cell)
  nid = nid + 1
  put(dir .. "/base.csv", "id,layers,hidden,heads,notes\nbase" .. nid .. ",2,8,2," .. cell .. "\n")
  return seconds(function() assert(kv.models.load_csv(dir .. "/base.csv")) end)
end
local function fast(t, base, what) assert(t < 5 * base + 0.5, what .. " took " .. t .. " s (a valid cell " .. base .. " s)") end
local base = baseline(big)
put(dir .. "/bigcell.csv", "id,layers,hidden,heads,layer_kinds\nm,2,8,2," .. big .. "\n")
t = seconds(function() check.error("unknown kind", kv.models.load_csv, dir .. "/bigcell.csv") end)
fast(t, base, "a 1 MB cell")
put(dir .. "/bighead.csv", big .. ",id\n")
t = seconds(function() check.error("unknown column", kv.models.load_csv, dir .. "/bighead.csv") end)
fast(t, base, "a 1 MB column name")
-- an unknown name costs the "did you mean" search over the catalog whatever
-- its length (names compared by their first 64 bytes): that fixed cost, timed
-- on a short unknown name, is added to the baseline of reading the bytes
local search = seconds(function() check.error("unknown model", kv.model, ("x"):rep(64)) end)
t = seconds(function() check.error("unknown model", kv.model, big) end)
fast(t, base + search, "a 1 MB model name")

-- a 16K-digit number: read in linear time (a backtracking pattern took seconds)
local digits = ("9"):rep(16384)
for _, cell in ipairs{digits .. "x", digits, digits .. ".5x", ("1e"):rep(8000)} do
  base = baseline(("y"):rep(#cell))
  put(dir .. "/num.csv", "id,layers,hidden,heads,weight_bytes\nm,2,8," .. cell .. ",1\n")
  t = seconds(function() check.error("bad number", kv.models.load_csv, dir .. "/num.csv") end)
  fast(t, base, "a 16K-digit cell")
  put(dir .. "/num.csv", "id,layers,hidden,heads,weight_bytes\nm,2,8,2," .. cell .. "\n")
  t = seconds(function() check.error("bad number", kv.models.load_csv, dir .. "/num.csv") end)
  fast(t, base, "a 16K-character bytes cell")
end

-- overflow errors name the field and its value
local function ledger(opts)
  opts.model, opts.gpu = opts.model or "llama-3.1-8b", "h100-sxm"
  local l = kv.deploy(opts):ledger()
  l:max_context(1)
  return l
end
check.error("caused by field 'block' = 4611686018427387904", ledger, {block = 1 << 62})
check.error("caused by field 'overhead' = 9223372036854775807", ledger, {overhead = math.maxinteger})
check.error("caused by field 'activation' = 9223372036854775807", ledger, {activation = math.maxinteger})
check.error("caused by field 'max_model_len' = 4611686018427387904", ledger, {max_model_len = 1 << 62})
check.error("caused by field 'params' = 4611686018427387904", ledger,
            {model = {id = "p", layers = 2, hidden = 8, heads = 2, params = 1 << 62}})
-- the context-parallel sizes past 2^63 were blamed on gpu_memory and params
-- ("block x decode_context_parallel_size x prefill_context_parallel_size
-- overflows: caused by field 'gpu_memory' = 85520809984, field 'params' = ...")
check.error("overflows: caused by field 'prefill_context_parallel_size' = 1000000000000000000 (too large",
            ledger, {prefill_context_parallel_size = 10^18 // 1})
d = model_dir("positions", "2")
put(d .. "/config.json", (CONFIG:format('"model_type":"llama",', 2, ""):gsub('"max_position_embeddings":64',
    '"max_position_embeddings":4611686018427387904')))
-- (since hostile4 at from_hf, naming the file)
check.error("positions/config.json: vLLM's rotary table ('rope') of 4.61169e+18 rows x 4 elements is more "
            .. "than 2^63 bytes, caused by field 'max_context' = 4611686018427387904", kv.models.from_hf, d)
-- vLLM's startup check past 2^63 (l:starts, l:fit, l:max_concurrency and a
-- sweep's starts column) names the length's field, not "starts: arithmetic
-- overflow" alone
local huge = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", max_model_len = 1 << 62}:ledger()
for _, q in ipairs{function() return huge:starts() end, function() return huge:fit(1024, 1) end,
                   function() return huge:max_concurrency(1024) end} do
  check.error("vLLM's startup check: the KV cache one request of 4611686018427387904 tokens needs " ..
              "exceeds 64 bits (caused by field 'max_model_len' = 4611686018427387904)", q)
end
check.error("(caused by field 'max_model_len' = 4611686018427387904)", function()
  kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", max_model_len = 1 << 62,
           columns = {"starts"}}:each(function() end)
end)
-- the activation prediction past 2^63 names the profile's tokens ("engine
-- rule: arithmetic overflow" before)
for _, engine in ipairs{"vllm", "trtllm"} do
  check.error("the activation peak of a profile run of 4611686018427387904 tokens exceeds 64 bits " ..
              "(caused by field 'max_num_batched_tokens' = 4611686018427387904)", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", engine = engine, max_num_batched_tokens = 1 << 62})
end

-- gpu_memory = 0 names the field
check.error("field 'gpu_memory' must be > 0 bytes, got 0", kv.deploy, {model = "llama-3.1-8b", gpu_memory = 0})
check.error("field 'gpu_memory' must be > 0 bytes, got 0", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100-sxm", gpu_memory = 0})

-- sweeps: empty axes, counts past 2^63
for _, axis in ipairs{"tp", "context", "model", "kv", "utilization"} do
  local spec = {model = "llama-3.1-8b", gpu = "h100-sxm", columns = {"tp"}}
  spec[axis] = {}
  check.error("sweep axis '" .. axis .. "' is empty (expected at least one value)", kv.sweep, spec)
end
check.error("sweep var 'v' is empty", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100-sxm", columns = {"tp"}, vars = {v = {}}})
local many, kvs = {}, {}
for i = 1, 2048 do many[i], kvs[i] = i, "bf16" end
check.error("the sweep has more than 2^63 rows", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100-sxm", tp = many, pp = many, context = many,
             concurrency = many, kv = kvs, weights = kvs, columns = {"tp"}})
local s = kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", tp = many, context = many,
                   concurrency = many, kv = {"bf16", "fp8"}, columns = {"tp"}}
check.eq(s:count(), 2 * 2048 ^ 3 // 1, "rows of a 2^34-row sweep")

-- messages keep every byte, and show control characters escaped
local msg = check.error("got string 'a\\x00\\x1bb'", kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", tp = "a\0\27b"})
assert(not msg:find("\27", 1, true))
msg = check.error("x\0y", require("kvplan.core").raise, "x\0y")

os.execute("rm -rf " .. dir)
print("inputs: ok")
