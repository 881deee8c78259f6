-- tests/lua/sim_test.lua: step times (d:time) and kv.simulate from Lua:
-- options, results, determinism, traces, timelines and errors.
local kv = require "kvplan"
local check = require "check"
local o = kv.optim

-- step times: the roofline with every efficiency 1, no host time and no
-- kernel floor is a lower bound
local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {memory = 1, compute = 1, link = 1},
                    perf = {launch_us = 0, seq_host_us = 0, kernel_floor_us = 0, eager_launch_us = 0}}
local t = d:time(1, 1)
local l = d:ledger()
local weights, p1 = l.weights_total, d:perf()
-- every weight but the untied embedding table (its one row gathered), a
-- token of KV read and one written, the token's activations, the sampler's
-- 26 bytes an entry of the sampled row's 128256 logits
local embed = 128256 * 4096 * 2
assert(math.abs(p1.idle_share * weights - embed) < 1, "the embedding table is the idle share")
check.eq(p1.sampler_bytes, 26 * 128256, "sampler bytes a row")
assert(math.abs(t.tpot_ms - (weights - embed + 2 * l.kv_bytes_per_token + p1.act_rep_bytes
                             + p1.act_split_bytes + 26 * 128256) / 3.35e12 * 1e3) < 1e-9,
       "batch 1 decode: weights and one token of KV over 3.35 TB/s, got " .. t.tpot_ms)
check.eq(t.floor_ms, 0, "no kernel floor given")
-- the kernels by kind: 32 layers x 4 GEMMs + the logits; 32 attentions
check.eq(p1.gemm_kernels, 129, "GEMMs of Llama 3.1 8B")
check.eq(p1.attn_kernels, 32, "attentions")
-- the default floors: at batch 1 the 32 attentions (FlashAttention 3's own
-- minimum a call on Hopper, 11.0296 us: 352.9472 us, sim.attention_floor) and
-- the 167 other kernels (1.1 us each, 183.7 us) outlast their bytes
local tf = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {memory = 1, compute = 1, link = 1},
                     perf = {launch_us = 0, seq_host_us = 0}}:time(1, 1)
assert(math.abs(tf.attention_ms - 0.3529472) < 1e-12, "attention floor " .. tf.attention_ms)
assert(math.abs(tf.activation_ms - 0.1837) < 1e-12, "activation floor " .. tf.activation_ms)
-- CUDA graphs by engine and release (sim.cuda_graphs): vLLM V1 captures
-- up to min(2 x max_num_seqs, 512) tokens, V0 decode batches up to 256,
-- SGLang up to cuda_graph_max_bs, none under enforce_eager or TensorRT-LLM
local sim = require "kvplan.sim"
local function graphs(o)
  o.model, o.gpu = o.model or "llama-3.1-8b", o.gpu or "h100-sxm"
  local p = kv.deploy(o):perf()
  return p.graphs .. " " .. p.graph_max
end
check.eq(graphs{engine_version = "0.11"}, sim.graph_kinds.full_decode .. " 512",
         "V1 0.11 on an H100: 1024 seqs, FULL_AND_PIECEWISE")
check.eq(graphs{engine_version = "0.11", max_num_seqs = 100}, sim.graph_kinds.full_decode .. " 200",
         "V1, 100 seqs: 200")
check.eq(graphs{engine_version = "0.11", max_num_seqs = 150}, sim.graph_kinds.full_decode .. " 288",
         "V1, 150 seqs: 300 rounded down to the sizes by 16 above 256")
check.eq(graphs{engine_version = "0.9"}, sim.graph_kinds.tokens .. " 512", "V1 0.9: PIECEWISE")
-- max_num_seqs past 2^62: 2 x seqs wrapped ("field 'graph_max' must be a
-- number >= 0, got -2" from kvplan simulate max_num_seqs=9223372036854775807)
check.eq(graphs{engine_version = "0.11", max_num_seqs = math.maxinteger}, sim.graph_kinds.full_decode .. " 512",
         "V1, 2^63 - 1 seqs: 512")
check.eq(select(2, sim.cuda_graphs(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6"},
                                   math.maxinteger)), 256, "V0, 2^63 - 1 seqs: 256")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:perf().piecewise_kernels, 64,
         "a cache write and an attention a layer outside piecewise graphs")
check.eq(graphs{engine_version = "0.6"}, sim.graph_kinds.decode .. " 256", "V0: 256")
check.eq(graphs{engine_version = "0.11", enforce_eager = true}, sim.graph_kinds.tokens .. " 0",
         "enforce_eager: none")
check.eq(graphs{budget = "sglang", engine_version = "0.4"}, sim.graph_kinds.sglang .. " 160",
         "SGLang 0.4 on an H100: cuda_graph_max_bs 160")
check.eq(graphs{budget = "sglang", engine_version = "0.4", enforce_eager = true}, sim.graph_kinds.sglang .. " 0",
         "SGLang --disable-cuda-graph (enforce_eager): every step eager")
check.eq(graphs{budget = "trtllm"}, sim.graph_kinds.exact .. " 128",
         "TensorRT-LLM 1.0, the PyTorch backend: CudaGraphConfig's 128, unpadded")
check.eq(graphs{budget = "trtllm", engine_version = "0.21"}, sim.graph_kinds.none .. " 0",
         "TensorRT-LLM's engine path: not modelled")
-- vLLM V0's max_seq_len_to_capture (engines.lua
-- vllm_v0_max_seq_len_to_capture): V0's decode graphs hold sequences of at
-- most 8192 tokens, the one decoded included, unless the deployment gives
-- another; V1 ignores it, 0.11 has no such argument
local function seq_max(o)
  o.model, o.gpu = o.model or "llama-3.1-8b", o.gpu or "h100-sxm"
  return kv.deploy(o):perf().graph_seq_max
end
check.eq(seq_max{engine_version = "0.6"}, 8192, "V0 0.6: 8192")
check.eq(seq_max{engine_version = "0.7"}, 8192, "V0 0.7: 8192")
check.eq(seq_max{engine_version = "0.8", vllm_use_v1 = false}, 8192, "V0 in 0.8: 8192")
check.eq(seq_max{engine_version = "0.6", max_seq_len_to_capture = 4096}, 4096, "given: 4096")
check.eq(seq_max{engine_version = "0.6", enforce_eager = true}, 0, "enforce_eager: no graphs at all")
check.eq(seq_max{engine_version = "0.9", max_seq_len_to_capture = 4096}, 0, "V1 ignores it")
check.eq(seq_max{budget = "sglang"}, 0, "SGLang: no such limit")
check.error("vLLM 0.11 has no such argument", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11", max_seq_len_to_capture = 4096})
check.error("max_seq_len_to_capture", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6", max_seq_len_to_capture = 0})
-- a V0 decode at 8191 tokens (8192 with the one decoded) replays its graph,
-- at 8192 it runs eagerly: the host launches every kernel
local v0 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6"}
check.eq(v0:time(8191, 4).graph, true, "V0 at 8191 + 1: a graph")
check.eq(v0:time(8192, 4).graph, false, "V0 at 8192 + 1: eager")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6",
                   max_seq_len_to_capture = 16384}:time(8192, 4).graph, true, "a cap of 16384: a graph")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.9"}:time(8192, 4).graph,
         true, "V1 at 8192: a graph")
-- a vLLM V1 decode batch above its largest graph runs eagerly: 328 kernels
-- at 5.48 us of host time each and 600 sequences' bookkeeping
local te = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11"}:time(1024, 600)
check.eq(te.graph, false, "600 sequences: eager")
assert(math.abs(te.host_ms - (328 * 5.48 + 600 * 1.1) * 1e-3) < 1e-12, "eager host_ms " .. te.host_ms)
local tg = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11"}:time(1024, 5)
check.eq(tg.graph, true, "5 sequences run a graph")
check.eq(tg.run_tokens, 8, "5 sequences run the graph of 8")
check.eq(t.host_ms, 0, "no host time given")
-- vLLM without async scheduling (0.11) waits for the host: 328 kernels (32
-- layers of 10, the head's 8) of graph launch and the sequence's bookkeeping;
-- no release (the newest modelled, async by default from 0.14) waits for none
local th = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11"}:time(1, 1)
assert(math.abs(th.host_ms - (328 * 0.91 + 1.1) * 1e-3) < 1e-12, "host_ms " .. th.host_ms)
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:time(1, 1).host_ms, 0,
         "no release: async scheduling hides the host")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "trtllm"}:time(1, 1).host_ms, 0,
         "TensorRT-LLM's overlap scheduler hides the host's time")
-- the deployment's own --async-scheduling (issue 18): on the 0.11 row,
-- which waits by default, async_scheduling = true hides the same 328 x 0.91
-- + 1.1 = 299.58 us (below the GPU's ~5 ms step, so none shows); false on a
-- 0.20 row, which hides by default, adds it back
do
  local function dt(v, a)
    return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = v,
                     async_scheduling = a}:time(1, 1)
  end
  local sync, async = dt("0.11", nil), dt("0.11", true)
  check.eq(sim.host_waits(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11"}),
           true, "0.11: waits by default")
  check.eq(async.host_ms, 0, "0.11 + async_scheduling: the host hidden")
  assert(math.abs(sync.step_ms - async.step_ms - (328 * 0.91 + 1.1) * 1e-3) < 1e-12,
         "0.11: the step less 299.58 us: " .. (sync.step_ms - async.step_ms))
  check.eq(dt("0.11", false).step_ms, sync.step_ms, "false on 0.11: the default")
  local d20, s20 = dt("0.20", nil), dt("0.20", false)
  check.eq(d20.host_ms, 0, "0.20: hidden by default")
  assert(math.abs(s20.step_ms - d20.step_ms - (328 * 0.91 + 1.1) * 1e-3) < 1e-12,
         "0.20 + async_scheduling = false: the step plus 299.58 us")
  check.eq(dt("0.10", true).host_ms, 0, "0.10: the first release with the flag")
  check.error("field 'async_scheduling' = true: vLLM 0.9 has no --async-scheduling (V1 from 0.10.0 "
              .. "on, vllm-project/vllm#19970); expected a release of 0.10 or later on V1",
              kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.9",
                          async_scheduling = true})
  check.error("field 'async_scheduling' = false: vLLM 0.10 (V0 engine) has no --async-scheduling",
              kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.10",
                          vllm_use_v1 = false, async_scheduling = false})
  check.error("field 'async_scheduling' = true is vLLM's --async-scheduling; budget 'sglang' has none "
              .. "(expected budget 'vllm')",
              kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", engine = "sglang",
                          async_scheduling = true})
  check.error("field 'async_scheduling' must be true or false, got yes", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", async_scheduling = "yes"})
end
-- a mixed FP8 checkpoint computes at the fp8 rate (DeepSeek-V3: FP8 linear
-- layers with 128 x 128 block scales; it was the bf16 rate, 989.5)
check.eq(kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8}:perf().tflops, 1979,
         "deepseek-v3 FP8 checkpoint: fp8 rate")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "b200", weights = "nvfp4"}:perf().tflops, 9000,
         "NVFP4 on B200: the fp4 rate (DGX B200 datasheet, 144 PFLOPS sparse / 8 / 2)")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "nvfp4"}:perf().tflops, 989.5,
         "NVFP4 on a GPU without fp4 tensor cores: the bf16 rate")
-- routed experts at the kernel benchmarks' fraction of their roofline by
-- tokens per expert (sim.expert_gemm), a given factor in place of the curve
local sim = require "kvplan.sim"
local moe = {model = "qwen3-30b-a3b", gpu = "h100-sxm"}
local mp = kv.deploy(moe):perf()
check.eq(mp.expert_eff, 0, "no factor given: the curve")
-- by the slice of one expert on one GPU (sim.expert_slice_bytes): Qwen3-30B's
-- bf16 experts at tp 1, 3 x 2048 x 768 x 2 = 9437184 bytes, between the H100's
-- FP8 Qwen3-30B curve (4718592) and its BF16 Mixtral tp 2 curve (176160768):
-- u = ln(9437184 / 4718592) / ln(176160768 / 4718592) = ln 2 / ln(37.333) =
-- 0.19148, at 1 token 0.253 + u (0.730 - 0.253) = 0.34434; the tokens per
-- expert of both curves, 18 + 15 less the 6 they share (1, 16, 32, 64, 128,
-- 256) = 27 points
check.eq(sim.expert_slice_bytes(kv.deploy(moe)), 9437184, "one bf16 expert slice of Qwen3-30B")
check.eq(#mp.expert_tpe, 27, "both curves' tokens per expert")
assert(math.abs(mp.expert_frac[1] - 0.34434) < 1e-5, "1 token: " .. mp.expert_frac[1])
-- at 4 tokens per expert (between fp8's 3.142 and 4.065, bf16's 2.223 and 4.040)
local f8 = 0.668 + math.log(4 / 3.142) / math.log(4.065 / 3.142) * (0.675 - 0.668)
local f16 = 0.870 + math.log(4 / 2.223) / math.log(4.040 / 2.223) * (0.883 - 0.870)
local u = math.log(2) / math.log(176160768 / 4718592)
local want = f8 + u * (f16 - f8)
local i4
for i, x in ipairs(mp.expert_tpe) do if x == 4.040 then i4 = i end end
local lo = mp.expert_frac[i4 - 1] -- the point before 4.040: fp8's 3.142
assert(mp.expert_tpe[i4 - 1] == 3.142, "the point before: " .. mp.expert_tpe[i4 - 1])
local got = lo + math.log(4 / 3.142) / math.log(4.040 / 3.142) * (mp.expert_frac[i4] - lo)
assert(math.abs(got - want) < 1e-12, "blend at 4 tokens: " .. got .. " where " .. want)
-- the slices the curves were measured at read their own curve; a slice
-- beyond the largest clamps to it; TP splits the slice
local _, _, f = sim.expert_curve(kv.deploy{model = "qwen3-30b-a3b", gpu = "h100-sxm", weights = "fp8"})
check.eq(f, "fp8", "Qwen3-30B FP8 at tp 1: the FP8 curve's own slice")
local mx = kv.deploy{model = "mixtral-8x7b", gpu = "h100-sxm", tp = 2}
check.eq(sim.expert_slice_bytes(mx), 176160768, "Mixtral at tp 2: 3 x 4096 x 7168 x 2")
check.eq(select(3, sim.expert_curve(mx)), "bf16", "Mixtral at tp 2: the BF16 curve's own slice")
check.eq(sim.expert_slice_bytes(kv.deploy{model = "mixtral-8x7b", gpu = "h100-sxm", tp = 4}),
         176160768 / 2, "tp 4 halves the slice")
sim.expert_gemm["h100-sxm"].int4 = {{1, 0.5}}
check.error("kvplan.sim.expert_slice['h100-sxm'].int4 must be the bytes (> 0) of one expert's slice",
            sim.expert_curve, mx)
sim.expert_gemm["h100-sxm"].int4 = nil
check.eq(select(3, sim.expert_curve(kv.deploy{model = "mixtral-8x7b", gpu = "h100-sxm"})), "bf16",
         "Mixtral at tp 1 (352 MB): beyond the largest slice, clamped")
-- H200: an FP8 curve (sgl-project/sglang pull request 11730, Qwen3-235B at tp
-- 8, 2.4 MB a slice) and a BF16 one (vllm-project/vllm pull request 44818,
-- Gemma-4 26B-A4B at tp 1, 11.9 MB). DeepSeek-V3's block-FP8 experts at tp 8
-- (about 5.5 MB a slice) lie between them: the blend by slice, at one token
-- 0.124 + u (0.105 - 0.124)
local dsv3 = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8}
local rows, on, fmt = sim.expert_curve(dsv3)
local ds = sim.expert_slice_bytes(dsv3)
assert(ds > 3 * 7168 * 256 and ds < 3 * 7168 * 256 * 1.01, "DeepSeek-V3 FP8 slice at tp 8: " .. ds)
local du = math.log(ds / 2359296) / math.log(11894784 / 2359296)
check.eq(on .. " " .. fmt, string.format("h200 fp8+bf16 %.5f", du), "DeepSeek-V3's FP8 experts on H200")
assert(math.abs(rows[1][2] - (0.124 + du * (0.105 - 0.124))) < 1e-12, "1 token: " .. rows[1][2])
-- Qwen3-30B's BF16 experts at tp 1 on H200 (9.4 MB a slice), nearer the BF16
-- curve; the BF16 curve reaches 4096 tokens
local hq = kv.deploy{model = "qwen3-30b-a3b", gpu = "h200"}
local hrows = sim.expert_curve(hq)
check.eq(hrows[#hrows][1], 256, "H200 BF16 to 4096 tokens (256 an expert)")
check.eq(sim.expert_slice.h200.bf16, 3 * 2816 * 704 * 2, "the H200 BF16 curve's slice")
-- its M = 16 row by hand (Gemma-4 26B-A4B: E 128, top-k 8, hidden 2816, moe
-- intermediate 704, tp 1): 128 (1 - (1 - 8/128)^16) = 82.42 experts touched,
-- 1.553 tokens an expert; 82.42 x 3 x 2816 x 704 x 2 bytes / 4800 GB/s =
-- 204.25 us beat the FLOPs' 2 x 16 x 8 x 3 x 2816 x 704 / 989.5 TFLOPS = 1.54
-- us; over the kernel's 257.8 us: 0.792
do
  local E, k, H, I = 128, 8, 2816, 704
  local touched = E * (1 - (1 - k / E) ^ 16)
  local us = math.max(touched * 3 * H * I * 2 / 4800e9, 2 * 16 * k * 3 * H * I / 989.5e12) * 1e6
  assert(math.abs(16 * k / touched - 1.553) < 5e-4 and math.abs(us / 257.8 - 0.792) < 5e-4,
         "H200 BF16 M = 16 by hand: " .. 16 * k / touched .. " tokens an expert, " .. us / 257.8)
  local r5 = sim.expert_gemm.h200.bf16[5]
  check.eq(r5[1] .. " " .. r5[2] .. " " .. r5[3], "1.553 0.792 16", "the M = 16 row")
end
-- explicit fallbacks: a GPU without rows reads the H100's; a format the GPU
-- lacks, that GPU's other curve
local _, on2, fmt2 = sim.expert_curve(kv.deploy{model = "qwen3-30b-a3b", gpu = "a100-sxm-40gb"})
check.eq(on2 .. " " .. fmt2, "h100-sxm fp8+bf16 0.19148", "A100 40GB: the H100's curves, an assumption")
-- the H20 reads the H100's curves too; checked against the one H20 time read
-- (Tencent/hpc-ops pull request 41: SGLang's Triton MoE for Qwen3-235B at TP
-- 8 in BF16, 42.6 us at 1 sequence, 71.9 us at 4; docs/time.md, issue 18
-- findings). By hand: a slice of 3 x 4096 x 192 x 2 = 4,718,592 bytes, the
-- H100 FP8 curve's own; 8 experts at 4000 GB/s = 9.437 us / 0.253 = 37.30 us
-- a layer; at 4 sequences 128 (1 - (120/128)^4) = 29.123 experts touched,
-- 1.0988 tokens an expert, read at 0.4528 of the curve: 34.355 / 0.4528 =
-- 75.88 us
do
  local h20 = kv.deploy{model = "qwen3-235b-a22b", gpu = "h20", tp = 8}
  check.eq(sim.expert_slice_bytes(h20), 4718592, "Qwen3-235B at tp 8: its slice")
  check.eq(select(2, sim.expert_curve(h20)) .. " " .. select(3, sim.expert_curve(h20)), "h100-sxm fp8",
           "H20: the H100's FP8 curve at this slice")
  local t1, t4 = h20:time(1024, 1), h20:time(1024, 4)
  assert(math.abs(1000 * t1.experts_ms / 94 - 8 * 4718592 / 4e12 * 1e6 / 0.253) < 1e-6,
         "H20 experts at one sequence, a layer: " .. 1000 * t1.experts_ms / 94)
  assert(math.abs(1000 * t1.experts_ms / 94 - 37.30) < 0.005, "37.30 us a layer")
  assert(math.abs(t4.tokens_per_expert - 32 / (128 * (1 - (120 / 128) ^ 4))) < 1e-9, "4 sequences")
  assert(math.abs(1000 * t4.experts_ms / 94 - 75.88) < 0.005,
         "H20 experts at four sequences, a layer: " .. 1000 * t4.experts_ms / 94)
end
-- A100 SXM 80GB: one curve, Triton's fused_moe in BF16 at a 17.3 MB slice
-- (vllm-project/vllm pull request 40542), read at every slice and for every
-- format (docs/time.md, issue 18 A100 findings of 2026-12-04). Qwen3-235B at
-- tp 8 in BF16 by hand: 8 experts x 3 x 4096 x 192 x 2 = 37,748,736 bytes at
-- 2039 GB/s = 18.513 us / 0.277 = 66.835 us a layer, x 94 layers; at 4
-- sequences 29.123 experts touched, 1.0988 tokens an expert, read between the
-- curve's (1, 0.277) and (1.152, 0.664) in log tokens: 0.5347, 137.42 MB =
-- 67.40 us / 0.5347 = 126.05 us a layer. Its FP8 checkpoint at tp 4 (vLLM
-- runs Marlin W8A16 there) and gpt-oss's MXFP4 experts (Marlin W4A16 on SM80)
-- read the same curve: no Marlin MoE table on an A100 was found.
do
  local a = kv.deploy{model = "qwen3-235b-a22b", gpu = "a100-sxm-80gb", tp = 8}
  check.eq(sim.expert_slice_bytes(a), 4718592, "Qwen3-235B at tp 8 on A100: its slice")
  check.eq(select(2, sim.expert_curve(a)) .. " " .. select(3, sim.expert_curve(a)), "a100-sxm-80gb bf16",
           "A100: its one curve at a 4.7 MB slice")
  local t1, t4 = a:time(1024, 1), a:time(1024, 4)
  local one = 8 * 3 * 4096 * 192 * 2 / 2039e9 * 1e6 / 0.277
  assert(math.abs(1000 * t1.experts_ms / 94 - one) < 1e-6 and math.abs(one - 66.835) < 0.001,
         "A100 experts at one sequence, a layer: " .. 1000 * t1.experts_ms / 94)
  local touched = 128 * (1 - (120 / 128) ^ 4)
  local f = 0.277 + math.log(32 / touched) / math.log(1.152) * (0.664 - 0.277)
  assert(math.abs(f - 0.5347) < 5e-5, "the fraction at 1.0988 tokens an expert: " .. f)
  assert(math.abs(1000 * t4.experts_ms / 94 - touched * 4718592 / 2039e9 * 1e6 / f) < 1e-6
         and math.abs(1000 * t4.experts_ms / 94 - 126.05) < 0.01,
         "A100 experts at four sequences, a layer: " .. 1000 * t4.experts_ms / 94)
  for _, c in ipairs({{model = "qwen3-235b-a22b", tp = 4, weights = "fp8"}, {model = "gpt-oss-20b"}}) do
    c.gpu = "a100-sxm-80gb"
    check.eq(select(2, sim.expert_curve(kv.deploy(c))) .. " " .. select(3, sim.expert_curve(kv.deploy(c))),
             "a100-sxm-80gb bf16", c.model .. ": the Triton BF16 curve for Marlin's formats too")
  end
end
-- MI300X: its own curves, aiter's CK MoE for Qwen3-235B BF16 (ROCm/aiter
-- pull request 3384). Qwen3-30B-A3B in BF16 at tp 1 has 3 x 2048 x 768 x 2 =
-- 9,437,184 bytes a slice, the TP 4 curve's own (3 x 4096 x 384 x 2); at one
-- token its 8 experts' 75,497,472 bytes take 14.245 us at 5.3 TB/s, and the
-- kernel took 34.0571 us: 0.418
local q30 = kv.deploy{model = "qwen3-30b-a3b", gpu = "mi300x"}
local mrows, on4, fmt4 = sim.expert_curve(q30)
check.eq(on4 .. " " .. fmt4, "mi300x bf16_tp4", "MI300X Qwen3-30B BF16: the TP 4 slice's curve")
check.eq(sim.expert_slice_bytes(q30), 9437184, "3 x 2048 x 768 x 2")
assert(math.abs(mrows[1][2] - 8 * 9437184 / 5300e9 / 34.0571e-6) < 5e-4, "0.418 at one token")
local _, _, fmt5 = sim.expert_curve(kv.deploy{model = "qwen3-235b-a22b", gpu = "mi300x", tp = 8})
check.eq(fmt5, "bf16_tp8", "Qwen3-235B BF16 at tp 8: the TP 8 curve's own slice")
check.eq(q30:perf().expert_frac[1], mrows[1][2], "the core reads the MI300X curve")
local _, on3, fmt3 = sim.expert_curve(kv.deploy{model = "qwen3-30b-a3b", gpu = "b200"})
check.eq(on3 .. " " .. fmt3, "b200 fp8", "B200 16-bit experts: B200's Triton (FP8) curve")
-- TensorRT-LLM's NVFP4 experts on B200 run its default CUTLASS MoE and read
-- its own curve (sim.expert_kernel; TensorRT-LLM tech blog 24's CUTLASS
-- column, DeepSeek-V3 NVFP4 at TP 8 on one B200). By hand: a slice of 3 x 7168
-- x 256 x 0.5625 = 3,096,576 bytes; M = 1, 8 experts at 8000 GB/s = 3.097 us
-- over 96.77 us = 0.032; M = 128, 256 (1 - (1 - 8/256)^128) = 251.60 experts
-- touched, 128 x 8 / 251.60 = 4.070 tokens an expert, 97.39 us over 335.65 =
-- 0.290. Qwen3-30B-A3B in NVFP4 at tp 1 (3 x 2048 x 768 x 0.5625 = 2,654,208
-- bytes a slice, 48 MoE layers): one sequence's 8 experts a layer, 21.23 MB
-- at 8000 GB/s = 2.654 us / 0.032 = 82.94 us a layer, 3.981 ms the step's
do
  check.eq(sim.expert_slice.b200.nvfp4_cutlass, 3096576, "the CUTLASS curve's slice")
  local E, k, S = 256, 8, 3 * 7168 * 256 * 0.5625
  local function frac(m, us)
    local touched = E * (1 - (1 - k / E) ^ m)
    return math.max(touched * S / 8000e9, 2 * m * k * S / 0.5625 / 9000e12) * 1e6 / us, m * k / touched
  end
  local f1 = frac(1, 96.77)
  local f128, x128 = frac(128, 335.65)
  assert(math.abs(f1 - 0.032) < 5e-4 and math.abs(f128 - 0.290) < 5e-4 and math.abs(x128 - 4.070) < 5e-4,
         "B200 CUTLASS by hand: " .. f1 .. ", " .. f128 .. " at " .. x128)
  local r7 = sim.expert_gemm.b200.nvfp4_cutlass[7]
  check.eq(r7[1] .. " " .. r7[2] .. " " .. r7[3], "4.07 0.29 128", "the M = 128 row")
  local trt = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "nvfp4", engine = "trtllm"}
  check.eq(sim.expert_kernel(trt), "trtllm_cutlass", "TensorRT-LLM NVFP4 on B200: CUTLASS")
  local rows, on, fmt = sim.expert_curve(trt)
  check.eq(on .. " " .. fmt, "b200 nvfp4_cutlass", "TensorRT-LLM NVFP4 on B200: the CUTLASS curve")
  check.eq(rows[1][2], 0.032, "its one-token fraction")
  local sl = sim.expert_slice_bytes(trt)
  assert(sl > 2654208 and sl < 2654208 * 1.001, "Qwen3-30B NVFP4 slice: " .. sl)
  local t1 = trt:time(1024, 1)
  assert(math.abs(t1.experts_ms - 48 * 8 * sl / 8000e9 * 1e3 / 0.032) < 1e-9, "one sequence: " .. t1.experts_ms)
  assert(math.abs(t1.experts_ms - 3.981) < 0.005, "3.981 ms: " .. t1.experts_ms)
  -- GB200 (the same SM100 GPU) reads the B200's CUTLASS curve
  local gb = kv.deploy{model = "qwen3-30b-a3b", gpu = "gb200", weights = "nvfp4", engine = "trtllm"}
  check.eq(select(2, sim.expert_curve(gb)) .. " " .. select(3, sim.expert_curve(gb)), "b200 nvfp4_cutlass",
           "TensorRT-LLM NVFP4 on GB200: the B200's CUTLASS curve")
  -- other engines, formats and GPUs: Triton's curves as before
  local vl = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "nvfp4", engine = "vllm"}
  check.eq(sim.expert_kernel(vl), nil, "vLLM NVFP4 on B200: not TensorRT-LLM's kernel")
  check.eq(select(3, sim.expert_curve(vl)), "fp8", "vLLM NVFP4 on B200: the Triton curve")
  local t8 = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "fp8", engine = "trtllm"}
  check.eq(select(3, sim.expert_curve(t8)), "fp8", "TensorRT-LLM FP8 on B200: the Triton curve")
  local h = kv.deploy{model = "qwen3-30b-a3b", gpu = "h100-sxm", weights = "fp8", engine = "trtllm"}
  check.eq(sim.expert_kernel(h), nil, "TensorRT-LLM on H100: no SM100 kernel")
  local gbv = kv.deploy{model = "qwen3-30b-a3b", gpu = "gb200", weights = "fp8", engine = "trtllm"}
  check.eq(select(2, sim.expert_curve(gbv)), "h100-sxm", "GB200 FP8: the H100's curves as before")
  -- moe_backend = "trtllm" (TensorRT-LLM's moe_config.backend TRTLLM): the
  -- same table's TRTLLM-Gen column, M = 1 3.097 / 26.78 = 0.116, M = 128
  -- 97.39 / 161.87 = 0.602; one Qwen3-30B sequence 2.654 us / 0.116 a layer
  local g1 = frac(1, 26.78)
  local g128 = frac(128, 161.87)
  assert(math.abs(g1 - 0.116) < 5e-4 and math.abs(g128 - 0.602) < 5e-4, "trtllm-gen by hand: " .. g1 .. ", " .. g128)
  local gen = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "nvfp4", engine = "trtllm",
                        moe_backend = "trtllm"}
  check.eq(sim.expert_kernel(gen), "trtllm_gen", "moe_backend trtllm: trtllm-gen")
  local grows, _, gfmt = sim.expert_curve(gen)
  check.eq(gfmt .. " " .. grows[7][2], "nvfp4_trtllm_gen 0.602", "the trtllm-gen curve, its M = 128 row")
  assert(math.abs(gen:time(1024, 1).experts_ms - 48 * 8 * sl / 8000e9 * 1e3 / 0.116) < 1e-9, "trtllm-gen, one sequence")
  check.eq(sim.expert_kernel(kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "nvfp4",
                                       engine = "trtllm", moe_backend = "cutlass"}),
           "trtllm_cutlass", "moe_backend cutlass: the default's kernel")
  check.eq(select(3, sim.expert_curve(kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "fp8",
                                                engine = "trtllm", moe_backend = "trtllm"})), "fp8",
           "moe_backend trtllm with FP8 experts: the Triton curve (no trtllm-gen FP8 table)")
  check.error("field 'moe_backend' = 'trtllm' is TensorRT-LLM's moe_config.backend; budget 'vllm' has none",
              kv.deploy, {model = "qwen3-30b-a3b", gpu = "b200", engine = "vllm", moe_backend = "trtllm"})
  check.error("field 'moe_backend' must be 'cutlass' or 'trtllm'", kv.deploy,
              {model = "qwen3-30b-a3b", gpu = "b200", engine = "trtllm", moe_backend = "deepgemm"})
  check.error("field 'moe_backend' needs a model with routed experts, 'llama-3.1-8b' has none", kv.deploy,
              {model = "llama-3.1-8b", gpu = "b200", engine = "trtllm", moe_backend = "cutlass"})
  -- a GPU whose curves lack the kernel's: a clear error
  local keep = sim.expert_gemm.b200.nvfp4_cutlass
  sim.expert_gemm.b200.nvfp4_cutlass = nil
  check.error("kvplan.sim.expert_gemm['b200'] has no curve of the trtllm_cutlass MoE kernel",
              sim.expert_curve, trt)
  sim.expert_gemm.b200.nvfp4_cutlass = keep
end
check.eq(sim.expert_curve(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}), nil, "dense: none")
-- A100 SXM 80GB and L40S read their own curves (vllm-project/vllm pull
-- requests 40542 and 53710), measured to 4096 and 8192 tokens; before, the
-- H100's. The A100's M = 4096 row by hand: 64 experts all touched, 4096 x 6 /
-- 64 = 384 tokens an expert; FLOPs 2 x 4096 x 6 x 3 x 2048 x 1408 / 312 TFLOPS
-- = 1362.8 us beat the bytes' 64 x 3 x 2048 x 1408 x 2 / 2039 GB/s = 543.1 us;
-- over the kernel's 2919.0 us: 0.467
local a100 = kv.deploy{model = "qwen3-30b-a3b", gpu = "a100-sxm-80gb"}
local ar, aon, afmt = sim.expert_curve(a100)
check.eq(aon .. " " .. afmt, "a100-sxm-80gb bf16", "A100: its own BF16 curve")
local E, k, H, I = 64, 6, 2048, 1408
local touched = E * (1 - (1 - k / E) ^ 4096)
local tpe = 4096 * k / touched
local us = math.max(touched * 3 * H * I * 2 / 2039e9, 2 * 4096 * k * 3 * H * I / 312e12) * 1e6
assert(math.abs(tpe - 384) < 1e-9 and math.abs(us / 2919.0 - 0.467) < 5e-4,
       "A100 M = 4096 by hand: " .. tpe .. " tokens an expert, " .. us / 2919.0)
check.eq(ar[#ar][1] .. " " .. ar[#ar][2], "384 0.467", "A100's last point: 384 tokens an expert")
local ap = a100:perf()
local got = nil
for i, x in ipairs(ap.expert_tpe) do if x == 384 then got = ap.expert_frac[i] end end
check.eq(got, 0.467, "the core's A100 curve holds the 4096-token point")
local _, lon, lfmt = sim.expert_curve(kv.deploy{model = "qwen3-30b-a3b", gpu = "l40s"})
check.eq(lon .. " " .. lfmt, "l40s fp8", "L40S: its own FP8 curve")
-- one sequence: one token per expert, the first row
local one = dsv3:time(2048, 1)
assert(math.abs(one.tokens_per_expert - 1) < 1e-12, "a single token: one token per expert")
local factors = require "kvplan.factors"
check.eq(factors.value(factors.by_name.experts, dsv3), rows[1][2], "the fit starts at the 1-token row")
local slow = kv.deploy{model = "qwen3-30b-a3b", gpu = "h100-sxm", efficiency = {experts = 0.3}}:time(2048, 32)
assert(slow.experts_ms > kv.deploy(moe):time(2048, 32).experts_ms * 1.5, "experts at 0.3: " .. slow.experts_ms)
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:perf().expert_eff, 0, "dense: no experts")
check.error("efficiency 'experts' must be in (0, 1], got 0", kv.deploy,
            {model = "qwen3-30b-a3b", gpu = "h100-sxm", efficiency = {experts = 0}})
check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm"}:perf().tflops, 989.5,
         "gpt-oss MXFP4 experts, bf16 attention: bf16 rate")
check.eq(t.bound, "memory", "bound at batch 1")
check.eq(d:time(1, 4096).bound, "compute", "bound at batch 4096")
local dd = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}
assert(dd:time(2048, 32).tpot_ms > d:time(2048, 32).tpot_ms, "default efficiency is slower")
check.eq(dd:perf().mem_eff, 0.69, "H100 memory efficiency (DeepGEMM's table)")
check.eq(dd:perf().flop_eff, 0.7, "H100 bf16: no published factor, the default")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8"}:perf().flop_eff, 0.53,
         "H100 fp8 compute efficiency (DeepGEMM's table)")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "l4"}:perf().mem_eff, 0.8, "default memory efficiency")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {memory = 0.9}}:perf().mem_eff,
         0.9, "the user's efficiency wins")
check.eq(dd:perf().tflops, 989.5, "bf16 rate")
-- the dense GEMMs by M (sim.gemm_benchmarks): H100 bf16, vLLM pull request
-- 49363's torch-bf16 rows at M = 1 of its two shapes (2.870333 and 3.072025
-- TFLOP/s, 2 bytes a weight: as many TB/s of weights, over 3.35 TB/s; their
-- median, the mean of two) and pull request 23280's at M = 512 (566.262626
-- TFLOP/s over 989.5); memory-bound up to M = 2 x 989.5 / (2 x 3.35) = 295
local gp = dd:perf()
assert(math.abs(gp.gemm_memory[1][1] - (1)) <= 0, "first memory point at M = 1")
assert(math.abs(gp.gemm_memory[1][2] - ((2.870333 + 3.072025) / 2 / 3.35)) <= 1e-12, "H100 bf16 memory at M = 1")
assert(math.abs(gp.gemm_memory[4][2] - ((352.560566 + 364.745064) / 2 / 128 / 3.35)) <= 1e-12,
       "H100 bf16 memory at M = 128")
assert(math.abs(gp.gemm_memory[5][2] - (593.264799 / 256 / 3.35)) <= 1e-12, "M = 256: one shape")
assert(math.abs(gp.gemm_compute[1][2] - (566.262626 / 989.5)) <= 1e-12, "H100 bf16 compute at M = 512")
check.eq(#gp.gemm_compute, 5, "M = 512 to 8192")
-- fp8 weights: 1 byte a weight, the fp8-tensor-w-tensor-a-noquant column
local fp = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8"}:perf()
assert(math.abs(fp.gemm_memory[1][2] - ((5.162899 + 6.077129) / 2 / 2 / 3.35)) <= 1e-12,
       "H100 fp8 memory at M = 1")
check.eq(fp.gemm_compute, nil, "H100 fp8 per-tensor: no compute rows, the flat factor")
-- a step of one sequence reads the weights at the M = 1 point: its GEMM time
-- is the weight bytes over 3.35 TB/s x 0.8568 (the logits' FLOPs are far below)
-- the user's number is a flat factor: no curve on that side
local flat = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {memory = 0.69}}:perf()
check.eq(flat.gemm_memory, nil, "a number is a flat memory factor")
assert(flat.gemm_compute ~= nil, "the compute curve stays")
local both = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {memory = 0.69, compute = 0.7}}
check.eq(both:perf().gemm_compute, nil, "a number is a flat compute factor")
-- the curve at M = 1 makes a single-sequence decode faster than the flat 0.69
assert(dd:time(2048, 1).tpot_ms < both:time(2048, 1).tpot_ms, "0.887 at M = 1 beats the flat 0.69")
-- NVFP4 on B200: pull request 20578's nvfp4-noquant row at M = 1 (4.439497
-- TFLOP/s, 4.5 bits a weight: 4.439497 x 0.5625 / 2 TB/s over 8 TB/s)
local nv = kv.deploy{model = "llama-3.1-8b", gpu = "b200", weights = "nvfp4"}:perf()
assert(math.abs(nv.gemm_memory[1][2] - 4.439497 * 0.5625 / 2 / 8) <= 1e-12, "B200 nvfp4 at M = 1")
assert(math.abs(nv.gemm_compute[#nv.gemm_compute][2] - 3904.329097 / 9000) <= 1e-12, "at M = 16384")
-- A100 SXM 80GB (issue 18), Azure's AI-benchmarking-guide, ND A100 v4
-- (A100-SXM4-80GB): compute, its cuBLASLt FP16 rows of M >= 4096, 228.0
-- (4096^3), 250.8 (6144 x 12288 x 12288), 253.7 (8192^3), 256.5 (16384^3)
-- TFLOPS over 312, all above the ridge 2 x 312 / (2 x 2.039) = 153 tokens;
-- memory, BabelStream's median kernel (Copy 1.61, Mul 1.61, Add 1.70, Triad
-- 1.70, Dot 1.75 TB/s: 1.70) over 2.039 TB/s, flat, no GEMM memory rows
local a1d = kv.deploy{model = "llama-3.1-8b", gpu = "a100-sxm-80gb"}
local a1 = a1d:perf()
check.eq(#a1.gemm_compute, 4, "A100 bf16 compute: four points")
assert(a1.gemm_compute[1][1] == 4096 and math.abs(a1.gemm_compute[1][2] - 228.0 / 312) <= 1e-12,
       "A100 bf16 compute at M = 4096: 0.7308")
assert(a1.gemm_compute[2][1] == 6144 and math.abs(a1.gemm_compute[2][2] - 250.8 / 312) <= 1e-12,
       "A100 bf16 compute at M = 6144")
assert(a1.gemm_compute[4][1] == 16384 and math.abs(a1.gemm_compute[4][2] - 256.5 / 312) <= 1e-12,
       "A100 bf16 compute at M = 16384")
check.eq(a1.gemm_memory, nil, "A100: no GEMM memory rows, the flat factor")
assert(math.abs(a1.mem_eff - 1.70 / 2.039) <= 1e-12, "A100 memory: BabelStream 1.70 of 2.039 TB/s")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "a100-sxm-40gb"}:perf().mem_eff, 0.8,
         "A100 40GB (HBM2, 1555 GB/s): not measured, the rule of thumb")
-- a decode step of 256 sequences of Llama 3.1 8B at 2048 tokens: its GEMMs are
-- compute-bound (256 > 153) and read the curve clamped at its first point,
-- 228.0 / 312; a flat compute = 228 / 312 gives the same step
local a1flat = kv.deploy{model = "llama-3.1-8b", gpu = "a100-sxm-80gb",
                         efficiency = {compute = 228.0 / 312}}
assert(math.abs(a1d:time(2048, 256).tpot_ms - a1flat:time(2048, 256).tpot_ms) <= 1e-9,
       "below M = 4096 the A100 compute curve is its first point")
-- H20 (issue 18): compute, torch.mm BF16 squares of M >= 4096 on an NVIDIA
-- H20 (zzc0721/torch-performance-test-data issue 77): 133.41 (4096^3),
-- 138.60 (8192^3), 142.25 (10240^3) TFLOPS over 148, all above the ridge
-- 2 x 148 / (2 x 4.0) = 37 tokens; memory: no rows, the flat 0.8
local h2d = kv.deploy{model = "llama-3.1-8b", gpu = "h20"}
local h2 = h2d:perf()
check.eq(#h2.gemm_compute, 3, "H20 bf16 compute: three points")
assert(h2.gemm_compute[1][1] == 4096 and math.abs(h2.gemm_compute[1][2] - 133.41 / 148) <= 1e-12,
       "H20 bf16 compute at M = 4096: 0.9014")
assert(h2.gemm_compute[2][1] == 8192 and math.abs(h2.gemm_compute[2][2] - 138.60 / 148) <= 1e-12,
       "H20 bf16 compute at M = 8192")
assert(h2.gemm_compute[3][1] == 10240 and math.abs(h2.gemm_compute[3][2] - 142.25 / 148) <= 1e-12,
       "H20 bf16 compute at M = 10240")
check.eq(h2.gemm_memory, nil, "H20: no GEMM memory rows, the flat factor")
check.eq(h2.mem_eff, 0.8, "H20 memory: the rule of thumb")
check.eq(h2.gemm_tile_m, 0, "H20 bf16 (cuBLAS): no tile term, no source for its tile")
-- hand count, a decode step of 8192 sequences (8192 tokens): the GEMMs are
-- compute-bound and take the body's FLOPs a token and the logits' a sequence
-- at 148 TFLOPS x 138.60 / 148, i.e. at 138.60 TFLOPS:
-- (13,959,176,192 + 1,050,673,152) x 8192 / 138.60e12 s = 887.5 ms
check.eq(h2.body_flops, 13959176192, "Llama 3.1 8B: 2 x the layers' parameters")
local h8 = h2d:time(128, 8192)
check.eq(h8.run_tokens, 8192, "8192 tokens, unpadded")
assert(math.abs(h8.gemm_ms - (13959176192 + 1050673152) * 8192 / 138.60e12 * 1e3) <= 1e-9,
       "H20 bf16 GEMMs of 8192 tokens at 138.60 TFLOPS: " .. h8.gemm_ms)
-- fp8 (per-tensor) on the H20 has no rows: the flat factors
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h20", weights = "fp8"}:perf().gemm_compute, nil,
         "H20 fp8: no compute rows")
-- GPUs without published rows keep the flat factors
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "l40s"}:perf().gemm_memory, nil, "L40S: none")
-- MI300X: memory at BabelStream's median kernel, 4.11 of 5.3 TB/s (Azure's
-- AI-benchmarking-guide, ND MI300X v5), for what has no GEMM rows
local mibd = kv.deploy{model = "llama-3.1-8b", gpu = "mi300x"}
local mib = mibd:perf()
assert(math.abs(mib.mem_eff - 4.11 / 5.3) <= 1e-12, "MI300X memory: BabelStream 4.11 of 5.3 TB/s")
check.eq(mib.flop_eff, 0.7, "MI300X compute: the default (attention)")
-- bf16 GEMMs (issue 18): memory, vLLM pull request 29937's wvSplitK rows of
-- 1 token on MI300 (Base_300, ms): 13312 x 16384 in 0.110287193, 16384 x
-- 6656 in 0.055465103, 8192 x 28672 in 0.116746185; 2 bytes a weight, so
-- N x K x 2 bytes / ms over 5.3 TB/s: 0.7463, 0.7419, 0.7593, median the
-- first. Compute: stas00/ml-engineering's MAMF, 668.4 TFLOPS, one point
local e1 = 13312 * 16384 * 2 / 0.110287193e-3 / 5300e9
check.eq(#mib.gemm_memory, 1, "MI300X bf16 memory: one point, M = 1")
check.eq(mib.gemm_memory[1][1], 1, "at M = 1")
assert(math.abs(mib.gemm_memory[1][2] - e1) <= 1e-12, "MI300X bf16 memory at M = 1: " .. mib.gemm_memory[1][2])
assert(math.abs(e1 - 0.74626) <= 1e-5, "0.746 of HBM")
check.eq(#mib.gemm_compute, 1, "MI300X bf16 compute: one point")
assert(math.abs(mib.gemm_compute[1][2] - 668.4 / 1307.4) <= 1e-12, "MI300X bf16 compute: 668.4 of 1307.4")
-- hand count, one sequence: the weights the GEMMs read, 2 bytes a parameter
-- (= the body's and the logits' FLOPs a token, 2 a parameter), at 5.3 TB/s x
-- e1: 15,009,849,344 bytes / 3.9552 TB/s = 3.795 ms
local m1 = mibd:time(128, 1)
assert(math.abs(m1.gemm_ms - (13959176192 + 1050673152) / (5300e9 * e1) * 1e3) <= 1e-9,
       "MI300X bf16 GEMMs of one token at 0.746 of HBM: " .. m1.gemm_ms)
-- and 8192 sequences (compute-bound): the FLOPs at 1307.4 TFLOPS x 668.4 /
-- 1307.4, i.e. at 668.4 TFLOPS
local m8 = mibd:time(128, 8192)
check.eq(m8.run_tokens, 8192, "8192 tokens")
assert(math.abs(m8.gemm_ms - (13959176192 + 1050673152) * 8192 / 668.4e12 * 1e3) <= 1e-9,
       "MI300X bf16 GEMMs of 8192 tokens at 668.4 TFLOPS: " .. m8.gemm_ms)
-- fp8: hipBLASLt's rows of M >= 4096 over 2614.9 TFLOPS, compute side only
-- (the ridge is 2614.9 / (2 x 5.3) = 247 tokens)
local mif = kv.deploy{model = "llama-3.1-8b", gpu = "mi300x", weights = "fp8"}
local mip = mif:perf()
check.eq(mip.gemm_memory, nil, "MI300X fp8: no memory rows, the flat 0.775")
check.eq(#mip.gemm_compute, 5, "M = 4096, 6144, 8192, 16384, 32768")
check.eq(mip.gemm_compute[3][1], 8192, "third point at M = 8192")
assert(math.abs(mip.gemm_compute[3][2] - 1159.23 / 2614.9) <= 1e-12, "MI300X fp8 compute at M = 8192")
assert(math.abs(mip.gemm_compute[1][2] - 955.17 / 2614.9) <= 1e-12, "MI300X fp8 compute at M = 4096")
-- hand count: a decode step of 8192 sequences (eager under V0's graphs, so
-- 8192 tokens) is compute-bound; its GEMMs take the body's FLOPs a token and
-- the logits' a sequence at 2614.9 TFLOPS x 1159.23 / 2614.9, i.e. at
-- 1159.23 TFLOPS: (13,959,176,192 + 1,050,673,152) x 8192 / 1159.23e12 s
check.eq(mip.body_flops, 13959176192, "Llama 3.1 8B: 2 x the layers' parameters")
check.eq(mip.head_flops, 1050673152, "2 x vocab x hidden")
local mt = mif:time(128, 8192)
check.eq(mt.run_tokens, 8192, "8192 tokens, unpadded")
assert(math.abs(mt.gemm_ms - (13959176192 + 1050673152) * 8192 / 1159.23e12 * 1e3) <= 1e-9,
       "MI300X fp8 GEMMs of 8192 tokens at 1159.23 TFLOPS: " .. mt.gemm_ms)
-- the range's slow end moves the curve by the flat factor's ratio
local factors = require "kvplan.factors"
local slow = factors.perf_at(dd, {memory = 0.345})
assert(math.abs(slow.gemm_memory[1][2] - gp.gemm_memory[1][2] / 2) <= 1e-12, "curve scaled by 0.345 / 0.69")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8"}:perf().tflops, 1979, "fp8 rate")
-- the ledger object gives the same step times as its deployment
local pd = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", price_per_hour = 2}
local lt, dt = pd:ledger():time(2048, 64), pd:time(2048, 64)
-- (d:time adds the ranges, *_lo and *_hi: kvplan.factors)
for k, v in pairs(dt) do
  if not k:find("_lo$") and not k:find("_hi$") then check.eq(lt[k], v, "ledger:time " .. k) end
end
for k, v in pairs(lt) do check.eq(dt[k], v, "d:time " .. k) end
local row = kv.report.time_fields(pd, 2048, 64)
check.eq(row.tpot_ms, dt.tpot_ms, "time_fields tpot_ms")
check.eq(row.usd_per_mtok, dt.usd_per_mtok, "time_fields usd_per_mtok")
check.eq(kv.report.time_fields(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}, 2048, 64)
           .usd_per_mtok, "", "no price: no usd_per_mtok")
check.error("field 'context' must be an integer >= 1, got 0", function() return pd:ledger():time(0, 1) end)
check.error("has no 'hbm_gbps' in the catalog", function()
  return kv.deploy{model = "llama-3.1-8b", gpu_memory = "80 GiB"}:ledger():time(1024, 1)
end)
local priced = pd:time(2048, 64)
assert(math.abs(priced.usd_per_mtok - 2 / 3600 / priced.tokens_per_s * 1e6) < 1e-9)
check.error("efficiency 'memory' must be in (0, 1], got 1.5", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {memory = 1.5}})
check.error("unknown field 'bandwidth' in perf", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100-sxm", perf = {bandwidth = 1}})
check.error("field 'price_per_hour' must be a number >= 0", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100-sxm", price_per_hour = -1})
check.error("has no 'hbm_gbps' in the catalog", function()
  return kv.deploy{model = "llama-3.1-8b", gpu_memory = "80 GiB"}:time(1024, 1)
end)
check.eq(kv.deploy{model = "llama-3.1-8b", gpu_memory = "80 GiB", perf = {hbm_gbps = 2000, tflops = 500}}
           :time(1024, 1).bound, "memory", "perf overrides")
-- pipeline parallelism keeps pp micro-batches in flight: 64 sequences at
-- 4096 tokens on 2 stages advance in the time of 32's pass (it was the time
-- of all 64 plus a hand-off: 2932 tokens/s on 2 stages, 2934 on 1)
local pp1 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:time(4096, 64)
local pp2 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", pp = 2}:time(4096, 64)
assert(pp2.tokens_per_s > 1.4 * pp1.tokens_per_s, "pp 2: " .. pp2.tokens_per_s .. " vs " .. pp1.tokens_per_s)
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", pp = 2}:time(4096, 1).tokens_per_s
         < kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:time(4096, 1).tokens_per_s, true,
         "one sequence gains nothing from stages (and pays the hand-off)")
-- speculative decoding: fewer target steps per token
local s = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                    optim = o.speculative{heads = "eagle", tokens = 3, acceptance = 0.7}}:time(2048, 16)
assert(math.abs(s.steps_per_token - 0.3 / (1 - 0.7 ^ 4)) < 1e-12)
assert(s.tpot_ms < dd:time(2048, 16).tpot_ms)
local specd = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                        optim = o.speculative{draft = "llama-3.2-1b", tokens = 3, acceptance = 0.7}}
local st3 = specd:time(2048, 16)
-- target: 4 positions a step; draft: 3 positions of its own KV a step; per E tokens
local e = (1 - 0.7 ^ 4) / 0.3
local draft_tok = kv.deploy{model = "llama-3.2-1b", gpu = "h100-sxm"}:ledger().kv_bytes_per_token
assert(math.abs(st3.kv_write_bytes_per_token - (4 * dd:ledger().kv_bytes_per_token
       + 3 * draft_tok) / e) < 1e-6 * st3.kv_write_bytes_per_token,
       "kv_write_bytes_per_token " .. st3.kv_write_bytes_per_token)
local dsp = check.tmpdir()
kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", optim = o.speculative{draft = "llama-3.2-1b", tokens = 3, acceptance = 0.7},
         context = 2048, concurrency = 16,
         columns = {"steps_per_token", "kv_write_bytes_per_token"}}:write(dsp .. "/s.csv")
check.eq(check.slurp(dsp .. "/s.csv"), string.format("steps_per_token,kv_write_bytes_per_token\n%.4f,%.1f\n",
         st3.steps_per_token, st3.kv_write_bytes_per_token), "speculative sweep columns")
os.execute("rm -r " .. dsp)

-- sweeps: the time columns computed in C equal d:time row by row
local dir0 = check.tmpdir()
kv.sweep{model = {"llama-3.1-8b", "qwen3-30b-a3b"}, gpu = {"h100-sxm", "l4"}, tp = {1, 2},
         context = {1024, 32768}, concurrency = {1, 64}, price_per_hour = 2.5,
         columns = {"model", "gpu", "tp", "context", "concurrency", "tpot_ms", "ttft_ms",
                    "tokens_per_s", "bound", "kv_read_share", {"usd_per_mtok", precision = 6}}}
  :write(dir0 .. "/t.csv")
local rows = 0
for line in io.lines(dir0 .. "/t.csv") do
  local m, g, tp, ctx, conc, tpot, ttft, tps, bound, share, usd =
    line:match("^([^,]+),([^,]+),(%d+),(%d+),(%d+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+)$")
  if m and m ~= "model" then
    rows = rows + 1
    local x = kv.deploy{model = m, gpu = g, tp = tonumber(tp), price_per_hour = 2.5}
                :time(tonumber(ctx), tonumber(conc))
    check.eq(tpot, string.format("%.4f", x.tpot_ms), "tpot_ms " .. line)
    check.eq(ttft, string.format("%.4f", x.ttft_ms), "ttft_ms " .. line)
    check.eq(tps, string.format("%.1f", x.tokens_per_s), "tokens_per_s " .. line)
    check.eq(bound, x.bound, "bound " .. line)
    check.eq(share, string.format("%.4f", x.kv_read_share), "kv_read_share " .. line)
    check.eq(usd, string.format("%.6f", x.usd_per_mtok), "usd_per_mtok " .. line)
  end
end
check.eq(rows, 32, "sweep rows")
os.execute("rm -r " .. dir0)

-- the simulator
local chat = {model = "llama-3.1-8b", gpu = "l4", requests = 300, seed = 3,
              prompt = kv.workload.lognormal{median = 1000, sigma = 0.5, max = 4096},
              output = kv.workload.lognormal{median = 250, sigma = 0.5, max = 1024}}
-- a rank's share is ceil(requests / dp) without overflow: requests + dp - 1
-- wrapped for dp = 2^63 - 1 ("field 'requests' must be ... got -1")
do
  local one = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 20, rate = 4, max_concurrency = 8,
                          data_parallel_size = math.maxinteger,
                          prompt = kv.workload.fixed(100), output = kv.workload.fixed(10)}
  assert(one.requests_s > 0, "dp = 2^63 - 1 simulates one request a rank")
end
local r = kv.simulate(chat)
for _, k in ipairs{"throughput_tokens_s", "requests_s", "num_preemptions", "steps", "duration_s"} do
  assert(type(r[k]) == "number", k)
end
for _, k in ipairs{"ttft_ms", "tpot_ms", "e2e_ms"} do
  local p = r[k]
  assert(p.p50 <= p.p90 and p.p90 <= p.p99 and p.p99 <= p.max and p.mean > 0, k)
end
assert(r.kv_cache_usage_perc.peak <= 1 and r.kv_cache_usage_perc.mean > 0)
check.eq(r.max_num_seqs, 256, "vLLM's default on a 24 GB GPU")
check.eq(r.max_num_batched_tokens, 2048, "vLLM's server default on a 24 GB GPU")
check.eq(r.requests, 300, "requests")
-- same seed, same bytes; another seed, another run
local dir = check.tmpdir()
r:timeline(dir .. "/a.csv")
kv.simulate(chat):timeline(dir .. "/b.csv")
check.eq(check.slurp(dir .. "/a.csv"), check.slurp(dir .. "/b.csv"), "timeline of the same seed")
assert(check.slurp(dir .. "/a.csv"):match("^step,start_s,step_ms,running,waiting,kv_blocks_used"))
local other = {}
for k, v in pairs(chat) do other[k] = v end
other.seed = 4
assert(kv.simulate(other).duration_s ~= r.duration_s, "another seed")
-- static batching never beats continuous
other.seed, other.scheduler = 3, "static"
local st = kv.simulate(other)
check.eq(st.num_preemptions, 0, "static reserves")
assert(st.throughput_tokens_s <= r.throughput_tokens_s)
-- a shared prefix: cached once, its tokens not computed again
local pre = {}
for k, v in pairs(chat) do pre[k] = v end
pre.optim = o.prefix{tokens = 512}
local rp = kv.simulate(pre)
assert(rp.prefix_cache_hits >= 300 * 480, "prefix hits " .. rp.prefix_cache_hits)
assert(rp.throughput_tokens_s > r.throughput_tokens_s, "a cached prefix serves faster")
check.eq(r.prefix_cache_hits, 0, "no prefix, no hits")
-- a trace: arrivals and lengths from a CSV file
local f = assert(io.open(dir .. "/trace.csv", "w"))
f:write("arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,200,20\n1.0,50,5\n")
f:close()
local tr = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", trace = dir .. "/trace.csv"}
check.eq(tr.requests, 3, "trace requests")
check.eq(tr.output_tokens, 35, "trace outputs")
assert(tr.duration_s > 1.0, "the last request arrives at 1 s")
-- Poisson arrivals stretch the run
local slow = {}
for k, v in pairs(chat) do slow[k] = v end
slow.rate = 0.5
assert(kv.simulate(slow).duration_s > 300 / 0.5 * 0.8)

-- simulations over axes: one row each, equal to the single simulations
local sweep_out = dir .. "/sims.csv"
local rows_written = kv.simulations{model = "llama-3.1-8b", gpu = "l4", requests = 300, seed = 3,
  prompt = chat.prompt, output = chat.output, scheduler = {"static", "continuous"},
  columns = {"scheduler", "throughput_tokens_s", "num_preemptions"}}:write(sweep_out)
check.eq(rows_written, 2, "simulation rows")
check.eq(check.slurp(sweep_out), string.format("scheduler,throughput_tokens_s,num_preemptions\n"
  .. "static,%.1f,0\ncontinuous,%.1f,%d\n", st.throughput_tokens_s, r.throughput_tokens_s,
  r.num_preemptions), "simulation sweep")
check.error("unknown simulation column 'ttft_p99'", kv.simulations,
            {model = "llama-3.1-8b", gpu = "l4", requests = 3, prompt = 10, output = 10,
             columns = {"ttft_p99"}})

-- errors: clear, at the user's line
local function sim_with(k, v)
  local x = {}
  for a, b in pairs(chat) do x[a] = b end
  x[k] = v
  return kv.simulate(x)
end
check.error("field 'rate' must be a number > 0", sim_with, "rate", 0)
check.error("field 'rate' must be a number > 0", sim_with, "rate", -2)
check.error("field 'requests' must be an integer >= 1, got 0", sim_with, "requests", 0)
check.error("cannot be served: prompt 200000 + output", sim_with, "prompt", 200000)
check.error("field 'prompt' must be an integer >= 1, got 0", sim_with, "prompt", 0)
check.error("field 'output' must be an integer >= 1, got -5", sim_with, "output", -5)
check.error("unknown simulation option 'reqests' (did you mean 'requests'?)", sim_with, "reqests", 3)
check.error("field 'scheduler' must be 'continuous', 'no_evict', 'static' or 'sglang', got 'fifo'", sim_with, "scheduler", "fifo")
local trt = {}
for k, v in pairs(chat) do trt[k] = v end
trt.budget = "trtllm"
local rt = kv.simulate(trt)
check.eq(rt.scheduler, "no_evict", "TensorRT-LLM's default scheduler")
check.eq(rt.num_preemptions, 0, "no eviction")
local bad = assert(io.open(dir .. "/bad.csv", "w"))
bad:write("arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,-3,20\n")
bad:close()
check.error("bad.csv:3: prompt '-3' must be >= 1 token", kv.simulate,
            {model = "llama-3.1-8b", gpu = "h100-sxm", trace = dir .. "/bad.csv"})
bad = assert(io.open(dir .. "/bad2.csv", "w"))
bad:write("arrival_s,prompt_tokens,output_tokens\n0,1e2x,10\n")
bad:close()
check.error("bad2.csv:2: bad prompt '1e2x' (expected an integer)", kv.simulate,
            {model = "llama-3.1-8b", gpu = "h100-sxm", trace = dir .. "/bad2.csv"})
check.error("trace request 1: token counts must be integers", kv.simulate,
            {model = "llama-3.1-8b", gpu = "h100-sxm",
             trace = {arrival = {0}, prompt_tokens = {1e30}, output_tokens = {5}}})
check.error("a trace gives arrivals and lengths", kv.simulate,
            {model = "llama-3.1-8b", gpu = "h100-sxm", trace = dir .. "/trace.csv", requests = 3})
os.execute("rm -r " .. dir)
print("sim ok")

-- data parallelism: the arrivals split evenly over the ranks, one rank
-- simulated with its share, the throughput and counts the deployment's
do
  local base = {model = "llama-3.1-8b", gpu = "h100-sxm", prompt = 1000, output = 200, seed = 3}
  local function run(o)
    local t = {}
    for k, v in pairs(base) do
      if not (o.trace and (k == "prompt" or k == "output")) then t[k] = v end
    end
    for k, v in pairs(o) do t[k] = v end
    return kv.simulate(t)
  end
  local two = run{data_parallel_size = 2, requests = 301, rate = 8}
  local one = run{requests = 151, rate = 4}
  check.eq(two.throughput_tokens_s, 2 * one.throughput_tokens_s, "vLLM DP 2: twice a rank's throughput")
  check.eq(two.requests, 2 * 151, "ceil(301 / 2) requests a rank")
  check.eq(two.ttft_ms.p90, one.ttft_ms.p90, "latencies are a rank's")
  check.eq(two.gpus, 2, "two engines of one GPU")
  check.eq(two.data_parallel_size, 2, "two ranks")
  -- a closed loop of 64 is 32 a rank
  local c2 = run{data_parallel_size = 2, requests = 200, max_concurrency = 64}
  local c1 = run{requests = 100, max_concurrency = 32}
  check.eq(c2.throughput_tokens_s, 2 * c1.throughput_tokens_s, "closed loop split")
  -- a trace: every second request from the first
  local trace = {arrival = {0, 0.1, 0.2, 0.3, 0.4}, prompt_tokens = {100, 900, 200, 800, 300},
                 output_tokens = {10, 90, 20, 80, 30}}
  local tr = run{data_parallel_size = 2, trace = trace}
  local t1 = run{trace = {arrival = {0, 0.2, 0.4}, prompt_tokens = {100, 200, 300},
                          output_tokens = {10, 20, 30}}}
  check.eq(tr.output_tokens, 2 * t1.output_tokens, "trace: the rank's every second request")
  -- SGLang's attention DP: 8 ranks inside 8 GPUs
  local sg = kv.simulate{model = "qwen3-235b-a22b", gpu = "h200", tp = 8, engine = "sglang",
                         dp_size = 8, enable_dp_attention = true, requests = 64, prompt = 500,
                         output = 50, max_model_len = 4096}
  check.eq(sg.gpus, 8, "attention DP: the tp GPUs")
  check.eq(sg.requests, 64, "8 a rank")
end

-- the attention kernel's own rates by engine, GPU and model (sim.attention)
do
  local sim = require "kvplan.sim"
  local function backend(o) return sim.attention_backend(kv.deploy(o)) end
  check.eq(backend{model = "llama-3.1-8b", gpu = "h100-sxm"}, "fa3", "vLLM on Hopper: FA3")
  check.eq(backend{model = "llama-3.1-8b", gpu = "h200", engine_version = "0.6"}, "fa2",
           "vLLM before 0.7: FA2")
  check.eq(backend{model = "deepseek-v3", gpu = "h100-sxm", tp = 8}, "flashmla", "MLA: FlashMLA")
  check.eq(backend{model = "llama-3.1-8b", gpu = "a100-sxm-80gb"}, nil, "A100: the present rule")
  -- SGLang 0.5 on Hopper: FA3 for is_fa3_default_architecture's classes
  -- (LlamaForCausalLM, Qwen3ForCausalLM, ...), by the catalog's family
  check.eq(backend{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "sglang"}, "fa3",
           "SGLang on Hopper, LlamaForCausalLM: FA3")
  check.eq(backend{model = "qwen3-14b", gpu = "h200", engine = "sglang",
                   engine_version = "0.5.5.post1"}, "fa3", "SGLang 0.5.5, Qwen3ForCausalLM: FA3")
  check.eq(backend{model = "qwen3-14b", gpu = "h100-sxm", engine = "sglang",
                   engine_version = "0.4.6"}, nil, "SGLang 0.4: the present rule")
  check.eq(backend{model = "qwen3-14b", gpu = "a100-sxm-80gb", engine = "sglang"}, nil,
           "SGLang off Hopper: flashinfer, the present rule")
  check.eq(backend{model = "qwen3-14b", gpu = "h100-sxm", engine = "sglang", kv = "fp8_e5m2"},
           nil, "fp8_e5m2 KV: SGLang falls back to triton")
  check.eq(backend{model = "deepseek-v3", gpu = "h100-sxm", tp = 8, engine = "sglang"}, nil,
           "SGLang MLA: the present rule")
  -- GptOssForCausalLM's own branch of ServerArgs: fa3 on SM90, triton elsewhere
  check.eq(backend{model = "gpt-oss-120b", gpu = "h100-sxm", engine = "sglang",
                   engine_version = "0.5.3rc0"}, "fa3", "SGLang 0.5.3, gpt-oss on an H100: FA3")
  check.eq(backend{model = "gpt-oss-20b", gpu = "h200", engine = "sglang",
                   engine_version = "0.5.4.post2"}, "fa3", "SGLang 0.5.4, gpt-oss on an H200: FA3")
  check.eq(backend{model = "gpt-oss-20b", gpu = "a100-sxm-80gb", engine = "sglang"}, nil,
           "SGLang gpt-oss on an A100: triton, the present rule")
  check.eq(backend{model = "gpt-oss-20b", gpu = "h100-sxm", engine = "sglang", kv = "fp8_e5m2"},
           nil, "gpt-oss, fp8_e5m2 KV: triton")
  -- head_dim 64: FA3's head_dim-64 causal row, 197 TFLOPS at 512 tokens and 473 at 16k
  local oss = kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm", engine = "sglang"}:perf()
  check.eq(oss.attn_compute[1][2], 197 / 989.5, "gpt-oss FA3 head_dim 64 at 512: 197 TFLOPS")
  check.eq(oss.attn_compute[6][2], 473 / 989.5, "gpt-oss FA3 head_dim 64 at 16k: 473 TFLOPS")
  check.eq(oss.attn_floor_us, nil, "head_dim 64: no measured decode floor")
  local sgp = kv.deploy{model = "qwen3-14b", gpu = "h100-sxm", engine = "sglang"}:perf()
  check.eq(sgp.attn_compute[3][2], 521 / 989.5, "SGLang FA3 head_dim 128 at 2k: 521 TFLOPS")
  local p = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:perf()
  check.eq(p.attn_tflops, 989.5, "FA3 rates over the bf16 peak")
  check.eq(#p.attn_compute, 6, "six sequence lengths")
  check.eq(p.attn_compute[3][1], 2048, "at 2k tokens")
  check.eq(p.attn_compute[3][2], 521 / 989.5, "FA3 causal head_dim 128 at 2k: 521 TFLOPS")
  check.eq(p.attn_mem_eff, nil, "decode: the memory factor")
  local m = kv.deploy{model = "deepseek-v3", gpu = "h100-sxm", tp = 8}:perf()
  check.eq(m.attn_mem_eff, 3000 / 3350, "FlashMLA 3000 GB/s of 3350")
  check.eq(m.attn_compute[1][2], 660 / 989.5, "FlashMLA 660 TFLOPS")
  check.eq(kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8}:perf().attn_mem_eff, nil,
           "H200: no published MLA decode bandwidth")
  local g = kv.deploy{model = "llama-3.2-1b", gpu = "h100-sxm"}:perf()
  check.eq(g.attn_compute[1][2], 197 / 989.5, "FA3 causal head_dim 64 at 512: 197 TFLOPS")
  check.eq(kv.deploy{model = "llama-3.2-1b", gpu = "h100-sxm", engine_version = "0.6"}:perf()
             .attn_compute[6][2], 299 / 989.5, "FA2 causal head_dim 64 at 16k: 299 TFLOPS")
  -- the user's factors apply to attention as before
  local u = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", efficiency = {compute = 0.6}}:perf()
  check.eq(u.attn_compute, nil, "a given compute factor: no curve")
  -- beyond 16k tokens the curve is clamped to its last point, 616 TFLOPS
  check.eq(p.attn_compute[6][1], 16384, "the last point, 16k")
  check.eq(p.attn_compute[6][2], 616 / 989.5, "FA3 at 16k")
  -- TensorRT-LLM on a B200: trtllm-gen decode at flashinfer-ai/flashinfer#1415's
  -- bandwidth (bf16 KV, head_dim 64); hand check of its 256 x 1024 row:
  -- (256 x 1024 x 2 x 8 x 64 x 2 + 256 x 64 x 64 x 2) B / 0.0962112 ms / 8 TB/s
  check.eq(backend{model = "gpt-oss-20b", gpu = "b200", engine = "trtllm"}, "trtllm_gen",
           "TensorRT-LLM on SM100: trtllm-gen")
  check.eq(backend{model = "gpt-oss-20b", gpu = "b200"}, nil, "vLLM on a B200: the present rule")
  local med, rows = sim.trtllm_gen_decode_eff()
  assert(math.abs(rows[3] - 538968064 / 0.09621120095252991e-3 / 8e12) < 1e-12, "row 256 x 1024")
  assert(math.abs(rows[3] - 0.7002) < 1e-4 and math.abs(rows[1] - 0.6443) < 1e-4
         and math.abs(rows[2] - 0.7643) < 1e-4, "5154, 6114 and 5602 GB/s of 8000")
  check.eq(med, rows[3], "the median of the three rows")
  local t = kv.deploy{model = "gpt-oss-20b", gpu = "b200", engine = "trtllm"}:perf()
  check.eq(t.attn_mem_eff, med, "bf16 KV, head_dim 64: the measured bandwidth")
  check.eq(t.attn_compute, nil, "decode only: FLOPs keep the present rule")
  check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "b200", engine = "trtllm", kv = "fp8"}:perf()
             .attn_mem_eff, nil, "fp8 KV: no complete table, the memory factor")
  check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "b200", engine = "trtllm"}:perf().attn_mem_eff,
           nil, "head_dim 128: not measured, the memory factor")
  check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "b200", engine = "trtllm",
                     efficiency = {memory = 0.9}}:perf().attn_mem_eff, nil,
           "a given memory factor applies to attention")
  -- an NVFP4 checkpoint on an fp8 KV cache (issue 18): attention's MMAs take
  -- e4m3 Q and KV, so its FLOPs run at the B200's fp8 peak, 4500 TFLOPS, not
  -- the GEMMs' fp4 9000. Hand count, Qwen3-30B-A3B (48 layers, 32 query / 4 KV
  -- heads, head_dim 128) on a B200 at every factor 1, no floors: one prompt of
  -- 2048 tokens computes 48 x 2 x 32 x (128 + 128) x 2048 x 2049 / 2 =
  -- 1.650072748032e12 attention FLOPs, 0.366683 ms at 4500 TFLOPS against
  -- 0.183342 ms at 9000 (perf.tflops given: the GEMMs' peak as before), the
  -- rest of the prompt the same; a decode step of 64 sequences at 2048 tokens
  -- reads 64 x 2049 x 48 x 2 x 4 x 128 bytes of fp8 KV at 8000 GB/s
  -- (memory-bound: 1.03e11 FLOPs take 0.023 ms at 4500)
  local q3 = {model = "qwen3-30b-a3b", gpu = "b200", engine = "trtllm", weights = "nvfp4",
              kv = "fp8", efficiency = {memory = 1, compute = 1, link = 1, experts = 1},
              perf = {launch_us = 0, seq_host_us = 0, kernel_floor_us = 0, eager_launch_us = 0}}
  check.eq(kv.deploy(q3):perf().attn_tflops, 4500, "fp8 KV under NVFP4 weights: the fp8 peak")
  local fp4 = kv.deploy(q3):time(2048, 64)
  q3.perf.tflops = 9000
  local given9000 = kv.deploy(q3):time(2048, 64)
  local flops = 48 * 2 * 32 * 256 * (2048 * 2049 / 2)
  check.eq(flops, 1650072748032, "attention FLOPs of the prompt")
  assert(math.abs((fp4.ttft_ms - given9000.ttft_ms) - flops * (1 / 4500e12 - 1 / 9000e12) * 1e3)
         < 1e-9, "the prompt's attention at 4500, not 9000 TFLOPS: "
         .. (fp4.ttft_ms - given9000.ttft_ms))
  assert(math.abs(fp4.attention_ms - 64 * 2049 * 48 * 2 * 4 * 128 / 8000e9 * 1e3) < 1e-12,
         "decode: the KV bytes at 8000 GB/s, " .. fp4.attention_ms)
  check.eq(fp4.attention_ms, given9000.attention_ms, "decode is memory-bound either way")
  check.eq(kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", engine = "trtllm", weights = "fp8",
                     kv = "fp8"}:perf().attn_tflops, nil, "fp8 weights: the GEMMs' peak is fp8 already")
  local bf = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", engine = "trtllm", weights = "nvfp4",
                       kv = "bf16"}:perf()
  check.eq(bf.attn_tflops, nil, "a 16-bit KV cache: not this rule ...")
  check.eq(bf.attn16_tflops, 2250, "... but the 16-bit peak")
  check.eq(kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", engine = "trtllm", weights = "nvfp4",
                     kv = "fp8", perf = {tflops = 9000}}:perf().attn_tflops, nil,
           "a given tflops: attention at it as before")
end

-- a decode attention call's own minimum time (sim.attention_floor, issue 18):
-- vllm-project/vllm#43232's q1s1k rows, us a layer, by kernel and KV format
do
  local sim = require "kvplan.sim"
  local function fl(o) return kv.deploy(o):perf().attn_floor_us end
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm"}, 11.0296, "vLLM FA3, bf16 KV")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h200", kv = "fp8"}, 11.1700, "vLLM FA3, fp8 KV")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "sglang"}, 11.0296,
           "SGLang 0.5's fa3 backend: the same kernels")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "trtllm"}, 10.7592,
           "TensorRT-LLM on Hopper: XQA, bf16 KV")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h200", engine = "trtllm", kv = "fp8"}, 7.6160,
           "XQA, fp8 KV")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6"}, nil,
           "vLLM before 0.7 (FA2): not measured, kernel_floor_us")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm", kv = "fp8_e5m2"}, nil, "e5m2 KV: not measured")
  check.eq(fl{model = "llama-3.2-1b", gpu = "h100-sxm"}, nil, "head_dim 64: not measured")
  check.eq(fl{model = "deepseek-v3", gpu = "h100-sxm", tp = 8}, nil, "MLA: not measured")
  check.eq(fl{model = "llama-3.1-8b", gpu = "a100-sxm-80gb"}, nil, "off Hopper: kernel_floor_us")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm", perf = {attn_floor_us = 4}}, 4, "given")
  check.eq(fl{model = "llama-3.1-8b", gpu = "h100-sxm", perf = {kernel_floor_us = 0}}, nil,
           "a given kernel_floor_us applies to attention too (the roofline bound)")
  check.eq(sim.attention_floor_us(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                                            engine = "trtllm"}), 10.7592, "the function")
  -- Llama 3.1 8B on an H100 under TensorRT-LLM, one sequence at 512 tokens:
  -- its 32 attention calls take 32 x 10.7592 us = 0.3443 ms (its KV, 67 MB,
  -- 29 us at 2.31 TB/s), against 32 x 1.1 us = 0.0352 ms before
  local t = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "trtllm"}:time(512, 1)
  assert(math.abs(t.attention_ms - 32 * 10.7592e-3) < 1e-9, "32 calls at the floor")
  local t0 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "trtllm",
                       perf = {attn_floor_us = 1.1}}:time(512, 1)
  assert(math.abs(t0.attention_ms - 32 * 1.1e-3) < 1e-9, "the kernels' floor as before")
  assert(math.abs((t.step_ms - t0.step_ms) - 32 * (10.7592 - 1.1) * 1e-3) < 1e-9,
         "the step grows by the difference alone")
end

-- vLLM V0's activation-quantization kernel before each fp8 W8A8 linear layer
-- (sim.activation_quant, issue 18): 4 a dense layer, 3 bytes an element of
-- the layer's input, 4.10 us a call on Hopper (vllm-project/vllm#49363)
do
  local sim = require "kvplan.sim"
  local base = {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6", weights = "fp8"}
  local function with(o)
    local t = {}
    for k, v in pairs(base) do t[k] = v end
    for k, v in pairs(o) do t[k] = v end
    return kv.deploy(t)
  end
  local p8, p16 = with{}:perf(), with{weights = "bf16"}:perf()
  check.eq(p8.quant_kernels, 128, "32 layers x qkv, o, gate_up, down")
  check.eq(p8.quant_floor_us, 4.10, "H100: the median of pull request 49363's eight rows")
  check.eq(p8.kernels - p16.kernels, 128, "launched as kernels too")
  -- 3 bytes x 32 layers x (2 x 4096 into qkv and gate_up) on every GPU and
  -- 3 x 32 x (32 x 128 into o + 14336 into down) split over tp
  check.eq(p8.act_rep_bytes - p16.act_rep_bytes, 786432, "qkv's and gate_up's inputs")
  check.eq(p8.act_split_bytes - p16.act_split_bytes, 1769472, "o's and down's inputs")
  check.eq(with{gpu = "h200"}:perf().quant_floor_us, 4.10, "H200: the H100's SMs and clocks")
  check.eq(with{gpu = "mi300x"}:perf().quant_kernels, 128, "ROCm quantizes too")
  check.eq(with{gpu = "mi300x"}:perf().quant_floor_us, nil, "no table: the kernels' floor")
  check.eq(with{engine_version = "0.11"}:perf().quant_kernels, 0, "V1: compiled, left as before")
  check.eq(with{gpu = "a100-sxm-80gb"}:perf().quant_kernels, 0,
           "no fp8 tensor cores: weight-only, no activation quantization")
  check.eq(with{engine = "trtllm", engine_version = nil}:perf().quant_kernels, 0, "vLLM only")
  check.eq(with{perf = {kernel_floor_us = 2}}:perf().quant_floor_us, nil,
           "a given kernel_floor_us applies to them too")
  check.eq(sim.activation_quant(with{}), true, "the function")
  -- one sequence: the 295 other kernels' floor, 167 x 1.1 us + 128 x 4.10 us
  -- = 0.7085 ms, above their few MB of bytes (about 4 us)
  local t = with{}:time(512, 1)
  assert(math.abs(t.activation_ms - 0.7085) < 1e-9, "the other kernels at their floors: " .. t.activation_ms)
end

-- the client's time a request outside the engine's steps (sim.request_ms):
-- by engine over HTTP, none offline, given in perf; every TTFT and E2E add
-- it, TPOT and throughput do not move
do
  local function rq(o)
    o.model, o.gpu = o.model or "llama-3.1-8b", o.gpu or "h100-sxm"
    return kv.deploy(o):perf().request_ms
  end
  check.eq(rq{}, 11.0, "vLLM: client TTFT less the server's, median of vllm-project/vllm#54628")
  check.eq(rq{engine = "sglang"}, 6.9, "SGLang: 9.54 ms TTFT less a 2.632 ms mock forward")
  check.eq(rq{engine = "trtllm"}, 0, "TensorRT-LLM: no published figure")
  check.eq(rq{usage = "offline"}, 0, "vLLM's LLM class: no HTTP")
  check.eq(rq{perf = {request_ms = 2.5}}, 2.5, "given")
  local w = {model = "llama-3.1-8b", gpu = "h100-sxm", requests = 8, prompt = 500, output = 20,
             max_concurrency = 2}
  local function run(ms)
    local o = {}
    for k, v in pairs(w) do o[k] = v end
    o.perf = {request_ms = ms}
    return kv.simulate(o)
  end
  local a, b = run(0), run(11)
  for _, k in ipairs{"mean", "p50", "p99", "max"} do
    assert(math.abs(b.ttft_ms[k] - a.ttft_ms[k] - 11) < 1e-9, "ttft " .. k .. " + 11 ms")
    assert(math.abs(b.e2e_ms[k] - a.e2e_ms[k] - 11) < 1e-9, "e2e " .. k .. " + 11 ms")
    assert(math.abs(b.tpot_ms[k] - a.tpot_ms[k]) < 1e-9, "tpot " .. k .. " unmoved")
  end
  check.eq(b.throughput_tokens_s, a.throughput_tokens_s, "throughput unmoved")
  check.eq(b.steps, a.steps, "the same steps")
  -- a disaggregated pool's latencies are its own
  local pf = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 2, prompt = 100,
                         output = 1, phase = "prefill", kv_transfer_ms = 1}
  local pz = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 2, prompt = 100,
                         output = 1, phase = "prefill", kv_transfer_ms = 1, perf = {request_ms = 0}}
  check.eq(pf.ttft_ms.mean, pz.ttft_ms.mean, "no client time in a prefill pool")
  local ok, err = pcall(kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", perf = {request_ms = -1}})
  assert(not ok and err:find("perf 'request_ms' must be a number >= 0", 1, true), tostring(err))
  ok, err = pcall(kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", perf = {request_ms = "x"}})
  assert(not ok and err:find("request_ms", 1, true), tostring(err))
end

-- the API server's serial work a request (sim.api_ms): 0 by default (the
-- very run), given in perf; a FIFO queue in front of the engine: a burst's
-- later requests wait, so the mean TTFT grows by more than api_ms, while
-- the default leaves every figure as it was
do
  local w = {model = "llama-3.1-8b", gpu = "h100-sxm", requests = 8, prompt = 100, output = 4}
  local function run(perf)
    local o = {}
    for k, v in pairs(w) do o[k] = v end
    o.perf = perf
    return kv.simulate(o)
  end
  check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:perf().api_ms, 0, "default: none")
  local a, z, q = run({request_ms = 0}), run({request_ms = 0, api_ms = 0}),
                  run({request_ms = 0, api_ms = 10})
  for _, k in ipairs{"mean", "p50", "p99", "max"} do
    check.eq(z.ttft_ms[k], a.ttft_ms[k], "api_ms 0: ttft " .. k .. " the same")
    check.eq(z.tpot_ms[k], a.tpot_ms[k], "api_ms 0: tpot " .. k .. " the same")
  end
  check.eq(z.steps, a.steps, "api_ms 0: the same steps")
  -- 8 requests at once: the i-th reaches the engine at 10 i ms, then waits
  -- for the step under way (a decode) and its prefill: 10 i ms and at most
  -- two steps of the 8 at once (which prefills all of them in one)
  local bound = 2 * a.ttft_ms.max
  assert(q.ttft_ms.max >= 80 and q.ttft_ms.max <= 80 + bound, "the last waits 8 x 10 ms: " .. q.ttft_ms.max)
  assert(q.ttft_ms.p50 >= 40, "the median waits 4 x 10 ms or more: " .. q.ttft_ms.p50)
  assert(q.ttft_ms.mean >= 45 and q.ttft_ms.mean <= 45 + bound, "mean of 10 .. 80 ms: " .. q.ttft_ms.mean)
  assert(q.ttft_ms.mean - a.ttft_ms.mean > 10, "queued: more than one api_ms on the mean")
  -- not in a disaggregated pool (its requests come from the other pool)
  local pf = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 2, prompt = 100,
                         output = 1, phase = "prefill", kv_transfer_ms = 1, perf = {api_ms = 5}}
  local p0 = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 2, prompt = 100,
                         output = 1, phase = "prefill", kv_transfer_ms = 1}
  check.eq(pf.ttft_ms.mean, p0.ttft_ms.mean, "no API server in a prefill pool")
  for _, bad in ipairs{-1, "x", math.huge, 0 / 0} do
    local ok, err = pcall(kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", perf = {api_ms = bad}})
    assert(not ok and err:find("perf 'api_ms' must be a number >= 0", 1, true), tostring(err))
  end
  -- a calibrate factor, in the profile like the others; offline: none
  local f = require("kvplan.factors").by_name.api_ms
  assert(f and f.lo == 0 and f.hi == 50, "factor api_ms in 0 .. 50 ms")
  assert(f.applies(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}), "served: applies")
  assert(not f.applies(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", usage = "offline"}),
         "offline: no API server")
end

-- the engine loop's own host work a step (sim.loop_host_us): SGLang's 308 us,
-- none read for vLLM and TensorRT-LLM; under an engine that waits for the
-- host (vLLM 0.10) it adds 0.308 ms to every step's host time
do
  local function lh(o)
    o.model, o.gpu = o.model or "llama-3.1-8b", o.gpu or "h100-sxm"
    return kv.deploy(o):perf().loop_host_us
  end
  check.eq(lh{engine = "sglang"}, 308, "SGLang: 2.94 ms TPOT less a 2.632 ms mock forward")
  check.eq(lh{}, 0, "vLLM: no figure")
  check.eq(lh{engine = "trtllm"}, 0, "TensorRT-LLM: no figure")
  check.eq(lh{perf = {loop_host_us = 50}}, 50, "given")
  local base = {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.10"}
  local a = kv.deploy(base):time(1024, 8)
  base.perf = {loop_host_us = 308}
  local b = kv.deploy(base):time(1024, 8)
  assert(math.abs(b.host_ms - a.host_ms - 0.308) < 1e-9, "host + 0.308 ms: " .. b.host_ms - a.host_ms)
  assert(math.abs(b.tpot_ms - a.tpot_ms - 0.308) < 1e-9, "tpot + 0.308 ms")
  local ok, err = pcall(function()
    return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", perf = {loop_host_us = -1}}:time(1, 1)
  end)
  assert(not ok and err:find("loop_host_us", 1, true), tostring(err))
end

-- SGLang's overlap scheduler off (sim.sglang_overlap, issue 18): the host's
-- time a step is waited for. Llama 3.1 8B at one sequence replays its graph
-- (1 <= cuda_graph_max_bs): 325 kernels (SGLang's greedy sampler runs two
-- of vLLM's five) x 0.91 us of launch, SGLang's loop 308 us and one
-- sequence's 1.1 us, 604.85 us; hidden under the overlap scheduler (the ~5 ms
-- GPU step outlasts it)
do
  local function st(o)
    o.model, o.gpu, o.engine = o.model or "llama-3.1-8b", "h100-sxm", "sglang"
    local d = kv.deploy(o)
    return d:time(1, 1), d
  end
  local on, don = st{}
  check.eq(on.host_ms, 0, "overlap on: the host hidden")
  check.eq(sim.host_waits(don), false, "SGLang's overlap scheduler by default")
  local host = (325 * 0.91 + 308 + 1.1) * 1e-3
  local off, doff = st{disable_overlap_schedule = true}
  check.eq(sim.host_waits(doff), true, "--disable-overlap-schedule: waits")
  assert(math.abs(off.host_ms - host) < 1e-12, "host 604.85 us: " .. off.host_ms)
  assert(math.abs(off.step_ms - on.step_ms - host) < 1e-12, "the step plus 604.85 us")
  check.eq(st{disable_overlap_schedule = false}.host_ms, 0, "false: the default")
  -- EAGLE heads: ServerArgs turns the overlap scheduler off
  local _, dsp = st{speculative = {heads = "eagle", tokens = 3}}
  check.eq(select(2, sim.sglang_overlap(dsp)), "speculative decoding", "speculative: off")
  -- pp 2: SGLang's pipeline loop has no overlap; the two stages' hand-off is
  -- one more kernel a step (roofline.c: collectives + pp - 1)
  local pp = st{pp = 2}
  assert(math.abs(pp.host_ms - host - 0.91e-3) < 1e-12, "pp 2: 326 launches: " .. pp.host_ms)
  -- a multimodal model (a vision tower) before 0.4.6: Qwen2.5-VL-7B's 28
  -- layers x 10 + 5 = 285 kernels, 285 x 0.91 + 308 + 1.1 = 568.45 us
  local function vl(v) return st{model = "qwen2.5-vl-7b", engine_version = v} end
  assert(math.abs(vl("0.4.5").host_ms - (285 * 0.91 + 308 + 1.1) * 1e-3) < 1e-12,
         "0.4.5, multimodal: waits " .. vl("0.4.5").host_ms)
  check.eq(vl("0.4.6").host_ms, 0, "0.4.6 on (PR #5771): overlapped")
  check.eq(vl("0.5").host_ms, 0, "0.5: overlapped")
  check.eq(st{engine_version = "0.4.5"}.host_ms, 0, "0.4.5, a text model: overlapped")
  -- SGLang's greedy sampler: 10 bytes a vocabulary entry (to fp32, argmax)
  -- in two kernels; vLLM's 26 in five (Llama 3.1 8B: vocabulary 128256)
  local pv = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:perf()
  local ps = don:perf()
  check.eq(pv.sampler_bytes, 26 * 128256, "vLLM's sampler: 26 V")
  check.eq(ps.sampler_bytes, 10 * 128256, "SGLang's greedy sampler: 10 V")
  check.eq(pv.kernels - ps.kernels, 3, "SGLang: 325 kernels, vLLM 328")
  check.error("field 'disable_overlap_schedule' = true is SGLang's --disable-overlap-schedule; budget "
              .. "'vllm' has none (expected budget 'sglang')", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", disable_overlap_schedule = true})
  check.error("field 'disable_overlap_schedule' must be true or false, got yes", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", engine = "sglang", disable_overlap_schedule = "yes"})
end

-- SGLang's block-FP8 GEMM kernel by release (sim.block_fp8_kernel, issue
-- 18): its Triton w8a8_block_fp8_matmul up to 0.4.3, DeepGEMM from 0.4.4;
-- the Triton class's compute curve is vllm-project/vllm#23280's H100
-- w8a8-block-fp8-triton column (DeepSeek-V3 N=2112 K=7168) over the fp8 peak
do
  local sim = require "kvplan.sim"
  local function dsv3(o)
    o.model, o.tp = "deepseek-v3", 8
    return kv.deploy(o)
  end
  local old = dsv3{gpu = "h200", engine = "sglang", engine_version = "0.4.1"}
  check.eq(sim.block_fp8_kernel(old), "triton", "SGLang 0.4.1 on Hopper: Triton")
  check.eq(sim.block_fp8_kernel(dsv3{gpu = "h100-sxm", engine = "sglang", engine_version = "0.4.3.post2"}),
           "triton", "0.4.3.post2: Triton")
  check.eq(sim.block_fp8_kernel(dsv3{gpu = "h200", engine = "sglang", engine_version = "0.4.4"}),
           "deepgemm", "0.4.4: DeepGEMM")
  local new = dsv3{gpu = "h200", engine = "sglang", engine_version = "0.5.6.post2"}
  check.eq(sim.block_fp8_kernel(new), "deepgemm", "0.5: DeepGEMM")
  check.eq(sim.block_fp8_kernel(dsv3{gpu = "h200", engine = "sglang"}), "deepgemm",
           "no release: the latest row")
  check.eq(sim.block_fp8_kernel(dsv3{gpu = "h200"}), nil, "vLLM: not SGLang's switch")
  check.eq(sim.block_fp8_kernel(dsv3{gpu = "b200", engine = "sglang", engine_version = "0.4.1"}), nil,
           "off Hopper: none")
  -- hand-checked: H200 fp8 peak 1979 TFLOPS; 305.159322 TFLOP/s at M = 512,
  -- 402.982983 at M = 4096 (the rows are above the H200's ridge, 1979 / (2 x
  -- 4.8) = 206 tokens at 1 byte a weight, so compute rows)
  local op, np = old:perf(), new:perf()
  check.eq(op.tflops, 1979, "the fp8 peak")
  check.eq(#op.gemm_compute, 5, "M = 512 to 8192")
  assert(math.abs(op.gemm_compute[1][2] - 305.159322 / 1979) <= 1e-12, "Triton at M = 512")
  check.eq(op.gemm_compute[4][1], 4096, "fourth point at M = 4096")
  assert(math.abs(op.gemm_compute[4][2] - 402.982983 / 1979) <= 1e-12, "Triton at M = 4096")
  assert(math.abs(np.gemm_compute[1][2] - 1041.5 / 1979) <= 1e-12 and #np.gemm_compute == 1,
         "0.5: DeepGEMM's one point")
  check.eq(op.gemm_memory, np.gemm_memory, "H200: no memory rows either way (the flat factor)")
  -- a prefill step of 4096 tokens: its GEMMs slower under Triton
  assert(old:time(1024, 4096).gemm_ms > new:time(1024, 4096).gemm_ms, "Triton's GEMMs take longer")
end

-- SGLang's block-FP8 GEMMs on SM90 compute 64-row tiles (sim.gemm_tile_m,
-- issue 18: Triton w8a8_block_fp8_matmul's BLOCK_SIZE_M 64, DeepGEMM's
-- smallest block_m 64); other engines, formats and GPUs: 0
do
  local sim = require "kvplan.sim"
  local function q8(o)
    o.model = "qwen3-8b"
    return kv.deploy(o)
  end
  local blk = q8{gpu = "h20", engine = "sglang", engine_version = "0.4.6.post1", weights = "fp8-b128x128"}
  check.eq(sim.gemm_tile_m(blk), 64, "SGLang, H20, block FP8: 64 rows")
  check.eq(blk:perf().gemm_tile_m, 64, "the core's perf carries it")
  check.eq(sim.gemm_tile_m(q8{gpu = "h100-sxm", engine = "sglang", weights = "fp8-b128x128"}), 64,
           "H100 too")
  check.eq(sim.gemm_tile_m(q8{gpu = "h20", engine = "sglang", weights = "fp8"}), 0,
           "per-tensor fp8: another kernel")
  check.eq(sim.gemm_tile_m(q8{gpu = "h20", engine = "sglang"}), 0, "bf16 (cuBLAS): not sourced")
  check.eq(sim.gemm_tile_m(q8{gpu = "h20", weights = "fp8-b128x128"}), 0, "vLLM: not sourced")
  check.eq(sim.gemm_tile_m(q8{gpu = "b200", engine = "sglang", weights = "fp8-b128x128"}), 0,
           "off SM90: none")
  -- by hand, one token at context 1024 on the H20: the layers' FLOPs of 64
  -- rows plus one row of logits at 296 TFLOPS x 0.7 (the flat compute
  -- factor, no H20 rows) outlast the weights' read at 4000 GB/s x 0.8
  local p, t = blk:perf(), blk:time(1024, 1)
  local comp = (64 * p.body_flops + p.head_flops) / (296e12 * 0.7) * 1e3
  check.eq(p.tflops, 296, "the fp8 peak")
  assert(math.abs(t.gemm_ms - comp) <= 1e-9 * comp, string.format("gemm_ms %.6f, by hand %.6f", t.gemm_ms, comp))
  local per = q8{gpu = "h20", engine = "sglang", engine_version = "0.4.6.post1", weights = "fp8"}
  assert(per:time(1024, 1).gemm_ms < t.gemm_ms / 1.5, "per-tensor fp8 reads its weights, no tile")
end

-- vLLM's --long-prefill-token-threshold (engine/core/sim.c wanted): a prompt
-- of 3000 tokens under a threshold of 512 takes ceil(3000 / 512) = 6 steps to
-- its first token where the 8192-token budget alone takes 1; 0 is none
do
  local base = {model = "llama-3.1-8b", gpu = "h100-sxm", requests = 1, prompt = 3000, output = 2}
  local function steps(t)
    local o2 = {}
    for k, v in pairs(base) do o2[k] = v end
    o2.long_prefill_token_threshold = t
    return kv.simulate(o2).steps
  end
  check.eq(steps(nil), 2, "no threshold: the prompt in one step, then one decode")
  check.eq(steps(0), 2, "0 is no threshold (vLLM's default)")
  check.eq(steps(512), 7, "512 a step: 6 prefill steps, then one decode")
  check.error("long_prefill_token_threshold", function() steps(-1) end)
  check.error("long_prefill_token_threshold", function()
    kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 1, prompt = 30, output = 2,
                scheduler = "no_evict", long_prefill_token_threshold = 8}
  end)
end

-- DeepSeek Sparse Attention (roofline.c): deepseek-v3.2 attends to its top
-- 2048 keys where deepseek-v3 attends to all, and scores every key with its
-- indexer at the fp8 peak; at 32K its decode and prefill are faster, at 1K
-- (below the top-k) slower, its indexer's keys and FLOPs on top of the same MLA
do
  local function dep(id) return kv.deploy{model = id, gpu = "h200", tp = 8} end
  local v3, v32 = dep("deepseek-v3"), dep("deepseek-v3.2")
  check.eq(v32:perf().index_tflops, 1979, "the indexer at the H200's fp8 peak")
  check.eq(v3:perf().index_tflops, nil, "no indexer")
  local a, b = v3:time(32768, 32), v32:time(32768, 32)
  assert(b.tpot_ms < 0.8 * a.tpot_ms, "32K decode: v3.2 " .. b.tpot_ms .. " vs v3 " .. a.tpot_ms)
  assert(b.ttft_ms < 0.8 * a.ttft_ms, "32K prefill: v3.2 " .. b.ttft_ms .. " vs v3 " .. a.ttft_ms)
  a, b = v3:time(1024, 32), v32:time(1024, 32)
  assert(b.tpot_ms > a.tpot_ms, "1K decode: v3.2 " .. b.tpot_ms .. " vs v3 " .. a.tpot_ms)
  assert(b.ttft_ms > a.ttft_ms, "1K prefill: v3.2 " .. b.ttft_ms .. " vs v3 " .. a.ttft_ms)
  -- the simulator's steps price it the same way (sim.c run_step)
  local function sim(id)
    return kv.simulate{model = id, gpu = "h200", tp = 8, requests = 4, prompt = 32000, output = 16}
  end
  local s3, s32 = sim("deepseek-v3"), sim("deepseek-v3.2")
  assert(s32.ttft_ms.mean < s3.ttft_ms.mean, "simulated 32K TTFT: " .. s32.ttft_ms.mean .. " vs " ..
         s3.ttft_ms.mean)
  assert(s32.tpot_ms.mean < s3.tpot_ms.mean, "simulated 32K TPOT: " .. s32.tpot_ms.mean .. " vs " ..
         s3.tpot_ms.mean)
end
