-- scripts/pareto.lua: throughput against latency over deployments.
-- Every deployment of a model on the given GPUs (kv.best's search) is
-- simulated at a ladder of client concurrencies (kv.simulate) and the points
-- are marked on the Pareto front of output tokens/s per GPU against output
-- tokens/s per user (kv.pareto, stdlib/kvplan/pareto.lua): a report and,
-- with chart=, a chart with the SLA line.
--
-- Run:  kvplan pareto model=llama-3.1-8b gpus=h100-sxm,l40s input=1000 output=200 tpot_ms=20
--       kvplan pareto model=qwen3-32b gpus=h100-sxm input=2048 output=256 chart=front.png -o front.csv
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required; `kvplan models` lists them),
--                else a Hugging Face directory or config.json, else a repo
--                id ORG/NAME in the local Hugging Face cache ($HF_HUB_CACHE,
--                $HF_HOME/hub, ~/.cache/huggingface/hub; no network)
--   revision     with a repo id: the cache's snapshot of this branch, tag or
--                commit (default: the one refs/main names)
--   gpus         GPU ids or aliases (default: every plannable GPU)
--   input        prompt tokens per request (required, >= 1)
--   output       output tokens per request (required, >= 2: TPOT is the
--                time between output tokens)
--   tp, pp       sizes to try (default: every tp the heads allow up to
--                max_gpus; pp 1)
--   max_gpus     most GPUs a deployment may use, tp x pp (default 8)
--   weights, kv  formats to try (default native and auto)
--   concurrency  client concurrencies to simulate (default: 1, 2, 4, ... and
--                the deployment's top: the requests its KV cache holds or its
--                engine's max_num_seqs, whichever is smaller)
--   requests     requests a simulation (default 0: 8 per client, at least 256)
--   tpot_ms, ttft_ms, e2e_ms   SLA targets in milliseconds at `percentile`
--                (default 0: none)
--   percentile   p50, p90 or p99 (default p90): the SLA's, and the TPOT that
--                tokens/s per user is 1000 over
--   goodput      the share of requests that must meet every target (default
--                0: none; then the percentile applies only when given), as
--                kv.plan's SLA
--   front        true: only the points on the front (default false: all)
--   chart        also draw the chart to this .png or .svg file
--   utilization  fraction of GPU memory the engine may use (default: the
--                engine's: 0.92 under vLLM's newest release (0.9
--                before 0.20), 0.9 under TensorRT-LLM, SGLang's by tp)
--   max_model_len  the longest request the engine is started for (default
--                input + output)
--   any other deployment field of the registry (docs/fields.md), under its
--                name or its engines' (engine, engine_version, max_num_seqs,
--                max_num_batched_tokens, block, prefix, ...: max-num-seqs as
--                vLLM spells it), checked as that field; gpu stands for gpus
--
-- Output, one row a point (a deployment at a client concurrency), in order
-- of gpu, weights, kv, tp, pp, concurrency:
--   gpu, tp, pp, gpus, weights, kv, concurrency, requests,
--   tokens_per_s (output, the deployment), tokens_per_s_gpu, tokens_per_s_user,
--   ttft_ms_p50, ttft_ms_p90, ttft_ms_p99, tpot_ms_p50, tpot_ms_p90,
--   tpot_ms_p99, e2e_ms_p90, e2e_ms_p99,
--   pareto (on the front), meets_sla and pareto_sla (with a target; the front
--   of the points that meet it), why (the target missed by most)
-- The chart: tokens/s per user across, tokens/s per GPU up, the front as a
-- line, every point in its deployment's colour, the SLA as a dashed line at
-- tokens/s per user = 1000 / tpot_ms. Standard error says how many
-- simulations ran.

local kv = require "kvplan"

local defaults = {
  model = kv.options.required "model=llama-3.1-8b", gpus = {""}, input = -1, output = -1,
  tp = {0}, pp = {0}, max_gpus = kv.options.at_least(1, 8), weights = {""}, kv = {""}, concurrency = {0}, requests = 0,
  tpot_ms = 0.0, ttft_ms = 0.0, e2e_ms = 0.0, percentile = "", goodput = 0.0, front = false,
  chart = "",
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
-- the command's code, which `kvplan best ... pareto=yes` runs too
require("kvplan.pareto").command(opt, kv.options.given_fields(opt, fields))
