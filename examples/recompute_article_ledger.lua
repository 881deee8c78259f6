-- examples/recompute_article_ledger.lua: the claims of an article and a book
-- chapter on KV cache memory, recomputed: the KV bytes of a 70B-class model at
-- 8K and 128K tokens, the one-GPU ledger of a 70B model on an 80 GB H100, and
-- that LLaMA 2 70B caches less per token than LLaMA 2 7B.
--
-- Shows: KV bytes per sequence and per token from the exact formula, the
-- grouped-query saving, and the one-GPU memory ledger (80 GB H100, 5 % safety,
-- 2 GB fixed overhead) of the article, once with its inputs as given and once
-- corrected, each row saying which. Writes one long-format CSV: a row per
-- quantity, with what the article says beside it.
--
-- The article "KV Cache Optimization and Memory Management: An Accounting Method for Long-Context Inference"
-- (a review article; "the article" below) prints 12.6 GB at 8K and 201.3 GB at
-- 128K for its 70B-class model, but its own kv_cache_bytes() gives 2.5 GiB and
-- 40 GiB (it divides by 2^30, so its "GB" are GiB). It also calls ~70 GB the
-- 4-bit weights of a 70B model: 70e9 parameters at 4 bits are 35 GB, 36.4 GB
-- with GPTQ/AWQ group-128 scales and zeros; ~70 GB is the 8-bit size.
-- The chapter "KV Cache Memory" of a book on LLM inference ("the chapter"
-- below) says LLaMA 2 70B caches less per token
-- than LLaMA 2 7B: 320 KiB against 512 KiB, thanks to 8 KV heads.
--
-- Run: build/kvplan examples/recompute_article_ledger.lua

local kv = require "kvplan"
local GiB = kv.units.GiB

-- The article's "70B-class config (estimated)": 80 layers, 8 KV heads, head_dim 128.
local art70 = kv.model{id = "article-70b", layers = 80, hidden = 8192, heads = 64,
                        kv_heads = 8, head_dim = 128, params = 70000000000, dtype = "bf16"}

local r = kv.report{columns = {"section", "item", "basis", {"value", precision = 2}, "unit",
                               "article_says", "note"}}
local function row(section, item, basis, value, unit, article_says, note)
  r:row{section = section, item = item, basis = basis, value = value, unit = unit,
        article_says = article_says or "", note = note or ""}
end

-- 1. The KV formula: 2 (K, V) x layers x kv_heads x head_dim x bytes x tokens.
local per8k, per128k = art70:kv_bytes(8192), art70:kv_bytes(131072)
row("kv_formula", "kv bytes, one sequence of 8192 tokens", "the article 70B-class, bf16",
    per8k / GiB, "GiB", "12.6 GB",
    "kv_cache_bytes(80, 8, 128, 8192, 1) is 2684354560 B; the printed 12.6 does not follow")
row("kv_formula", "kv bytes, one sequence of 131072 tokens", "the article 70B-class, bf16",
    per128k / GiB, "GiB", "201.3 GB",
    "42949672960 B; the printed 201.3 is about 5x too high, like the 8K figure")

-- 2. The chapter: GQA makes the 70B model's cache smaller than the 7B model's.
for _, id in ipairs{"llama-2-7b", "llama-2-70b"} do
  local m = kv.model(id)
  row("gqa", "kv bytes per token, " .. id,
      string.format("%s: %d layers, %d KV heads of %d, head_dim %d, bf16", m.hf, m.layers,
                    m.kv_heads, m.heads, m.head_dim),
      m:kv_bytes_per_token("bf16") // 1024, "KiB",
      id == "llama-2-70b" and "less than LLaMA 2 7B" or "more than LLaMA 2 70B",
      "2 x layers x kv_heads x head_dim x 2 B")
end

-- 3. The H100 ledger, the article Part 2: usable = 95 % of 80, minus weights and 2.
local function ledger_rows(basis, d, note)
  local l = d:ledger()
  row("h100_ledger", "weights per GPU", basis, l.weights / GiB, "GiB", "~70 GB (4-bit)", note)
  row("h100_ledger", "kv budget", basis, l.kv_budget / GiB, "GiB", "~4 GB")
  row("h100_ledger", "kv of one 8192-token request, paged", basis,
      l:seq_bytes(8192) / GiB, "GiB", "12.6 GB")
  row("h100_ledger", "concurrent 8192-token requests", basis, l:max_concurrency(8192),
      "requests", "0-1 (no optimization)", "16-token blocks, one null block")
  row("h100_ledger", "concurrent 131072-token requests", basis, l:max_concurrency(131072),
      "requests", "no (OOM)")
end

-- 3a. The article's function on its own inputs: memory_budget(70, 12.6, 0, 80).
local usable_a, budget_a = 80 * 0.95, 80 * 0.95 - (70 + 2.0)
row("h100_ledger", "kv budget", "article inputs as given (article arithmetic)", budget_a, "GiB",
    "~4 GB", string.format("%.0f x (1 - 0.05) - (70 + 2)", 80))
row("h100_ledger", "concurrent 8192-token requests", "article inputs as given (article arithmetic)",
    math.floor(budget_a / 12.6), "requests", "0-1 (no optimization)",
    string.format("int(%.1f // 12.6) with the article's 12.6 per request; usable %.1f", budget_a,
                  usable_a))

-- 3b. The same inputs, KV from the article's own formula, paged.
local article_inputs = kv.deploy{model = art70, gpu_memory = 80 * GiB, utilization = 0.95,
                              overhead = 2 * GiB, weight_bytes = 70 * GiB}
ledger_rows("article inputs, kv from its formula (weights 70 GiB)", article_inputs,
            "70 GiB is the 8-bit size of 70e9 parameters, not the 4-bit size")

-- 3c. Corrected: true 4-bit weights with group-128 fp16 scales and 4-bit zeros.
local corrected = article_inputs:with{weights = "int4-g128"}
ledger_rows("corrected: 4-bit weights, int4-g128 (36.37 GB)", corrected,
            "70e9 x 4.156 bits = 36367187500 B")

-- 3d. Corrected, on the memory an 80 GB H100 really shows (79.19 GiB).
local h100 = article_inputs:with{weights = "int4-g128", gpu = "h100-sxm"}
ledger_rows("corrected, H100 SXM visible memory", h100,
            "visible memory from the GPU catalog (CUDA total)")

r:close()
