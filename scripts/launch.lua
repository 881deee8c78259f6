-- scripts/launch.lua: the command that starts a deployment under its engine,
-- every flag kvplan assumed written out (kv.launch.command, stdlib/kvplan/
-- launch.lua): vllm serve, python3 -m sglang.launch_server, trtllm-serve with
-- its extra_llm_api_options YAML, or a Kubernetes Deployment running the vLLM
-- command. A deployment kvplan predicts would not start is not printed.
--
-- Run:  kvplan launch model=llama-3.1-70b gpu=h100-sxm tp=4 engine=vllm
--       kvplan launch model=llama-3.1-8b gpu=l40s engine=sglang kv=fp8 max_model_len=32k
--       kvplan launch model=llama-3.1-70b gpu=h100-sxm tp=4 engine=k8s replicas=3
--       kvplan launch --help    (every argument, with its default and meaning)
--
-- Arguments: model, gpu, engine (vllm, sglang, trtllm or k8s; default vllm),
-- checkpoint (the model path in the command), replicas, image and name (k8s), and every one-word deployment
-- field of the registry (stdlib/kvplan/fields.lua) under its name or its
-- engines' names, dashes or underscores (tensor-parallel-size=4 is tp=4):
-- a printed command's flags written key=value give the same deployment.
--
-- Output (stdout): the first line a comment, what kvplan predicts (the GPU,
-- the release, KV tokens and blocks, requests of max_model_len at once), then
-- the command. A refusal (the engine would not start, or no flag says what
-- the deployment assumes) goes to stderr with exit status 1.

local kv = require "kvplan"
local launch = kv.launch

local args = ...
local engine = "vllm"
local rest = {}
for k, v in pairs(type(args) == "table" and args or {}) do
  if k == "engine" then engine = kv.util.trim(v) else rest[k] = v end
end
local known = {vllm = true, sglang = true, trtllm = true, k8s = true}
if not known[engine] then
  kv.options.bad("argument 'engine' must be vllm, sglang, trtllm or k8s, got '%s'%s",
                 kv.util.escape(engine, 64), kv.util.suggest(engine, launch.engines))
end
local defaults = {name = ""}
for _, a in ipairs(launch.own_arguments) do
  local def = a[2]
  if def == nil then
    def = kv.options.required(a[1] == "gpu" and "gpu=h100-sxm" or "model=llama-3.1-70b")
  end
  if a[1] ~= "engine" then defaults[a[1]] = def end
end
-- every deployment field, under its name or its engines' names
local fields = {}
for i, n in ipairs(launch.axis_fields) do fields[i], defaults[n] = n, "" end
for _, n in ipairs(kv.options.deployment_fields(defaults, {engine = true})) do fields[#fields + 1] = n end
local cli = package.loaded["kvplan.cli"]
local opt = kv.options(rest, defaults, cli ~= nil and rawequal(cli.args, args))
local d_opts = kv.options.given_fields(opt, fields, {model = opt.model, gpu = opt.gpu,
                                                     engine = engine == "k8s" and "vllm" or engine})
if d_opts.profile == "" then d_opts.profile = nil end
-- SGLang's max_running_requests and TensorRT-LLM's max_batch_size cap their
-- schedulers (kv.simulate's limit), no deployment field there
local seqs
if d_opts.engine ~= "vllm" then seqs, d_opts.max_num_seqs = d_opts.max_num_seqs, nil end
if opt.checkpoint ~= "" then
  local ok, err = pcall(launch.check_model_path, opt.checkpoint, "argument 'checkpoint'")
  if not ok then kv.options.bad("%s", (tostring(err):gsub("^.-:%d+: ", "", 1))) end
end
local d = kv.deploy(d_opts)
local text, why = launch.command(d, engine, {
  model_path = opt.checkpoint ~= "" and opt.checkpoint or nil, replicas = opt.replicas,
  image = opt.image ~= "" and opt.image or nil, name = opt.name ~= "" and opt.name or nil,
  max_num_seqs = seqs,
})
if text == nil then error("not launched: " .. why, 0) end
-- to standard output, or -o FILE (an HTML page for FILE.html or -f html)
kv.report.text(text, {title = "kvplan launch"})
