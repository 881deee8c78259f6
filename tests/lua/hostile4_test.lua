-- tests/lua/hostile4_test.lua: hostile values through the Lua API, fourth pass
-- (docs/reliability.md, 2026-12-06, brief hostile4): launch commands whose
-- model path or id holds what the shell or Kubernetes reads, each either
-- carried whole (and read back) or refused naming the value.
local kv = require "kvplan"
local check = require "check"
local launch = kv.launch

local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}

-- a model path beginning with '-' is a flag to the engines' argparse (it
-- failed kvplan's own read-back, "launch.parse: no model after the program"),
-- an empty one named no model ("vllm serve ''" was printed)
for _, e in ipairs(launch.engines) do
  check.error("model_path must be a model path or Hugging Face id that does not begin with '-' "
              .. "(write ./-x for a path '-x'), got '--help'", launch.command, d, e, {model_path = "--help"})
  check.error("model_path must be a model path or Hugging Face id that does not begin with '-' "
              .. "(write ./-x for a path '-x'), got ''", launch.command, d, e, {model_path = ""})
  assert(launch.command(d, e, {model_path = "./-x"}), e .. ": ./-x launched")
end

-- Kubernetes expands $(VAR) in a container's command and args and reads $$ as
-- $: every '$' is doubled; a control character is a YAML \xNN escape (a line
-- break in a double-quoted scalar was folded into a space, then "launch.parse:
-- expected a quoted list item"); each reads back as the path given
for _, p in ipairs{"$(HOME)/m", "/m/$$x", "a\nb\tc\127", "a\\x41\"q", "it's $(x) `y`"} do
  local text, info = launch.command(d, "k8s", {model_path = p})
  assert(text, "k8s launched " .. kv.util.escape(p))
  check.eq(info.argv[3], p, "the argv's model")
  check.eq(launch.parse(text, "k8s", {gpu = d.gpu}).model, p, "read back: " .. kv.util.escape(p))
  assert(not text:find("- \"[^\"\n]*\n"), "one list item a line: " .. kv.util.escape(p))
  if p:find("$", 1, true) then
    assert(not text:find('[^$]%$%(') and not text:find('^%$%('), "no $( left unescaped: " .. p)
  end
  -- the shell engines quote it and read it back the same
  for _, e in ipairs{"vllm", "sglang", "trtllm"} do
    local t2 = assert(launch.command(d, e, {model_path = p}))
    check.eq(launch.parse(t2, e, {gpu = d.gpu}).model or p, p, e .. " read back")
  end
end

-- the first comment line holds the model's id: one with a line break (a
-- directory 'x<LF>touch PWNED' holding config.json) ended the comment and
-- made its rest a shell line
local m = kv.models.from_hf("tests/fixtures/hf/llama-3.1-8b/config.json", {id = "x\ntouch PWNED; y"})
local text = assert(launch.command(kv.deploy{model = m, gpu = "h100-sxm"}, "vllm", {model_path = "/m"}))
check.eq(select(2, text:gsub("\n", "\n")), 9, "the comment, the command and its eight flags")
assert(text:find("^# kvplan vllm [^\n]*x\\ntouch PWNED; y on 1 x h100%-sxm"), "the id escaped: " .. text)
assert(not text:find("\ntouch", 1, true), "no line begins with the id's rest")

-- flashinfer_sampler = false (on by default from vLLM 0.21) wrote no variable
-- and failed its own read-back ("a kvplan bug"); vLLM reads 0 as off
for _, e in ipairs{"vllm", "k8s"} do
  local t = assert(launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                                            flashinfer_sampler = false}, e))
  assert(t:find("VLLM_USE_FLASHINFER_SAMPLER", 1, true), e .. ": the variable written")
end

-- ---- config.json values that pass one by one, not together ----
local dir = check.tmpdir()
local llama = check.slurp("tests/fixtures/hf/llama-3.1-8b/config.json")
local function config(name, text)
  local d = dir .. "/" .. name
  assert(os.execute("mkdir -p '" .. d .. "'"))
  local f = assert(io.open(d .. "/config.json", "w"))
  f:write(text)
  f:close()
  return d .. "/config.json"
end
local function with(pattern, repl)
  local t, n = llama:gsub(pattern, repl)
  assert(n == 1, "the fixture holds " .. pattern)
  return t
end
local function refused(name, text, msg)
  local path = config(name, text)
  check.error(path .. ": " .. msg, kv.models.from_hf, path)
end
-- a rope_scaling factor or original length the rotary table refuses was
-- accepted here and refused at the deployment, naming kvplan's 'rope.factor'
local function rope(json) return with('"rope_scaling": %b{}', '"rope_scaling": ' .. json) end
refused("rope0", rope('{"rope_type": "linear", "factor": 0}'),
        "field 'rope_scaling.factor' must be a number >= 1 for rope type 'linear', got 0")
refused("ropestr", rope('{"rope_type": "dynamic", "factor": "nan"}'),
        "field 'rope_scaling.factor' must be a number >= 1 for rope type 'dynamic', got 'nan'")
refused("ropeorig", rope('{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 0}'),
        "field 'rope_scaling.original_max_position_embeddings' must be a positive integer, got 0")
-- an array is a Lua table too: it was read as the default rope
refused("ropelist", rope('[1, 2]'), "field 'rope_scaling' must be an object, got [1, 2]")
-- finite numbers whose tables or weights pass 2^63 bytes: the file named
refused("ropehuge", rope('{"rope_type": "linear", "factor": 1e308}'),
        "vLLM's rotary table ('rope') of inf rows x 128 elements is more than 2^63 bytes")
refused("maxpos", with('"max_position_embeddings": 131072', '"max_position_embeddings": 4611686018427387904'),
        "vLLM's rotary table ('rope') of 4.61169e+18 rows")
-- scale groups past the core's int32: group_size 2^40 was "scale or zero bits
-- need a group size" naming nothing, 2^32 + 128 silently group 128
local function quant(json) return with('"use_cache": true,', '"use_cache": true, "quantization_config": ' .. json .. ',') end
refused("gptqhuge", quant('{"quant_method": "gptq", "bits": 4, "group_size": 1099511627776}'),
        "field 'quantization_config.group_size' must be a positive integer of at most 2147483647 or -1, "
        .. "got 1099511627776")
refused("gptqwrap", quant('{"quant_method": "awq", "bits": 4, "group_size": 4294967424}'),
        "field 'quantization_config.group_size' must be a positive integer of at most 2147483647 or -1")
refused("fp8huge", quant('{"quant_method": "fp8", "weight_block_size": [1099511627776, 1099511627776]}'),
        "field 'quantization_config.weight_block_size' [1099511627776, 1099511627776] is a block of more "
        .. "than 2147483647 elements")
-- a short array shown as itself ("a JSON object or array" before)
refused("fp8zero", quant('{"quant_method": "fp8", "weight_block_size": [0, 0]}'),
        "field 'quantization_config.weight_block_size' must be two positive integers, got [0, 0]")
-- the binding's format fields are the core's int32: a wider value was cast
local m8 = kv.model("llama-3.1-8b")
check.error("field 'weights.group' must be an integer of at most 2147483647, got 4294967424",
            function() return m8:weight_size("int4-g4294967424") end)
check.error("field 'format.bits' must be an integer of at most 2147483647, got 4294967300",
            function() return m8:weight_size({bits = 4294967300}) end)
os.execute("rm -rf '" .. dir .. "'")

print("hostile4_test: ok")
