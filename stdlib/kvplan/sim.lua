-- stdlib/kvplan/sim.lua: time, not only memory: step times of a deployment
-- (d:time) and a serving simulator of continuous batching (kv.simulate).
-- Stdlib layer: the GPU's rates, the efficiency factors and the engine
-- defaults are chosen here; the arithmetic is the core's
-- (engine/core/roofline.c, engine/core/sim.c).
--
--   local r = kv.simulate{model = "llama-3.1-8b", gpu = "l4", requests = 1000,
--                         prompt = kv.workload.lognormal{median = 1000, sigma = 0.5},
--                         output = kv.workload.lognormal{median = 250, sigma = 0.5},
--                         rate = 2, seed = 1}
--   print(r.throughput_tokens_s, r.ttft_ms.p99, r.num_preemptions)
--   r:timeline "steps.csv"

local core = require "kvplan.sim_core"
local util = require "kvplan.util"
local csv = require "kvplan.csv"
local formats = require "kvplan.formats"
local engines = require "kvplan.engines"
local models = require "kvplan.models"

local M = {}

-- Achievable fractions of the datasheet rates. Change them
-- (kv.deploy{efficiency = {...}}) or set all three to 1 for the pure
-- roofline, a lower bound on step time. The defaults, for a GPU without an
-- entry in M.efficiency_by_gpu:
--   memory  0.8: a documented rule of thumb, not a measurement: the middle
--           of the 70-85 % "model bandwidth utilization" that optimized CUDA
--           serving stacks reach in decode
--           (https://www.open-source-ai.tech/glossary/model-bandwidth-utilization;
--           MBU as Databricks defines it, "LLM Inference Performance
--           Engineering: Best Practices", 2023)
--   compute 0.7: an assumption, no published measurement behind it
--   link    0.8: an assumption, the memory derating applied to the link
--   experts no single factor: M.expert_gemm below, by tokens per expert
M.efficiency = {memory = 0.8, compute = 0.7, link = 0.8}

-- Per GPU kind, from published microbenchmarks; compute may be a number or
-- a table by the rate the deployment computes at (M.compute_tflops: fp8,
-- int8, bf16, fp16); what an entry lacks falls back to M.efficiency.
--   h100-sxm  DeepGEMM's published FP8 GEMM table (deepseek-ai/DeepGEMM
--             README.md, "Performance", first release, February 2025: the
--             shapes of DeepSeek-V3 inference on an H800 SXM, the H100 SXM's
--             export variant with the same SMs, clocks, FP8 peak and 3.35 TB/s
--             HBM3). memory 0.69: the median of its 12 decode-sized dense
--             rows (M = 64 and 128 tokens, 1509-2668 GB/s, median 2298.5
--             GB/s) over 3350 GB/s. compute fp8 0.53: the median of its 6
--             prefill-sized dense rows (M = 4096, 590-1358 TFLOPS, median
--             1041.5) over 1979 TFLOPS. DeepGEMM scales FP8 per 128-element
--             block, whose promotion costs cycles; per-tensor-scaled FP8 GEMMs
--             may run faster.
--   h200      compute fp8 0.53, the same GH100 SMs and FP8 peak as above; no
--             published measurement of its HBM3e found: memory the default.
--   mi300x    memory 4110 / 5300 (0.775): BabelStream (hip-stream) on one GPU
--             of an Azure ND MI300X v5 VM, ROCm 6.2 (HIP 6.2.41133): Copy 4.11,
--             Mul 4.26, Add 4.14, Triad 4.09, Dot 3.87 TB/s, their median 4.11
--             over the datasheet's 5.3 TB/s (Azure's AI-benchmarking-guide,
--             "ND MI300X v5 Benchmark Results", "HBM Bandwidth": the file
--             Azure_Results/ND_MI300X_v5_results.md in its fork
--             samuel-bohman/AI-benchmarking-guide at 3de0c294; the benchmark is
--             Azure/AI-benchmarking-guide Benchmarks/AMD/HBMBandwidth.py at
--             aa00461f, BabelStream's default arrays of 2^25 doubles, 268 MB
--             each, beyond the 256 MB Infinity Cache). A streaming kernel's
--             bandwidth, not a GEMM's: it stands for KV, attention,
--             activations and the GEMMs without memory rows (fp8 ones on
--             MI300X). Compute: the default for attention (no forward or
--             paged-decode table of ROCm's kernels found); its bf16 and fp8
--             GEMMs have rows below (M.gemm_benchmarks).
--   a100-sxm-80gb memory 1700 / 2039 (0.834): BabelStream (cuda-stream, built
--             for sm_80; its default arrays of 2^25 doubles, 268 MB each, beyond
--             the 40 MB L2) on the NVIDIA A100-SXM4-80GB of an Azure ND A100
--             v4 VM (CUDA 12.5, driver 550.90.07): Copy 1.61, Mul 1.61, Add
--             1.70, Triad 1.70, Dot 1.75 TB/s, their median 1.70 over the
--             datasheet's 2039 GB/s (Azure/AI-benchmarking-guide,
--             Azure_Results/ND_A100_v4_results.md at 3bb66cac, "HBM
--             Bandwidth"; the benchmark Benchmarks/NVIDIA/HBMBandwidth.py at
--             7a4e2c83). The MI300X's rule: a streaming kernel's rate, for
--             KV, attention, activations and the GEMMs, which have no memory
--             rows on the A100 (none by M found, docs/time.md, issue 18).
M.efficiency_by_gpu = {
  ["h100-sxm"] = {memory = 0.69, compute = {fp8 = 0.53}},
  ["h200"] = {compute = {fp8 = 0.53}},
  ["mi300x"] = {memory = 4110 / 5300},
  ["a100-sxm-80gb"] = {memory = 1700 / 2039},
}

-- The dense GEMMs' efficiency by M (the GEMM's tokens), from published
-- kernel benchmarks: M.gemm_benchmarks[gpu][class] lists each source's rows
-- {M, TFLOP/s} as published (one GEMM shape N x K, or a table's median),
-- with the bytes of a weight element of the kernel's format. A row's GEMM is
-- memory-bound when its weight bytes take longer at the datasheet's HBM rate
-- than its FLOPs at the datasheet's peak, i.e. M <= bytes x peak / (2 x hbm)
-- whatever N and K; such a row gives the fraction of HBM bandwidth the
-- weights were read at, TFLOP/s x bytes / (2 M) / hbm; any other row the
-- fraction of the peak, TFLOP/s / peak (M.gemm_curves). The two curves go to
-- the core (perf.gemm_memory, perf.gemm_compute), which interpolates each in
-- log M and clamps it outside its points (engine/core/roofline.c
-- kvp_curve_at); the weights' read and the GEMMs' FLOPs of a step of T
-- tokens take max(bytes / (hbm x memory(T)), FLOPs / (peak x compute(T))).
-- A class or side without rows keeps the flat factor (M.efficiency_by_gpu,
-- M.efficiency). Formats (M.gemm_class): bf16 (16-bit weights and
-- activations), fp8 (per-tensor or per-channel scales), fp8_block (128 x 128
-- block scales), int4 (weight-only 4-bit, Marlin kernels, computing in 16
-- bits). vLLM's benchmarks/kernels/bench_fp8_gemm.py reports TFLOP/s by
-- batch size (M); "noquant" columns time the GEMM alone, without the
-- activation's quantization kernel.
--   h100-sxm
--     bf16      memory: vllm-project/vllm pull request 49363 (H100, google/
--               gemma-4-31B-it N=12288 K=5376 and N=43008 K=5376, column
--               torch-bf16, rows M = 1 to 256); compute: pull request 23280 (H100, DeepSeek-V3
--               N=2112 K=7168, column torch-bf16, rows M = 512 to 8192; its
--               memory-bound rows are left out: 30 MB of bf16 weights fit the
--               H100's 50 MB L2, so a repeated GEMM need not read HBM)
--     fp8       memory: pull request 49363, both shapes, column
--               fp8-tensor-w-tensor-a-noquant, rows M = 1 to 128; compute: none
--               (the flat fp8 factor)
--     fp8_block memory: pull request 49363, both shapes, column
--               fp8-block-w-block-a-noquant, rows M = 1 to 128 (the first
--               shape's row at 128 is cut off in the thread);
--               compute: DeepGEMM's first table (deepseek-ai/DeepGEMM README.md,
--               "Performance", February 2025, H800 SXM): the median of its 6
--               dense rows at M = 4096, 1041.5 TFLOPS
--     int4      memory: inclusionAI/humming pull request 2 (H100, dense N=8192
--               K=8192 channelwise, fp16 activations, column marlin-w4a16, rows
--               M = 1, 2, 4, 0.5 bytes a weight); compute: none
--   h200        compute only, the H100's rows (the same GH100 SMs, clocks and
--               peaks; its HBM3e differs): bf16 from pull request 23280,
--               fp8_block from DeepGEMM
--   b200        (vLLM's SM100 CUTLASS tuning threads, measured on B200)
--     bf16      memory: pull request 20071 (Llama-3.1-8B N=28672 K=4096, column
--               torch-bf16, rows M = 1 to 256); compute: pull request 18778
--               (N=6144 K=4096, rows M = 512, 1024) and pull request 19566 (the
--               same shape, row M = 16384)
--     fp8       the same threads and rows, column fp8-tensor-w-tensor-a-noquant
--     nvfp4     pull request 20578 (bench_nvfp4_gemm.py's own output, N=6144
--               K=4096, column nvfp4-noquant, rows M = 1 to 16384, 4.5 bits a
--               weight with its fp8 scale per 16): measured before vLLM's tuned
--               NVFP4 configs (pull request 20646, whose "Before" it is), so a
--               floor on today's kernel; flashinfer-ai/flashinfer issue 1732 (B200,
--               CUTLASS FP4, M = 1, N = K = 8192: 1.78 of 8 TB/s) agrees in size
--   a100-sxm-80gb
--     bf16      compute only: cuBLASLt FP16 GEMMs on the NVIDIA A100-SXM4-80GB
--               of an Azure ND A100 v4 VM (Azure/AI-benchmarking-guide,
--               Azure_Results/ND_A100_v4_results.md at 3bb66cac, "GEMM
--               CuBLASLt": superbench's cublaslt_gemm, random initialization,
--               10,000 warmup iterations, Benchmarks/NVIDIA/GEMMCublasLt.py at
--               cd84f36a), its rows of M >= 4096 as for the MI300X: 4096^3
--               228.0, 6144 x 12288 x 12288 250.8, 8192^3 253.7, 16384^3 256.5
--               of 312 TFLOPS (the A100's FP16 and BF16 peaks are one);
--               left out the squares of 1024 and 2048 (119.4, 221.8) and the
--               shapes of K 1024 and 768 (1024 x 2145 x 1024, 802816 x 192 x
--               768). cuBLASLt is what TensorRT-LLM's GEMM plugin calls, and
--               cuBLAS(Lt) is behind vLLM's F.linear. It replaces zzc0721/torch-performance-test-data's
--               row (database.md at bbb8e247, torch.mm bf16 264.53 TFLOPS),
--               the best of square sizes 1024 to 10240, a maximum over sizes
--               at no stated M. memory: none by M (the flat factor above)
--   h20
--     bf16      compute only: torch.mm BF16 squares on an "NVIDIA H20" (torch
--               2.7.0+cu128; zzc0721/torch-performance-test-data issue 77,
--               2025-10-17, its detailed BF16 block; the repository's test.py
--               times torch.mm(a, b) of two n x n random BF16 tensors, warm-up
--               then timed iterations, 2 n^3 FLOPs over the wall time), its rows
--               of M >= 4096 as for the A100 and MI300X: 4096^3 133.41, 8192^3
--               138.60, 10240^3 142.25 TFLOPS of 148 (every row above the
--               ridge, 37 tokens at 2 bytes a weight); left out the squares of
--               1024 and 2048 (95.12, 120.27), whose N and K are a fifth to a
--               tenth of a large model's. torch.mm is cuBLAS, what SGLang's and
--               vLLM's 16-bit linear layers (F.linear) run. memory: none by M
--               (the flat factor); no published H20 GEMM row at M < 37 was
--               found (docs/time.md, issue 18, H20 findings)
--   mi300x
--     fp8       compute only: hipBLASLt FP8 GEMMs on one GPU of an Azure ND
--               MI300X v5 VM (Azure's AI-benchmarking-guide, "ND MI300X v5
--               Benchmark Results", "GEMM HipBLASLt": random initialization,
--               FP8, 10,000 warmup iterations; Azure_Results/ND_MI300X_v5_results.md
--               in the fork samuel-bohman/AI-benchmarking-guide at 3de0c294),
--               the rows of M >= 4096 tokens: 4096^3 955.17, 6144 x 12288 x
--               12288 1159.54, 8192^3 1159.23, 16384^3 1015.1, 32768^3 1029.14
--               TFLOPS of 2614.9 (every row above the ridge, 247 tokens at 1
--               byte a weight). Left out: the squares of 1024 and 2048, whose N
--               and K are a fifth to a tenth of a large model's (53.13 and
--               427.74 TFLOPS: the launch, not the M), 1024 x 2145 x 1024 and
--               802816 x 192 x 768 (K 768). hipBLASLt is what vLLM's ROCm
--               build runs for per-tensor FP8 linear layers (vLLM 0.6,
--               vllm/model_executor/layers/quantization/utils/w8a8_utils.py
--               apply_fp8_linear: per-tensor weights and activations go to
--               torch._scaled_mm where CUTLASS is not supported, as on ROCm);
--               memory: none (the flat factor above)
--     bf16      memory: vllm-project/vllm pull request 29937 ("Improve
--               wvsplitK tile and balance heristics", merged), its kernel table
--               on MI300 (column Base_300, ms, the kernel before the pull
--               request's heuristics), the rows of N = 1 token (the table's M is
--               the output features, N the tokens): M=13312 K=16384 0.110287193
--               ms, M=16384 K=6656 0.055465103, M=8192 K=28672 0.116746185 (the
--               Llama-3.1-405B TP 8 gate_up and down shapes and a 70B-sized
--               one; 3.96, 3.93, 4.02 TB/s of weights, 0.746, 0.742, 0.759 of
--               5.3 TB/s). wvSplitK is what vLLM's ROCm build runs for bf16/fp16
--               linear layers of 1 to 4 tokens on gfx9 (vllm/model_executor/
--               layers/utils.py rocm_unquantized_gemm_impl at 9c9de631: "if m >
--               8 and 0 < n <= 4: ops.wvSplitK", else torch's F.linear, i.e.
--               hipBLASLt); the one point stands for every M below the ridge
--               (247 tokens at 2 bytes a weight), hipBLASLt's included: no
--               published MI300X hipBLASLt row at a stated M between 2 and 246
--               was found. Left out: the rows of 2 to 4 tokens, which the pull
--               request's new tile choices move by 2-25 % (up to 4.5x at 4
--               tokens), and whose merged column the stored thread does not
--               name. compute: stas00/ml-engineering compute/accelerator/README.md
--               at b9e29720, "Maximum Achievable Matmul FLOPS comparison
--               table", BF16, row "AMD MI300X": 668.4 TFLOPS of 1300 (its
--               Theory column; kvplan's datasheet peak is 1307.4), the best
--               shape of its mamf-finder.py search, 10240x15360x8192 (M x N x
--               K), torch 2.5.1+rocm6.3, PYTORCH_TUNABLEOP_ENABLED=1, a mean of
--               100 iterations after 50 warmup, the benchmark's version 2 (the
--               cache reset between iterations). One point: the compute curve
--               is flat over M at 668.4 / 1307.4 = 0.511. A maximum over
--               shapes with TunableOp on (vLLM does not turn it on): the
--               model's own shapes run no faster.
-- Nothing published was found for the other GPUs (their rule of thumb
-- stays): AMD's MI300X small-M GEMM rows of ROCm/aiter pull request 1092 are one
-- 10 MB shape of Llama-70B at TP 8 that reads HBM at 0.19 of its rate at M =
-- 1, a latency-bound kernel rather than the model's GEMMs; the L40S rows of
-- vllm-project/vllm pull request 6677 read more bytes a second than the L40S's
-- HBM moves (its L2 held the weights); A100 Marlin rows (pull request 2497)
-- name no GPU.
-- By the weight matrix's size (issue 18): the curves are one per GPU and
-- format, by M alone. Published rows of several shapes at the same small M
-- do not show the efficiency following the weight's bytes, so none is
-- modelled (efficiency = TFLOP/s x bytes a weight / (2 M) / hbm as above;
-- GB/s as DeepGEMM prints it, weights, activations and output):
--   H100 bf16 (pull request 49363, torch-bf16), the only H100 shapes found:
--     N=12288 K=5376 (132 MB) 0.857 at M = 1, 0.868 at 16; N=43008 K=5376
--     (462 MB) 0.917, 0.902. Nothing below 132 MB: a curve in log bytes,
--     clamped, would read a small model's matrices (an 8B's layers 34-235 MB) at
--     the 132 MB row, 0.857 against the median 0.887 now (the lm_head above
--     462 MB at 0.917): a few per cent, in both directions.
--   B200 bf16 at M = 1 (torch-bf16): N=4096 K=4096 (34 MB) 0.315 (pull
--     request 20071) and 0.342 (19566); N=6144 K=4096 (50 MB) 0.739 (18778),
--     0.740 (19566); N=28672 K=4096 (235 MB) 0.726 (20071). At M = 16: 0.569,
--     0.741 (18778), 0.655. Not monotone in bytes: the 50 MB shape reads as
--     fast as the 235 MB one; the 34 MB one is slow for its shape.
--   B200 fp8 at M = 1 (fp8-tensor-w-tensor-a-noquant): 17 MB 0.366 (20071),
--     25 MB 0.528 (18778), 117 MB 0.664 (20071): increasing in bytes here.
--   H800 fp8 block at M = 64 (DeepGEMM README.md, "Performance", February
--     2025, its "Normal GEMMs for dense models" table): N=7168 K=2048
--     (14.7 MB) 2470 GB/s, N=2112 K=7168 (15.1 MB) 1688, N=32768 K=512
--     (16.8 MB) 2143, N=4096 K=7168 (29.4 MB) 2320, N=24576 K=1536 (37.7 MB)
--     2455, N=7168 K=16384 (117 MB) 2668: two shapes of the same bytes 1.46x
--     apart (the shape, not its bytes, sets the rate).
--   vLLM's benchmarks/kernels/bench_fp8_gemm.py (at 1a254d8e) replays one
--   GEMM on the same tensors (triton.testing.do_bench_cudagraph), no cache
--   flush in the script: a shape small against the L2 may read part of it
--   from there.
-- TFLOP/s of a GEMM of m tokens by n output features by k inputs timed at
-- ms milliseconds (for the sources that publish kernel times)
local function gemm_tflops(m, n, k, ms) return 2 * m * n * k / (ms * 1e-3) / 1e12 end
local H100_BF16_COMPUTE = {source = "vllm-project/vllm#23280 H100 DeepSeek-V3 N=2112 K=7168 torch-bf16",
                           bytes = 2, rows = {{512, 566.262626}, {1024, 619.771938},
                                              {2048, 648.192575}, {4096, 715.781529},
                                              {8192, 666.385367}}}
local DEEPGEMM_COMPUTE = {source = "deepseek-ai/DeepGEMM README.md Performance (Feb 2025), H800 "
                            .. "SXM, median of the 6 dense rows at M = 4096",
                          bytes = 1, rows = {{4096, 1041.5}}}
-- SGLang's Triton block-FP8 GEMM (M.block_fp8_kernel "triton"): compute
-- from vllm-project/vllm pull request 23280's H100 table (DeepSeek-V3
-- N=2112 K=7168, column w8a8-block-fp8-triton, rows M = 512 to 8192; the
-- torch-bf16 column of the same table is H100_BF16_COMPUTE). The kernel is
-- the Triton w8a8_block_fp8_matmul vLLM and SGLang both carry: SGLang's
-- own H200 benchmark of DeepSeek-V3's shapes (sgl-project/sglang pull
-- request 3893, 2025-02-26) times its "SGLang" and "vLLM" columns within
-- 1 % of each other (M = 4096, N = 24576, K = 7168, TP 1: 4067.3 and
-- 4033.6 us, 355 and 358 TFLOPS, against DeepGEMM's 1354.0 us). Memory:
-- the fp8_block rows (no Triton table of a matrix larger than the L2).
local TRITON_BLOCK_FP8_COMPUTE = {source = "vllm-project/vllm#23280 H100 DeepSeek-V3 N=2112 K=7168 "
                                    .. "w8a8-block-fp8-triton",
                                  bytes = 1, rows = {{512, 305.159322}, {1024, 366.839772},
                                                     {2048, 396.032348}, {4096, 402.982983},
                                                     {8192, 406.511360}}}
local FP8_BLOCK_MEMORY = {
  {source = "vllm-project/vllm#49363 H100 gemma-4-31B-it N=12288 K=5376 "
     .. "fp8-block-w-block-a-noquant", bytes = 1,
   rows = {{1, 4.907601}, {16, 74.557993}, {64, 263.261886}}},
  {source = "vllm-project/vllm#49363 H100 gemma-4-31B-it N=43008 K=5376 "
     .. "fp8-block-w-block-a-noquant", bytes = 1,
   rows = {{1, 5.870524}, {16, 72.973218}, {64, 309.152364}, {128, 667.370105}}},
}
M.gemm_benchmarks = {
  ["h100-sxm"] = {
    bf16 = {
      {source = "vllm-project/vllm#49363 H100 gemma-4-31B-it N=12288 K=5376 torch-bf16", bytes = 2,
       rows = {{1, 2.870333}, {16, 46.541434}, {64, 182.588263}, {128, 352.560566}}},
      {source = "vllm-project/vllm#49363 H100 gemma-4-31B-it N=43008 K=5376 torch-bf16", bytes = 2,
       rows = {{1, 3.072025}, {16, 48.328807}, {64, 187.994464}, {128, 364.745064},
               {256, 593.264799}}},
      H100_BF16_COMPUTE,
    },
    fp8 = {
      {source = "vllm-project/vllm#49363 H100 gemma-4-31B-it N=12288 K=5376 "
         .. "fp8-tensor-w-tensor-a-noquant", bytes = 1,
       rows = {{1, 5.162899}, {16, 83.053145}, {64, 318.410871}, {128, 581.821280}}},
      {source = "vllm-project/vllm#49363 H100 gemma-4-31B-it N=43008 K=5376 "
         .. "fp8-tensor-w-tensor-a-noquant", bytes = 1,
       rows = {{1, 6.077129}, {16, 93.962340}, {64, 356.667172}, {128, 647.281778}}},
    },
    fp8_block = {FP8_BLOCK_MEMORY[1], FP8_BLOCK_MEMORY[2], DEEPGEMM_COMPUTE},
    fp8_block_triton = {FP8_BLOCK_MEMORY[1], FP8_BLOCK_MEMORY[2], TRITON_BLOCK_FP8_COMPUTE},
    int4 = {
      {source = "inclusionAI/humming#2 H100 dense N=8192 K=8192 channelwise marlin-w4a16",
       bytes = 0.5, rows = {{1, 4.98}, {2, 10.02}, {4, 19.85}}},
    },
  },
  ["h200"] = {
    bf16 = {H100_BF16_COMPUTE},
    fp8_block = {DEEPGEMM_COMPUTE},
    fp8_block_triton = {TRITON_BLOCK_FP8_COMPUTE},
  },
  ["mi300x"] = {
    bf16 = {
      {source = "vllm-project/vllm#29937 MI300 wvSplitK (column Base_300) M=13312 K=16384, 1 token",
       bytes = 2, rows = {{1, gemm_tflops(1, 13312, 16384, 0.110287193)}}},
      {source = "vllm-project/vllm#29937 MI300 wvSplitK (column Base_300) M=16384 K=6656, 1 token",
       bytes = 2, rows = {{1, gemm_tflops(1, 16384, 6656, 0.055465103)}}},
      {source = "vllm-project/vllm#29937 MI300 wvSplitK (column Base_300) M=8192 K=28672, 1 token",
       bytes = 2, rows = {{1, gemm_tflops(1, 8192, 28672, 0.116746185)}}},
      {source = "stas00/ml-engineering compute/accelerator/README.md at b9e29720, MAMF BF16 AMD "
         .. "MI300X: torch matmul, best shape 10240x15360x8192 (torch 2.5.1+rocm6.3, TunableOp)",
       bytes = 2, rows = {{10240, 668.4}}},
    },
    fp8 = {
      {source = "Azure AI-benchmarking-guide ND_MI300X_v5_results.md (fork samuel-bohman/"
         .. "AI-benchmarking-guide at 3de0c294), GEMM HipBLASLt FP8, rows of M >= 4096",
       bytes = 1, rows = {{4096, 955.17}, {6144, 1159.54}, {8192, 1159.23},
                          {16384, 1015.1}, {32768, 1029.14}}},
    },
  },
  ["a100-sxm-80gb"] = {
    bf16 = {
      {source = "Azure AI-benchmarking-guide ND_A100_v4_results.md at 3bb66cac (NVIDIA "
         .. "A100-SXM4-80GB, CUDA 12.5), GEMM CuBLASLt FP16, rows of M >= 4096",
       bytes = 2, rows = {{4096, 228.0}, {6144, 250.8}, {8192, 253.7}, {16384, 256.5}}},
    },
  },
  ["h20"] = {
    bf16 = {
      {source = "zzc0721/torch-performance-test-data issue 77 (2025-10-17, NVIDIA H20, torch "
         .. "2.7.0+cu128), torch.mm BF16 squares, rows of M >= 4096",
       bytes = 2, rows = {{4096, 133.41}, {8192, 138.60}, {10240, 142.25}}},
    },
  },
  ["b200"] = {
    bf16 = {
      {source = "vllm-project/vllm#20071 Llama-3.1-8B N=28672 K=4096 torch-bf16", bytes = 2,
       rows = {{1, 5.807663}, {16, 83.888922}, {64, 327.389390}, {128, 628.627237},
               {256, 1053.583061}}},
      {source = "vllm-project/vllm#18778 Llama-3.1-8B N=6144 K=4096 torch-bf16", bytes = 2,
       rows = {{512, 1337.772701}, {1024, 1432.973854}}},
      {source = "vllm-project/vllm#19566 Llama-3.1-8B N=6144 K=4096 torch-bf16", bytes = 2,
       rows = {{16384, 1512.843919}}},
    },
    fp8 = {
      {source = "vllm-project/vllm#20071 Llama-3.1-8B N=28672 K=4096 "
         .. "fp8-tensor-w-tensor-a-noquant", bytes = 1,
       rows = {{1, 10.621919}, {16, 168.898281}, {64, 648.955934}, {128, 1192.150441},
               {256, 1629.970175}}},
      {source = "vllm-project/vllm#18778 Llama-3.1-8B N=6144 K=4096 "
         .. "fp8-tensor-w-tensor-a-noquant", bytes = 1,
       rows = {{512, 1759.884804}, {1024, 2207.502274}}},
      {source = "vllm-project/vllm#19566 Llama-3.1-8B N=6144 K=4096 "
         .. "fp8-tensor-w-tensor-a-noquant", bytes = 1, rows = {{16384, 2544.683145}}},
    },
    nvfp4 = {
      {source = "vllm-project/vllm#20578 Llama-3.1-8B N=6144 K=4096 nvfp4-noquant", bytes = 0.5625,
       rows = {{1, 4.439497}, {16, 71.160187}, {64, 281.971021}, {128, 549.526976},
               {256, 1102.033286}, {512, 2187.995534}, {1024, 2894.987191},
               {2048, 3411.463557}, {4096, 3645.594842}, {8192, 3778.760919},
               {16384, 3904.329097}}},
    },
  },
}

--- The GEMM class of a deployment computing at `rate` (M.compute_tflops)
--- with weights of format `name` (M.gemm_benchmarks' keys), or nil.
function M.gemm_class(name, rate)
  if name:find("^fp8%-b") or name:find("^fp8_block") then return "fp8_block" end
  if rate == "fp8" then return "fp8" end
  if rate == "fp4" then return "nvfp4" end
  if name == "bf16" or name == "fp16" then return "bf16" end
  if name:find("^int4") or name == "awq" or name:find("^gptq") then return "int4" end
  return nil
end

-- Which block-FP8 GEMM kernel SGLang runs for a 128 x 128 block-scaled
-- checkpoint's linear layers on Hopper (issue 18):
--   0.4.0 to 0.4.3  "triton": SGLang's own Triton w8a8_block_fp8_matmul
--             (python/sglang/srt/layers/quantization/fp8_kernel.py, called
--             by fp8_utils.py apply_w8a8_block_fp8_linear; "We also
--             implement block wise FP8 with Triton", sgl-project/sglang
--             pull request 2787's review, 2025-01-08, on the DeepSeek
--             docs). DeepGEMM was published on 2025-02-26 (the date of
--             sgl-project/sglang pull request 3893 and vllm-project/vllm
--             pull request 13917, the first benchmarks against it); SGLang
--             integrated it in March 2025 (pull request 4199; 4284 "update
--             deepgemm", 2025-03-11) and made it the Hopper default in pull
--             request 4613 ("Set deepgemm to the default value in the hopper
--             architecture", 2025-03-20) and again in 5628 ("Turn on
--             DeepGemm By Default", 2025-04-22, after 5580's pre-compilation),
--             the SGLANG_ENABLE_JIT_DEEPGEMM flag. The release of each is
--             not pinned here: 0.4.3 is taken as the last release before
--             them (0.4.4 and later 0.4.x keep DeepGEMM, the present rule).
--   later     "deepgemm" (M.gemm_benchmarks' fp8_block: DeepGEMM's table).
-- Other GPUs and engines: nil (the fp8_block class as before).
--- The SGLang release d runs: its own (sglang_release, engine_version), the
--- newest modelled when it names none or "latest".
function M.sglang_release(d)
  local v = rawget(d, "sglang_release") or d.engine_version
  if v == nil or v == "latest" then v = engines.sglang_latest end
  return v
end

M.sglang_triton_block_fp8_before = "0.4.4"
function M.block_fp8_kernel(d)
  if d.budget ~= "sglang" or M.attention.hopper[d.gpu.id] == nil then return nil end
  if engines.vllm_at_least(M.sglang_release(d), M.sglang_triton_block_fp8_before) then return "deepgemm" end
  return "triton"
end

-- The M tile of the dense GEMMs' kernel (perf.gemm_tile_m, issue 18): a
-- kernel computes whole tiles, so one decoded token costs a tile's
-- tensor-core work. Sourced for SGLang's block-FP8 linear layers (a 128 x
-- 128 block-scaled checkpoint, fp8-bHxW) on SM90 (H100, H200, H20, GH200),
-- both kernels of M.block_fp8_kernel:
--   Triton w8a8_block_fp8_matmul: without a tuned file its default config
--     is BLOCK_SIZE_M 64 (python/sglang/srt/layers/quantization/
--     fp8_kernel.py, "# Default config", the same in vLLM's fp8_utils.py),
--     and SGLang's tuned H20 file keeps 64 at M = 1
--     (sgl-project/sglang python/sglang/srt/layers/quantization/configs/
--     "N=4096,K=2048,device_name=NVIDIA_H20,dtype=fp8_w8a8,block_shape=
--     [128, 128].json" at 1f4eca797a6d: "1": BLOCK_SIZE_M 64, N 128, K 128);
--   DeepGEMM gemm_fp8_fp8_bf16_nt: get_best_configs picks block_m from
--     (64, 128, 256) (deepseek-ai/DeepGEMM deep_gemm/jit_kernels/gemm.py at
--     c4a7116e0aee; its first form "block_ms = (64 if m <= 64 else 128, )").
-- So a step of T tokens computes ceil(T / 64) x 64 rows of every layer's
-- GEMM; the weights read are the same. It binds where the tensor cores are
-- slow beside the HBM: the H20 (148 / 296 TFLOPS dense, 4.0 TB/s) at a
-- few sequences; on an H100 (1979 fp8) the 64 rows' FLOPs stay below the
-- weights' read. The logits (a 16-bit lm_head, F.linear) are not this
-- kernel. Not modelled (no source read for their tile): cuBLAS's 16-bit
-- GEMMs, vLLM's block-FP8 path, other GPUs and formats: 0.
M.block_fp8_tile_m = 64
M.sm90 = {["h100-sxm"] = true, ["h100-pcie"] = true, ["h100-nvl"] = true, ["h200"] = true,
          ["h20"] = true, ["gh200-96gb"] = true}
function M.gemm_tile_m(d)
  if d.budget ~= "sglang" or not M.sm90[d.gpu.id] then return 0 end
  local _, rate, fname = M.compute_tflops(d.gpu, d.weights, d.model)
  if M.gemm_class(fname, rate) ~= "fp8_block" then return 0 end
  return M.block_fp8_tile_m
end

--- The two curves of GPU g for a GEMM class, {{M, efficiency}, ...} each
--- (M.gemm_benchmarks' rows as the core reads them), and the peak (TFLOP/s)
--- they are fractions of; nil for a side without rows. Rows of one M from
--- several sources: their median.
function M.gemm_curves(g, class, peak)
  local srcs = class and (M.gemm_benchmarks[g.id] or {})[class]
  if srcs == nil or g.hbm_gbps == nil or peak == nil then return nil, nil end
  local by = {memory = {}, compute = {}}
  for _, src in ipairs(srcs) do
    local ridge = src.bytes * peak * 1e12 / (2 * g.hbm_gbps * 1e9)
    for _, r in ipairs(src.rows) do
      local m, tf = r[1], r[2]
      local side, e = "compute", tf / peak
      if m <= ridge then side, e = "memory", tf * 1e12 * src.bytes / (2 * m) / (g.hbm_gbps * 1e9) end
      by[side][m] = by[side][m] or {}
      table.insert(by[side][m], math.min(1, e))
    end
  end
  local function curve(t)
    local ms = {}
    for m in pairs(t) do ms[#ms + 1] = m end
    if #ms == 0 then return nil end
    table.sort(ms)
    local out = {}
    for i, m in ipairs(ms) do
      local v = t[m]
      table.sort(v)
      local med = #v % 2 == 1 and v[(#v + 1) // 2] or (v[#v // 2] + v[#v // 2 + 1]) / 2
      out[i] = {m, med}
    end
    return out
  end
  return curve(by.memory), curve(by.compute)
end

-- The attention kernel's own rates, by backend and GPU, from published
-- kernel benchmarks (engine/core/roofline.c: attention takes max(KV bytes /
-- (hbm_gbps x attn_mem_eff), its FLOPs / (attn_tflops x the curve at each
-- sequence's query tokens in the step)); where nothing here applies, the
-- present rule: KV at the memory factor, FLOPs at the GEMMs' peak and
-- compute factor. Measured rates are stored as published and divided by
-- the GPU's bf16 peak (the datasheet's 989.5 TFLOPS for the H100 SXM).
--   fa3, fa2  prefill: FlashAttention's forward in BF16 with the causal mask,
--             TFLOPS by sequence length 512 .. 16k, measured on an H100 80GB
--             SXM5 (Shah et al., "FlashAttention-3: Fast and Accurate
--             Attention with Asynchrony and Low-precision", NeurIPS 2024,
--             arXiv 2407.08608, Figure 5 "Attention forward speed (FP16/BF16)
--             on H100", its causal panels, the FlashAttention-2 and
--             FlashAttention-3 bars; batch x seqlen = 16k tokens, heads x
--             head_dim = 2048). FA3, head_dim 64: 197 265 371 420 460 473;
--             head_dim 128: 292 423 521 579 602 616; head_dim 256: 286 427 537
--             612 628 642. FA2, head_dim 64: 180 229 262 284 295 299; head_dim
--             128: 191 260 298 319 333 335; head_dim 256: 208 251 278 293 297 298. The
--             paper counts causal FLOPs as half of 4 seqlen^2 head_dim heads,
--             as kvplan does (engine/core/roofline.c keys_sum). A step's query
--             tokens of one sequence (its prompt chunk) stand for the
--             benchmark's sequence length; other head dims keep the present
--             rule (no table of theirs found). Decode keeps the memory factor:
--             no complete published table of FlashAttention's paged decode
--             bandwidth at vLLM's block size was found.
--   flashmla  MLA decode on Hopper (deepseek-ai/FlashMLA README.md, first
--             release, February 2025: "up to 3000 GB/s in memory-bound
--             configuration" on an H800 SXM5, whose HBM3 is the H100 SXM's
--             3.35 TB/s; "Performance Update (2025.04.22)": "up to 660
--             TFlops" compute-bound): KV at 3000 / 3350 of HBM, FLOPs at 660
--             TFLOPS at any query length (kvplan counts MLA's FLOPs in the
--             absorbed form, as FlashMLA runs it; vLLM's MLA prefill runs
--             FlashAttention on the unabsorbed heads, not modelled apart).
--   Which backend (M.attention_backend): vLLM's FlashAttention backend on
--   compute capability 9.0 runs FlashAttention 3 ("fa_version = 3 if
--   device_capability.major == 9 and is_fa_version_supported(3) else 2",
--   vllm/attention/utils/fa_utils.py get_flash_attn_version at 4d5ee6c68071; FA3 since
--   vllm-project/vllm#12093, merged in January 2025 before 0.7.0: "As of
--   #12093 Flash Attention 3 is now supported in vLLM for Hopper GPUs (SM
--   9.0)", vllm-project/vllm#12429, 2025-01-25), so FA2 before 0.7; vLLM
--   picks FlashMLA for an MLA model on Hopper when it is supported
--   (vllm/platforms/cuda.py get_attn_backend_cls, use_flashmla). The
--   H200 has the H100's GH100 SMs and clocks (the same bf16 peak), so its
--   FLOP rates are the H100's; its HBM3e (4.8 TB/s) has no published MLA
--   decode figure, so its decode keeps the memory factor. SGLang 0.5
--   (issue 18): with no --attention-backend, ServerArgs picks "fa3" for a
--   model without MLA when is_hopper_with_cuda_12_3() (compute capability
--   9, CUDA >= 12.3), is_no_spec_infer_or_topk_one (no speculative
--   decoding, or EAGLE top-k 1 at page size 1) and
--   is_fa3_default_architecture(hf_config), else flashinfer ("Auto select
--   the fastest attention backend. 1. Models with MHA Architecture (e.g:
--   Llama, QWen) 1.1 We will turn on FA3 on hopper unless user use spec
--   decode with topk > 1 or page_size > 1", python/sglang/srt/server_args.py
--   _handle_attention_backend_compatibility of the 0.5 releases, read in a
--   stored copy whose commit the store does not name); the architectures
--   listed at sgl-project/sglang python/sglang/srt/utils.py
--   0094528c435a44bbcb5c8d755626d15a702b1423: Qwen2ForCausalLM,
--   Llama4ForConditionalGeneration, LlamaForCausalLM, Gemma2ForCausalLM,
--   Gemma3ForConditionalGeneration, Qwen3ForCausalLM, Qwen3MoeForCausalLM
--   (and GLM-4.5 / Step3-VL ones kvplan's catalog does not hold). kvplan
--   reads the architecture off the catalog's family, Hugging Face's
--   model_type (M.sglang_fa3_families: the model_type of each of those
--   classes); an fp8_e5m2 KV cache makes SGLang fall back to triton, so it
--   keeps the present rule, as do speculative decoding (its top-k
--   is not a kvplan field), MLA models (SGLang's FA3 MLA path has no
--   published table here) and the 0.4 releases (the rule's first release
--   with Qwen3 is not pinned). Its rates are vLLM's FA3 rows above (the same
--   FlashAttention 3 kernels: sgl-kernel's flash_attn_with_kvcache); decode
--   keeps the memory factor as under vLLM. flashinfer off those
--   architectures and TensorRT-LLM off B200 (its own kernels,
--   no published table found) keep the present rule, as does MI300X: the
--   one figure found, FlashAttention 2 at 328.6 TFLOPS (head_dim 64, batch 2,
--   8192 tokens, Azure's AI-benchmarking-guide ND MI300X v5 results), is
--   forward plus backward (Azure/AI-benchmarking-guide
--   Benchmarks/AMD/FlashAttention.py at d9ca54be parses "fwd + bwd"), and no
--   forward or paged-decode table of ROCm's kernels on MI300X was found.
--   trtllm_gen  decode on B200 (SM100): TensorRT-LLM's trtllm-gen generation
--             kernels, as FlashInfer ships them (flashinfer-ai/flashinfer
--             #1051 "Add Blackwell FMHA decode kernel from TRT-LLM"). Source:
--             flashinfer-ai/flashinfer pull request 1415 (merged as 85a9a8d2,
--             2025-08-10), "[b200] Benchmark results" of
--             benchmarks/bench_trtllm_fmha.py at that commit: BatchDecode-
--             WithPagedKVCacheWrapper(backend = "trtllm-gen"), bf16 query and
--             KV cache ("auto"), 64 query heads, 8 KV heads, head_dim 64, page
--             16, HND layout, every sequence at seq_len, median of CUDA-graph
--             replays (bench_gpu_time_with_cudagraph). Its "memory bandwidth"
--             is (q + KV bytes) / ms / 2^20, so GB/s in units of 1.048576 GB/s;
--             kvplan recomputes the bytes from the stated shape: batch x
--             (seq_len x 2 x 8 x 64 x 2 + 64 x 64 x 2). Rows used: the three
--             at 128 and 256 sequences whose KV is under 2^31 bytes
--             {sequences, seq_len, ms}: 128 x 1024 in 0.0522848 ms (5154 GB/s,
--             0.644 of 8000), 128 x 4096 in 0.1757888 ms (6114 GB/s, 0.764),
--             256 x 1024 in 0.0962112 ms (5602 GB/s, 0.700); attn_mem_eff is
--             their median, 0.700. Hand check, 256 x 1024: (256 x 1024 x 2048
--             + 256 x 8192) bytes = 538968064; / 0.0962112 ms = 5.602e12 B/s;
--             / 8e12 = 0.7002 (the table prints 538968064 / 0.0962112 / 2^20
--             = 5342.41). Left out: the four batch-4 rows (8-31 us, 0.13 to
--             0.55 of HBM: a step's few sequences, not where attention weighs
--             on a step); and the five rows whose KV reaches 2^31 bytes (128 x
--             8192 and up, 256 x 4096 and up), where time jumps 9.6x for 2x the
--             bytes (0.176 -> 1.680 ms) to 0.08-0.16 of HBM while the same
--             PR's Triton kernel keeps its rate at those shapes: a step of the
--             benchmark's, unexplained, not a rate kvplan can stand behind.
--             Other head dims, an fp8 KV cache (no complete table found: see
--             docs/time.md) and other GPUs keep the present rule.
--   Which engine runs it: TensorRT-LLM on SM100 ("mUseTllmGen(
--   tensorrt_llm::common::getSMVersion() == 100)", "Runner for trtllm-gen
--   XQA kernels (for SM == 100)": cpp/tensorrt_llm/kernels/xqaDispatcher.cpp
--   and .h at c8b9bfc7a999, the one stored version; the releases before it
--   were not read). vLLM's FlashInfer backend runs the same kernels on SM100
--   only for steps of at most 256 tokens, contexts under 131072 and an "auto"
--   KV cache, or with attention sinks (vllm/utils/flashinfer.py
--   use_trtllm_attention at 0013f46b7f32): a per-step choice kvplan does not
--   model, so vLLM keeps the present rule.
M.attention = {
  len = {512, 1024, 2048, 4096, 8192, 16384},
  fa3 = {[64] = {197, 265, 371, 420, 460, 473}, [128] = {292, 423, 521, 579, 602, 616},
         [256] = {286, 427, 537, 612, 628, 642}},
  fa2 = {[64] = {180, 229, 262, 284, 295, 299}, [128] = {191, 260, 298, 319, 333, 335},
         [256] = {208, 251, 278, 293, 297, 298}},
  flashmla = {gbps = 3000, tflops = 660, hbm_gbps = 3350},
  -- the GPUs the H100 SXM5 measurements stand for (the same GH100 SMs and clocks)
  hopper = {["h100-sxm"] = "h100-sxm", ["h200"] = "h100-sxm"},
  h100_bf16_tflops = 989.5,
  -- flashinfer-ai/flashinfer#1415 on a B200: {sequences, seq_len, ms} at
  -- 64 query heads, 8 KV heads, head_dim 64, bf16, read against hbm_gbps
  trtllm_gen = {gpu = "b200", hbm_gbps = 8000, head_dim = 64, heads = 64, kv_heads = 8,
                kv_bits = 16, rows = {{128, 1024, 0.05228480100631714},
                                      {128, 4096, 0.17578879594802857},
                                      {256, 1024, 0.09621120095252991}}},
}

--- The fraction of HBM bandwidth each row of M.attention.trtllm_gen read
--- its query and KV at, and their median (the backend's attn_mem_eff).
function M.trtllm_gen_decode_eff()
  local t = M.attention.trtllm_gen
  local e = {}
  for i, r in ipairs(t.rows) do
    local b, s, ms = r[1], r[2], r[3]
    local bytes = b * (s * 2 * t.kv_heads * t.head_dim * 2 + t.heads * t.head_dim * 2)
    e[i] = bytes / (ms * 1e-3) / (t.hbm_gbps * 1e9)
  end
  return util.median(e), e
end

-- SGLang's is_fa3_default_architecture classes (above) by the Hugging Face
-- model_type of each, the catalog's family: qwen2 Qwen2ForCausalLM, llama
-- LlamaForCausalLM, gemma2 Gemma2ForCausalLM, gemma3 (the multimodal
-- checkpoints; gemma3_text is Gemma3ForCausalLM, not listed)
-- Gemma3ForConditionalGeneration, llama4 Llama4ForConditionalGeneration, qwen3
-- Qwen3ForCausalLM, qwen3_moe Qwen3MoeForCausalLM.
M.sglang_fa3_families = {qwen2 = true, llama = true, gemma2 = true, gemma3 = true, llama4 = true,
                         qwen3 = true, qwen3_moe = true}

-- Architectures whose own branch of ServerArgs' model-specific adjustments
-- sets the attention backend before the general rule above runs, so that
-- neither speculative decoding nor the CUDA version moves it (issue 18):
-- GptOssForCausalLM (family gpt_oss), "if is_sm100_supported():
-- attention_backend = 'trtllm_mha' elif is_sm90_supported(): 'fa3' else:
-- 'triton'" when no --attention-backend is given (python/sglang/srt/
-- server_args.py: _model_specific_adjustments of the first 0.5 releases,
-- the same branch in a later stored form with fa4 among its backends, and
-- _handle_gpt_oss_family at 469c63e54e7d94591617ef9590c6aa26d54dc1bb; the
-- two earlier forms are stored without their commits, so 0.5.3 and 0.5.4,
-- between them, are taken to run it). An fp8_e5m2 KV cache still makes the
-- later compatibility check fall back to triton. gpt-oss's attention sinks
-- (one learned logit a head) are read at the FA3 rows' rates: no FA3 table
-- with sinks was found. Off Hopper (the A100: triton) the present rule.
M.sglang_fa3_own = {gpt_oss = true}

--- The attention backend d's engine runs on its GPU where kvplan has its
--- published rates ("fa3", "fa2", "flashmla", "trtllm_gen"), or nil (the
--- present rule).
function M.attention_backend(d)
  if d.budget == "trtllm" and d.gpu.id == M.attention.trtllm_gen.gpu
     and rawget(d.model, "mla") == nil then
    return "trtllm_gen"
  end
  if d.budget == "sglang" then
    local _, release = engines.sglang_version(d.engine_version)
    local family = d.model.family or ""
    if release ~= "0.4" and M.attention.hopper[d.gpu.id] and rawget(d.model, "mla") == nil
       and (M.sglang_fa3_own[family] or (M.sglang_fa3_families[family] and d.speculative == nil))
       and d.kv.name ~= "fp8_e5m2" then
      return "fa3"
    end
    return nil
  end
  if d.budget ~= "vllm" or M.attention.hopper[d.gpu.id] == nil then return nil end
  if rawget(d.model, "mla") ~= nil then return "flashmla" end
  return engines.vllm_at_least(d.engine_version, "0.7") and "fa3" or "fa2"
end

--- The attention kernel's rates of d (perf.attn_tflops, attn_mem_eff and
--- attn_compute, a list of {query tokens, fraction of attn_tflops}), or an empty table
--- (the present rule). `given`: the efficiency factors the user set (a
--- user's memory or compute factor applies to attention as before).
function M.attention_rates(d, given)
  local b = M.attention_backend(d)
  if b == nil then return {} end
  local A, g = M.attention, given or {}
  local bf16 = A.h100_bf16_tflops
  local out = {}
  if b == "trtllm_gen" then
    local t = A.trtllm_gen
    if g.memory == nil and d.model.head_dim == t.head_dim and d.kv.bits == t.kv_bits then
      out.attn_mem_eff = (M.trtllm_gen_decode_eff())
    end
    return out
  end
  if b == "flashmla" then
    if g.memory == nil and d.gpu.id == "h100-sxm" then
      out.attn_mem_eff = A.flashmla.gbps / A.flashmla.hbm_gbps
    end
    if g.compute == nil then
      out.attn_tflops, out.attn_compute = bf16, {{1, A.flashmla.tflops / bf16}}
    end
    return out
  end
  local curve = A[b][d.model.head_dim]
  if curve == nil or g.compute ~= nil then return out end
  local points = {}
  for i, v in ipairs(curve) do points[i] = {A.len[i], v / bf16} end
  out.attn_tflops, out.attn_compute = bf16, points
  return out
end

-- The decode attention's own minimum time a call (issue 18, perf.attn_floor_us):
-- at a few sequences and short contexts a decode attention call (the split-KV
-- kernel and its merge) takes several microseconds whatever the few MB of KV
-- it reads, so each layer's attention takes at least this, microseconds, in
-- place of kernel_floor_us (roofline.c kvp_cost_init: attention takes
-- max(its roofline, layers x this)). Source: vllm-project/vllm pull request
-- 43232 ("Xqa decode kernels", merged 2026-05; its "Per-cell times
-- (us/layer)" tables, turn 15 by DanBlanaru): benchmarks/attention_benchmarks/
-- benchmark.py (vLLM's own FlashAttention and FlashInfer backends called
-- through impl.forward, runner.py _run_single_benchmark: the time of 4 layers
-- over 4, each layer its own KV cache), row q1s1k (one sequence, one query
-- token, 1024 tokens of KV), column FLASH_ATTN / FAv3 (vLLM's FlashAttention 3
-- on Hopper) and FLASHINFER / XQA (FlashInfer's trtllm_batch_decode_with_kv_cache
-- on SM90, TensorRT-LLM's XQA kernel), the table of a 16-bit KV cache ("auto":
-- FAv3 11.0, XQA 10.8) and of an fp8 one ("fp8": 11.2 and 7.6). The PR enables
-- XQA on "Hopper (SM90)"; the thread as read names no GPU model nor the
-- command's shape: benchmark.py's defaults are 32 query heads, 8 KV heads,
-- head_dim 128, block 16 (argparse, at 057bb3ad), at which its 8 x 32k FAv3
-- row (1.07 GB of bf16 KV in 253.5 us) reads 4.2 TB/s, more than an H100's
-- 3.35, so an H200-class GH100 (the H100's SMs and clocks; a latency, not a
-- bandwidth, is what is used here). The q1s1k rows read 4.2 MB (bf16), 1.3
-- us at 3.35 TB/s: the time is the kernels' latency. Agreeing in size, with
-- their GPU named: tile-ai/TileOPs pull request 2084 (H200 clock-locked at
-- 1500 MHz, CUPTI device-busy time, cold L2; Qwen3-30B-A3B's 32 / 4 heads,
-- batch 1, 1K KV, FP16): FA3 16.2 us, FlashInfer 9.5 us;
-- vllm-project/flash-attention pull request 63 ("Main", batch 1, qwen32b-tp2,
-- 1024 tokens): FA3 14.8 us, FlashInfer 12.3 us. Which kernel: vLLM from 0.7
-- and SGLang 0.5's fa3 backend on H100 / H200 run FlashAttention 3
-- (M.attention_backend); TensorRT-LLM runs its XQA kernels for the generation
-- phase of MQA / GQA models on Hopper (docs/source/advanced/gpt-attention.md,
-- "XQA Optimization"; https://nvidia.github.io/TensorRT-LLM/advanced/
-- gpt-attention.html). Only for what the rows measured: head_dim 128, a 16-bit
-- or fp8 (e4m3) KV cache, no MLA; elsewhere kernel_floor_us as before.
M.attention_floor = {
  head_dim = 128,
  fa3 = {kv16 = 11.0296, fp8 = 11.1700},
  xqa = {kv16 = 10.7592, fp8 = 7.6160},
}

--- The minimum time of one decode attention call of d, microseconds
--- (M.attention_floor), or nil (kernel_floor_us applies).
function M.attention_floor_us(d)
  local F = M.attention_floor
  if M.attention.hopper[d.gpu.id] == nil or rawget(d.model, "mla") ~= nil
     or d.model.head_dim ~= F.head_dim then
    return nil
  end
  local kernel
  if d.budget == "trtllm" then
    kernel = "xqa"
  elseif M.attention_backend(d) == "fa3" then
    kernel = "fa3"
  else
    return nil
  end
  local name, bits = d.kv.name, d.kv.bits
  if bits == 16 then return F[kernel].kv16 end
  if name == "fp8" or name == "fp8_e4m3" then return F[kernel].fp8 end
  return nil
end

-- The routed experts' grouped GEMMs (a MoE layer's fused_moe: top-k,
-- moe_align_block_size, the w13 and w2 GEMMs, SiLU-and-multiply, moe_sum),
-- as the fraction of their roofline, max(bytes of the experts some token
-- chose / HBM bandwidth, their FLOPs / the format's dense peak), that
-- published kernel benchmarks measured, by tokens per expert touched: T k /
-- (E (1 - (1 - k/E)^T)) for T tokens each choosing k of E experts (exactly 1
-- at T = 1). Each point is one row of a benchmark: M tokens, its kernel time,
-- read against the same expected experts touched (the benchmarks route
-- random gating logits, an even spread in expectation) at the GPU's catalog
-- rates. The core interpolates linearly in log tokens per expert between
-- points and clamps outside them (engine/core/roofline.c
-- kvp_expert_fraction). Rows: {tokens per expert, fraction, M, kernel us}.
--   h100-sxm fp8   vllm-project/vllm pull request 24700 ("Improve default
--                  fused moe configs", 2025-09-11, "Benchmarks on H100"), its
--                  "Qwen3 MoE FP8" block, "# Main" rows:
--                  benchmarks/kernels/benchmark_moe.py --model=Qwen/Qwen3-30B-A3B
--                  -tp=1 --dtype=fp8_w8a8 (E 128, top-k 8, hidden 2048, moe
--                  intermediate 768: 4.7 MB an expert, about DeepSeek-V3's
--                  5.5 MB slice at TP 8); 3350 GB/s, 1979 TFLOPS
--   h100-sxm bf16  the same pull request, its "Mixtral BF16" block, "# Tuned
--                  Config" rows: --model=mistralai/Mixtral-8x7B-Instruct-v0.1
--                  -tp=2 (E 8, top-k 2, hidden 4096, intermediate 14336 / 2:
--                  176 MB an expert slice); 989.5 TFLOPS
--   h200 fp8       sgl-project/sglang pull request 11730 ("add tuned fuse moe
--                  kernel for qwen3 235b fp8 on h200"), "# Without tuned
--                  kernel" rows: benchmark/kernels/fused_moe_triton/
--                  tuning_fused_moe_triton.py --model Qwen/Qwen3-235B-A22B-
--                  Instruct-2507 --tp-size 8 --dtype fp8_w8a8 (E 128, top-k 8,
--                  hidden 4096, moe intermediate 1536 / 8); 4800 GB/s. Measured
--                  to 32 tokens only (2.29 tokens an expert): clamped beyond
--   b200 fp8       sgl-project/sglang pull request 11816 ("use
--                  flashinfer_trtllm moe runner backend ... b200 fp8 dpsk"),
--                  b8zhong's comment of 2025-10-19, "Before:" rows:
--                  tuning_fused_moe_triton.py --model deepseek-ai/DeepSeek-R1
--                  --tp 8 --dtype w8a8 (E 256, top-k 8, hidden 7168, moe
--                  intermediate 2048 / 8, block FP8); 8000 GB/s. Measured to 24
--                  tokens (1.41 tokens an expert): clamped beyond
--   b200 nvfp4_cutlass  TensorRT-LLM's CUTLASS NVFP4 MoE, the kernel its
--                  default MoE backend runs (M.expert_kernel): TensorRT-LLM's
--                  tech blog "MoE as Dense GEMM: Optimizing Low-Latency MoE
--                  Inference on NVIDIA Blackwell" (docs/source/blogs/tech_blog/
--                  blog24_MoE_as_Dense_GEMM.md at 2226a86553b6), "Per-Rank MoE
--                  Module Latency", column "CUTLASS (us)": one B200, DeepSeek-
--                  V3's routed experts in NVFP4 at TP 8 (E 256, top-k 8, hidden
--                  7168, moe intermediate 2048 / 8 = 256; "measurements are
--                  reported for one tensor-parallel rank on one B200"), the
--                  module's latency with its router GEMM, top-k and
--                  quantization, without the two all-reduces; num_tokens 1 to
--                  384 (12 tokens an expert): clamped beyond. Bytes counted as
--                  kvplan counts NVFP4 (formats.lua: 4.5 bits an element with
--                  the fp8 scale per 16): 3 x 7168 x 256 x 0.5625 = 3,096,576
--                  a slice; 8000 GB/s, 9000 TFLOPS (the bytes bind at every
--                  row). Its M = 1 row by hand: 8 x 3,096,576 bytes / 8000
--                  GB/s = 3.097 us / 96.77 = 0.032; M = 128: 256 (1 - (1 -
--                  8/256)^128) = 251.60 experts touched, 4.070 tokens an
--                  expert, 97.39 us / 335.65 = 0.290
--   b200 nvfp4_trtllm_gen  the same table's column "TRTLLM-Gen (us)" (per-
--                  expert grouped GEMMs, TensorRT-LLM's moe_config.backend
--                  TRTLLM; FlashInfer ships the kernels as
--                  trtllm_fp4_block_scale_moe), read by a TensorRT-LLM
--                  deployment that gives moe_backend = "trtllm": M = 1,
--                  3.097 us / 26.78 = 0.116; M = 128, 97.39 / 161.87 = 0.602
--   mi300x bf16_tp8, bf16_tp4  ROCm/aiter's tuned MoE table for Qwen3-235B-A22B
--                  in BF16 on MI300X (aiter/configs/model_configs/
--                  qwen3_235b_bf16_tuned_fmoe.csv at ca781d8197, pull request
--                  3384, "update mi300x moe qwen bf16 configs", 2026-06-01: its
--                  rows of cu_num 304, which the pull request added; gfx942 with
--                  304 CUs is MI325X too, and its title names the MI300X), the
--                  column "us" (the
--                  best CK 2-stage kernel pair: stage 1, the w13 GEMM with
--                  SiLU-and-multiply, plus stage 2, the w2 GEMM with the
--                  weighted sum; the sort of tokens by expert is not in it),
--                  tokens 1 to 32768: E 128, top-k 8, hidden 4096, moe
--                  intermediate 1536 / 8 = 192 and 1536 / 4 = 384; 5300 GB/s,
--                  1307.4 TFLOPS. aiter's tuner times each kernel with
--                  run_perftest, which rotates copies of the inputs (weights
--                  included) over up to 64 x 128 x the L2 (aiter/test_common.py
--                  perftest, since pull request 213), so the weights are read
--                  from HBM, not the 256 MB Infinity Cache. aiter's MoE is what
--                  SGLang runs on ROCm; vLLM's ROCm build runs Triton's
--                  fused_moe unless VLLM_ROCM_USE_AITER is set (its default
--                  False: vllm/envs.py at 001f69f8b52e), a kernel with no
--                  MI300X table found: vLLM deployments read these curves too
--   a100-sxm-80gb bf16  vllm-project/vllm pull request 40542 ("Add A100 tuned
--                  config for E=64,N=1408", varjoranta, 2026-04-21, closed
--                  unmerged), its "Benchmark (bf16, hidden=2048, top_k=6, 1xA100
--                  80GB SXM4)" table, "default us" column, M = 1-4096 (the
--                  config vLLM runs without a tuned file for this shape; the
--                  times are the PR's standalone tuner over benchmark_moe.py's
--                  search space): E 64, top-k 6, hidden 2048, moe intermediate
--                  1408 (Kimi-VL-A3B / GLM-4.5-Air at tp 1); 2039 GB/s, 312
--                  TFLOPS. Its M = 4096 row by hand: 64 (1 - (1 - 6/64)^4096)
--                  = 64 experts touched, 4096 x 6 / 64 = 384 tokens an expert;
--                  bytes 64 x 3 x 2048 x 1408 x 2 = 1.107 GB / 2039 GB/s =
--                  543.1 us, FLOPs 2 x 4096 x 6 x 3 x 2048 x 1408 = 425.2 G /
--                  312 TFLOPS = 1362.8 us; 1362.8 / 2919.0 = 0.467
--   l40s fp8       vllm-project/vllm pull request 53710 ("Tune fused_moe FP8
--                  config for Qwen3-VL on L40S", nicholaskh-ai, 2026-08-25,
--                  open), its "Per-M kernel time comparison on NVIDIA L40S"
--                  table, "Default (us)" column, M = 4-8192:
--                  benchmark_moe.py --tp-size 1 --dtype fp8_w8a8, shape E 128,
--                  N 768 (Qwen3-VL-30B-A3B: top-k 8, hidden 2048, moe
--                  intermediate 768, the Qwen3-30B-A3B shape); 864 GB/s, 733
--                  TFLOPS. Its M = 2 row (39.06 us) is left out: it reads 2.17
--                  of the roofline (15.5 experts x 4.7 MB = 73 MB in 39 us), the
--                  benchmark re-reading the same weights from the L40S's 96 MB
--                  L2 rather than HBM; M = 4 touches 137 MB, past the L2.
--                  Below M = 4 (1.10 tokens an expert) the curve is clamped to
--                  M = 4's 0.778, an assumption
--   h200 bf16      vllm-project/vllm pull request 44818 ("[Perf] Add H200 BF16
--                  fused MoE configs for Gemma4 (E=128,N=704)", LucasWilkinson,
--                  2026-06-08, open), its "Gemma4 MoE kernel microbenchmark:
--                  E=128, N=704, K=2816, top_k=8, BF16, NVIDIA H200, 500
--                  iterations per data point" table, "Default (us)" column (the
--                  config vLLM runs without the pull request's tuned file), M =
--                  1-4096: Gemma-4 26B-A4B at tp 1 (hidden 2816, moe
--                  intermediate 704; N is w2's inner size, the intermediate
--                  after SiLU-and-multiply on one GPU: benchmarks/kernels/
--                  benchmark_moe.py, "N = shard_intermediate_size // 2");
--                  4800 GB/s, 989.5 TFLOPS. Its M = 16 row by hand: 128 (1 -
--                  (1 - 8/128)^16) = 82.42 experts touched, 16 x 8 / 82.42 =
--                  1.553 tokens an expert; bytes 82.42 x 3 x 2816 x 704 x 2 =
--                  980.4 MB / 4800 GB/s = 204.25 us (FLOPs 2 x 16 x 8 x 3 x
--                  2816 x 704 = 1.52 G / 989.5 TFLOPS = 1.54 us); 204.25 /
--                  257.8 = 0.792. From M = 2048 (128 tokens an expert) FLOPs
--                  bind: M = 4096, 393.9 us / 1249.5 = 0.315
-- B200's and H200's FP8 curves are still measured to 24 and 32 tokens only:
-- no published FP8 fused_moe table of either at larger batches was found
-- (vllm-project/vllm pull request 31448, B200 Qwen3-Omni-30B-A3B bf16, gives
-- M = 1-8 in the part stored here), so a large batch of FP8 experts on B200,
-- and on H200 at a slice at or below the FP8 curve's 2.4 MB, reads the clamped
-- small-batch fraction (an H200 slice between 2.4 and 11.9 MB reads the blend
-- with the BF16 curve, below). TensorRT-LLM's NVFP4 experts on B200 and
-- GB200 read its own CUTLASS curve (b200 nvfp4_cutlass, M.expert_kernel;
-- nvfp4_trtllm_gen under moe_backend = "trtllm"); its other formats (FP8,
-- gpt-oss's MXFP4) are read at the Triton curves for want of a table of
-- them by batch.
-- The curves differ most by the size of an expert's slice, the bytes of one
-- expert's w13 and w2 in one layer on one GPU (small slices reach less of the
-- bandwidth at a few tokens: Mixtral's 176 MB slices 0.73 at one token,
-- Qwen3-30B's 4.7 MB 0.25). M.expert_slice gives each curve's slice, 3 x
-- hidden x (moe intermediate / tp) x the format's bytes (fp8 1, bf16 2; scales
-- left out; NVFP4's fp8 scales counted, as kvplan counts the weights). Which
-- fraction a deployment reads (M.expert_curve): the curves of the kernel it
-- runs (M.expert_kernel: TensorRT-LLM's CUTLASS or trtllm-gen NVFP4 MoE where
-- its rule holds, else Triton's fused_moe, every curve M.expert_curve_kernel does not
-- name); of those, from its
-- GPU's curves (else, for a GPU without a benchmark here -- A100 40GB and
-- PCIe, H20, ... -- the H100 SXM's: an assumption, not a measurement), the two
-- whose slices bracket the deployment's own slice (M.expert_slice_bytes),
-- interpolated linearly in log slice bytes at every tokens per expert of
-- either curve, and clamped to the nearest curve outside them (a GPU with one
-- curve reads it at every slice). The slice is the axis across formats: an
-- FP8 slice is half a BF16 one of the same shape, and the kernel benchmarked
-- is Triton's fused_moe for both; the format itself (w8a8's activation
-- quantization, fp4 and int4 kernels) is not told apart, an assumption.
-- Choosing a format's own curves first (tried: an FP8 deployment reading only
-- its GPU's FP8 curves) was not kept: on H100, whose FP8 curve is at a 4.7 MB
-- slice and its BF16 curve at 176 MB, it sent Mixtral's 176 MB FP8 slices to
-- the 4.7 MB curve and Qwen3-235B's 4.7 MB BF16 slices to the 176 MB one, and
-- the development rows of the throughput corpus (tests/validation/throughput)
-- got worse (output throughput median 35.9 -> 38.9 %, H100 MoE rows 15.1 ->
-- 30.0 %; this rule: 35.8 %): within one GPU the slice moves the fraction far
-- more than the format (0.25 and 0.73 at one token on H100).
-- efficiency = {experts = x} replaces the curve by x at every tokens per expert.
M.expert_gemm = {
  ["h100-sxm"] = {
    fp8 = {{1.000, 0.253, 1, 44.54}, {1.032, 0.364, 2, 59.94}, {1.099, 0.453, 4, 90.46},
           {1.240, 0.560, 8, 129.77}, {1.553, 0.626, 16, 185.40}, {1.905, 0.657, 24, 215.99},
           {2.290, 0.660, 32, 238.37}, {3.142, 0.668, 48, 257.83}, {4.065, 0.675, 64, 262.73},
           {6.012, 0.664, 96, 270.98}, {8.002, 0.659, 128, 273.72}, {16, 0.507, 256, 355.49},
           {32, 0.460, 512, 391.86}, {64, 0.336, 1024, 536.33}, {96, 0.248, 1536, 727.31},
           {128, 0.198, 2048, 911.64}, {192, 0.141, 3072, 1279.17}, {256, 0.109, 4096, 1647.57}},
    bf16 = {{1.000, 0.730, 1, 144.03}, {1.143, 0.803, 2, 229.28}, {1.463, 0.819, 4, 351.10},
            {2.223, 0.870, 8, 434.98}, {4.040, 0.883, 16, 471.49}, {6.006, 0.879, 24, 478.27},
            {8.001, 0.863, 32, 487.35}, {12, 0.862, 48, 487.85}, {16, 0.871, 64, 483.14},
            {24, 0.851, 96, 494.42}, {32, 0.856, 128, 491.39}, {64, 0.784, 256, 536.77},
            {128, 0.635, 512, 662.33}, {256, 0.505, 1024, 833.72}, {384, 0.487, 1536, 1122.93}},
  },
  ["h200"] = {
    fp8 = {{1.000, 0.124, 1, 31.70}, {1.032, 0.208, 2, 36.56}, {1.099, 0.288, 4, 49.67},
           {1.240, 0.379, 8, 66.87}, {1.553, 0.439, 16, 92.36}, {1.905, 0.422, 24, 117.38},
           {2.290, 0.440, 32, 124.99}},
    bf16 = {{1.000, 0.105, 1, 189.2}, {1.032, 0.205, 2, 187.0}, {1.099, 0.389, 4, 185.4},
            {1.240, 0.640, 8, 200.0}, {1.553, 0.792, 16, 257.8}, {1.905, 0.795, 24, 314.4},
            {2.290, 0.812, 32, 341.1}, {3.142, 0.791, 48, 382.8}, {4.065, 0.797, 64, 391.8},
            {6.012, 0.780, 96, 405.6}, {8.002, 0.775, 128, 409.1}, {16, 0.756, 256, 419.8},
            {32, 0.717, 512, 442.2}, {64, 0.591, 1024, 536.5}, {96, 0.542, 1536, 585.4},
            {128, 0.427, 2048, 742.9}, {192, 0.319, 3072, 992.9}, {256, 0.315, 4096, 1249.5}},
  },
  ["mi300x"] = {
    bf16_tp8 = {{1.000, 0.218, 1, 32.7102}, {1.032, 0.315, 2, 43.8746}, {1.099, 0.486, 4, 53.3718},
                {1.240, 0.555, 8, 82.8639}, {1.553, 0.629, 16, 116.7202}, {2.290, 0.643, 32, 154.6934},
                {4.065, 0.653, 64, 171.5953}, {8.002, 0.626, 128, 181.8923}, {16, 0.586, 256, 194.3511},
                {32, 0.485, 512, 234.8546}, {64, 0.379, 1024, 300.731}, {128, 0.240, 2048, 475.133},
                {256, 0.146, 4096, 810.5673}, {512, 0.158, 8192, 1497.0631},
                {1024, 0.165, 16384, 2874.9394}, {2048, 0.169, 32768, 5610.7573}},
    bf16_tp4 = {{1.000, 0.418, 1, 34.0571}, {1.032, 0.524, 2, 52.6583}, {1.099, 0.614, 4, 84.4321},
                {1.240, 0.621, 8, 147.9434}, {1.553, 0.672, 16, 218.2396}, {2.290, 0.658, 32, 302.339},
                {4.065, 0.663, 64, 338.2867}, {8.002, 0.648, 128, 351.8764}, {16, 0.639, 256, 356.6064},
                {32, 0.553, 512, 412.152}, {64, 0.434, 1024, 525.1645}, {128, 0.317, 2048, 719.6576},
                {256, 0.185, 4096, 1277.8145}, {512, 0.213, 8192, 2220.8408},
                {1024, 0.224, 16384, 4216.914}, {2048, 0.244, 32768, 7767.4427}},
  },
  ["b200"] = {
    fp8 = {{1.000, 0.105, 1, 52.65}, {1.016, 0.180, 2, 60.35}, {1.048, 0.266, 4, 79.09},
           {1.115, 0.414, 8, 95.47}, {1.255, 0.506, 16, 138.68}, {1.406, 0.534, 24, 175.80}},
    nvfp4_cutlass = {{1.000, 0.032, 1, 96.77}, {1.115, 0.148, 8, 150.55}, {1.255, 0.197, 16, 200.05},
                     {1.568, 0.241, 32, 262.73}, {1.918, 0.267, 48, 290.50}, {2.302, 0.279, 64, 308.44},
                     {4.070, 0.290, 128, 335.65}, {6.014, 0.282, 192, 350.68}, {6.509, 0.279, 208, 354.73},
                     {7.006, 0.280, 224, 354.01}, {8.002, 0.281, 256, 351.98}, {8.502, 0.277, 272, 357.90},
                     {10.500, 0.273, 336, 363.58}, {12.000, 0.269, 384, 368.12}},
    nvfp4_trtllm_gen = {{1.000, 0.116, 1, 26.78}, {1.115, 0.385, 8, 57.68}, {1.255, 0.456, 16, 86.55},
                        {1.568, 0.539, 32, 117.20}, {1.918, 0.580, 48, 133.54}, {2.302, 0.608, 64, 141.68},
                        {4.070, 0.602, 128, 161.87}, {6.014, 0.588, 192, 168.23}, {6.509, 0.584, 208, 169.34},
                        {7.006, 0.585, 224, 169.24}, {8.002, 0.575, 256, 172.17}, {8.502, 0.563, 272, 176.10},
                        {10.500, 0.538, 336, 184.32}, {12.000, 0.530, 384, 186.92}},
  },
  ["a100-sxm-80gb"] = {
    bf16 = {{1.000, 0.277, 1, 183.5}, {1.152, 0.664, 4, 266.2}, {1.892, 0.794, 16, 542.6},
            {6.011, 0.776, 64, 698.1}, {24, 0.706, 256, 769.5}, {96, 0.531, 1024, 1022.5},
            {384, 0.467, 4096, 2919.0}},
  },
  ["l40s"] = {
    fp8 = {{1.099, 0.778, 4, 204.56}, {1.240, 0.748, 8, 376.96}, {1.553, 0.760, 16, 592.31},
           {2.290, 0.763, 32, 800.43}, {4.065, 0.762, 64, 902.75}, {8.002, 0.738, 128, 947.23},
           {16, 0.714, 256, 978.59}, {32, 0.676, 512, 1034.18}, {64, 0.621, 1024, 1126.08},
           {128, 0.508, 2048, 1375.40}, {256, 0.365, 4096, 1916.23}, {512, 0.264, 8192, 3195.68}},
  },
}

-- Bytes of one expert's slice (its w13 and w2 in one layer on one GPU) in
-- each M.expert_gemm benchmark: 3 x hidden x moe intermediate / tp x bytes.
M.expert_slice = {
  ["h100-sxm"] = {fp8 = 3 * 2048 * 768 * 1,        -- Qwen3-30B-A3B, tp 1: 4718592
                  bf16 = 3 * 4096 * 7168 * 2},     -- Mixtral-8x7B, tp 2: 176160768
  ["h200"] = {fp8 = 3 * 4096 * 192 * 1,            -- Qwen3-235B-A22B, tp 8: 2359296
              bf16 = 3 * 2816 * 704 * 2},          -- Gemma-4 26B-A4B, tp 1: 11894784
  ["b200"] = {fp8 = 3 * 7168 * 256 * 1,            -- DeepSeek-R1, tp 8: 5505024
              nvfp4_cutlass = 3 * 7168 * 256 * 9 // 16,     -- DeepSeek-V3 NVFP4, tp 8: 3096576
              nvfp4_trtllm_gen = 3 * 7168 * 256 * 9 // 16}, -- the same
  ["mi300x"] = {bf16_tp8 = 3 * 4096 * 192 * 2,     -- Qwen3-235B-A22B, tp 8: 4718592
                bf16_tp4 = 3 * 4096 * 384 * 2},    -- Qwen3-235B-A22B, tp 4: 9437184
  ["a100-sxm-80gb"] = {bf16 = 3 * 2048 * 1408 * 2}, -- Kimi-VL-A3B, tp 1: 17301504
  ["l40s"] = {fp8 = 3 * 2048 * 768 * 1},           -- Qwen3-VL-30B-A3B, tp 1: 4718592
}

--- GPUs one routed expert's slice is split over, as the core lays the
--- experts out (engine/core/roofline.c expert_layout): SGLang's and
--- TensorRT-LLM's ep_size ranks hold whole experts split over tp / ep_size
--- (kv.deploy's sglang_ep); vLLM's expert
--- parallelism whole experts; vLLM's data parallelism without it splits them
--- over tp x data_parallel_size; else over tp.
local function expert_split(d)
  local tp = d.tp or 1
  if (d.budget == "sglang" or d.budget == "trtllm") and (d.sglang_attn_dp or d.sglang_ep) then
    if (d.sglang_ep or 1) <= 1 then return tp end
    return tp / d.sglang_ep
  end
  local dp = d.data_parallel_size or 1
  if d.enable_expert_parallel then return 1 end
  if dp > 1 then return tp * dp end
  return tp
end

--- Bytes of one routed expert's slice of d on one GPU: the routed experts'
--- bytes in their format / (experts x MoE layers) / the GPUs an expert is
--- split over; nil for a dense model or one without the shapes.
function M.expert_slice_bytes(d)
  local m = d.model
  local E, k = m.experts or 0, m.experts_active or 0
  if E == 0 or k == 0 or not m.layers then return nil end
  local ok, c = pcall(m.weight_class_params, m)
  if not ok or not ((c.experts or 0) > 0) then return nil end
  local Lm = m.layers - (m.dense_layers or 0)
  if not (Lm > 0) then return nil end
  return m:class_bytes("experts", m:class_format("experts", d.weights), c.experts) / (E * Lm)
         / expert_split(d)
end

-- a curve's fraction at x tokens per expert: linear in log tokens, clamped
-- (as engine/core/roofline.c kvp_expert_fraction)
local function curve_at(rows, x)
  if x <= rows[1][1] then return rows[1][2] end
  for i = 2, #rows do
    if x <= rows[i][1] then
      local a, b = rows[i - 1], rows[i]
      return a[2] + math.log(x / a[1]) / math.log(b[1] / a[1]) * (b[2] - a[2])
    end
  end
  return rows[#rows][2]
end

-- The MoE kernel a curve of M.expert_gemm times where it is not Triton's
-- fused_moe (MI300X's aiter curves stand for the Triton one, above): only the
-- curves of the kernel a deployment runs (M.expert_kernel) are read for it.
M.expert_curve_kernel = {
  ["b200"] = {nvfp4_cutlass = "trtllm_cutlass", nvfp4_trtllm_gen = "trtllm_gen"},
}

-- GPUs that run TensorRT-LLM's SM100 MoE kernels, the GPU whose curve they read
M.expert_kernel_gpus = {["b200"] = "b200", ["gb200"] = "b200"}

--- The MoE kernel d's routed experts run when kvplan has a curve of it, and
--- the GPU of that curve; nil for Triton's fused_moe (every other curve).
---   "trtllm_cutlass"  TensorRT-LLM (budget trtllm) with NVFP4 experts on
---       B200 or GB200 (SM100): its default MoE backend is CUTLASS
---       (tensorrt_llm/_torch/model_config.py at 1a0dc5f70054,
---       from_pretrained: moe_backend = kwargs.get('moe_backend',
---       'CUTLASS'); llmapi/llm_args.py MoeConfig backend default='CUTLASS'),
---       and the AUTO default of later releases resolves to CUTLASS for every
---       architecture but gpt-oss and DeepSeek-V4 on Blackwell (TRTLLM) and,
---       in the newest stored form, FP8 block scales on SM100 (TRTLLM)
---       (model_config.py resolve_moe_backend, stored forms after
---       1a0dc5f70054, commits not named): an NVFP4 checkpoint of Qwen3,
---       Llama 4 or DeepSeek-R1 runs CUTLASS in every release. GB200's GPU is
---       the B200's SM100 at the same 8000 GB/s (the catalog): it reads the
---       B200 curve at its own rates, an assumption.
---   "trtllm_gen"  the same with moe_backend = "trtllm" (moe_config.backend
---       TRTLLM, its trtllm-gen kernels). Other formats under TensorRT-LLM
---       (FP8, MXFP4) read the Triton curves whatever moe_backend says.
function M.expert_kernel(d)
  local on = M.expert_kernel_gpus[d.gpu.id]
  if on == nil or d.budget ~= "trtllm" then return nil end
  if d.model:class_format("experts", d.weights).name ~= "nvfp4" then return nil end
  if d.moe_backend == "trtllm" then return "trtllm_gen", on end
  return "trtllm_cutlass", on
end

--- The curve d's routed experts read: rows {tokens per expert, fraction}
--- (M.expert_gemm's rows where one curve is read), the GPU they were
--- measured on, and which curves: a format ("fp8") or two and the weight of
--- the second ("fp8+bf16 0.19148"); nil for a dense model.
function M.expert_curve(d)
  if (d.model.experts or 0) == 0 then return nil end
  local kernel, on = M.expert_kernel(d)
  local id = on or (M.expert_gemm[d.gpu.id] and d.gpu.id or "h100-sxm")
  local list = {}
  for k, rows in pairs(M.expert_gemm[id]) do
    local sl = (M.expert_slice[id] or {})[k]
    if type(sl) ~= "number" or not (sl > 0) then
      util.raise("kvplan.sim.expert_slice['%s'].%s must be the bytes (> 0) of one expert's slice "
                 .. "the expert_gemm curve was measured at, got %s", id, k, util.shown(sl))
    end
    -- the curves of the kernel d runs (M.expert_kernel), Triton's by default
    if (M.expert_curve_kernel[id] or {})[k] == kernel then
      list[#list + 1] = {k = k, rows = rows, s = sl}
    end
  end
  if #list == 0 then
    util.raise("kvplan.sim.expert_gemm['%s'] has no curve of the %s MoE kernel", id,
               kernel or "triton")
  end
  table.sort(list, function(a, b) if a.s ~= b.s then return a.s < b.s end return a.k < b.k end)
  local s = M.expert_slice_bytes(d) or list[1].s
  if #list == 1 or s <= list[1].s then return list[1].rows, id, list[1].k end
  if s >= list[#list].s then return list[#list].rows, id, list[#list].k end
  local i = 2
  while list[i].s < s do i = i + 1 end
  local a, b = list[i - 1], list[i]
  local u = math.log(s / a.s) / math.log(b.s / a.s)
  -- every tokens per expert of either curve, so that the core's linear
  -- interpolation in log tokens between them is the blend of the two curves'
  local xs = {}
  for _, c in ipairs({a, b}) do
    for _, r in ipairs(c.rows) do xs[#xs + 1] = r[1] end
  end
  table.sort(xs)
  local rows = {}
  for _, x in ipairs(xs) do
    if #rows == 0 or x > rows[#rows][1] then
      local fa, fb = curve_at(a.rows, x), curve_at(b.rows, x)
      rows[#rows + 1] = {x, fa + u * (fb - fa)}
    end
  end
  return rows, id, string.format("%s+%s %.5f", a.k, b.k, u)
end

-- Fixed time of one tensor-parallel all-reduce (and of one pipeline hand-off),
-- microseconds: vLLM's custom all-reduce on H100 takes 8.5-11.8 us for
-- messages of 512 B to 32 KB at TP 2, 4 and 8, where the bytes cost next to
-- nothing (sgl-project/sglang pull request 2904, its table of vLLM's kernel
-- without CUDA graphs). Measured on H100 with NVLink; slower links take longer.
-- The default of a GPU without its own row in M.link_latency_us_gpu.
M.link_latency_us = 9

-- The same fixed time where a GPU's own small-message measurement of the
-- engine's custom all-reduce is published, microseconds (M.link_latency(g)):
--   mi300x  7.4: the median of vLLM's custom all-reduce ("vllm cr", the
--           kernel vLLM and SGLang run on ROCm below their limits) at 2 KB
--           to 64 KB, where the bytes cost next to nothing, on AMD MI300
--           (the pull requests name the MI300 series, the only GPUs their
--           quick all-reduce is enabled on): TP 2 7.07, 7.58, 7.53, 7.30,
--           7.66 us at 4, 8, 16, 32, 64 KB (ROCm/aiter pull request 801,
--           its fp16 kernel table, column "vllm cr"); TP 4 7.18, 7.26, 7.58
--           us at 2, 16, 32 KB (vllm-project/vllm pull request 19744, its
--           TP=4 kernel table, column "baseline", the custom all-reduce the
--           quick reduce is compared with). The eight values' median is
--           (7.30 + 7.53) / 2 = 7.415. No TP 8 row was found.
-- Searched without a table (2026-12-04): B200 / GB200 (TensorRT-LLM's
-- one-shot kernel, vLLM's FlashInfer all-reduce: tables of fused
-- all-reduce + RMSNorm on B300, vllm-project/vllm pull request 37756, not
-- the plain kernel on B200), L40S and the other PCIe GPUs.
M.link_latency_us_gpu = {
  mi300x = 7.4,
}

--- The fixed time of one collective on GPU g (a catalog entry), us.
function M.link_latency(g)
  return M.link_latency_us_gpu[g.id] or M.link_latency_us
end

-- NCCL AllReduce bus bandwidth by message size, GB/s, where a published
-- nccl-tests table exists for the GPU (M.nccl_allreduce[gpu] = {source =,
-- rows = {{bytes, busbw}, ...}}). nccl-tests' busbw is the message's bytes x
-- 2 (n - 1) / n over the measured time (NVIDIA/nccl-tests doc/PERFORMANCE.md,
-- "bus bandwidth": it reflects the hardware's speed "regardless of the
-- number of ranks"), so bytes x 2 (n - 1) / n / busbw(bytes) is the measured
-- time, NCCL's fixed cost included: the core adds no link_latency_us to an
-- all-reduce NCCL runs. The core interpolates in log bytes and clamps at the
-- ends (roofline.c). The three tables: Azure/AI-benchmarking-guide,
-- Benchmarks/NVIDIA/NCCLBandwidth.py (at 545c5c6a7e3e): `NCCL_ALGO=NVLS
-- ./build/all_reduce_perf -b 8 -e 8G -f 2 -g <GPUs> -n 40`, one process
-- driving all 8 GPUs of the VM, without CUDA graphs, the in-place busbw
-- column; the table's sizes are the powers of 2 from 1 KiB (printed 1K, 2K,
-- ..., 65K, 132K, 256K, 524K, 1M, ..., 33M, 67M, ...). Measured at 8 GPUs and
-- read at every TP size (busbw is meant to be independent of the ranks). The
-- A100 table names NVLS, an algorithm of NVSwitch 3 (Hopper): what NCCL 2.18.5
-- ran in its place on the A100 was not read. The H100 SXM and H200 tables
-- force NVLS at every size, the algorithm NCCL's tuner picks for a large
-- all-reduce on one NVSwitch node; where it would pick Ring or Tree (smaller
-- messages) an engine's NCCL may run faster than these rows. The MI300X
-- table is RCCL's (ROCm's NCCL, the library vLLM's and SGLang's pynccl load
-- on ROCm), from the same guide's AMD benchmark (Benchmarks/AMD/
-- RCCLBandwidth.py: rccl-tests `NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G
-- -f 2 -g 8 -n 40`, in-place busbw, the table's label "NVLS algorithm");
-- RCCL has no NVLS on Infinity Fabric, and which algorithm it ran with that
-- setting was not read. GPUs without a table keep the
-- flat rate (interconnect_gbps / 2 x efficiency.link): the B200 (NVIDIA/nccl
-- issue 1807: "830+" GB/s, sizes not
-- stated; 2026-12-04: no single-node 8 x B200 nccl-tests table by size was
-- found: the ones stored are of 2 nodes over InfiniBand, NVIDIA/nccl-tests
-- issue 389, GKE's A4 GPUDirect-RDMA page), GB200 (Azure's ND GB200 v6 table
-- is of 4 GPUs with NCCL_ALGO=Ring forced, not the algorithm NCCL picks on
-- NVLink 5; coreweave/nccl-tests pull request 43's NVL72 rack run starts at
-- 512 MB, 72 GPUs), L40S (none found) and every other GPU.
local KiB = 1024
local function pow2_rows(busbw)
  local rows = {}
  for i, v in ipairs(busbw) do rows[i] = {KiB * 2 ^ (i - 1), v} end
  return rows
end
M.nccl_allreduce = {
  -- Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_results.md at
  -- 3bb66cacc256, "NCCL Bandwidth": ND A100 v4, 8 x A100-SXM4-80GB, NCCL
  -- 2.18.5, CUDA 12.5; 1 KiB .. 8 GiB
  ["a100-sxm-80gb"] = {
    source = "Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_results.md@3bb66cacc256",
    rows = pow2_rows{0.04, 0.08, 0.17, 0.33, 0.67, 1.37, 2.70, 5.15, 10.11, 19.24, 36.22,
                     53.54, 71.43, 89.99, 109.22, 132.77, 166.63, 174.18, 213.87, 221.58,
                     228.10, 230.22, 230.48, 231.58}},
  -- Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md at
  -- 7f20e5fa3b2f, "NCCL Bandwidth": ND H200 v5, 8 x H200 141GB, NCCL 2.20.5,
  -- CUDA 12.6; 1 KiB .. 8 GiB
  -- Azure/AI-benchmarking-guide "Azure Results/ND_H100_v5_results.md" at
  -- f350e7e65b82, "NCCL Bandwidth": ND H100 v5, 8 x H100 80GB HBM3, NCCL
  -- 2.18.5, CUDA 12.6; 1 KiB .. 8 GiB
  ["h100-sxm"] = {
    source = "Azure/AI-benchmarking-guide Azure Results/ND_H100_v5_results.md@f350e7e65b82",
    rows = pow2_rows{0.07, 0.14, 0.27, 0.53, 0.95, 1.71, 2.72, 5.40, 10.86, 21.35, 43.70,
                     81.93, 128.73, 172.13, 234.45, 295.53, 361.78, 400.61, 423.38, 438.46,
                     466.35, 472.36, 475.54, 478.87}},
  h200 = {
    source = "Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md@7f20e5fa3b2f",
    rows = pow2_rows{0.06, 0.12, 0.23, 0.47, 0.93, 1.84, 3.72, 7.39, 14.75, 29.38, 52.96,
                     88.78, 138.44, 181.94, 240.41, 300.91, 368.11, 412.45, 432.24, 442.72,
                     467.58, 472.57, 477.41, 479.98}},
  -- Azure/AI-benchmarking-guide "ND MI300X v5 Benchmark Results", "RCCL
  -- Bandwidth" (Azure_Results/ND_MI300X_v5_results.md in the fork
  -- samuel-bohman/AI-benchmarking-guide at 3de0c294, the copy sim.lua's
  -- MI300X memory and GEMM rows cite): ND MI300X v5, 8 x MI300X, RCCL
  -- 2.22.3-develop, HIP 6.2.41133; 1 KiB .. 8 GiB (printed 1K .. 8G)
  mi300x = {
    source = "Azure AI-benchmarking-guide ND_MI300X_v5_results.md (fork samuel-bohman/"
      .. "AI-benchmarking-guide@3de0c294)",
    rows = pow2_rows{0.04, 0.07, 0.15, 0.29, 0.59, 1.13, 2.22, 4.18, 7.50, 13.01, 22.41,
                     43.41, 82.53, 131.57, 171.46, 230.35, 266.34, 290.81, 302.80, 308.89,
                     313.92, 315.06, 314.85, 316.82}},
}

-- Below which message size (bytes) the engine's own all-reduce kernel runs
-- a TP all-reduce; from it on NCCL (M.allreduce_custom_below(d); nil: no own
-- kernel modelled, every all-reduce on the flat link rate as before).
--   vLLM    CustomAllreduce: max_size 8192 x 1024, taken when `inp_size <
--           max_size`, world sizes 2, 4, 6, 8, more than 2 GPUs only fully
--           NVLink-connected (vllm-project/vllm vllm/distributed/
--           device_communicators/custom_all_reduce.py at 00d618aab604, the
--           same 8 MiB since the kernel's first release). From 0.11 on an SM
--           9.0 GPU (H100, H200) the torch symmetric-memory all-reduce may run
--           ahead of NCCL: VLLM_ALLREDUCE_USE_SYMM_MEM was turned on by default
--           (pull requests 24111, 25070), off again (24696 on 2025-09-11, before
--           0.10.2; 26925 on 2025-10-15) and is "1" in the stored envs.py of
--           main; which releases from 0.11 on default it on was not pinned.
--           When on it takes the messages below SYMM_MEM_ALL_REDUCE_MAX_SIZES
--           ["9.0"] (all_reduce_utils.py at 00d618aab604: 64 MiB at TP 2, 6
--           and 8, 32 MiB at TP 4) beyond the custom kernel's: no source gives
--           its bandwidth by size, so those messages keep the flat rate and
--           NCCL's curve starts at the larger of the two limits
--           (vllm_symm_mem_below), where NCCL runs either way.
--   SGLang  CustomAllreduce._MAX_CAR_SIZE = 8192 x 1024 on CUDA, 2 x 8192 x
--           1024 on ROCm ("crossover is at 16MB buffer size for ROCm":
--           M.sglang_rocm_car_below, read on the catalog's vendor "amd"
--           GPUs), the same `inp_size < max_size` test, world sizes and
--           NVLink rule (xGMI on ROCm: every size needs the GPUs fully
--           connected, as MI300X's 8 are) (sgl-project/sglang python/sglang/
--           srt/distributed/device_communicators/custom_all_reduce.py at
--           004e6561cb8a, the same at 263bc85d64ba, "Adapted from" vLLM
--           v0.6.4.post1's). At 263bc85d64ba dispatch_custom_allreduce runs
--           AITER's CustomAllreduce instead on ROCm (SGLANG_USE_AITER_AR
--           default "true", when the aiter package imports), whose cutoff
--           is 64 MiB (ROCm/aiter aiter/dist/device_communicators/
--           custom_all_reduce.py at 03644e50b4ca, _DEFAULT_CAR_MAX_SIZE =
--           8192 x 8192); the SGLang release that made it the default was
--           not pinned, so the 16 MiB stays.
--   vLLM on ROCm: the same CustomAllreduce and 8 MiB (its symmetric-memory
--           sizes are CUDA only); its QuickAllReduce runs only when
--           VLLM_ROCM_QUICK_REDUCE_QUANTIZATION is set, default "NONE"
--           (vllm/envs.py at f218f9c24d22; quick_all_reduce.py at 02cdf876519c,
--           pull request 19744), and
--           AITER's custom all-reduce only with VLLM_ROCM_USE_AITER (default
--           off; cuda_communicator.py at 00b5a01dd29b), so neither is modelled.
--   TensorRT-LLM  AllReduceStrategy AUTO: its one-shot / two-shot kernels for
--           messages within the custom all-reduce workspace, 8,000,000 bytes
--           at TP above 2 and 16,000,000 at TP 2, NCCL above
--           (tensorrt_llm/plugin/plugin.py max_workspace_size_auto,
--           cpp/tensorrt_llm/common/customAllReduceUtils.h
--           getMaxRequiredWorkspaceSize; docs/time.md, issue 18's A100
--           findings): `below` is the workspace + 1.
-- Other engines: nil. A GPU without M.nccl_allreduce rows: nothing changes.
M.allreduce_custom = {
  vllm = {below = 8192 * 1024, sizes = {[2] = true, [4] = true, [6] = true, [8] = true}},
  sglang = {below = 8192 * 1024, sizes = {[2] = true, [4] = true, [6] = true, [8] = true}},
}
M.trtllm_allreduce_workspace = {tp2 = 16000000, above2 = 8000000}
M.sglang_rocm_car_below = 2 * 8192 * 1024
-- vLLM's SYMM_MEM_ALL_REDUCE_MAX_SIZES["9.0"] by TP size, bytes, read on the
-- catalog's SM 9.0 GPUs (M.sm90, above)
M.vllm_symm_mem_below = {[2] = 64 * 1048576, [4] = 32 * 1048576, [6] = 64 * 1048576,
                         [8] = 64 * 1048576}

--- The message size (bytes) from which deployment d's TP all-reduces run
--- NCCL, or nil when its engine's path is not modelled. 0: every message
--- NCCL (a TP size the engine's own kernel does not support).
function M.allreduce_custom_below(d)
  local tp = d.tp or 1
  if d.budget == "trtllm" then
    local ws = M.trtllm_allreduce_workspace
    return (tp <= 2 and ws.tp2 or ws.above2) + 1
  end
  local own = M.allreduce_custom[d.budget]
  if own == nil then return nil end
  if not own.sizes[tp] then return 0 end
  if d.budget == "sglang" and d.gpu.vendor == "amd" then return M.sglang_rocm_car_below end
  if d.budget == "vllm" and M.sm90[d.gpu.id] and engines.vllm_at_least(d.engine_version, "0.11") then
    return math.max(own.below, M.vllm_symm_mem_below[tp])
  end
  return own.below
end

-- Host time of a step: the engine's work between GPU steps, added to the
-- step when the GPU waits for it (vLLM before async scheduling became its
-- default: engines.vllm async_scheduling), hidden up to the GPU's time by
-- engines that prepare the next step while the GPU runs this one (the core
-- takes the longer of the two): SGLang's overlap scheduler, on by default from 0.4
-- ("SGLang v0.4: Zero-Overhead Batch Scheduler", LMSYS blog, 2024-12-04),
-- and TensorRT-LLM's PyTorch backend ("Overlap Scheduler",
-- https://nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html).
--   launch_us    0.91 us of host time per kernel of the step: replaying
--                vLLM's decode CUDA graph of 2,187 kernels took 1.983 ms of
--                cudaGraphLaunch (sgl-project/sglang issue 29960, its table,
--                2026-07-24; SGLang's graph of 2,876 kernels 2.826 ms, 0.98 us
--                each); the GPU starts the graph's first kernel only once the
--                launch is done (sgl-project/sglang issue 5593: a 2 ms bubble
--                before each replay of a 64-layer model)
--   seq_host_us  1.1 us per scheduled request: vLLM V1's bookkeeping after a
--                step (Scheduler.update_from_output) measured 0.14 ms at 128
--                running requests and 0.29 ms at 256 (vllm-project/vllm pull
--                request 46112, its micro-benchmark)
M.host = {launch_us = 0.91, seq_host_us = 1.1}

-- The engine loop's own host work a step beyond its launches (scheduling,
-- input preparation, output processing and streaming), microseconds, by
-- engine (the deployment's budget; perf.loop_host_us), in the same host
-- time as launch_us and seq_host_us (waited for or hidden as they are):
--   sglang  308: a mock model whose forward busy-waits 2.632 ms (no kernel
--           is launched) decoded at a median TPOT of 2.94 ms at batch 1:
--           2.94 - 2.632 = 0.308 ms of the loop a step (tenstorrent/
--           tt-inference-server issue 3560, 2026-05-18, the tt-sglang-plugin
--           CPU mock, `vllm bench serve --backend openai-chat`, 128 in / 2048
--           out, concurrency 1). One batch size: no per-sequence part read
--   vllm, trtllm  0: no figure of the whole loop a step by release found
--           beyond vLLM V1's update_from_output (seq_host_us). vLLM V0
--           before 0.6's asynchronous output processor left 5-13 ms of GPU
--           idle a decode step (vllm-project/vllm issue 6854, model and
--           batch not given); kvplan has no release of that era. V0's
--           figures found (issue 18), all of the 0.5 era (vLLM main of
--           2024-07/08, before 0.6.0):
--             _process_model_outputs (detokenization, stop checks, output
--             objects) 0.2 ms at batch 1 and 3.4 ms at batch 32 (Llama3-70B
--             FP8, 4x H100, 128 in; vllm-project/vllm issue 6913, its
--             table, whose third row, 0.2 ms at batch 1024, contradicts the
--             other two): (3.4 - 0.2) / (32 - 1) = 0.103 ms a sequence and
--             0.2 - 0.103 = 0.097 ms a step
--             sampling, input preparation, output processing and the
--             scheduler together "can be 20 ms" at batch 200 (issue 6801,
--             comment of 2024-08-08): 20 / 200 = 0.1 ms a sequence, no
--             fixed part read; the output part alone (0.097 + 200 x 0.103 =
--             20.7 ms) takes all of it, so the rest cannot be told by
--             difference
--             v0.5.4 on an A6000 (Xeon Gold 5218 host), everything but the
--             forward ("Schedule": input tensors, detokenization, logging,
--             the scheduler) 10.6 ms an iteration at 128 requests, 24.6 at
--             512, 42.1 at 1024 (WukLab blog "Can Scheduling Overhead
--             Dominate LLM Inference Performance?", 2024-09-10, read off its
--             figure's SVG, WukLab/wuklab_sysml static/images/
--             scheduling_overhead/vLLM_A6000_Requests.svg; its labels 24.5,
--             32.1 and 33.5 % agree): (24.6 - 10.6) / 384 = 36 us and
--             (42.1 - 24.6) / 512 = 34 us a request, but whether the
--             requests sent or those in the batch is not said (max_num_seqs
--             is 256 by default, so 512 and 1024 are not one batch), and
--             the model is not named
--           None is used: from 0.6.0 the asynchronous output processor
--           (vllm-project/vllm pull request 7049: process_model_outputs
--           runs in a callback right before the sampler, overlapping the
--           forward; on by default in V0 on CUDA unless enforce_eager,
--           pipeline parallelism or speculative decoding: vllm/config.py
--           ModelConfig.verify_async_output_proc) hides the output part in
--           every V0 release kvplan has (0.6, 0.7, the 0.8-0.10 fallback),
--           and no figure of what stays serial (schedule(),
--           prepare_model_input, the driver's broadcast to the TP workers,
--           _advance_to_next_step) by batch size was found; pull request
--           7162 (0.6.0's object cache) cut that part by a share (+24 %
--           throughput), not to a time. Read
--           and not used (docs/time.md): V1's schedule() at 93-115 us a
--           call, running requests not stated (pull request 19057);
--           TensorRT-LLM's ~580 us an iteration of exposed GPU idle
--           (NVIDIA/TensorRT-LLM issue 13957), the host's excess over an
--           unstated GPU time
--           V1 (issue 18, its async-scheduling pull requests read for a
--           TPOT with and without --async-scheduling at one stated batch,
--           GPU and model, whose difference at low batch would be the host
--           time the GPU waited a step): none gives one. Pull request 19970
--           ("Implement Async Scheduling", 2025-06-23: the scheduler one
--           step ahead of the GPU) reports 3-15 % more throughput, "more
--           pronounced with smaller models and larger batch sizes", and "no
--           significant latency improvement ... for batch size 1 scenarios,
--           as scheduler overhead in those cases is already minimal"
--           (shares and words, no times); there only scheduling and
--           update_from_output overlap, input preparation and sampling
--           stay serial in the worker (pull request 23391: "only
--           deserialization of scheduler outputs is overlapped"). Pull
--           request 23569 ("[Perf][V1] Fully overlap model execution",
--           2025-08-25) also hides prepare_inputs and sampling's
--           pythonization under async scheduling, "expected speedup is
--           5-10 % over the current async scheduling" (a share). Pull
--           request 32618 (async scheduling with PP 4, Qwen3-30B-A3B FP8,
--           128 prompts of 2 in / 512 out) gives -31.8 % TPOT, a
--           pipeline's bubbles at 128 sequences, not a low batch's host
--           time. Read and not used for want of a CUDA GPU or a stated
--           model: vllm-project/vllm-ascend pull request 2783 (Ascend NPU,
--           eager: Qwen3-32B TPOT 44.20 ms sync, 41.86 scheduler-async,
--           41.73 fully overlapped at concurrency 48) and vllm-project/vllm
--           pull request 23914 (A100 TP 2, single-process executor, not
--           merged, model not named: 1,014 / 1,025 tokens/s at 32
--           sequences). So vLLM V1 stays at 0 in every release: the rows
--           before async became the default (kvplan's 0.11 row) wait for
--           launch_us x kernels + seq_host_us x sequences only, and PR
--           19970's own words put the loop's remaining part near 0 at
--           batch 1
-- No kvplan.factors row: launch_us x kernels is the same per-step constant,
-- which calibrate fits already.
M.loop_host_us = {sglang = 308}

-- A request's time outside the engine's steps as its client measures it,
-- milliseconds (perf.request_ms; kv.simulate adds it to every TTFT and E2E,
-- to no step, so throughput and TPOT do not move): the API server's HTTP
-- handling, the chat template and tokenization, the first detokenization and
-- stream chunk, the client's own parsing. By engine (the deployment's
-- budget), for a deployment served over HTTP (usage = "offline", vLLM's LLM
-- class, has none):
--   vllm    11.0: the client's TTFT less vLLM's own
--           vllm:time_to_first_token_seconds over the same requests,
--           +8.4 to +12.2 ms over the three OpenAI backends of `vllm bench
--           serve` (completions, chat, responses), median 11.0 of the five
--           rows read (vllm-project/vllm pull request 54628, "Backend
--           parity": Qwen2.5-0.5B-Instruct, 512 in / 128 out, concurrency 8,
--           vLLM 0.28.1rc1 on an RTX 4070 Laptop under WSL2; the sixth row
--           was not in the stored copy). The server's metric starts at the
--           request's arrival_time in the engine's frontend, so what the
--           API server does before that is in the gap; measured on one
--           release and one host CPU, taken for every vLLM release
--   sglang   6.9: TTFT less the forward with a mock model whose forward
--           busy-waits a fixed 2.632 ms, median TTFT 9.54 ms (`vllm bench
--           serve --backend openai-chat`, 128 in / 2048 out, concurrency 1;
--           tenstorrent/tt-inference-server issue 3560, 2026-05-18, the
--           tt-sglang-plugin CPU mock): HTTP, tokenization, the scheduler's
--           steps around the one prefill forward and the first stream chunk
--   others   0: no published figure found (TensorRT-LLM's trtllm-serve);
--           trtllm-bench runs in-process
-- The API server's serial work as a queue (issue 18) is perf.api_ms below
-- (M.api_ms), 0 unless given or fitted by `kvplan calibrate`. vLLM's
-- API server is one asyncio process by default (`--api-server-count`,
-- vllm-project/vllm pull request 17546, 2025-05-01), its tokenization on a
-- ThreadPoolExecutor(max_workers=1) (issue 25301) and its chat template on a
-- shared pool of `--preprocessing-thread-pool-workers` threads, default 1
-- (pull request 34789), so a burst queues in front of the engine. No source
-- read gives that work's time a request apart from a streamed token; the
-- nearest is the Python frontend's capacity with the engine mocked:
--   pull request 43469 (2026-05-23, "[Rust Frontend] Introduce mock engine
--     for benchmark baseline"): GB200, DP=4, a Rust mock engine with
--     one-token output chunks and no model, 32 prompt / 512 output tokens:
--     the Python frontend served 806.77 req/s, 413.1K output tok/s, at
--     client concurrency 1024 (the Rust frontend 4015.35 req/s on the same
--     mock, so neither the client nor the mock bounds it). At DP=4 with
--     the internal load balancer, `vllm serve` starts
--     api_server_count = data_parallel_size = 4 API servers
--     (vllm/entrypoints/cli/serve.py ServeSubcommand.cmd, 00a5fdd20935;
--     the count is not in the stored copy of the PR): 4 / 806.77 =
--     4.96 ms of one process a request with its 512-token stream, that is
--     a + 512 b = 4.96 ms for admission a and b a streamed token. Only
--     the other rows of its table, not in the stored copy, would split it:
--     b <= 9.7 us (a = 0) and a <= 4.96 ms (b = 0), and which it is
--     decides whether a burst of 1000 at one API server (DP=1) enters at
--     once or its last request waits up to 1000 x 4.96 ms = 5 s
-- Upper bounds from runs whose GPU time is not separated:
--   pull request 17546, DP=2 with one API server ("before"): 2x A100,
--     Llama-3.2-1B, ShareGPT at 120 req/s offered, 10,000 requests in
--     130.74 s = 76.5 req/s served, so at most 130.74 / 10,000 = 13.1 ms of
--     serial work a request (admission and its whole stream together; the
--     "after" figures were not in the stored copy, so how close the bound
--     is stays open)
--   pull request 12287 (V1 "online serving performance improvements",
--     2025-01-21), "before": one A100, Llama-3.2-1B, ShareGPT, 6,000
--     requests at concurrency 400 in 94.31 s with 1,211,959 output tokens
--     (202 a request): at most 15.7 ms a request, or 94.31 / 1,211,959 =
--     78 us a streamed token were it all output work; the GPU's share of
--     the same seconds is not separated
--   pull request 10635 (2024-11-25): tokenizing a 256K-token prompt takes
--     "a few hundred milliseconds", about 1 us a prompt token, stated
--     without a figure
--   the Rust frontend (issue 40846) and its incremental detokenizer
--     (pull request 46723: 334-745 us for a ~2.8K-token stream, 0.1-0.3 us
--     a token, Rust not vLLM's Python path); SemiAnalysisAI/InferenceX pull
--     request 1634 gives its TTFT gain as shares (8 % at 1k/1k, 22 % at
--     8k/1k), not times
--   SGLang's TokenizerManager and detokenizer: no figure beyond the 6.9 ms
--     above; NVIDIA/TensorRT-LLM pull request 16231 measured its own
--     single-threaded frontend's queue (3.82 s mean at concurrency 32) on
--     ~100K-token chats, another engine and another prompt scale
-- One sum is not a service time a request: without a and b apart there is
-- no queue to simulate, and splitting 11.0 into a serial part and the rest
-- has no source either, so request_ms stays one constant a request.
M.request_ms = {vllm = 11.0, sglang = 6.9}

-- The API server's serial work a request, milliseconds (perf.api_ms; the
-- simulator's api_s, engine/core/sim.c): one FIFO server in front of the
-- engine's waiting queue. vLLM's OpenAI server runs HTTP parsing, the chat
-- template and tokenization, request setup and the streamed output's
-- detokenization in one asyncio process (vllm/entrypoints/openai/
-- api_server.py; vllm/v1/engine/async_llm.py AsyncLLM.add_request and its
-- output_handler; vllm/v1/engine/output_processor.py), so a burst queues
-- there: a request sent at t reaches the engine at max(t, the previous
-- one's end) + api_ms, and its TTFT and E2E count from t. Unlike request_ms
-- (the same delay in every TTFT) it grows with load. Default 0 for every
-- engine: no source read gives the work a request apart from its stream
-- (the notes above: PR 43469's 4.96 ms is admission and a 512-token stream
-- together, on a GB200 host; PR 17546's 13.1 ms and PR 12287's 15.7 ms
-- are upper bounds with the GPU's time in them), so the user's own
-- benchmark fits it (factors.lua api_ms, `kvplan calibrate`). Under data
-- parallelism each simulated rank queues at its own API server (`vllm
-- serve` starts api_server_count = data_parallel_size, serve.py above). The
-- streamed output's share of the same process (a cost a token) is not modelled.
M.api_ms = 0

--- The client's time a request of d spends outside the engine's steps, ms.
function M.request_ms_default(d)
  local o = d.options or {}
  if o.usage == "offline" then return 0 end
  return M.request_ms[d.budget] or 0
end

-- Kernels a step launches, counted from vLLM's forward of a decoder layer
-- (vllm/model_executor/models/llama.py LlamaDecoderLayer.forward and
-- layers/fused_moe/fused_moe.py fused_experts), compiled with CUDA graphs:
--   layer   10: two fused residual-add RMSNorms, the qkv, o, gate_up and
--           down GEMMs, rotary embedding, the KV cache write, attention,
--           SiLU-and-multiply
--   moe     +4 a MoE layer: its MLP's three kernels become seven (router
--           GEMM, top-k softmax, moe_align_block_size, the w13 and w2
--           grouped GEMMs, SiLU-and-multiply, moe_sum)
--   shared  +4 with shared experts (their gate_up, activation and down GEMMs
--           and the add)
--   (the core adds the two all-reduces of a layer at tp > 1 and the
--   pipeline's hand-offs: engine/core/roofline.c)
--   head    8: the embedding gather, the final norm, the logits GEMM and the
--           sampler's five (to fp32, temperature, softmax, top-k/top-p,
--           the draw)
M.kernels = {layer = 10, moe = 4, shared = 4, head = 8}
-- The sampler's five of the head's (above)
M.sampler_kernels = 5
-- Of them, GEMMs (the kernels bound by the weights they read or their
-- FLOPs) and attention's: a layer's qkv, o, gate_up and down (4) and its
-- attention (1); a MoE layer's MLP trades gate_up and down for the router
-- GEMM and the w13 and w2 grouped GEMMs (+1); shared experts' gate_up and
-- down (+2); the head's logits GEMM (1). The rest (norms, rotary, the cache
-- write, activations, top-k, moe_align, moe_sum, the embedding gather, the
-- sampler) move activations.
M.gemm_kernels = {layer = 4, moe = 1, shared = 2, head = 1}

-- The GPU time a kernel takes at least, microseconds, even replayed in a
-- CUDA graph (no launch gap): 1.1 us, a pointwise `x + y` of two 1024-element
-- fp32 tensors captured 2000 times unrolled in one CUDA graph and replayed
-- (pytorch/pytorch issue 161104, 2025-08-20: 0.0011 ms a call; 0.0013 ms in
-- the variant the issue reports as anomalous). A step's kernels of each kind
-- (GEMMs, attention, the rest) take at least their count x this, whatever
-- their bytes and FLOPs (roofline.c step_once).
M.kernel_floor_us = 1.1

-- Bytes the sampler's kernels move for one sampled row of V logits,
-- greedy: vLLM V1's Sampler.forward (vllm/v1/sample/sampler.py at
-- 00ec97818a85) converts the row to fp32 (reads 2 V, writes 4 V), divides
-- it by the temperature in place (4 V + 4 V), takes its softmax in fp32
-- (4 V + 4 V) and the argmax (4 V): 26 V. Greedy because the serving
-- benchmarks send temperature 0 (vllm-project/vllm benchmarks/
-- backend_request_func.py at 011841309828, async_request_openai_completions
-- and async_request_openai_chat_completions: "temperature": 0.0); random
-- sampling adds q.exponential_() and probs.div_(q) (20 V more). The logits
-- are the whole vocabulary on every GPU (gathered over tp).
M.sampler_bytes_per_vocab = 26
-- SGLang's greedy row (issue 18): LogitsProcessor._get_logits ends with
-- `logits[:, : self.config.vocab_size].float()` (reads 2 V, writes 4 V; the
-- later forms copy into a float next_token_logits_buffer, the same bytes),
-- and Sampler.forward takes `torch.argmax(logits, -1)` when
-- sampling_info.is_all_greedy (reads 4 V), with no temperature or softmax:
-- 10 V, in two kernels where vLLM's sampler runs five
-- (python/sglang/srt/layers/logits_processor.py and layers/sampler.py,
-- read in stored forms of the 0.4 and 0.5 releases whose commits the store
-- does not name). Temperature 0 is greedy there too: SamplingParams turns a
-- temperature below _SAMPLING_EPS into top_k = 1 ("top_k = 1 means greedy
-- sampling"), which is_all_greedy tests.
M.sglang_sampler_bytes_per_vocab = 10
M.sglang_sampler_kernels = 2

-- Host time of one kernel launched without a CUDA graph (eagerly, from
-- Python), microseconds: 5.5. vLLM's CUDA-graph pull request measured Llama
-- 2 7B at batch 1 (5 prompt and 100 output tokens) at 1.05 s with a graph of
-- its decode step and 1.2 s without (vllm-project/vllm pull request 1440,
-- 2023-10-20): 1.5 ms more a decode step, which over the 328 kernels counted
-- here for a 32-layer Llama (32 x 10 + 8) is 4.57 us a kernel beyond
-- launch_us's 0.91: 5.48 us.
M.eager_launch_us = 5.48

-- The activation-quantization kernel before each fp8 W8A8 linear layer
-- (issue 18). vLLM V0 runs fp8 checkpoints whose activations are fp8 too
-- (per-tensor or per-channel weight scales, static or dynamic activation
-- scales) through apply_fp8_linear, which quantizes the layer's 16-bit input
-- with ops.scaled_fp8_quant and then runs the GEMM (ops.cutlass_scaled_mm on
-- CUDA, torch._scaled_mm on ROCm): two kernels a linear layer
-- (vllm/model_executor/layers/quantization/utils/w8a8_utils.py
-- apply_fp8_linear at 0039d4bdd8b5; fbgemm_fp8.py, Llama 3.1 405B FP8's
-- method, calls it with use_per_token_if_dynamic = True). V0 does not
-- torch.compile its model, so nothing fuses the quantization into the norm
-- or activation before it; V1 compiles the model (Inductor may fuse it), and
-- is left as before. Counted: one kernel before each quantized linear layer
-- of a layer (qkv, o, gate_up, down: 4 in a dense layer; a MoE layer's qkv,
-- o and shared experts' gate_up and down; the routed experts quantize
-- inside their fused kernel, the logits' head is not quantized), moving 3
-- bytes an element of the layer's input (its 16-bit read and fp8 write; the
-- per-token kernel's pass for the row's scale is not counted): the hidden
-- size into qkv and gate_up on every GPU, heads x head_dim into o and the
-- intermediate size into down split over tp.
--   floor a call (M.activation_quant_floor_us, us): vllm-project/vllm pull
--   request 49363 (H100, benchmarks/kernels/bench_fp8_gemm.py on
--   google/gemma-4-31B-it's N=12288 K=5376 and N=43008 K=5376, batch 1, 16,
--   64, 128): each row's time of fp8-tensor-w-token-a (scaled_fp8_quant with
--   use_per_token_if_dynamic, then cutlass_scaled_mm, replayed in a CUDA
--   graph: do_bench_cudagraph) less the same GEMM's fp8-tensor-w-tensor-a-
--   noquant, time = 2 M N K / TFLOP/s: 2.32, 4.01, 4.18, 4.37 us (N=12288)
--   and 3.68, 4.29, 3.86, 4.67 us (N=43008), median 4.10 us. The two columns
--   also differ in the GEMM's scale epilogue (per-token against per-tensor),
--   about 1 % of the GEMM at batch 1 on B200 (pull request 18778:
--   fp8-tensor-w-tensor-a-noquant 8.45 against fp8-channel-w-token-a-noquant
--   8.51 TFLOP/s), left in. The H200 has the H100's SMs and clocks (the
--   kernel is latency-bound at these batches: 128 x 5376 x 3 bytes is 0.6 us
--   of HBM), so it takes the same. A static-scale checkpoint's kernel skips
--   the per-token reduction and may be faster (B200, pull request 18778, N=6144
--   K=4096: fp8-tensor-w-tensor-a less its noquant 2.4 us at batch 1 and 16,
--   fp8-channel-w-token-a less its noquant 3.7 and 3.9 us), not told apart:
--   kvplan does not know a checkpoint's activation scales. Other GPUs: the
--   kernels' floor (kernel_floor_us), no table found (MI300X among them).
M.activation_quant_floor_us = {["h100-sxm"] = 4.10, ["h200"] = 4.10}

--- Does d run vLLM V0's activation-quantization kernel before each linear
--- layer (M.activation_quant_floor_us): vLLM V0 with fp8 W8A8 weights (the
--- fp8 GEMM class at the fp8 rate, not block-scaled)?
function M.activation_quant(d)
  if d.budget ~= "vllm" then return false end
  local row = engines.vllm[d.engine_version or engines.vllm_latest]
  if not (d.vllm_v0 or (row ~= nil and not row.v1)) then return false end
  local _, rate, fname = M.compute_tflops(d.gpu, d.weights, d.model)
  return M.gemm_class(fname, rate) == "fp8"
end

-- SGLang's overlap scheduler (on by default from 0.4, above) is off, so the
-- scheduler waits for each step's results before it prepares the next and
-- the host's time a step adds to it (event_loop_normal instead of
-- event_loop_overlap), where SGLang turns it off itself:
--   disable_overlap_schedule  the deployment's --disable-overlap-schedule
--   pp > 1         pipeline parallelism runs its own loop (event_loop_pp),
--                  and the 0.5 releases' ServerArgs refuse it with the
--                  overlap scheduler ("Pipeline parallelism is not
--                  compatible with overlap schedule, speculative decoding,
--                  or mixed chunked prefill", python/sglang/srt/
--                  server_args.py, read in stored forms whose commit the
--                  store does not name)
--   speculative    ServerArgs sets disable_overlap_schedule = True for EAGLE
--                  speculative decoding ("Overlap scheduler is disabled
--                  because of using eagle speculative decoding"): the
--                  early-2025 form of the 0.4 releases (with
--                  --enable-flashinfer-mla: "The radix cache, chunked
--                  prefill, and overlap scheduler are disabled because of
--                  using eagle speculative decoding") and the 0.5 forms (EAGLE,
--                  EAGLE3, standalone; NGRAM: "The overlap scheduler and mixed
--                  chunked prefill are disabled"), where only
--                  SGLANG_ENABLE_SPEC_V2 (off by default, not modelled)
--                  keeps it on. kvplan's speculative decoding under SGLang is
--                  any of them.
--   a multimodal model before 0.4.6  Scheduler.__init__: "Overlap scheduler
--                  is disabled for multimodal models" (model_config.
--                  is_multimodal; sgl-project/sglang PR #2235, merged before
--                  v0.4.0), turned back on by PR #5771 ("Turn on overlap
--                  scheduler for multimodal models", its MMMU timings of
--                  2025-04-28), after the v0.4.5.post2 release (PR #5582):
--                  the releases from 0.4.6 on are taken to have it (0.4.6 to
--                  0.4.6.post3 are not pinned; 0.4.6.post4, PR #6256, is
--                  after it). kvplan's multimodal model: one with a vision
--                  tower (the catalog's `vision`, what kv.deploy's SGLang
--                  fraction reads too, engines.sglang_vlm_factor).
-- Returns true, or false and why.
M.sglang_multimodal_overlap_from = "0.4.6"
function M.sglang_overlap(d)
  if d.disable_overlap_schedule then return false, "disable_overlap_schedule" end
  if (d.pp or 1) > 1 then return false, "pipeline parallelism (pp > 1)" end
  if d.speculative ~= nil then return false, "speculative decoding" end
  if rawget(d.model, "vision") ~= nil then
    if not engines.vllm_at_least(M.sglang_release(d), M.sglang_multimodal_overlap_from) then
      return false, "a multimodal model before SGLang " .. M.sglang_multimodal_overlap_from
    end
  end
  return true
end

--- Does the engine of d wait for the host between steps? vLLM: unless its
--- async_scheduling (the deployment's field, else the release row's);
--- SGLang: when its overlap scheduler is off (M.sglang_overlap).
function M.host_waits(d)
  if d.budget == "sglang" then return not M.sglang_overlap(d) end
  if d.budget ~= "vllm" then return false end
  -- the deployment's own --async-scheduling / --no-async-scheduling wins
  if d.async_scheduling ~= nil then return not d.async_scheduling end
  local row = engines.vllm[d.engine_version or engines.vllm_latest]
  return not (row and row.async_scheduling)
end

--- What a step of d's model reads and computes beyond the ledger (the
--- perf table's step facts, roofline.h): the routed experts' and the unread
--- weights' shares of the weight bytes, the layers' FLOPs a token, the
--- logits' FLOPs a row, the activation bytes a token moves, the kernels of
--- a step. Empty for a model without the shapes they need (a user's model
--- of params and active only: the core then reads every weight).
function M.step_facts(d)
  local m = d.model
  local H, V, L = m.hidden, m.vocab, m.layers
  if not (H and V and L and m.heads and m.head_dim and (m.params or 0) > 0) then return {} end
  local ok, c = pcall(m.weight_class_params, m)
  if not ok then return {} end
  -- bytes of each class in its format (the deployment's weight format, or a
  -- mixed checkpoint's own formats), as the ledger weighs them
  local shapes = m:class_shapes()
  local function bytes(k) return m:class_bytes(k, m:class_format(k, d.weights), c[k], shapes) end
  local all = 0
  for _, k in ipairs(models.weight_classes) do
    all = all + bytes(k)
  end
  if not (all > 0) then return {} end
  local E, k = m.experts or 0, m.experts_active or 0
  local moe = E > 0 and k > 0 and (c.experts or 0) > 0
  local idle = (m.tie_embeddings and 0 or bytes("embeddings")) + bytes("vision")
  local body = c.attention + c.mlp + c.shared_experts + c.other
               + (moe and c.experts * k / E or c.experts)
  -- activation elements a token moves per layer (16-bit) in the kernels
  -- between the GEMMs and attention, from the forward: on every GPU the two
  -- fused residual-add RMSNorms (read x and residual, write both: 8 H);
  -- split over tp: rotary on q and k (read and write, 2 (h + kv) hd), the
  -- cache write's read of k and v (2 kv hd), SiLU-and-multiply (read 2 I,
  -- write I). A MoE layer's experts see k copies of each token: their
  -- activation 3 k I_moe split, moe_sum's read of k rows and write of one,
  -- (k + 1) H on every GPU; shared experts 3 I_shared split. Plus the
  -- embedding row and the final norm, 3 H. The GEMMs' and attention's own
  -- reads and writes of activations belong to those kernels (small beside
  -- the weights where memory binds them, hidden where FLOPs do) and are left out
  local hq, hkv, hd = m.heads, m.kv_heads or m.heads, m.head_dim
  local Ld = moe and (m.dense_layers or 0) or L
  local Lm = L - Ld
  local rep = L * 8 * H + 3 * H
  local split = L * hd * (2 * hq + 4 * hkv) + Ld * 3 * (m.intermediate or 0)
  local mla = rawget(m, "mla")
  if mla and mla.kv_lora_rank and mla.rope_dim then
    -- MLA (DeepseekV2Attention): rotary on the q heads' and the one shared
    -- key's rope parts, the cache write's read of the latent and the rope
    -- key; the latent is replicated on every GPU of the group
    local r = mla.rope_dim
    rep = rep + L * (2 * r + mla.kv_lora_rank + r)
    split = L * 2 * hq * r + Ld * 3 * (m.intermediate or 0)
  end
  if moe then
    -- the routed experts' SiLU-and-multiply and moe_sum run inside fused_moe,
    -- whose measured time the experts' term already is (M.expert_gemm)
    local sh = m:shared_width()
    if sh > 0 then split = split + Lm * 3 * sh end
  end
  local K, G = M.kernels, M.gemm_kernels
  local shared = m:shared_width() > 0
  local sglang = d.budget == "sglang"
  -- the head's sampler: five kernels (M.kernels) under vLLM's, SGLang's
  -- greedy two (M.sglang_sampler_kernels)
  local kernels = L * K.layer + K.head - (sglang and M.sampler_kernels - M.sglang_sampler_kernels or 0)
  local gemms = L * G.layer + G.head
  if moe then
    kernels = kernels + Lm * (K.moe + (shared and K.shared or 0))
    gemms = gemms + Lm * (G.moe + (shared and G.shared or 0))
  end
  -- vLLM V0's activation quantization before each fp8 W8A8 linear layer
  -- (M.activation_quant): its kernels and the 3 bytes an element they move
  local quant, qrep, qsplit = 0, 0, 0
  if M.activation_quant(d) then
    local I, Ish = m.intermediate or 0, m:shared_width()
    quant = Ld * 4 + Lm * (2 + (shared and 2 or 0))
    qrep = 3 * (Ld * 2 * H + Lm * (H + (shared and H or 0)))
    qsplit = 3 * (L * hq * hd + Ld * I + (shared and Lm * Ish or 0))
    kernels = kernels + quant
  end
  local waits = M.host_waits(d)
  return {expert_share = moe and bytes("experts") / all or 0, idle_share = idle / all,
          body_flops = 2 * body, expert_flops = moe and 2 * c.experts * k / E or 0,
          head_flops = 2 * V * H, act_rep_bytes = 2 * rep + qrep,
          act_split_bytes = 2 * split + qsplit, kernels = kernels, gemm_kernels = gemms,
          attn_kernels = L, quant_kernels = quant,
          kernel_floor_us = M.kernel_floor_us,
          sampler_bytes = (sglang and M.sglang_sampler_bytes_per_vocab or M.sampler_bytes_per_vocab) * V,
          eager_launch_us = M.eager_launch_us, piecewise_kernels = M.piecewise_kernels * L,
          experts = moe and E or 0, experts_active = moe and k or 0,
          moe_layers = moe and Lm or 0, attn_share = bytes("attention") / all,
          launch_us = M.host.launch_us, seq_host_us = M.host.seq_host_us, host_overlap = not waits}
end

-- CUDA graphs by engine and release (roofline.h kvp_graphs): which steps
-- replay a captured graph, padded up to the next captured size, and which
-- run eagerly, each kernel launched from the host (M.eager_launch_us).
--   vLLM V1 (the 0.8 rows on): a step of at most the largest captured size
--            in tokens, decode or mixed, where the sizes
--            are [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) up
--            to max = min(2 x max_num_seqs, 512), those above
--            max_num_batched_tokens dropped (vllm/config/vllm.py
--            VllmConfig._set_cudagraph_sizes at 09f030eaf851; earlier V1
--            releases captured multiples of 8 above 256 as well, a padding
--            of at most 8 tokens more, not told apart). enforce_eager: none.
--            Piecewise graphs (CUDAGraphMode PIECEWISE, the default of 0.8 to
--            0.10): the graphs run between the attention ops, which run
--            eagerly ("piecewise cudagraph capture, excluding cudagraph-
--            unsupported operations (mainly attention)", docs.vllm.ai
--            design/cuda_graphs), each layer's KV cache write and attention
--            kernel launched from the host (vllm/v1/attention/backends/
--            flash_attn.py FlashAttentionImpl.forward: reshape_and_cache_flash,
--            then the attention; M.piecewise_kernels). From 0.11
--            (FULL_AND_PIECEWISE "as the CUDA graph mode default", the v0.11.0
--            release notes) a decode-only step replays one full graph,
--            attention inside; a mixed one stays piecewise.
--   vLLM V0 (0.6, 0.7): decode-only steps of at most min(max_num_seqs
--            rounded up to 8, 256) sequences (vllm/worker/model_runner.py
--            _BATCH_SIZES_TO_CAPTURE = [1, 2, 4] + [8 i for i in 1..32],
--            _get_max_graph_batch_size); prefill and mixed steps eager
--   SGLang   decode-only steps of at most cuda_graph_max_bs sequences
--            (python/sglang/srt/model_executor/model_runner.py forward: a
--            graph for a batch whose forward_mode is_cuda_graph (decode,
--            target verify, idle) and that cuda_graph_runner.py can_run,
--            bs <= max_bs, padded unless disable_padding; the sizes of
--            server_args.py _generate_cuda_graph_batch_sizes); its prefill
--            (extend) batches run eagerly
--   TensorRT-LLM's PyTorch backend (the 1.0 rows): decode-only batches of
--            exactly a captured size, no padding: TorchLlmArgs.cuda_graph_config
--            defaults to CudaGraphConfig() ("enabled for batches that consist
--            of decoding requests *only*"), whose max_batch_size 0 becomes 128
--            and whose enable_padding is False, so the sizes are
--            list(range(1, 32)) + [32, 64, 128] (tensorrt_llm/llmapi/
--            llm_args.py validate_cuda_graph_config and
--            _generate_cuda_graph_batch_sizes; the same in BaseCudaGraphConfig
--            at 0004396720054f). Any other batch runs eagerly, at
--            M.eager_launch_us (vLLM's PyTorch eager figure, assumed for
--            TensorRT-LLM's PyTorch eager too) hidden behind the GPU by its
--            overlap scheduler. trtllm-bench's and trtllm-serve's own
--            settings of it are not read here.
--   TensorRT-LLM's engine path and the others: not modelled (every step at
--            launch_us)
--   vLLM V0's max_seq_len_to_capture: a decode-only step whose longest
--            sequence (max_decode_seq_len: prompt and output with the token
--            it decodes) is longer runs eagerly (model_runner.py
--            _use_captured_graph; default 8192, engines.lua
--            vllm_v0_max_seq_len_to_capture; the core's graph_seq_max). V1
--            picks its graphs by tokens alone and ignores it.
-- Not modelled: V1's piecewise graphs launch attention outside the graph
-- (eagerly) in mixed steps.
M.graph_kinds = {none = 0, decode = 1, tokens = 2, sglang = 3, full_decode = 4, exact = 5}
-- TensorRT-LLM's PyTorch backend: CudaGraphConfig's max_batch_size when unset
M.trtllm_graph_max = 128
-- kernels a layer launches outside a piecewise graph: the KV cache write
-- and the attention
M.piecewise_kernels = 2

local function v1_graph_max(seqs, tokens)
  -- capped before doubling: 2 * seqs wrapped past 2^62 (a negative graph_max)
  local m = math.min(2 * math.min(seqs, 256), 512, tokens or math.huge)
  if m >= 256 then return 256 + (m - 256) // 16 * 16 end
  if m >= 8 then return m // 8 * 8 end
  if m >= 4 then return 4 end
  return m
end

--- d's CUDA graphs: kind, largest captured size (M.graph_kinds, roofline.h
--- kvp_graphs), at the scheduler's max_num_seqs and max_num_batched_tokens
--- (nil: the engine's defaults for d).
function M.cuda_graphs(d, seqs, tokens)
  local K = M.graph_kinds
  if d.budget == "sglang" then
    -- --disable-cuda-graph (kv.deploy's enforce_eager): every step eager
    if d.enforce_eager then return K.sglang, 0 end
    return K.sglang, require("kvplan.deploy").sglang_graph_bs(d)
  end
  if d.budget == "trtllm" then
    local row = engines.trtllm_version(d.engine_version)
    if row.backend == "pytorch" then return K.exact, M.trtllm_graph_max end
    return K.none, 0
  end
  if d.budget ~= "vllm" then return K.none, 0 end
  local row = engines.vllm[d.engine_version or engines.vllm_latest]
  local v0 = d.vllm_v0 or (row ~= nil and not row.v1)
  if d.enforce_eager then return v0 and K.decode or K.tokens, 0 end
  if seqs == nil then
    local deploy = require "kvplan.deploy"
    local t, s = deploy.engine_limits(d, {engine_version = d.engine_version, max_num_seqs = d.max_num_seqs})
    seqs, tokens = s, tokens or t
  end
  if v0 then return K.decode, (math.min(seqs, 256) + 7) // 8 * 8 end
  local kind = engines.vllm_at_least(d.engine_version, "0.11") and K.full_decode or K.tokens
  return kind, v1_graph_max(seqs, tokens)
end

--- The longest sequence d's decode graphs hold (roofline.h graph_seq_max):
--- vLLM V0's max_seq_len_to_capture (given, else 8192); 0 (no limit) under
--- V1, enforce_eager and the other engines.
function M.graph_seq_max(d)
  if d.budget ~= "vllm" or d.enforce_eager then return 0 end
  local row = engines.vllm[d.engine_version or engines.vllm_latest]
  if not (d.vllm_v0 or (row ~= nil and not row.v1)) then return 0 end
  return d.max_seq_len_to_capture or engines.vllm_v0_max_seq_len_to_capture
end

-- The keys of kv.simulate's efficiency and perf tables, in order, with what
-- each sets (`kvplan simulate` takes them as efficiency.KEY= and perf.KEY=).
M.efficiency_fields = {
  {"memory", "fraction of HBM bandwidth the step reads at"},
  {"compute", "fraction of the peak FLOP/s the step computes at"},
  {"link", "fraction of the GPU link's bandwidth the collectives move at"},
  {"experts", "fraction of the routed experts' roofline their grouped GEMMs reach"},
}
M.perf_fields = {
  {"hbm_gbps", "the GPU's memory bandwidth, GB/s"},
  {"tflops", "the GPU's dense peak, TFLOP/s"},
  {"link_gbps", "the GPU link's bandwidth, GB/s"},
  {"link_latency_us", "a collective's latency, us"},
  {"step_overhead_ms", "fixed time added to every step, ms"},
  {"launch_us", "host time a kernel replayed in a CUDA graph, us"},
  {"eager_launch_us", "host time a kernel launched without a graph, us"},
  {"seq_host_us", "host time a scheduled sequence, us"},
  {"loop_host_us", "the engine loop's host time a step, us"},
  {"kernel_floor_us", "the least GPU time of a kernel, us"},
  {"attn_floor_us", "the least GPU time of a decode attention call, us"},
  {"request_ms", "a request's time outside the engine's steps (API server, client), ms"},
  {"api_ms", "the API server's serial work a request, queued FIFO in front of the engine, ms"},
}
local eff_keys, perf_keys = {}, {}
for _, f in ipairs(M.efficiency_fields) do eff_keys[f[1]] = true end
for _, f in ipairs(M.perf_fields) do perf_keys[f[1]] = true end

--- The dense peak (TFLOP/s) a deployment computes at: NVFP4 weights on a GPU
--- with fp4 tensor cores (Blackwell) its fp4 rate (NVFP4 checkpoints
--- quantize activations to NVFP4 too: W4A4), fp8 weights on a GPU
--- with fp8 tensor cores use its fp8 rate, int8 weights (W8A8) its int8
--- rate; every other format (16-bit, and weight-only int4/int8 kernels that
--- compute in 16 bits) the bf16 rate, else the fp16 rate. A mixed
--- checkpoint of `model` (its weight_formats: FP8 linear layers with block
--- scales and 16-bit norms and embeddings, MXFP4 experts beside 16-bit
--- attention) computes at the rate of the class that holds most of a
--- token's FLOPs: attention, the dense MLPs or the experts a token uses.
--- Returns the peak, the rate's name and the format's name it was chosen by.
function M.compute_tflops(gpu, weights, model)
  local name = weights and weights.name or ""
  local wf = model and rawget(model, "weight_formats")
  if wf ~= nil and name == model:mixed_format_name() then
    local ok, c = pcall(model.weight_class_params, model)
    if ok then
      local pick = (model.experts or 0) > 0 and (model.experts_active or 0) / model.experts or 1
      local best, most = nil, -1
      for _, k in ipairs({"attention", "mlp", "experts"}) do
        local f = (c[k] or 0) * (k == "experts" and pick or 1)
        if f > most then best, most = k, f end
      end
      name = wf[best] ~= nil and formats.get(wf[best], "weight_formats." .. best).name
             or model:dtype_format().name
    end
  end
  if name:find("^nvfp4") and gpu.fp4_tflops then return gpu.fp4_tflops, "fp4", name end
  if name:find("^fp8") and gpu.fp8_tflops then return gpu.fp8_tflops, "fp8", name end
  if name == "int8" and gpu.int8_tops then return gpu.int8_tops, "int8", name end
  if gpu.bf16_tflops then return gpu.bf16_tflops, "bf16", name end
  return gpu.fp16_tflops, "fp16", name
end

--- Check a deployment's time options (kv.deploy calls it): efficiency,
--- perf overrides, price_per_hour.
function M.check_options(opts)
  if opts.efficiency ~= nil then
    if type(opts.efficiency) ~= "table" then
      util.raise("field 'efficiency' must be a table {memory =, compute =, link =, experts =}, got %s",
                 type(opts.efficiency))
    end
    util.check_keys(opts.efficiency, eff_keys, "efficiency")
    for k, v in util.sorted_pairs(opts.efficiency) do
      if type(v) ~= "number" or not (v > 0 and v <= 1) then
        util.raise("efficiency '%s' must be in (0, 1], got %s", k, util.shown(v))
      end
    end
  end
  if opts.perf ~= nil then
    if type(opts.perf) ~= "table" then util.raise("field 'perf' must be a table, got %s", type(opts.perf)) end
    util.check_keys(opts.perf, perf_keys, "perf")
    -- each rate and time as the core's kvp_perf_check will (roofline.c):
    -- checked here too, so that `kvplan simulate perf.hbm_gbps=0` is a usage
    -- error naming the argument (it was the core's "field 'hbm_gbps'" at the
    -- script's line, status 1)
    for _, f in ipairs(M.perf_fields) do
      local k, v = f[1], opts.perf[f[1]]
      local positive = k == "hbm_gbps" or k == "tflops"
      if v ~= nil and k ~= "request_ms" and k ~= "api_ms"
         and (type(v) ~= "number" or not (v < math.huge and (positive and v > 0 or not positive and v >= 0))) then
        util.raise("perf '%s' must be a number %s (%s), got %s", k, positive and "> 0" or ">= 0", f[2],
                   util.shown(v))
      end
    end
    local r = opts.perf.request_ms
    if r ~= nil and (type(r) ~= "number" or not (r >= 0 and r < math.huge)) then
      util.raise("perf 'request_ms' must be a number >= 0 (milliseconds a request spends outside "
                 .. "the engine's steps), got %s", util.shown(r))
    end
    local a = opts.perf.api_ms
    if a ~= nil and (type(a) ~= "number" or not (a >= 0 and a < math.huge)) then
      util.raise("perf 'api_ms' must be a number >= 0 (milliseconds of the API server's serial "
                 .. "work a request), got %s", util.shown(a))
    end
  end
  local p = opts.price_per_hour
  if p ~= nil and (type(p) ~= "number" or not (p >= 0 and p < math.huge)) then
    util.raise("field 'price_per_hour' must be a number >= 0 (USD per GPU hour), got %s", util.shown(p))
  end
end

--- The rates the core's step time uses for deployment d (a table), or nil
--- and why when the GPU lacks them.
function M.rates(d)
  local o = d.options_time or {}
  local g, given = d.gpu, o.perf or {}
  local eff = {}
  local by_gpu = M.efficiency_by_gpu[g.id] or {}
  local peak, rate, fname = M.compute_tflops(g, d.weights, d.model)
  for k in pairs(eff_keys) do
    local own = by_gpu[k]
    if type(own) == "table" then own = own[rate] end
    eff[k] = (o.efficiency or {})[k] or own or M.efficiency[k]
  end
  -- routed experts: the benchmark curve of M.expert_gemm unless a factor is given
  eff.experts = (o.efficiency or {}).experts
  local tflops = given.tflops or peak
  local hbm = given.hbm_gbps or g.hbm_gbps
  if hbm == nil or tflops == nil then
    return nil, string.format("gpu '%s' has no %s in the catalog: give perf = {hbm_gbps = ..., "
      .. "tflops = ...}", tostring(g.id or g.name or "custom"),
      hbm == nil and "'hbm_gbps'" or "dense tensor rate")
  end
  local acceptance = 0
  if d.speculative then acceptance = d.speculative.acceptance or 0 end
  local p = M.step_facts(d)
  p.hbm_gbps, p.tflops, p.link_gbps = hbm, tflops, given.link_gbps or g.interconnect_gbps or 0
  p.mem_eff, p.flop_eff, p.link_eff = eff.memory, eff.compute, eff.link
  -- the dense GEMMs by M where published rows exist for this GPU and format,
  -- unless the user's efficiency gives a flat factor (or perf its own rates)
  local user = o.efficiency or {}
  if given.hbm_gbps == nil and given.tflops == nil then
    local class = M.gemm_class(fname, rate)
    -- SGLang before DeepGEMM: its Triton block-FP8 kernel (M.block_fp8_kernel)
    if class == "fp8_block" and M.block_fp8_kernel(d) == "triton" then class = "fp8_block_triton" end
    local mem, comp = M.gemm_curves(g, class, peak)
    if user.memory == nil then p.gemm_memory = mem end
    if user.compute == nil then p.gemm_compute = comp end
  end
  p.expert_eff = (p.experts or 0) > 0 and eff.experts or 0
  if (p.experts or 0) > 0 and eff.experts == nil then
    local rows = M.expert_curve(d)
    p.expert_tpe, p.expert_frac = {}, {}
    for i, r in ipairs(rows) do p.expert_tpe[i], p.expert_frac[i] = r[1], r[2] end
  end
  p.link_latency_us = given.link_latency_us or M.link_latency(g)
  -- the TP all-reduces by message size where the GPU has an NCCL table and
  -- the engine's path is known, unless the user gives the link's rate or
  -- its efficiency (a flat rate then, as the GEMM curves give way)
  local nccl = M.nccl_allreduce[g.id]
  local below = M.allreduce_custom_below(d)
  if nccl and below and given.link_gbps == nil and user.link == nil then
    p.nccl_bytes, p.nccl_busbw = {}, {}
    for i, r in ipairs(nccl.rows) do p.nccl_bytes[i], p.nccl_busbw[i] = r[1], r[2] end
    p.ar_custom_below = below
  end
  p.step_overhead_ms = given.step_overhead_ms or 0
  p.launch_us = given.launch_us or p.launch_us
  p.seq_host_us = given.seq_host_us or p.seq_host_us
  p.loop_host_us = given.loop_host_us or M.loop_host_us[d.budget] or 0
  p.kernel_floor_us = given.kernel_floor_us or p.kernel_floor_us
  -- attention's own floor a call where published (M.attention_floor_us); a
  -- user's kernel_floor_us applies to attention too unless attn_floor_us is given
  p.attn_floor_us = given.attn_floor_us
  if p.attn_floor_us == nil and given.kernel_floor_us == nil then
    p.attn_floor_us = M.attention_floor_us(d)
  end
  -- the activation-quantization kernels' own floor where published (M.activation_quant_floor_us);
  -- a user's kernel_floor_us applies to them too
  if (p.quant_kernels or 0) > 0 and given.kernel_floor_us == nil then
    p.quant_floor_us = M.activation_quant_floor_us[g.id]
  end
  p.eager_launch_us = given.eager_launch_us or p.eager_launch_us
  p.gemm_tile_m = M.gemm_tile_m(d)
  p.request_ms = given.request_ms or M.request_ms_default(d)
  p.api_ms = given.api_ms or M.api_ms
  p.graphs, p.graph_max = M.cuda_graphs(d)
  p.graph_seq_max = M.graph_seq_max(d)
  p.acceptance, p.price_per_hour = acceptance, o.price_per_hour or g.price_per_hour or 0
  for k, v in pairs(M.attention_rates(d, o.efficiency)) do p[k] = v end
  -- attention without its backend's rates computes in its inputs' dtype: on
  -- a 16-bit KV cache at the GPU's 16-bit peak and compute factor, not at an
  -- fp8/int8/fp4 checkpoint's (the core picks it by the KV format:
  -- roofline.c kvp_cost_init, attn16_tflops)
  if given.tflops == nil and rate ~= "bf16" and rate ~= "fp16" then
    local t16, r16 = g.bf16_tflops, "bf16"
    if t16 == nil then t16, r16 = g.fp16_tflops, "fp16" end
    if t16 ~= nil then
      local own = by_gpu.compute
      if type(own) == "table" then own = own[r16] end
      p.attn16_tflops = t16
      p.attn16_eff = (o.efficiency or {}).compute or own or M.efficiency.compute
    end
  end
  -- ... and on a KV cache of 8 bits or fewer under an NVFP4 checkpoint (the
  -- GEMMs at the fp4 peak), at most at the GPU's fp8 peak, at the GEMMs'
  -- compute factor (issue 18): an attention kernel's MMAs take its query and
  -- KV, 8-bit at the least, and the fp4 rate needs 4-bit operands. TensorRT-LLM's
  -- context kernel on SM100 for an fp8 KV cache takes e4m3 Q and KV
  -- (NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/cubin/
  -- FmhaSm100Kernel_QE4m3KvE4m3AccFp32OE4m3H128LayoutPagedKvMaskCausalP32VarSeq-
  -- LenTileSizeQ128PersistentContext_cubin.cpp at e88da961c51b); FlashInfer's
  -- FA2 prefill on an fp8 KV cache repacks K and V to bf16 (flashinfer-ai/
  -- flashinfer#3485), slower still. B200: 4500 of 9000 TFLOPS (DGX B200
  -- datasheet: FP8 72 and FP4 144 PFLOPS sparse for 8 GPUs, halved). No B200
  -- table of an fp8 context kernel was found (docs/time.md, B200 attention).
  if given.tflops == nil and rate == "fp4" and p.attn_tflops == nil and d.kv.bits < 16
     and g.fp8_tflops ~= nil then
    p.attn_tflops = g.fp8_tflops
  end
  -- a sparse-attention indexer (DeepSeek-V3.2) scores in fp8 whatever the
  -- weights' format: its queries are quantized to fp8 (per_token_group_quant_fp8)
  -- and its keys cached in fp8, the logits by DeepGEMM's fp8 MQA kernels
  -- (vllm-project/vllm vllm/model_executor/models/deepseek_v2.py Indexer at
  -- 002d6073aa03, vllm/model_executor/layers/sparse_attn_indexer.py at
  -- 006475fe481a): at the GPU's fp8 peak (roofline.c index_tflops), the
  -- weights' peak on a GPU without one
  local mla = rawget(d.model, "mla")
  if given.tflops == nil and type(mla) == "table" and (mla.index_topk or 0) > 0
     and g.fp8_tflops ~= nil then
    p.index_tflops = g.fp8_tflops
  end
  return p
end

--- The rates of deployment d (M.rates); an error when the GPU lacks them.
function M.perf(d)
  local p, why = M.rates(d)
  if p == nil then util.raise("%s", why) end
  return p
end

--- Step times of d at `context` tokens and `concurrency` sequences:
--- {tpot_ms, ttft_ms, tokens_per_s, bound, kv_read_share, usd_per_mtok, ...};
--- perf: other rates than d's own (M.perf's table, factors.perf_at).
function M.time(d, context, concurrency, perf)
  return core.time(d:spec(), perf or M.perf(d), util.count(context, "context"),
                   util.count(concurrency or 1, "concurrency"))
end

-- ---- workloads -------------------------------------------------------------

-- A trace: CSV with columns arrival_s, prompt_tokens, output_tokens (names
-- "arrival", "prompt", "output" also accepted), one request a row.
local trace_names = {arrival = "arrival", arrival_s = "arrival", prompt = "prompt",
                     prompt_tokens = "prompt", output = "output", output_tokens = "output"}

function M.read_trace(path)
  if type(path) ~= "string" then util.raise("field 'trace' must be a CSV file name, got %s", type(path)) end
  local rows, lines = csv.read(path)
  if rows == nil then util.raise("%s", lines) end
  local col, out = nil, {arrival = {}, prompt_tokens = {}, output_tokens = {}}
  for i, row in ipairs(rows) do
    if #row == 1 and row[1] == "" then goto continue end
    if col == nil then
      col = {}
      for j, name in ipairs(row) do
        local k = trace_names[util.trim(name)]
        -- one column twice (arrival_s and arrival): the last one won silently
        if k and col[k] then
          util.raise("%s:%d: the trace names its %s column twice (column %d '%s'; expected one)", path,
                     lines[i], k, j, util.escape(util.trim(name), 60))
        end
        if k then col[k] = j end
      end
      for _, k in ipairs{"arrival", "prompt", "output"} do
        if col[k] == nil then
          util.raise("%s:%d: the trace needs a column '%s'", path, lines[i], k)
        end
      end
    else
      local function num(k, int)
        local v = tonumber(row[col[k]])
        -- token counts in decimal, as the command line's (kv.options:
        -- '0x10' and '1e3' were 16 and 1000)
        if int and v ~= nil and not util.decimal(row[col[k]]) then
          util.raise("%s:%d: %s '%s' must be a whole number written in decimal", path, lines[i], k,
                     util.escape(row[col[k]]))
        end
        -- an arrival in decimal too ('0x10' was 16 s)
        if not int and v ~= nil and not util.decimal_number(row[col[k]]) then v = nil end
        if v == nil or (int and v ~= v // 1) or v ~= v then
          util.raise("%s:%d: bad %s '%s' (expected %s)", path, lines[i], k, util.escape(row[col[k]] or ""),
                     int and "an integer" or "a number of seconds")
        end
        return v
      end
      local n = #out.arrival + 1
      out.arrival[n], out.prompt_tokens[n], out.output_tokens[n] =
        num("arrival"), num("prompt", true) // 1, num("output", true) // 1
      -- what the simulator takes (engine/core/sim.c kvp_sim_run: an arrival
      -- a time >= 0, a prompt and an output of >= 1 token), at the file's
      -- line: a prompt of 0 or an arrival of 1e999 (inf) was "request 1:
      -- prompt and output must be >= 1 token" at the script's line, status 1
      if not (out.arrival[n] >= 0 and out.arrival[n] < math.huge) then
        util.raise("%s:%d: arrival '%s' must be a finite time >= 0 s", path, lines[i],
                   util.escape(row[col.arrival]))
      end
      for _, k in ipairs{"prompt", "output"} do
        if out[k .. "_tokens"][n] < 1 then
          util.raise("%s:%d: %s '%s' must be >= 1 token", path, lines[i], k, util.escape(row[col[k]]))
        end
      end
    end
    ::continue::
  end
  if #out.arrival == 0 then util.raise("%s: the trace holds no request", path) end
  return out
end

-- ---- the simulator -----------------------------------------------------------

local sim_fields = {requests = true, prompt = true, output = true, rate = true, trace = true,
                    range = true,
                    scheduler = true, seed = true, swap = true, max_steps = true,
                    max_concurrency = true, phase = true, kv_transfer_ms = true,
                    long_prefill_token_threshold = true}

-- The schedulers kv.simulate runs (engine/core/sim.c kvp_sched), in order.
M.scheduler_list = "'continuous', 'no_evict', 'static' or 'sglang'"
M.schedulers = {continuous = true, no_evict = true, static = true, sglang = true}

local Result = {}
Result.__index = Result
Result.__name = "kvplan.SimResult"

--- r:timeline(path): the per-step series as CSV (step, start_s, step_ms,
--- running, waiting, kv_blocks_used, kv_cache_usage_perc, tokens,
--- prefill_tokens, preempted, bound). Returns the rows written.
function Result:timeline(path)
  local report = require "kvplan.report"
  local given = path
  path = report.output_path(path)
  report.claim(path, given)
  local ok, n = pcall(self.sim.timeline, self.sim, path)
  report.release(path)
  if not ok then error(n, 0) end
  return n
end

--- r:goodput{ttft_ms =, tpot_ms =, e2e_ms =}: the requests within every
--- target given (engine/core/sim.c kvp_sim_goodput; a request of one output
--- token has no TPOT), and how many miss each: met, {ttft =, tpot =, e2e =}.
function Result:goodput(t)
  if type(t) ~= "table" then util.raise("goodput needs a table of targets {ttft_ms =, tpot_ms =, e2e_ms =}") end
  -- a misspelt target ({ttft = 100}) counted every request as met; an SLA
  -- (kv.plan.sla, with its percentile and goodput) passes as it is
  if getmetatable(t) == nil then
    util.check_keys(t, {ttft_ms = true, tpot_ms = true, e2e_ms = true}, "goodput targets")
  end
  for _, k in ipairs{"ttft_ms", "tpot_ms", "e2e_ms"} do
    if t[k] ~= nil then util.number(t[k], k) end
  end
  local met, a, b, c = self.sim:goodput(t.ttft_ms or 0, t.tpot_ms or 0, t.e2e_ms or 0)
  return met, {ttft = a, tpot = b, e2e = c}
end

function Result:__tostring()
  return string.format("kvplan.SimResult (%d requests, %.1f output tokens/s)", self.requests,
                       self.throughput_tokens_s)
end

--- kv.simulate{deployment options..., requests =, prompt =, output =,
--- rate = | trace =, scheduler =, seed =, swap =, max_steps =, max_concurrency =,
--- range =, phase =, kv_transfer_ms =}. phase = "prefill" | "decode": one
--- instance of a disaggregated pool (engine/core/sim.c): "prefill" serves
--- each prompt and lets the request go at its first token (ttft and e2e add
--- kv_transfer_ms); "decode" receives each request kv_transfer_ms after its
--- arrival (when its prefill ended) with its prompt's KV, holds its blocks
--- without computing them, and decodes the rest of its output (latencies
--- from the KV's arrival). range = true: the same workload also simulated with every
--- factor of the step time at the slow and at the fast end of its
--- uncertainty (kvplan.factors ends: a profile's interval, else the default
--- spread), giving throughput_tokens_s_lo/hi and ttft_ms_lo/hi,
--- tpot_ms_lo/hi, e2e_ms_lo/hi (each {mean, p50, p90, p99, max}).
-- kv.simulate's work before the run: the options checked, the deployment
-- built (build(dopts): deploy.new's deployment of those options, a
-- caller's cache of them; nil: deploy.new) and the core's spec. Returns a
-- table {spec, d, sopts, ranks} for finish and M.simulate_means.
local function prepare(opts, build)
  if type(opts) ~= "table" then util.raise("simulate needs an options table, got %s", type(opts)) end
  local deploy = require "kvplan.deploy"
  build = build or deploy.new
  -- the engines' own names (max_running_requests, max_batch_size, ...)
  opts = deploy.rename(opts, "simulation")
  local dopts, sopts = {}, {}
  for k, v in util.sorted_pairs(opts) do -- of several unknown options, the same one every run
    if sim_fields[k] then sopts[k] = v
    elseif deploy.fields[k] then dopts[k] = v
    else
      local names = util.sorted_keys(deploy.fields)
      for n in pairs(sim_fields) do names[#names + 1] = n end
      util.raise("unknown simulation option '%s'%s", util.shown(k), util.suggest(util.shown(k), names))
    end
  end
  -- max_num_seqs sizes vLLM's profiling run too; other engines take it here
  -- only: the deployment is built without it (its options stay a deployment's,
  -- so r.deployment:with{} rebuilds it)
  local engine = dopts.engine or dopts.budget or "vllm"
  local d
  if engine ~= "vllm" and dopts.max_num_seqs ~= nil then
    local o = {}
    for k, v in pairs(dopts) do if k ~= "max_num_seqs" then o[k] = v end end
    d = build(o)
  else
    d = build(dopts)
  end
  -- each engine's own scheduler by default: vLLM preempts, TensorRT-LLM
  -- admits only what it can finish (GUARANTEED_NO_EVICT), SGLang schedules
  -- prefill and decode batches apart (engine/core/sim.c)
  local sched = sopts.scheduler
  if sched == nil then
    sched = d.budget == "trtllm" and "no_evict" or d.budget == "sglang" and "sglang" or "continuous"
  end
  if not M.schedulers[sched] then
    util.raise("field 'scheduler' must be %s, got '%s'", M.scheduler_list, util.escape(util.shown(sched)))
  end
  local spec = {deploy = d:spec(), perf = M.perf(d), scheduler = sched,
                seed = util.count(sopts.seed or 1, "seed", 0)}
  if sopts.max_steps ~= nil then spec.max_steps = util.count(sopts.max_steps, "max_steps") end
  if sopts.max_concurrency ~= nil then
    spec.max_concurrency = util.count(sopts.max_concurrency, "max_concurrency")
  end
  spec.max_num_batched_tokens, spec.max_num_seqs = deploy.engine_limits(d, dopts)
  -- vLLM's --long-prefill-token-threshold: a request's tokens a step at most
  -- (engine/core/sim.c wanted; 0, vLLM's default, is none)
  if sopts.long_prefill_token_threshold ~= nil then
    spec.long_prefill_token_threshold =
      util.count(sopts.long_prefill_token_threshold, "long_prefill_token_threshold", 0)
  end
  -- the graphs the engine captures at the limits it runs with
  spec.perf.graphs, spec.perf.graph_max = M.cuda_graphs(d, spec.max_num_seqs, spec.max_num_batched_tokens)
  if sched == "sglang" then
    -- SGLang's release row and scheduler constants (engines.lua M.sglang,
    -- M.sglang_scheduler); under another budget, the latest release's
    local engines = require "kvplan.engines"
    local row = engines.sglang_version(d.budget == "sglang" and dopts.engine_version or nil)
    local c = engines.sglang_scheduler
    spec.max_prefill_tokens, spec.clip_max_new_tokens = row.max_prefill_tokens, c.clip_max_new_tokens
    spec.retract_decode_steps = c.retract_decode_steps
    -- SGLang's DP attention schedules less conservatively (x 0.3 from 0.4 on,
    -- engines.lua M.sglang dp_attention_conservativeness): the deployment's
    -- sglang_attn_dp is set under enable_dp_attention with dp_size > 1
    spec.init_new_token_ratio, spec.min_new_token_ratio, spec.new_token_ratio_decay =
      engines.sglang_new_token_ratios(row, d.budget == "sglang" and d.sglang_attn_dp ~= nil)
  end
  -- disaggregated prefill/decode: one pool's instance (engine/core/sim.c)
  if sopts.phase ~= nil then
    if sopts.phase ~= "prefill" and sopts.phase ~= "decode" then
      util.raise("field 'phase' must be 'prefill' or 'decode' (a disaggregated pool; none: "
                 .. "aggregated), got '%s'", util.escape(util.shown(sopts.phase)))
    end
    spec.phase = sopts.phase
  end
  if sopts.kv_transfer_ms ~= nil then
    local t = sopts.kv_transfer_ms
    if type(t) ~= "number" or not (t >= 0 and t < math.huge) then
      util.raise("field 'kv_transfer_ms' must be a number >= 0 (milliseconds), got %s", util.shown(t))
    end
    if sopts.phase == nil then
      util.raise("field 'kv_transfer_ms' is a disaggregated pool's: give phase = 'prefill' or 'decode'")
    end
    spec.kv_transfer_s = t / 1e3
  end
  -- the client's time outside the steps (M.request_ms): an aggregated
  -- instance's requests only, a disaggregated pool's latencies being its own
  -- and the API server's serial work a request (M.api_ms), the same: the
  -- pair of spec fields a perf table gives
  local function client_s(perf)
    return sopts.phase == nil and (perf.request_ms or 0) / 1e3 or 0,
           sopts.phase == nil and (perf.api_ms or 0) / 1e3 or 0
  end
  spec.request_s, spec.api_s = client_s(spec.perf)
  if sopts.swap then
    if d.offload == nil or d.offload.host == 0 then
      util.raise("field 'swap' needs host memory: give offload = {host = ...}")
    end
    local gpus_n = util.count(d.tp, "tp") * util.count(d.pp, "pp")
    spec.host_bytes = d.offload.host // gpus_n
    spec.pcie_gbps = d.offload.pcie_gbps or util.raise("field 'swap' needs offload.pcie_gbps")
  end
  if sopts.trace ~= nil then
    if sopts.requests ~= nil or sopts.prompt ~= nil or sopts.output ~= nil or sopts.rate ~= nil then
      util.raise("a trace gives arrivals and lengths: drop 'requests', 'prompt', 'output' and 'rate'")
    end
    local t = type(sopts.trace) == "table" and sopts.trace or M.read_trace(sopts.trace)
    spec.arrival, spec.prompt_tokens, spec.output_tokens = t.arrival, t.prompt_tokens, t.output_tokens
  else
    local workload = require "kvplan.workload"
    for _, k in ipairs{"prompt", "output"} do
      local v = sopts[k]
      if type(v) == "number" then v = workload.fixed(util.count(v, k)) end
      if getmetatable(v) ~= workload.Distribution then
        util.raise("field '%s' must be a length distribution (kv.workload.lognormal{...}, ...) or a "
                   .. "number of tokens, got %s", k, type(v))
      end
      spec[k] = v:core()
    end
    spec.requests = util.count(sopts.requests, "requests")
    if sopts.rate ~= nil then
      local r = sopts.rate
      if type(r) ~= "number" or not (r > 0 and r < math.huge) then
        util.raise("field 'rate' must be a number > 0 (requests a second; nil: all at once), got %s",
                   util.shown(r))
      end
      spec.rate = r
    end
  end
  -- data parallelism: the arrivals split evenly over the DP ranks (vLLM's
  -- API server sends each request to the engine of the least waiting x 4 +
  -- running, vllm/v1/engine/core_client.py DPLBAsyncMPClient
  -- get_core_engine_for_request; SGLang's data-parallel controller round
  -- robin by default, managers/data_parallel_controller.py), each rank
  -- alike: one rank is simulated with its share (a trace's every dp-th
  -- request from the first; else ceil(requests / dp) Poisson arrivals at
  -- rate / dp, and a closed loop's ceil(max_concurrency / dp)) and the
  -- throughput and counts are the deployment's, dp times the rank's
  local ranks = d.data_parallel_size or 1
  if ranks > 1 then
    if spec.arrival then
      local a, pt, ot = {}, {}, {}
      for i = 1, #spec.arrival, ranks do
        a[#a + 1], pt[#pt + 1], ot[#ot + 1] = spec.arrival[i], spec.prompt_tokens[i], spec.output_tokens[i]
      end
      spec.arrival, spec.prompt_tokens, spec.output_tokens = a, pt, ot
    else
      -- ceil without requests + ranks - 1, which wrapped for a huge dp
      spec.requests = (spec.requests - 1) // ranks + 1
      if spec.rate then spec.rate = spec.rate / ranks end
    end
    if spec.max_concurrency then spec.max_concurrency = (spec.max_concurrency - 1) // ranks + 1 end
  end
  return {spec = spec, d = d, sopts = sopts, ranks = ranks, client_s = client_s}
end

-- kv.simulate's result of the run `sim` of prepared p.
local function finish(p, sim)
  local spec, d, sopts, ranks, client_s = p.spec, p.d, p.sopts, p.ranks, p.client_s
  local deploy = require "kvplan.deploy"
  local ranges
  if sopts.range then
    if type(sopts.range) ~= "boolean" then
      util.raise("field 'range' must be true or false, got %s", util.shown(sopts.range))
    end
    local factors = require "kvplan.factors"
    local slow, fast = factors.ends(d)
    local base = spec.perf
    spec.perf = factors.perf_at(d, slow)
    spec.perf.graphs, spec.perf.graph_max = base.graphs, base.graph_max
    spec.request_s, spec.api_s = client_s(spec.perf)
    local rs = core.run(spec):summary()
    spec.perf = factors.perf_at(d, fast)
    spec.perf.graphs, spec.perf.graph_max = base.graphs, base.graph_max
    spec.request_s, spec.api_s = client_s(spec.perf)
    local rf = core.run(spec):summary()
    spec.perf = base
    spec.request_s, spec.api_s = client_s(base)
    local t = sim:summary().throughput_tokens_s
    ranges = {throughput_tokens_s_lo = math.min(rs.throughput_tokens_s, t, rf.throughput_tokens_s),
              throughput_tokens_s_hi = math.max(rs.throughput_tokens_s, t, rf.throughput_tokens_s),
              ttft_ms_lo = rf.ttft_ms, ttft_ms_hi = rs.ttft_ms, tpot_ms_lo = rf.tpot_ms,
              tpot_ms_hi = rs.tpot_ms, e2e_ms_lo = rf.e2e_ms, e2e_ms_hi = rs.e2e_ms}
  end
  local r = sim:summary()
  if ranks > 1 then
    for _, k in ipairs{"throughput_tokens_s", "requests_s", "requests", "num_preemptions", "num_swaps",
                       "prompt_tokens", "output_tokens", "recomputed_tokens", "prefix_cache_hits"} do
      if r[k] then r[k] = r[k] * ranks end
    end
    if ranges then
      ranges.throughput_tokens_s_lo = ranges.throughput_tokens_s_lo * ranks
      ranges.throughput_tokens_s_hi = ranges.throughput_tokens_s_hi * ranks
    end
  end
  r.data_parallel_size, r.gpus = ranks, deploy.gpus(d)
  r.sim, r.deployment, r.scheduler = sim, d, spec.scheduler
  r.max_num_seqs, r.max_num_batched_tokens = spec.max_num_seqs, spec.max_num_batched_tokens
  r.phase, r.kv_transfer_ms = sopts.phase, sopts.phase and (sopts.kv_transfer_ms or 0) or nil
  for k, v in pairs(ranges or {}) do r[k] = v end
  return setmetatable(r, Result)
end

function M.simulate(opts)
  local p = prepare(opts)
  return finish(p, core.run(p.spec))
end

-- Whether a and b are the same value: numbers of one type and value,
-- strings, booleans, tables of the same keys and values (skip: keys of the
-- top table not compared), anything else the very object.
local function same_value(a, b, skip)
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then return math.type(a) == math.type(b) and a == b end
  if type(a) ~= "table" then return rawequal(a, b) end
  if rawequal(a, b) then return true end
  if getmetatable(a) ~= getmetatable(b) then return false end
  for k, v in pairs(a) do
    if not (skip and skip[k]) and not same_value(v, rawget(b, k)) then return false end
  end
  for k in pairs(b) do
    if not (skip and skip[k]) and rawget(a, k) == nil then return false end
  end
  return true
end

local perf_and_client = {perf = true, request_s = true}

-- {throughput, ttft, tpot} of run `sim` as kv.simulate's summary gives
-- them of prepared p (k: its alternative k; nil when that one is not this run)
local function means_of(p, sim, k)
  local throughput, ttft, tpot = sim:means(k)
  if throughput == nil then return nil end
  if p.ranks > 1 then throughput = throughput * p.ranks end
  return {throughput = throughput, ttft = ttft, tpot = tpot}
end

--- kv.simulate{...}'s output throughput_tokens_s, ttft_ms.mean and
--- tpot_ms.mean alone (what kv.calibrate fits), the same numbers without
--- the rest of the summary (no percentiles: no sort), as {throughput, ttft,
--- tpot}. build(dopts): the deployment of those options (a cache of
--- deploy.new's, see prepare). alts (optional): a list of other options;
--- the second result holds, at each alternative's index, its figures when
--- the core found its run to be this one (engine/core/sim.h kvp_sim_alt:
--- the same spec but for the step time's host factors and the client's
--- time, the same step times at every step: the very figures its own
--- kv.simulate gives), nil where it must be simulated on its own.
function M.simulate_means(opts, build, alts)
  local p = prepare(opts, build)
  if p.sopts.range then util.raise("simulate_means: no 'range' (kv.simulate gives it)") end
  local index = {}
  if alts ~= nil then
    local list = {}
    for j = 1, #alts do
      local q = prepare(alts[j], build)
      if not q.sopts.range and q.ranks == p.ranks and same_value(p.spec, q.spec, perf_and_client) then
        list[#list + 1] = {perf = q.spec.perf, request_s = q.spec.request_s}
        index[#list] = j
      end
    end
    if #list > 0 then p.spec.alternatives = list end
  end
  local sim = core.run(p.spec)
  p.spec.alternatives = nil
  local out = {}
  for k, j in ipairs(index) do out[j] = means_of(p, sim, k) end
  return means_of(p, sim), out
end

-- ---- the simulate command's arguments ---------------------------------------
--
-- `kvplan simulate` (scripts/simulate.lua) takes every option kv.simulate
-- takes: its own arguments below (the workload, the axes, the tables
-- kv.simulate takes spelt flat), and every deployment field of the registry
-- (fields.lua) whose value is one word, under its own name and checked as
-- that field. M.command_arguments() lists them in order, M.command_help()
-- is `kvplan simulate --help`.

-- The command's own arguments: name, default, meaning. A list default is an
-- axis (comma-separated values, one simulation a combination).
local own_arguments = {
  {"model", nil, "catalog id or alias"},
  {"gpu", nil, "GPU ids or aliases (a list)"},
  {"tp", {1}, "tensor-parallel sizes (a list)"},
  {"pp", {1}, "pipeline stages (a list)"},
  {"kv", {"auto"}, "KV cache formats (a list; auto: as the engine does with the checkpoint)"},
  {"weights", "native", "weight format (native: the checkpoint's own)"},
  {"scheduler", {""}, "continuous, no_evict, static or sglang (a list; none: the engine's own)"},
  {"requests", 1000, "how many requests"},
  {"prompt", 1000, "median prompt tokens"},
  {"output", 250, "median output tokens"},
  {"sigma", 0.5, "lognormal sigma of the lengths (0: every request exactly the median); "
                 .. "capped so that prompt + output fit max_model_len"},
  {"rate", {0.0}, "Poisson arrivals, requests a second (a list; 0: all at once)"},
  {"max_concurrency", 0, "a client keeping at most this many in flight (0: none; also "
                         .. "concurrency=)"},
  {"concurrency", 0, "the same as max_concurrency"},
  {"long_prefill_token_threshold", 0, "vLLM's: the tokens a request is given in a step at most "
                                      .. "(0: none, vLLM's default; scheduler continuous)"},
  {"max_model_len", 0, "longest request (0: the model's max_context)"},
  {"trace", "", "a CSV of arrival_s,prompt_tokens,output_tokens instead of requests, prompt, "
                .. "output, sigma and rate"},
  {"seed", 1, "the generator's seed"},
  {"swap", false, "a preempted request's KV goes to host memory (needs offload_host)"},
  {"offload_host", "", "host memory per deployment for swapped KV (bytes: 64GiB)"},
  {"offload_pcie_gbps", 0.0, "the host link, GB/s (0: the GPU catalog's)"},
  {"speculative_tokens", 0, "speculative decoding: draft tokens a step (0: none)"},
  {"speculative_acceptance", 0.0, "the chance a draft token is accepted"},
  {"speculative_heads", "", "draft heads: eagle, mtp or extract_hidden_states"},
  {"speculative_draft", "", "a draft model (catalog id)"},
  {"speculative_layers", 0, "draft heads' decoder layers (0: 1)"},
  {"timeline", "", "also write the per-step series of the first simulation to this CSV"},
  {"range", false, "also simulate each with every step-time factor at the slow and the fast end "
                   .. "of its uncertainty (kvplan.factors): the columns throughput_tokens_s_lo/hi, "
                   .. "ttft_ms_p50_lo/hi, tpot_ms_p50_lo/hi"},
}

-- Registry fields the command takes under its own arguments' names, or
-- that kv.simulate reads as its own (prompt, output): the rest of the
-- one-word fields (options.flat_field) are its arguments too.
local not_flat = {max_model_len = true, prompt = true, output = true}

--- The command's arguments, in order: {name, default, meaning, field} (field:
--- the registry row of a deployment field, its default "" for not given).
function M.command_arguments()
  local fields = require "kvplan.fields"
  local out = {}
  for _, a in ipairs(own_arguments) do out[#out + 1] = {a[1], a[2], a[3]} end
  -- kv.simulate's efficiency and perf tables, a key an argument (a number;
  -- the default, the deployment's own, shown as such)
  for _, t in ipairs{{"efficiency", M.efficiency_fields}, {"perf", M.perf_fields}} do
    for _, f in ipairs(t[2]) do
      out[#out + 1] = {t[1] .. "." .. f[1], 0.0, f[2], nil, "the deployment's", t[1], f[1]}
    end
  end
  local options = require "kvplan.options"
  for _, f in ipairs(fields.list) do
    if options.flat_field(f) and not not_flat[f.name] then
      out[#out + 1] = {f.name, "", f.meaning .. " (default: " .. tostring(f.default) .. ")", f}
    end
  end
  return out
end

--- `kvplan simulate --help`: every argument with its default and meaning.
function M.command_help()
  local lines = {
    "usage: kvplan simulate model=M gpu=G[,G...] [key=value ...]",
    "Serve a workload on a deployment step by step as its engine schedules (kv.simulate) and",
    "report throughput, latency percentiles, preemptions and KV cache usage; lists are",
    "axes, one simulation a combination.",
    "",
    "arguments:",
  }
  require("kvplan.fields").argument_lines(lines, M.command_arguments())
  lines[#lines + 1] = "  profile                  a profile file of kvplan calibrate (every command takes it; '-': standard input)"
  lines[#lines + 1] = ""
  lines[#lines + 1] = "The engines' own option names stand for kvplan's (max_running_requests,"
  lines[#lines + 1] = "max_batch_size, gpu_memory_utilization, ...: docs/fields.md); tables"
  lines[#lines + 1] = "(evict, optim, worker_gpu_memory) need a script (kv.simulate)."
  for _, l in ipairs{
    "",
    "Columns: model, gpu, tp, pp, kv, scheduler, rate (requests/s; 0: all at once), requests,",
    "  throughput_tokens_s  output tokens a second; requests_s  requests finished a second",
    "  ttft_ms_p50/p99, tpot_ms_p50/p99, e2e_ms_p99  latencies in ms (TPOT: time per output",
    "                       token after the first; E2E: arrival to last token)",
    "  num_preemptions      requests the scheduler preempted (their KV freed, recomputed later)",
    "  running_peak         the most requests running in one step: the batch the KV cache and",
    "                       max_num_seqs admitted, a request partly prefilled counted (kvplan",
    "                       capacity's max_concurrency is the most requests of max_model_len",
    "                       held whole; shorter requests admit more)",
    "  kv_cache_usage_mean/peak  fractions of the KV cache's blocks in use, over the steps",
    "  steps                engine steps simulated",
  } do lines[#lines + 1] = l end
  return table.concat(lines, "\n") .. "\n"
end

-- ---- sweeps of simulations -------------------------------------------------

-- Result figures as report columns: name -> function(result).
local figures = {
  {"throughput_tokens_s", function(r) return r.throughput_tokens_s end, 1},
  {"requests_s", function(r) return r.requests_s end, 3},
  {"duration_s", function(r) return r.duration_s end, 3},
  {"steps", function(r) return r.steps end},
  {"num_preemptions", function(r) return r.num_preemptions end},
  {"running_peak", function(r) return r.running_peak end},
  {"recomputed_tokens", function(r) return r.recomputed_tokens end},
  {"prefix_cache_hits", function(r) return r.prefix_cache_hits end},
  {"kv_cache_usage_mean", function(r) return r.kv_cache_usage_perc.mean end, 4},
  {"kv_cache_usage_peak", function(r) return r.kv_cache_usage_perc.peak end, 4},
}
for _, m in ipairs{"ttft_ms", "tpot_ms", "e2e_ms"} do
  for _, q in ipairs{"mean", "p50", "p90", "p99", "max"} do
    figures[#figures + 1] = {m .. "_" .. q, function(r) return r[m][q] end, 3}
  end
end
local figure_of = {}
for _, f in ipairs(figures) do figure_of[f[1]] = f end
M.figures = figure_of

local function is_list(v)
  return type(v) == "table" and getmetatable(v) == nil and v[1] ~= nil
end

local function label(k, v)
  if k == "optim" then return require("kvplan.optim").name(v) end
  if type(v) == "table" then return v.name or v.id or tostring(v) end
  return v
end

local Sims = {}
Sims.__index = Sims
Sims.__name = "kvplan.Simulations"

--- kv.simulations{options of kv.simulate, any of them a list (an axis),
--- columns = {...}}: one simulation per combination of the axes (the
--- first-listed of model, gpu, optim, then the other axes sorted by name),
--- one report row each. Columns: the axes and the figures of M.figures
--- (default: the axes and every figure).
function M.sweep(spec)
  if type(spec) ~= "table" then util.raise("simulations needs a table of options, got %s", type(spec)) end
  local axes, fixed = {}, {}
  local order = {model = 1, gpu = 2, optim = 3}
  for k, v in util.sorted_pairs(spec) do
    if type(k) ~= "string" then
      util.raise("unexpected key %s in simulations (field names are strings)", util.shown(k))
    end
    if k ~= "columns" then
      if is_list(v) then axes[#axes + 1] = k else fixed[k] = v end
    end
  end
  table.sort(axes, function(a, b)
    local x, y = order[a] or 4, order[b] or 4
    if x ~= y then return x < y end
    return a < b
  end)
  local cols = spec.columns
  if cols == nil then
    cols = {}
    for _, a in ipairs(axes) do cols[#cols + 1] = a end
    for _, f in ipairs(figures) do cols[#cols + 1] = f[1] end
  end
  local is_axis = {}
  for _, a in ipairs(axes) do is_axis[a] = true end
  for _, c in ipairs(cols) do
    local name = type(c) == "table" and c[1] or c
    if not is_axis[name] and not figure_of[name] then
      local names = util.sorted_keys(figure_of)
      for _, a in ipairs(axes) do names[#names + 1] = a end
      util.raise("unknown simulation column '%s'%s", util.shown(name), util.suggest(util.shown(name), names))
    end
  end
  return setmetatable({axes = axes, fixed = fixed, spec = spec, columns = cols}, Sims)
end

--- Run every simulation and write the rows (path as kv.report's); returns
--- the rows written.
function Sims:write(path, opts)
  if opts ~= nil then util.check_keys(opts, {name = true}, "simulations write options") end
  local cols = {}
  for i, c in ipairs(self.columns) do
    local name = type(c) == "table" and c[1] or c
    local f = figure_of[name]
    cols[i] = (type(c) == "table" or f == nil or f[3] == nil) and c or {name, precision = f[3]}
  end
  local r = require("kvplan.report").new{columns = cols, path = path, name = opts and opts.name}
  local pos, n = {}, 0
  for i = 1, #self.axes do pos[i] = 1 end
  while true do
    local o, row = {}, {}
    for k, v in pairs(self.fixed) do o[k] = v end
    for i, a in ipairs(self.axes) do
      local v = self.spec[a][pos[i]]
      o[a], row[a] = v, label(a, v)
    end
    local res = M.simulate(o)
    for _, c in ipairs(self.columns) do
      local name = type(c) == "table" and c[1] or c
      if figure_of[name] then row[name] = figure_of[name][2](res) end
    end
    r:row(row)
    n = n + 1
    local i = #self.axes
    while i >= 1 do
      pos[i] = pos[i] + 1
      if pos[i] <= #self.spec[self.axes[i]] then break end
      pos[i] = 1
      i = i - 1
    end
    if i == 0 then break end
  end
  r:close()
  return n
end

-- a method called with something else as self: an error at the user's line
util.methods(Result)
util.methods(Sims)

return M
