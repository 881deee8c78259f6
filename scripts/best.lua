-- scripts/best.lua: the cheapest deployments that serve a request shape:
-- `concurrency` requests of `context` tokens at once, searched over GPUs,
-- every tensor-parallel size the heads allow, pipeline stages, and weight
-- and KV cache formats (kv.best, stdlib/kvplan/best.lua); or, with rate=, a
-- service: the deployments and replicas that serve `rate` requests a second
-- of `input` + `output` tokens under latency targets (kv.plan,
-- stdlib/kvplan/plan.lua), each replica's capacity found by the simulator.
--
-- Run:  kvplan best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16
--       kvplan best model=qwen3-32b context=32k concurrency=32 rank=cost prices=prices.csv
--       kvplan best model=llama-3.1-70b input=2048 output=256 rate=20 ttft_ms=2000 tpot_ms=50
--              percentile=p90 gpus=h100-sxm,h200,mi300x
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required; `kvplan models` lists them),
--                else a Hugging Face directory or config.json, else a repo
--                id ORG/NAME in the local Hugging Face cache ($HF_HUB_CACHE,
--                $HF_HOME/hub, ~/.cache/huggingface/hub; no network)
--   revision     with a repo id: the cache's snapshot of this branch, tag or
--                commit (default: the one refs/main names)
--   context      tokens per request (default 0: the model's max_context;
--                32k = 32000 and 32K = 32768 as vLLM's --max-model-len)
--   concurrency  requests running at once (default 1)
--   gpus         GPU ids or aliases (default: every plannable GPU; a module
--                of several devices such as the MI250X counts as one device)
--   weights      weight formats to try (default native: the checkpoint's own)
--   kv           KV cache formats to try (default auto: the model's activation
--                dtype, as vLLM's kv_cache_dtype=auto)
--   tp, pp       sizes to try (default: every tp the heads allow; pp 1, 2, 3...)
--   max_gpus     most GPUs a deployment may use, tp x pp (default 64)
--   rank         gpus (fewest GPUs, then fewest stages), cost (GPUs x
--                price_per_hour) or concurrency (requests per GPU)
--   prices       CSV file with columns gpu, price_per_hour (USD per GPU-hour;
--                needed by rank=cost; no prices are built in)
--   tokens_per_s decode throughput the deployment must reach at `concurrency`
--                (default 0: none; kvplan's roofline step time, d:time)
--   top          ranked deployments shown (default 5)
--   all          true: every candidate tp x pp, not one a GPU and format
--   utilization  fraction of GPU memory the engine may use (default: the
--                engine's: 0.92 under vLLM's newest release (0.9
--                before 0.20), 0.9 under TensorRT-LLM, SGLang's by tp)
--   any other deployment field of the registry (docs/fields.md), under its
--                name or its engines' (max_model_len: `context` defaults to
--                it; engine, engine_version, block, prefix, ...), checked as
--                that field and given to every candidate; gpu and gpus stand
--                for each other
--   emit         vllm, sglang, trtllm or k8s: after the table, the launch
--                command of the winner (kv.launch: every flag kvplan
--                assumed, checked by kvplan's startup rule and read back;
--                its replicas in a comment, the Deployment's under k8s; a
--                disaggregated winner one command a pool). sglang and trtllm
--                plan under that engine's rule. A winner whose command
--                cannot be written passes to the next rank, saying why;
--                none: exit status 1 (default: none). An HTML page goes
--                to a file (-o FILE.html), the command to standard output
-- Activation peak and non-torch memory are predicted as kv.deploy does.
--
-- A service (rate= given; context, concurrency and tokens_per_s are then
-- not taken):
--   rate         requests a second the service must serve (Poisson arrivals)
--   input        prompt tokens per request (required with rate)
--   output       output tokens per request (required with rate)
--   ttft_ms, tpot_ms, e2e_ms   latency targets in milliseconds at
--                `percentile` (default 0: none)
--   percentile   p50, p90 or p99 (default p90)
--   goodput      the share of requests that must meet every target (0..1;
--                default 0: the percentile alone)
--   requests     requests each simulation serves (default 500)
--   max_num_seqs, max_num_batched_tokens   engine limits to try (lists;
--                default the engine's)
--   rank         gpus (fewest GPUs in all, then fewest stages, then the
--                most requests a second a replica), cost (cost per hour)
--                or usd_per_mtok (cost per million output tokens at the rate)
--   modes        aggregated (default) and/or disaggregated: prefill and
--                decode pools sized apart (kvplan.disagg), in the same table
--                (columns mode; with -o also prefill, decode, kv_transfer_ms)
--   kv_link_gbps, kv_link_latency_us   the link between the pools (default:
--                the GPU's scale-out NIC in the catalog, GB/s one way; 6700 us)
--   wide         true: every column on the terminal too (with -o FILE or
--                --format csv/json, every column is written anyway)
-- A Pareto front (pareto=yes; no rate): kvplan pareto's report and chart,
-- the same code (stdlib/kvplan/pareto.lua M.command): input, output, gpus,
-- tp, pp, max_gpus (default 8 here), weights, kv, the targets, percentile,
-- goodput, requests, utilization and one max_num_seqs or
-- max_num_batched_tokens as there, and
--   pareto       true: the Pareto front of tokens/s per GPU against tokens/s
--                per user over deployments x client concurrencies
--   front        true: only the points on the front
--   chart        also draw the front to this .png or .svg file
-- Each deployment that starts with max_model_len = input + output has its
-- capacity found (kv.plan.capacity: the highest rate one replica sustains
-- under the targets) and gets ceil(rate / capacity) replicas; deployments
-- whose lower bound of GPUs (or cost) exceeds the fifth best found are not
-- simulated and say so. Output, the `top` ranked, then every other GPU and
-- format's best or why none serves:
--   rank, gpu, tp, pp, replicas, gpus (all replicas), rate_per_replica
--   (requests a second one replica sustains), binding (what stops a higher
--   rate: ttft, tpot, e2e, kv_memory, compute, start), ttft_ms_P and
--   tpot_ms_P (at the percentile P, one replica at rate / replicas),
--   tokens_per_s (output, all replicas, at the rate), cost_per_hour and
--   usd_per_mtok (per million output tokens; with prices), why; with -o,
--   --format csv/json or wide=true also mode, weights, kv, max_num_seqs,
--   max_num_batched_tokens, utilization (rate / capacity of the replicas),
--   e2e_ms_P, tokens_per_s_user (1000 / mean TPOT), usd_per_mtok_total
--   (per million input and output tokens). Standard error says how many
--   deployments were simulated and how many simulations ran.
--
-- On a table printed to standard output (a terminal, -f table) only the
-- `top` ranked rows are rows: each other GPU gets one line under the table
-- (rank, its best deployment, GPUs, cost, why it ranks below, cut to the
-- terminal's width); all=true prints every candidate as a row, and a file,
-- a pipe, CSV, JSON, Markdown and -f vertical have the rows below.
--
-- Output: the `top` deployments that serve the shape, by rank, then for
-- every other GPU and format its best deployment, or why none serves (when
-- nothing serves, only those rows, rank empty):
--   rank, gpu, tp, pp, gpus (tp x pp), weights, kv,
--   max_concurrency        requests of `context` tokens the deployment holds
--   requests_per_gpu       max_concurrency / gpus
--   cost_per_hour          gpus x price_per_hour (empty without prices)
--   tokens_per_s           decode throughput at `concurrency` (with a target)
--   weights_gib_per_gpu, kv_budget_gib_per_gpu   one GPU of the tightest stage
--   why                    what it lost on against rank 1, or why it does
--                          not serve the shape

local kv = require "kvplan"

local defaults = {
  model = kv.options.required "model=llama-3.1-70b", context = 0, concurrency = kv.options.at_least(1, 1), gpus = {""},
  weights = {""}, kv = {""}, tp = {0}, pp = {0}, max_gpus = kv.options.at_least(1, 64), rank = "gpus", prices = "",
  tokens_per_s = 0.0, top = 5, all = false,
  rate = 0.0, input = 0, output = 0, ttft_ms = 0.0, tpot_ms = 0.0, e2e_ms = 0.0, percentile = "",
  goodput = 0.0, requests = 0, max_num_seqs = {0}, max_num_batched_tokens = {0}, wide = false,
  modes = {"aggregated"}, kv_link_gbps = 0.0, kv_link_latency_us = -1.0, emit = "",
  pareto = false, front = false, chart = "",
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
if opt.prices ~= "" then
  local ok, err = pcall(kv.gpus.load_prices, opt.prices)
  if not ok then kv.options.bad("argument 'prices': %s", (tostring(err):gsub("^.-:%d+: ", "", 1))) end
end
local function given(l) return #l > 0 and l[1] ~= "" and l[1] ~= 0 and l or nil end
-- a tp no deployment within max_gpus has: a usage error, not an empty table
-- ('best tp=128' printed the header alone, status 0)
if given(opt.tp) then
  local within = false
  for _, t in ipairs(opt.tp) do within = within or t <= opt.max_gpus end
  if not within then
    local shown = {}
    for i, t in ipairs(opt.tp) do shown[i] = string.format("%d", t) end
    kv.options.bad("argument 'tp': no size is within max_gpus %d (a deployment uses tp x pp GPUs), got '%s'",
                   opt.max_gpus, table.concat(shown, ","))
  end
end

-- The candidates shown, in order, each with its why (nil: its own): the
-- `top` ranked (every candidate with all=true), then for every other group
-- of candidates (key(c): a GPU and formats) its best ranked one, or the one
-- closest(g) picks from a group none of which is ranked, and why.
local function pick_rows(ranked, key, first_why, closest)
  local out, shown = {}, {}
  local function take(c, why) shown[c] = true; out[#out + 1] = {c, why} end
  for _, c in ipairs(ranked) do
    if c.rank and (c.rank <= opt.top or opt.all) then take(c, c.rank == 1 and first_why(c) or nil) end
  end
  local ntop = #out
  if opt.all then
    for _, c in ipairs(ranked) do if not shown[c] then take(c) end end
    return out, #out
  end
  local groups, order = {}, {}
  for _, c in ipairs(ranked) do
    local k = key(c)
    if groups[k] == nil then groups[k] = {}; order[#order + 1] = k end
    table.insert(groups[k], c)
  end
  for _, k in ipairs(order) do
    local g, done = groups[k], false
    for _, c in ipairs(g) do done = done or shown[c] end
    if not done then
      if g[1].rank then take(g[1]) else take(closest(g)) end
    end
  end
  return out, ntop
end

-- On a table printed to standard output (a terminal, or -f table) the
-- ranked rows are followed by one line for each other GPU, where a file,
-- CSV, JSON or Markdown has its rows (all=true: every row, in a table too;
-- nothing ranked: the rows, which say why each GPU does not serve).
local out_format, to_stdout, width = kv.report.destination()
local summarize = not opt.all and out_format == "table" and to_stdout

-- An HTML page's chart (-f html): the metric the candidates are ranked by,
-- a bar a candidate of the `top` ranked, in rank order. picked: pick_rows's
-- list; metric: {field of a candidate, column name, axis label};
-- label(c): the candidate's bar.
local function rank_chart(picked, metric, label, what)
  local bars = {}
  for _, t in ipairs(picked) do
    local c = t[1]
    if c.rank and c.rank <= math.max(opt.top, 1) then
      bars[#bars + 1] = {candidate = label(c), [metric[2]] = c[metric[1]] or 0}
    end
  end
  return {data = bars, x = "candidate", y = metric[2], kind = "bar", ylabel = metric[3], xlabel = "candidate, by rank",
          title = string.format("the best deployments by %s, %s", metric[3], what)}
end

-- The rows of pick_rows to write (its first ntop with a summary), and the
-- summary's lines: for each GPU none of those rows is on, its first entry
-- (its best, or why none serves), in fields from describe(c, why) (rank,
-- gpu, deployment, GPUs, cost or nil; the why last), aligned and cut to
-- the terminal's width.
local function split_rows(picked, ntop, describe)
  if not summarize or ntop == 0 then return picked, nil end
  local rows, on, lines = {}, {}, {}
  for i = 1, ntop do rows[i] = picked[i]; on[picked[i][1].gpu] = true end
  -- a why ends with how rank 1 compares ('needs 3 GPUs, mi325x tp 2 x pp 1
  -- needs 2'): rank 1 is the table's first row, the line keeps the first part
  local first = ", " .. picked[1][1].gpu .. " tp "
  for i = ntop + 1, #picked do
    local c, why = picked[i][1], picked[i][2] or picked[i][1].why
    if not on[c.gpu] then
      on[c.gpu] = true
      local at = c.rank and why:find(first, 1, true)
      lines[#lines + 1] = describe(c, at and why:sub(1, at - 1) or why)
    end
  end
  if #lines == 0 then return rows, nil end
  local w, priced = {}, false
  for _, l in ipairs(lines) do
    priced = priced or l[5] ~= nil
    for i = 1, 4 do w[i] = math.max(w[i] or 0, utf8.len(l[i])) end
  end
  local text = {"Other GPUs, the best deployment of each (all=true lists every deployment):"}
  for _, l in ipairs(lines) do
    local f = {string.rep(" ", w[1] - #l[1]) .. l[1], l[2] .. string.rep(" ", w[2] - utf8.len(l[2])),
               l[3] .. string.rep(" ", w[3] - utf8.len(l[3])), string.rep(" ", w[4] - #l[4]) .. l[4]}
    if priced then f[#f + 1] = l[5] or "no price" end
    f[#f + 1] = l[6]
    text[#text + 1] = kv.util.cut("  " .. table.concat(f, "  "), width)
  end
  return rows, table.concat(text, "\n") .. "\n"
end
local function gpus_words(n) return n == 1 and "1 GPU" or string.format("%d GPUs", n) end
local function cost_words(c)
  return c.cost_per_hour and string.format("$%.2f/h", c.cost_per_hour) or nil
end
local bad = kv.options.bad
local args = (package.loaded["kvplan.cli"] or {}).args or {}
if type(args) ~= "table" then args = {} end
-- emit=ENGINE: after the table, the winner's launch command (kv.launch.winner);
-- SGLang and TensorRT-LLM plan under their own engine rule
local emit_engines = {vllm = true, sglang = true, trtllm = true, k8s = true}
if opt.emit ~= "" and not emit_engines[opt.emit] then
  bad("argument 'emit' must be vllm, sglang, trtllm or k8s, got '%s'%s", kv.util.escape(opt.emit, 64),
      kv.util.suggest(opt.emit, kv.launch.engines))
end
local function base_of()
  local b = kv.options.given_fields(opt, fields)
  if opt.emit == "sglang" or opt.emit == "trtllm" then
    b.engine = opt.emit
    -- SGLang's fraction by tp unless one is given (under any of its names)
    local given_u = false
    for k in pairs(args) do
      if type(k) == "string" then
        local u = k:gsub("%-", "_")
        given_u = given_u or u == "utilization" or kv.deployments.engine_names[u] == "utilization"
      end
    end
    if opt.emit == "sglang" and not given_u then b.utilization = nil end
  end
  return b
end
-- an HTML page on standard output is one document: a command after it
-- would be text past </html>
if opt.emit ~= "" and out_format == "html" and to_stdout then
  bad("argument 'emit' writes the launch command after the report, which is an HTML page on standard "
      .. "output; write the page to a file (-o FILE.html) and the command comes to standard output")
end
local function emit(ranked)
  if opt.emit == "" then return end
  local text, why = kv.launch.winner(ranked, opt.emit)
  if text == nil then error("not launched: " .. why, 0) end
  io.stdout:write(text)
end
local service = {"input", "output", "ttft_ms", "tpot_ms", "e2e_ms", "percentile", "goodput", "requests",
                 "max_num_seqs", "max_num_batched_tokens", "modes", "kv_link_gbps", "kv_link_latency_us"}

if opt.pareto then
  --- a Pareto front: kvplan pareto's code path
  for _, k in ipairs{"rate", "context", "concurrency", "tokens_per_s", "rank", "prices", "top", "all",
                     "wide", "modes", "kv_link_gbps", "kv_link_latency_us", "emit"} do
    if args[k] ~= nil then
      bad("argument '%s' is not for pareto=yes (its points are deployments x client "
          .. "concurrencies; kvplan pareto --help)", k)
    end
  end
  local base = kv.options.given_fields(opt, fields)
  for _, k in ipairs{"max_num_seqs", "max_num_batched_tokens"} do
    local l = given(opt[k])
    if l and #l > 1 then bad("argument '%s' takes one value with pareto=yes, got %d", k, #l) end
    if l then base[k] = l[1] end
  end
  require("kvplan.pareto").command({
    model = opt.model, gpus = opt.gpus, input = args.input and opt.input or -1,
    output = args.output and opt.output or -1, tp = opt.tp, pp = opt.pp,
    max_gpus = args.max_gpus and opt.max_gpus or 8, weights = opt.weights, kv = opt.kv,
    concurrency = {0}, requests = opt.requests, tpot_ms = opt.tpot_ms, ttft_ms = opt.ttft_ms,
    e2e_ms = opt.e2e_ms, percentile = opt.percentile, goodput = opt.goodput, front = opt.front,
    chart = opt.chart,
  }, base)
  return
elseif opt.front or opt.chart ~= "" then
  bad("argument '%s' goes with pareto=yes", opt.front and "front" or "chart")
end
if opt.rate == 0 and args.rate == nil then
  for _, k in ipairs(service) do
    if args[k] ~= nil then
      bad("argument '%s' needs rate= (requests a second): latency targets, lengths and engine limits "
          .. "plan a service; without rate= best holds concurrency=N requests of context=L tokens", k)
    end
  end
  if opt.rank == "usd_per_mtok" then bad("argument 'rank': usd_per_mtok needs rate= (requests a second)") end
  -- kv.best's own check said it at this script's line, status 1
  if not require("kvplan.best").ranks[opt.rank] then
    bad("argument 'rank' must be gpus, cost or concurrency, got '%s'", kv.util.escape(opt.rank, 64))
  end
else
  --- a service: kv.plan
  if not (opt.rate > 0 and opt.rate < math.huge) then
    bad("argument 'rate' must be a number > 0 (requests a second), got '%s'", kv.util.fmt_num(opt.rate))
  end
  for _, k in ipairs{"context", "concurrency", "tokens_per_s"} do
    if args[k] ~= nil then
      bad("argument '%s' is for the memory search; with rate= give input= and output= (tokens per "
          .. "request) and latency targets", k)
    end
  end
  if opt.rank == "concurrency" then
    bad("argument 'rank' must be gpus, cost or usd_per_mtok with rate=, got 'concurrency'")
  end
  if not kv.plan.ranks[opt.rank] then
    bad("argument 'rank' must be gpus, cost or usd_per_mtok, got '%s'", kv.util.escape(opt.rank, 64))
  end
  for _, k in ipairs{"input", "output"} do
    if opt[k] < 1 then
      bad("argument '%s' must be an integer >= 1 (tokens per request) with rate=, got '%d'", k, opt[k])
    end
  end
  if opt.percentile ~= "" and not kv.plan.percentiles[opt.percentile] then
    bad("argument 'percentile' must be p50, p90 or p99, got '%s'", kv.util.escape(opt.percentile, 64))
  end
  for _, k in ipairs{"ttft_ms", "tpot_ms", "e2e_ms"} do
    if not (opt[k] >= 0 and opt[k] < math.huge) then
      bad("argument '%s' must be a number of milliseconds > 0 (0: no target), got '%s'", k,
          kv.util.fmt_num(opt[k]))
    end
  end
  if not (opt.goodput >= 0 and opt.goodput <= 1) then
    bad("argument 'goodput' must be a fraction in (0, 1] (the share of requests meeting every target), "
        .. "got '%s'", kv.util.fmt_num(opt.goodput))
  end
  if opt.goodput > 0 and opt.ttft_ms == 0 and opt.tpot_ms == 0 and opt.e2e_ms == 0 then
    bad("argument 'goodput' needs a target: ttft_ms, tpot_ms or e2e_ms")
  end
  if opt.requests < 0 then bad("argument 'requests' must be an integer >= 1, got '%d'", opt.requests) end
  if kv.options.length(opt.max_model_len) and opt.max_model_len < opt.input + opt.output then
    bad("argument 'max_model_len' must hold input + output = %d tokens, got '%d'", opt.input + opt.output,
        opt.max_model_len)
  end
  local disaggregated = false
  for _, m in ipairs(opt.modes) do
    if not kv.plan.modes[m] then
      bad("argument 'modes' must list aggregated and/or disaggregated, got '%s'", kv.util.escape(m, 64))
    end
    disaggregated = disaggregated or m == "disaggregated"
  end
  local spec = {
    model = opt.model, input = opt.input, output = opt.output, rate = opt.rate,
    percentile = opt.percentile ~= "" and opt.percentile or nil,
    goodput = opt.goodput > 0 and opt.goodput or nil,
    requests = opt.requests > 0 and opt.requests or nil,
    gpus = given(opt.gpus), weights = given(opt.weights), kv = given(opt.kv), tp = given(opt.tp),
    pp = given(opt.pp), max_gpus = opt.max_gpus, rank = opt.rank,
    max_num_seqs = given(opt.max_num_seqs), max_num_batched_tokens = given(opt.max_num_batched_tokens),
    keep = math.max(opt.top, 1), base = base_of(), modes = opt.modes,
    kv_link_gbps = opt.kv_link_gbps > 0 and opt.kv_link_gbps or nil,
    kv_link_latency_us = opt.kv_link_latency_us >= 0 and opt.kv_link_latency_us or nil,
  }
  if opt.kv_link_gbps < 0 then
    bad("argument 'kv_link_gbps' must be a number > 0 (GB/s one way for one GPU), got '%s'",
        kv.util.fmt_num(opt.kv_link_gbps))
  end
  for _, k in ipairs{"ttft_ms", "tpot_ms", "e2e_ms"} do
    if opt[k] > 0 then spec[k] = opt[k] end
  end
  local ranked, info = kv.plan(spec)
  local cli = package.loaded["kvplan.cli"] or {}
  local p = info.sla.percentile
  local priced = false
  for _, c in ipairs(ranked) do priced = priced or c.cost_per_hour ~= nil end
  local fmt = cli.format
  local wide = opt.wide or cli.output ~= nil or fmt == "csv" or fmt == "json"
  local columns
  -- a MoE model's expert- and data-parallel layouts (kv.plan.parallel_layouts)
  local layouts = false
  for _, c in ipairs(ranked) do layouts = layouts or c.layout ~= nil end
  if wide then
    columns = {"rank", "mode", "gpu", "tp", "pp", "weights", "kv", "max_num_seqs", "max_num_batched_tokens",
               "replicas", "gpus", {"rate_per_replica", precision = 3}, {"utilization", precision = 3},
               "binding", {"ttft_ms_" .. p, precision = 1}, {"tpot_ms_" .. p, precision = 2},
               {"e2e_ms_" .. p, precision = 1}, {"tokens_per_s", precision = 1},
               {"tokens_per_s_user", precision = 2}, {"cost_per_hour", precision = 2},
               {"usd_per_mtok_output", precision = 4}, {"usd_per_mtok_total", precision = 4}}
    if disaggregated then
      for _, c in ipairs{"prefill", "decode", {"kv_transfer_ms", precision = 2}} do columns[#columns + 1] = c end
    end
    columns[#columns + 1] = "why"
  else
    columns = {"rank", "gpu", "tp", "pp", "replicas", "gpus", {"rate_per_replica", precision = 2},
               "binding", {"ttft_ms_" .. p, precision = 0}, {"tpot_ms_" .. p, precision = 1},
               {"tokens_per_s", precision = 0}}
    if disaggregated then table.insert(columns, 2, "mode") end
    if priced then
      columns[#columns + 1] = {"cost_per_hour", precision = 2}
      columns[#columns + 1] = {"usd_per_mtok", precision = 3}
    end
    columns[#columns + 1] = "why"
  end
  if layouts then table.insert(columns, wide and 6 or 5, "layout") end
  local names = {}
  for _, c in ipairs(columns) do names[type(c) == "table" and c[1] or c] = true end
  local rows = {}
  local best_why = {gpus = "best: fewest GPUs, then fewest stages, then most requests a replica",
                    cost = "best: lowest cost per hour", usd_per_mtok = "best: lowest cost per million output tokens"}
  local function add(c, why)
    if c.rank then kv.plan.planned(c, info) end
    local row = {
      rank = c.rank or "", mode = c.mode, gpu = c.gpu, tp = c.tp, pp = c.pp, layout = c.layout or "",
      weights = c.weights,
      kv = c.kv, max_num_seqs = c.max_num_seqs or "", max_num_batched_tokens = c.max_num_batched_tokens or "",
      replicas = c.replicas or "", gpus = c.rank and c.gpus or "", rate_per_replica = c.rate_per_replica or "",
      utilization = c.utilization or "", binding = c.binding or "",
      ["ttft_ms_" .. p] = c.ttft_ms or "", ["tpot_ms_" .. p] = c.tpot_ms or "", ["e2e_ms_" .. p] = c.e2e_ms or "",
      tokens_per_s = c.rank and c.tokens_per_s or "", tokens_per_s_user = c.tokens_per_s_user or "",
      cost_per_hour = c.rank and c.cost_per_hour or "", usd_per_mtok = c.usd_per_mtok_output or "",
      usd_per_mtok_output = c.usd_per_mtok_output or "", usd_per_mtok_total = c.usd_per_mtok_total or "",
      why = why or c.why,
    }
    local function pool(t)
      if t == nil or t.replicas == nil then return "" end
      return string.format("%d x %s tp %d x pp %d", t.replicas, t.gpu, t.tp, t.pp or 1)
    end
    row.prefill, row.decode, row.kv_transfer_ms = pool(c.prefill), pool(c.decode), c.kv_transfer_ms or ""
    for k in pairs(row) do if not names[k] then row[k] = nil end end
    rows[#rows + 1] = row
  end
  for _, c in ipairs(ranked) do
    if c.vs_aggregated and c.rank then
      c.why = (c.rank == 1 and best_why[opt.rank] or c.why) .. "; " .. c.vs_aggregated
    end
  end
  -- of a group none of which serves, the one that came closest: simulated,
  -- then not simulated by its bound, then the largest that could not start
  local function closeness(c)
    if c.capacity then return 3 end
    if c.why:find("^not simulated") then return 2 end
    return 1
  end
  local function closest(g)
    local pick = g[1]
    for _, c in ipairs(g) do
      local a, b = closeness(c), closeness(pick)
      if a > b or a == b and a == 1 and c.gpus > pick.gpus then pick = c end
    end
    return pick
  end
  local picked, ntop = pick_rows(ranked, function(c) return c.mode .. "|" .. c.gpu .. "|" .. c.weights .. "|" .. c.kv end,
                                 function(c) return not c.vs_aggregated and best_why[opt.rank] or nil end, closest)
  local shown, summary = split_rows(picked, ntop, function(c, why)
    local what
    if c.mode == "disaggregated" then
      local P, D = c.prefill, c.decode
      what = P.replicas and string.format("%dP%dD prefill tp %d, decode tp %d", P.replicas, D.replicas, P.tp, D.tp)
        or string.format("prefill tp %d, decode tp %d", P.tp, D.tp)
    else
      what = string.format("%stp %d x pp %d", c.replicas and c.rank and (c.replicas .. " x ") or "", c.tp, c.pp)
      if c.layout then what = what .. " " .. c.layout end
    end
    return {c.rank and tostring(c.rank) or "-", c.gpu, what, c.rank and gpus_words(c.gpus) or "",
            c.rank and cost_words(c) or nil, why}
  end)
  for _, t in ipairs(shown) do add(t[1], t[2]) end
  local sla_metric = ({gpus = {"gpus", "gpus", "GPUs"}, cost = {"cost_per_hour", "cost_per_hour", "cost per hour (USD)"},
                       usd_per_mtok = {"usd_per_mtok_output", "usd_per_mtok", "USD per million output tokens"}})[opt.rank]
  local chart = sla_metric and rank_chart(picked, sla_metric, function(c)
    if c.mode == "disaggregated" then return string.format("%d. %s disaggregated", c.rank, c.gpu) end
    return string.format("%d. %s%s tp %d x pp %d", c.rank, c.replicas and (c.replicas .. " x ") or "", c.gpu, c.tp, c.pp)
  end, string.format("%s requests a second under the SLA", kv.util.fmt_num(opt.rate))) or nil
  local r = kv.report{columns = columns, chart = chart}
  for _, row in ipairs(rows) do r:row(row) end
  r:close()
  if summary then io.stdout:write(summary) end
  if not cli.quiet then
    -- two lines, so that a terminal of 80 columns shows them unwrapped as it
    -- does the table (one line was 99 columns at 381 candidates)
    io.stderr:write(string.format("kvplan best: %d candidates, %d simulated (%d simulations),\n"
                                  .. "  %d not simulated by their lower bound\n", info.candidates,
                                  info.simulated, info.sims, info.pruned))
  end
  emit(ranked)
  return
end

local ranked, shape = kv.best{
  model = opt.model,
  context = opt.context > 0 and opt.context or kv.options.length(opt.max_model_len),
  concurrency = opt.concurrency, max_gpus = opt.max_gpus, rank = opt.rank,
  gpus = #opt.gpus > 0 and opt.gpus[1] ~= "" and opt.gpus or nil,
  weights = #opt.weights > 0 and opt.weights[1] ~= "" and opt.weights or nil,
  kv = #opt.kv > 0 and opt.kv[1] ~= "" and opt.kv or nil,
  tp = opt.tp[1] ~= 0 and opt.tp or nil, pp = opt.pp[1] ~= 0 and opt.pp or nil,
  tokens_per_s = opt.tokens_per_s, base = base_of(),
}

local rows = {}
local function add(c, why)
  rows[#rows + 1] = {
    rank = c.rank or "", gpu = c.gpu, tp = c.tp, pp = c.pp, gpus = c.gpus, weights = c.weights,
    kv = c.kv, max_concurrency = c.max_concurrency, requests_per_gpu = c.per_gpu,
    cost_per_hour = c.cost_per_hour or "", tokens_per_s = c.tokens_per_s or "",
    weights_gib_per_gpu = c.weights_gib,
    kv_budget_gib_per_gpu = c.kv_budget_gib, why = why or c.why,
  }
end
local best = {gpus = "best: fewest GPUs, then fewest pipeline stages", cost = "best: lowest cost per hour",
              concurrency = "best: most requests per GPU"}
-- of a GPU and format none of which serves: the largest candidate tried, the closest to serving
local function largest(g)
  local big = g[1]
  for _, c in ipairs(g) do
    if c.gpus > big.gpus or c.gpus == big.gpus and c.max_concurrency > big.max_concurrency then big = c end
  end
  return big, string.format("no tp x pp up to %d GPUs serves %d x %d tokens; at %d GPUs: %s",
                            opt.max_gpus, shape.concurrency, shape.context, big.gpus, big.why)
end
local picked, ntop = pick_rows(ranked, function(c) return c.gpu .. "|" .. c.weights .. "|" .. c.kv end,
                               function() return best[shape.rank] end, largest)
-- a line names the formats when the search tried more than one
local formats = {}
for _, t in ipairs(picked) do formats[t[1].weights .. "|" .. t[1].kv] = true end
local several = next(formats, next(formats)) ~= nil
local shown, summary = split_rows(picked, ntop, function(c, why)
  local what = string.format("tp %d x pp %d", c.tp, c.pp)
  if several then what = string.format("%s, %s weights, %s kv", what, c.weights, c.kv) end
  return {c.rank and tostring(c.rank) or "-", c.gpu, what, gpus_words(c.gpus), cost_words(c), why}
end)
for _, t in ipairs(shown) do add(t[1], t[2]) end
local metric = ({gpus = {"gpus", "gpus", "GPUs"}, cost = {"cost_per_hour", "cost_per_hour", "cost per hour (USD)"},
                 concurrency = {"per_gpu", "requests_per_gpu", "requests per GPU"}})[shape.rank]
local chart = metric and rank_chart(picked, metric, function(c)
  local what = string.format("%d. %s tp %d x pp %d", c.rank, c.gpu, c.tp, c.pp)
  return several and string.format("%s, %s/%s", what, c.weights, c.kv) or what
end, string.format("%d requests of %s tokens", shape.concurrency, kv.util.fmt_num(shape.context))) or nil
local r = kv.report{chart = chart, columns = {
  "rank", "gpu", "tp", "pp", "gpus", "weights", "kv", "max_concurrency",
  {"requests_per_gpu", precision = 2}, {"cost_per_hour", precision = 2},
  {"tokens_per_s", precision = 0},
  {"weights_gib_per_gpu", precision = 2}, {"kv_budget_gib_per_gpu", precision = 2}, "why",
}}
for _, row in ipairs(rows) do r:row(row) end
r:close()
if summary then io.stdout:write(summary) end
emit(ranked)
