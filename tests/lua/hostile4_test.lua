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

print("hostile4_test: ok")
