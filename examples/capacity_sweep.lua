-- examples/capacity_sweep.lua: which deployments of three models on three
-- GPUs hold a given number of requests, over every tp, KV format, context
-- and concurrency: a sweep (kv.sweep) evaluated in C and streamed to the
-- report, the shape of question that is split over machines.
--
-- Shows: kv.sweep's axes (model x gpu x tp x kv x context x concurrency,
-- 3 x 3 x 3 x 2 x 8 x 3 = 1296 rows) and columns (the ledger's KV budget,
-- the most requests at the context, whether they fit and why not), and
-- --shard K/N: each part writes the K-th of N contiguous slices, so the
-- parts joined with one header are byte-identical to the whole run (the
-- README's GNU parallel and Slurm recipes run this script).
--
-- Run:  kvplan examples/capacity_sweep.lua -o all.csv
--       parallel kvplan --quiet --shard {}/8 examples/capacity_sweep.lua -o part{}.csv ::: 1 2 3 4 5 6 7 8
--       kvplan merge -o all.csv part1.csv ... part8.csv

local kv = require "kvplan"

local contexts = {}
for i = 0, 7 do contexts[#contexts + 1] = 1024 * 2 ^ i end

kv.sweep{model = {"llama-3.1-8b", "qwen3-32b", "gemma-2-9b"}, gpu = {"h100-sxm", "l40s", "a100-sxm-80gb"},
         tp = {1, 2, 4}, kv = {"bf16", "fp8"}, context = contexts, concurrency = {1, 8, 64},
         columns = {"model", "gpu", "tp", "kv", "context", "concurrency", "kv_budget_gib",
                    "max_concurrency", "fits", "limit", "why"}}:write()
