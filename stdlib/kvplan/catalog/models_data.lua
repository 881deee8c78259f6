-- stdlib/kvplan/catalog/models_data.lua: model architecture facts, each from the model's own config.json (source per entry). Data only.
--
-- Conventions (see each entry's `source` for exactly where its numbers were read):
--   * "config.json of R as copied in C" means the text was read from a verbatim or derived copy C of
--     repo R's config.json (a Hugging Face page or a GitHub file that reproduces it), because the
--     official repo page itself was not in the offline corpus.
--   * params: safetensors index total_size / bytes-per-element where that number was found; otherwise
--     "computed" = summed from the config shapes (embeddings, attention, MLP/experts, norms, biases),
--     which reproduces every total_size that could be checked (Llama 2/3, Mistral, Mixtral, Falcon-40B).
--   * active (MoE): the model card's / tech report's nominal figure unless stated otherwise.
--   * layer_kinds: cyclic pattern of runs starting at layer 0 (omitted = full attention everywhere).
-- DeepSeek-V3's fp8 e4m3 weights: one fp32 scale per 128 x 128 block
-- (quantization_config weight_block_size [128, 128]).
-- NVIDIA-Nemotron-Nano-9B-v2's Mamba2 mixer (config.json mamba_num_heads, mamba_head_dim,
-- ssm_state_size, n_groups, conv_kernel)
local MAMBA2 = {heads = 128, head_dim = 80, state = 128, groups = 8, conv_kernel = 4}
local FP8_B128 = {name = "fp8-b128", bits = 8, group = 16384, scale = 32}

return {
  ---------------------------------------------------------------- Llama (Meta)
  {
    id = "llama-2-7b",
    aliases = {"meta-llama/Llama-2-7b-hf", "llama2-7b", "llama-2-7b-hf"},
    hf = "meta-llama/Llama-2-7b-hf",
    source = "config.json of meta-llama/Llama-2-7b-hf as copied in TheBloke/Vigogne-2-7B-Chat-GPTQ and north/llama2-7b-exporttest (_name_or_path meta-llama/Llama-2-7b-hf): num_key_value_heads 32 = heads (MHA); head_dim = hidden/heads (no head_dim key); params = total_size 13476839424 / 2 (fp16), equal to the count computed from the config shapes",
    family = "llama",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 32, head_dim = 128,
    intermediate = 11008, vocab = 32000, tie_embeddings = false,
    params = 6738415616, active = 6738415616,
    dtype = "fp16", max_context = 4096,
  },
  {
    id = "llama-2-13b",
    aliases = {"meta-llama/Llama-2-13b-hf", "llama2-13b", "llama-2-13b-hf"},
    hf = "meta-llama/Llama-2-13b-hf",
    source = "config.json of meta-llama/Llama-2-13b-hf as copied in flytech/Ruckus-13B-v20e9 and onuralp/Llama-2-13b-QLoRA (_name_or_path meta-llama/Llama-2-13b-hf) and NousResearch/Llama-2-13b-chat-hf; head_dim = hidden/heads; params computed from config shapes (nominal 13B)",
    family = "llama",
    layers = 40, hidden = 5120, heads = 40, kv_heads = 40, head_dim = 128,
    intermediate = 13824, vocab = 32000, tie_embeddings = false,
    params = 13015864320, active = 13015864320,
    dtype = "fp16", max_context = 4096,
  },
  {
    id = "llama-2-70b",
    aliases = {"meta-llama/Llama-2-70b-hf", "llama2-70b", "llama-2-70b-hf"},
    hf = "meta-llama/Llama-2-70b-hf",
    source = "config.json of meta-llama/Llama-2-70b-hf as copied in TheBloke/Llama-2-70B-fp16 (_name_or_path meta-llama/Llama-2-70b-hf); head_dim = hidden/heads; params computed from config shapes (nominal 70B)",
    family = "llama",
    layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
    intermediate = 28672, vocab = 32000, tie_embeddings = false,
    params = 68976648192, active = 68976648192,
    dtype = "fp16", max_context = 4096,
  },
  {
    id = "llama-3.1-8b",
    aliases = {"meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B", "llama3.1-8b", "meta-llama/Llama-3.1-8B-Instruct"},
    hf = "meta-llama/Llama-3.1-8B",
    source = "config.json of meta-llama/Llama-3.1-8B as copied in NbAiLab/nb-llama-3.1-8B (_name_or_path meta-llama/Llama-3.1-8B, explicit head_dim 128) and mlx-community/Meta-Llama-3.1-8B-bf16; params = model.safetensors.index.json total_size 16060522496 / 2 (bf16)",
    family = "llama",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 128256, tie_embeddings = false,
    params = 8030261248, active = 8030261248,
    dtype = "bf16", max_context = 131072,
    notes = "rope_scaling llama3 factor 8 from original 8192",
  },
  {
    id = "llama-3-8b",
    aliases = {"meta-llama/Meta-Llama-3-8B", "llama3-8b", "meta-llama/Meta-Llama-3-8B-Instruct"},
    hf = "meta-llama/Meta-Llama-3-8B",
    source = "config.json of meta-llama/Meta-Llama-3-8B (https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json, as copied in public model-config presets and test fixtures: hidden 4096, intermediate 14336, 32 layers, 32 heads, 8 KV heads, vocab 128256, max_position_embeddings 8192, rope_theta 500000, rope_scaling null, untied, bfloat16); params as Llama 3.1 8B, whose every tensor has the same shape (8030261248)",
    family = "llama",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 128256, tie_embeddings = false,
    params = 8030261248, active = 8030261248,
    dtype = "bf16", max_context = 8192,
    notes = "Llama 3.1 8B's shape without its rope scaling: 8192 positions (vLLM's rotary table 8192 x 128)",
  },
  {
    id = "llama-3.1-70b",
    aliases = {"meta-llama/Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B", "llama3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"},
    hf = "meta-llama/Llama-3.1-70B",
    source = "config.json fields of the Llama 3.1 70B checkpoints as copied in Model-SafeTensors/L3.1-70B-Euryale and a Llama-3.1-70B-Instruct inventory (identical to the Llama 3.3 70B config read below: 80 layers, 64 heads, 8 KV heads); head_dim = hidden/heads; params = total_size 141107412992 / 2 (bf16)",
    family = "llama",
    layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
    intermediate = 28672, vocab = 128256, tie_embeddings = false,
    params = 70553706496, active = 70553706496,
    dtype = "bf16", max_context = 131072,
  },
  {
    id = "llama-3.1-405b",
    aliases = {"meta-llama/Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B", "llama3.1-405b", "meta-llama/Llama-3.1-405B-Instruct"},
    hf = "meta-llama/Llama-3.1-405B",
    source = "NOT read from the repo's own config.json text: fields from several secondary copies of the 405B config in code (manual config in a model_builder script, test fixtures, an unsloth bnb-4bit mirror cited by a build script): 126 layers, 16384 hidden, 128 heads, 8 KV heads, 53248 FFN, vocab 128256, 131072 positions; head_dim = hidden/heads; params computed from config shapes, whose x2 = 811706777600 bytes matches the bf16 weight bytes used for this model in a public build script",
    family = "llama",
    layers = 126, hidden = 16384, heads = 128, kv_heads = 8, head_dim = 128,
    intermediate = 53248, vocab = 128256, tie_embeddings = false,
    params = 405853388800, active = 405853388800,
    dtype = "bf16", max_context = 131072,
  },
  {
    id = "llama-3.2-1b",
    aliases = {"meta-llama/Llama-3.2-1B", "llama3.2-1b", "meta-llama/Llama-3.2-1B-Instruct"},
    hf = "meta-llama/Llama-3.2-1B",
    source = "config.json of meta-llama/Llama-3.2-1B(-Instruct) as reproduced in several code fixtures (explicit head_dim 64, tie_word_embeddings true, torch_dtype bfloat16); params computed from config shapes (tied embeddings counted once)",
    family = "llama",
    layers = 16, hidden = 2048, heads = 32, kv_heads = 8, head_dim = 64,
    intermediate = 8192, vocab = 128256, tie_embeddings = true,
    params = 1235814400, active = 1235814400,
    dtype = "bf16", max_context = 131072,
  },
  {
    id = "llama-3.2-3b",
    aliases = {"meta-llama/Llama-3.2-3B", "llama3.2-3b", "meta-llama/Llama-3.2-3B-Instruct"},
    hf = "meta-llama/Llama-3.2-3B",
    source = "config.json of meta-llama/Llama-3.2-3B as copied in mlx-community/Llama-3.2-3B-bf16, and of Llama-3.2-3B-Instruct in a dataset copy (explicit head_dim 128; hidden/heads would also be 128); params computed from config shapes (tied)",
    family = "llama",
    layers = 28, hidden = 3072, heads = 24, kv_heads = 8, head_dim = 128,
    intermediate = 8192, vocab = 128256, tie_embeddings = true,
    params = 3212749824, active = 3212749824,
    dtype = "bf16", max_context = 131072,
  },
  {
    id = "llama-3.2-11b-vision",
    aliases = {"meta-llama/Llama-3.2-11B-Vision", "meta-llama/Llama-3.2-11B-Vision-Instruct",
               "llama-3.2-11b-vision-instruct"},
    hf = "meta-llama/Llama-3.2-11B-Vision",
    source = "config.json of meta-llama/Llama-3.2-11B-Vision (model_type mllama) as public code quotes it: text_config vocab_size 128256, hidden_size 4096, intermediate_size 14336, num_hidden_layers 40, num_attention_heads 32, num_key_value_heads 8, cross_attention_layers [3, 8, 13, 18, 23, 28, 33, 38], max_position_embeddings 131072 (a transformers-style test config named after it); vision_config hidden_size 1280, intermediate_size 5120, num_hidden_layers 32, num_global_layers 8, attention_heads 16, image_size 560, patch_size 14, max_num_tiles 4, vision_output_dim 7680, torch_dtype bfloat16 (a llama.cpp study's copy of the checkpoint's config); params 10670220835, the Instruct checkpoint's safetensors parameter count (HfApi.get_safetensors_metadata, as tabulated in public evaluation code; the base checkpoint has the same shapes); tie_word_embeddings false (MllamaTextConfig's default)",
    family = "mllama",
    -- the 40 text layers as vLLM builds them (vllm/model_executor/models/
    -- mllama.py at 6f0b37b88978): self-attention decoder layers, and at
    -- cross_attention_layers (every fifth from layer 3) cross-attention
    -- layers whose K and V are the vision encoder's output, cached once a
    -- request: one image of the most features is max_num_tiles tiles of
    -- calc_token_per_chunk = (560 / 14)^2 + 1 = 1601 tokens, 6404 encoder
    -- tokens (get_image_size_with_most_features, _get_prompt_updates)
    layers = 40, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 128256, tie_embeddings = false,
    params = 10670220835, active = 10670220835,
    dtype = "bf16", max_context = 131072,
    layer_kinds = {{kind = "full", n = 3}, {kind = "cross", encoder_tokens = 6404, n = 1},
                   {kind = "full", n = 1}},
    other_note = "the vision tower and its projector (no vision.params), the cross-attention layers' gates and norms, and the norms",
    -- its profiling is the V0 encoder-decoder runner's (mllama.py is
    -- SupportsV0Only there): dummy requests of an image each through the
    -- tiled vision tower (32 local and 8 global layers over 4 x 1601
    -- patches, an aspect-ratio attention mask of (4 x 1608)^2 per image,
    -- five intermediate layers' outputs kept) before the decoder; kvplan's
    -- encoder model is the token-merging towers' (Qwen2-VL), not this one
    activation_unmodelled = "mllama's encoder-decoder profiling run (a tiled vision tower "
                            .. "feeding 8 cross-attention layers) is not modelled; give 'activation'",
    notes = "vision-language model (mllama): 32 self-attention layers and 8 cross-attention layers caching an image's 6404 encoder tokens (4 tiles x 1601) once a request; the vision tower's 0.9B parameters are in params; the profiling run's activation is not predicted",
  },
  {
    id = "llama-3.3-70b",
    aliases = {"meta-llama/Llama-3.3-70B-Instruct", "llama3.3-70b", "llama-3.3-70b-instruct"},
    hf = "meta-llama/Llama-3.3-70B-Instruct",
    source = "config.json of meta-llama/Llama-3.3-70B-Instruct as copied in relaxml/Llama-3.3-70B-Instruct-QTIP-3Bit (_name_or_path meta-llama/Llama-3.3-70B-Instruct; explicit head_dim 128); params computed from config shapes (same shapes as Llama 3.1 70B, whose total_size/2 equals it)",
    family = "llama",
    layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
    intermediate = 28672, vocab = 128256, tie_embeddings = false,
    params = 70553706496, active = 70553706496,
    dtype = "bf16", max_context = 131072,
  },
  {
    id = "llama-4-scout-17b-16e",
    aliases = {"meta-llama/Llama-4-Scout-17B-16E", "llama-4-scout", "llama4-scout"},
    hf = "meta-llama/Llama-4-Scout-17B-16E",
    source = "text_config of meta-llama/Llama-4-Scout-17B-16E as dumped in a public doc (Llama4Config of Llama-4-Scout-17B-16E) and reproduced in test fixtures: attention_chunk_size 8192, no_rope_layers [1,1,1,0]x12, explicit head_dim 128, 16 local experts top-1, interleave_moe_layer_step 1, intermediate_size 8192 (expert and shared expert), intermediate_size_mlp 16384 (unused: every layer is MoE); params/active computed from the text decoder shapes (vision encoder excluded); card: 109B total, 17B active",
    family = "llama4",
    layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 8192, vocab = 202048, tie_embeddings = false,
    experts = 16, experts_active = 1, shared_experts = 1, moe_intermediate = 8192,
    params = 107769861120, active = 17000000000,
    dtype = "bf16", max_context = 262144,
    -- rope_scaling {rope_type llama3, factor 16, original_max_position_embeddings 8192}
    -- (meta-llama/Llama-4-Scout-17B-16E config.json as quoted in AMD-AGI/Primus#165): vLLM's
    -- Llama4Attention passes config.max_position_embeddings to get_rope (llama4.py at
    -- 0121c95efe85), uncapped by max_model_len: one llama3 table, 262144 x 128 x 2 bytes
    rope = {type = "llama3"},
    layer_kinds = { {kind = "chunked", window = 8192, n = 3}, {kind = "full", n = 1} },
    other_note = "the routers (3932160) and the norms (the 48 shared experts, 3 x 5120 x 8192 a layer, are their own class)",
    notes = "no_rope_layers[i]=1 -> RoPE layer with chunked local attention (8192-token chunks); every 4th layer (3,7,...) is NoPE global full attention. The Instruct checkpoint is its own entry (llama-4-scout-17b-16e-instruct: max_position_embeddings 10485760). Computed active 17172894720",
  },
  {
    id = "llama-4-scout-17b-16e-instruct",
    aliases = {"meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout-instruct", "llama4-scout-instruct"},
    hf = "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    source = "the shapes of llama-4-scout-17b-16e (the same text_config); max_position_embeddings 10485760 in the Instruct config.json (quoted in public code: aws-neuron neuronx-distributed-inference's Llama-4-Scout mock config; huggingface/text-generation-inference#3245: 40 times the base model's 262144; tenstorrent/tt-inference-server#564: 10240K) with the base model's rope_scaling llama3 factor 16",
    family = "llama4",
    layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 8192, vocab = 202048, tie_embeddings = false,
    experts = 16, experts_active = 1, shared_experts = 1, moe_intermediate = 8192,
    params = 107769861120, active = 17000000000,
    dtype = "bf16", max_context = 10485760,
    -- vLLM's Llama4Attention passes config.max_position_embeddings to get_rope (llama4.py at
    -- 0121c95efe85), uncapped by max_model_len (vllm-project/vllm#44738, which would clamp it,
    -- closed): one llama3 table of 10485760 x 128 x 2 bytes = 2.5 GiB on every GPU
    rope = {type = "llama3"},
    layer_kinds = { {kind = "chunked", window = 8192, n = 3}, {kind = "full", n = 1} },
    other_note = "the routers (3932160) and the norms (the 48 shared experts, 3 x 5120 x 8192 a layer, are their own class)",
    notes = "Llama-4-Scout-17B-16E-Instruct: the base model's layers (3 chunked RoPE layers, then a NoPE global one), max_position_embeddings 10485760: vLLM's default max_model_len and its rotary table (2.5 GiB a GPU) follow it",
  },
  ---------------------------------------------------------------- Mistral / Mixtral
  {
    id = "mistral-7b-v0.1",
    aliases = {"mistralai/Mistral-7B-v0.1", "mistral-7b", "mistralai/Mistral-7B-Instruct-v0.1"},
    hf = "mistralai/Mistral-7B-v0.1",
    source = "config.json of mistralai/Mistral-7B-v0.1 as copied in Zangs3011/mistral-7b-metamath and dmayboroda/42_mistral_0.1 (_name_or_path mistralai/Mistral-7B-v0.1): sliding_window 4096; head_dim = hidden/heads; params computed from config shapes, equal to the HF safetensors count 7241732096 quoted in a public table",
    family = "mistral",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 32000, tie_embeddings = false,
    params = 7241732096, active = 7241732096,
    dtype = "bf16", max_context = 32768,
    layer_kinds = { {kind = "sliding", window = 4096, n = 1} },
    notes = "sliding_window 4096 on every layer (max_position_embeddings 32768)",
  },
  {
    id = "mistral-7b-v0.3",
    aliases = {"mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"},
    hf = "mistralai/Mistral-7B-v0.3",
    source = "config.json of Mistral-7B-v0.3 as reproduced in mlc-ai/mlc-llm model_preset.py (mistral_7b_v03: vocab 32768, rope_theta 1e6, sliding_window null); head_dim = hidden/heads; params computed from config shapes",
    family = "mistral",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 32768, tie_embeddings = false,
    params = 7248023552, active = 7248023552,
    dtype = "bf16", max_context = 32768,
    notes = "config sliding_window null: full attention on every layer",
  },
  {
    id = "mistral-nemo-12b",
    aliases = {"mistralai/Mistral-Nemo-Base-2407", "mistral-nemo", "mistralai/Mistral-Nemo-Instruct-2407"},
    hf = "mistralai/Mistral-Nemo-Base-2407",
    source = "config.json of mistralai/Mistral-Nemo-Base-2407 as copied in intervitens/mini-magnum-12b and cognitivecomputations/dolphin-2.9.3-mistral-nemo-12b (from Mistral-Nemo-Base-2407): explicit head_dim 128 (hidden/heads would be 160); params computed from config shapes",
    family = "mistral",
    layers = 40, hidden = 5120, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 131072, tie_embeddings = false,
    params = 12247782400, active = 12247782400,
    dtype = "bf16", max_context = 131072,
    notes = "config max_position_embeddings is 1024000 (base); documented context is 128k (Instruct-2407 copies read 131072). sliding_window null",
  },
  {
    id = "mistral-small-24b-2501",
    aliases = {"mistralai/Mistral-Small-24B-Base-2501", "mistral-small-24b", "mistralai/Mistral-Small-24B-Instruct-2501"},
    hf = "mistralai/Mistral-Small-24B-Instruct-2501",
    source = "config.json of mistralai/Mistral-Small-24B-Instruct-2501 as copied in unsloth/Mistral-Small-24B-Instruct-2501-GGUF (_name_or_path mistralai/Mistral-Small-24B-Instruct-2501) and of Base-2501 in estrogen/Mistral-Small-24b-Sertraline (same fields): explicit head_dim 128; params computed from config shapes",
    family = "mistral",
    layers = 40, hidden = 5120, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 32768, vocab = 131072, tie_embeddings = false,
    params = 23572403200, active = 23572403200,
    dtype = "bf16", max_context = 32768,
    notes = "sliding_window null; rope_theta 1e8",
  },
  {
    id = "mixtral-8x7b",
    aliases = {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"},
    hf = "mistralai/Mixtral-8x7B-v0.1",
    source = "config.json of Mixtral-8x7B-v0.1 as reproduced in mlc-ai/mlc-llm model_preset.py; head_dim = hidden/heads; params computed from config shapes = 46702792704, equal to the HF safetensors count in a public table; active 12.9B from the model card (computed 12879925248)",
    family = "mixtral",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 14336, vocab = 32000, tie_embeddings = false,
    experts = 8, experts_active = 2, moe_intermediate = 14336,
    params = 46702792704, active = 12900000000,
    dtype = "bf16", max_context = 32768,
    notes = "config sliding_window null: full attention on every layer",
  },
  {
    id = "mixtral-8x22b",
    aliases = {"mistral-community/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b-v0.1"},
    hf = "mistral-community/Mixtral-8x22B-v0.1",
    source = "config.json of mistral-community/Mixtral-8x22B-v0.1 (HF page, refs/pr/19); head_dim = hidden/heads; params computed from config shapes; active 39B from the Mistral announcement/card (computed 39152031744)",
    family = "mixtral",
    layers = 56, hidden = 6144, heads = 48, kv_heads = 8, head_dim = 128,
    intermediate = 16384, vocab = 32000, tie_embeddings = false,
    experts = 8, experts_active = 2, moe_intermediate = 16384,
    params = 140620634112, active = 39000000000,
    dtype = "bf16", max_context = 65536,
    notes = "sliding_window null. mistralai/Mixtral-8x22B-Instruct-v0.1 uses vocab 32768 (+6291456 params)",
  },
  ---------------------------------------------------------------- Qwen2.5
  {
    id = "qwen2.5-0.5b",
    aliases = {"Qwen/Qwen2.5-0.5B", "qwen2.5-0.5b-instruct", "Qwen/Qwen2.5-0.5B-Instruct"},
    hf = "Qwen/Qwen2.5-0.5B",
    source = "config.json of Qwen/Qwen2.5-0.5B as copied in osllmai-community/Qwen2.5-0.5B (_name_or_path Qwen/Qwen2.5-0.5B) and plaguss/Qwen2.5-0.5B-Math-Shepherd; head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases (tied)",
    family = "qwen2",
    layers = 24, hidden = 896, heads = 14, kv_heads = 2, head_dim = 64,
    intermediate = 4864, vocab = 151936, tie_embeddings = true,
    params = 494032768, active = 494032768,
    dtype = "bf16", max_context = 32768,
    notes = "use_sliding_window false: full attention on every layer",
  },
  {
    id = "qwen2.5-1.5b",
    aliases = {"Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-1.5B", "qwen2.5-1.5b-instruct"},
    hf = "Qwen/Qwen2.5-1.5B-Instruct",
    source = "config.json of Qwen/Qwen2.5-1.5B-Instruct as copied in onnx-community/Qwen2.5-1.5B-Instruct (Xenova; _name_or_path Qwen/Qwen2.5-1.5B-Instruct); torch_dtype from other copies; head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases (tied)",
    family = "qwen2",
    layers = 28, hidden = 1536, heads = 12, kv_heads = 2, head_dim = 128,
    intermediate = 8960, vocab = 151936, tie_embeddings = true,
    params = 1543714304, active = 1543714304,
    dtype = "bf16", max_context = 32768,
    notes = "use_sliding_window false: full attention on every layer",
  },
  {
    id = "qwen2.5-3b",
    aliases = {"Qwen/Qwen2.5-3B", "qwen2.5-3b-instruct", "Qwen/Qwen2.5-3B-Instruct"},
    hf = "Qwen/Qwen2.5-3B",
    source = "config.json of Qwen/Qwen2.5-3B as copied in unsloth/Qwen2.5-3B (_name_or_path Qwen/Qwen2.5-3B); head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases (tied)",
    family = "qwen2",
    layers = 36, hidden = 2048, heads = 16, kv_heads = 2, head_dim = 128,
    intermediate = 11008, vocab = 151936, tie_embeddings = true,
    params = 3085938688, active = 3085938688,
    dtype = "bf16", max_context = 32768,
    notes = "use_sliding_window false: full attention on every layer",
  },
  {
    id = "qwen2.5-7b",
    aliases = {"Qwen/Qwen2.5-7B", "qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B-Instruct"},
    hf = "Qwen/Qwen2.5-7B",
    source = "config.json of Qwen/Qwen2.5-7B as copied in ksh1119/qwen2.5_7b_kor_cp_it and TIGER-Lab/ScholarCopilot-v1 (from Qwen2.5-7B); head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases",
    family = "qwen2",
    layers = 28, hidden = 3584, heads = 28, kv_heads = 4, head_dim = 128,
    intermediate = 18944, vocab = 152064, tie_embeddings = false,
    params = 7615616512, active = 7615616512,
    dtype = "bf16", max_context = 131072,
    notes = "use_sliding_window false: full attention on every layer. Instruct config says max_position_embeddings 32768 (128k with YaRN per card)",
  },
  {
    id = "qwen2.5-14b",
    aliases = {"Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B", "qwen2.5-14b-instruct"},
    hf = "Qwen/Qwen2.5-14B-Instruct",
    source = "config.json of Qwen/Qwen2.5-14B-Instruct as copied in zgce/Qwen2.5-14B-scipy (from Qwen2.5-14B-Instruct); dtype bf16 per the Qwen2.5 family configs (the copy says float16); head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases",
    family = "qwen2",
    layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 13824, vocab = 152064, tie_embeddings = false,
    params = 14770033664, active = 14770033664,
    dtype = "bf16", max_context = 32768,
    notes = "use_sliding_window false: full attention on every layer; 128k with YaRN per card",
  },
  {
    id = "deepseek-r1-distill-qwen-14b",
    aliases = {"deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "DeepSeek-R1-Distill-Qwen-14B"},
    hf = "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
    source = "config.json of deepseek-ai/DeepSeek-R1-Distill-Qwen-14B as copied in neody/r1-14b-awq (from the snapshot c79f47acaf30; its quantization_config aside) and RealSafe/RealSafe-R1-14B: Qwen2ForCausalLM, 48 layers, hidden 5120, 40 heads, 8 KV heads, intermediate 13824, vocab 152064, untied, bf16, max_position_embeddings 131072, rope_theta 1e6, no rope_scaling; the Qwen2.5-14B shape, so params as qwen2.5-14b's (q/k/v biases counted)",
    family = "qwen2",
    layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 13824, vocab = 152064, tie_embeddings = false,
    params = 14770033664, active = 14770033664,
    dtype = "bf16", max_context = 131072,
    notes = "use_sliding_window false: full attention on every layer; 131072 positions in its own config (Qwen2.5-14B's says 32768), so vLLM's default max_model_len and rotary table are 131072",
  },
  {
    id = "qwen2.5-32b",
    aliases = {"Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen2.5-32B", "qwen2.5-32b-instruct"},
    hf = "Qwen/Qwen2.5-32B-Instruct",
    source = "config.json of Qwen/Qwen2.5-32B-Instruct as copied in Cqy2019/m1-32B-1m (fine-tune of Qwen2.5-32B-Instruct; fields identical to Qwen2.5-Coder-32B-Instruct copy); head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases",
    family = "qwen2",
    layers = 64, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 27648, vocab = 152064, tie_embeddings = false,
    params = 32763876352, active = 32763876352,
    dtype = "bf16", max_context = 32768,
    notes = "use_sliding_window false: full attention on every layer; 128k with YaRN per card",
  },
  {
    id = "qwen2.5-72b",
    aliases = {"Qwen/Qwen2.5-72B", "qwen2.5-72b-instruct", "Qwen/Qwen2.5-72B-Instruct"},
    hf = "Qwen/Qwen2.5-72B",
    source = "config.json of Qwen/Qwen2.5-72B as copied in BitStack/BitStack-Qwen2.5-72B and raphgg/test2-2.5-72B (from Qwen2.5-72B); head_dim = hidden/heads; params computed from config shapes incl. q/k/v biases",
    family = "qwen2",
    layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
    intermediate = 29568, vocab = 152064, tie_embeddings = false,
    params = 72706203648, active = 72706203648,
    dtype = "bf16", max_context = 131072,
    notes = "use_sliding_window false: full attention on every layer. Instruct config says 32768",
  },
  ---------------------------------------------------------------- Qwen3
  {
    id = "qwen3-0.6b",
    aliases = {"Qwen/Qwen3-0.6B", "qwen3-0.6b-base"},
    hf = "Qwen/Qwen3-0.6B",
    source = "Qwen3-0.6B config fields as copied in bfuzzy1/Railz-R (unnamed derivative with identical shape: explicit head_dim 128, hidden 1024, 16 heads, 8 KV heads, 28 layers, tied); params computed from config shapes incl. q_norm/k_norm (tied embeddings counted once; card: 0.6B)",
    family = "qwen3",
    layers = 28, hidden = 1024, heads = 16, kv_heads = 8, head_dim = 128,
    intermediate = 3072, vocab = 151936, tie_embeddings = true,
    params = 596049920, active = 596049920,
    dtype = "bf16", max_context = 40960,
    notes = "explicit head_dim 128 although hidden/heads = 64; use_sliding_window false: full attention on every layer",
  },
  {
    id = "qwen3-1.7b",
    aliases = {"Qwen/Qwen3-1.7B"},
    hf = "Qwen/Qwen3-1.7B",
    source = "Qwen3-1.7B shape as copied in a DictaLM-3.0-1.7B derivative config (2048 hidden, 6144 FFN, 16 heads, 8 KV heads, explicit head_dim 128, 28 layers); tie_word_embeddings true and max_position_embeddings 40960 from the Qwen3 small-model family configs (not seen in this copy, which was modified); params computed from config shapes",
    family = "qwen3",
    layers = 28, hidden = 2048, heads = 16, kv_heads = 8, head_dim = 128,
    intermediate = 6144, vocab = 151936, tie_embeddings = true,
    params = 1720574976, active = 1720574976,
    dtype = "bf16", max_context = 40960,
    notes = "use_sliding_window false: full attention on every layer",
  },
  {
    id = "qwen3-4b",
    aliases = {"Qwen/Qwen3-4B"},
    hf = "Qwen/Qwen3-4B",
    source = "Qwen3-4B config fields as copied in MultiRL/qwen3_4b_instruct_sft (identical shape: explicit head_dim 128, 2560 hidden, 32 heads, 8 KV heads, 36 layers, tied, 40960 positions); params computed from config shapes",
    family = "qwen3",
    layers = 36, hidden = 2560, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 9728, vocab = 151936, tie_embeddings = true,
    params = 4022468096, active = 4022468096,
    dtype = "bf16", max_context = 40960,
    notes = "explicit head_dim 128 although hidden/heads = 80; use_sliding_window false",
  },
  {
    id = "qwen3-8b",
    aliases = {"Qwen/Qwen3-8B", "Qwen/Qwen3-8B-Base"},
    hf = "Qwen/Qwen3-8B",
    source = "config.json of Qwen/Qwen3-8B as copied in thejaminator/qwen-hook-layer-9 (commit 'Copy config.json from Qwen/Qwen3-8B'): explicit head_dim 128; params computed from config shapes incl. q_norm/k_norm",
    family = "qwen3",
    layers = 36, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 12288, vocab = 151936, tie_embeddings = false,
    params = 8190735360, active = 8190735360,
    dtype = "bf16", max_context = 40960,
    notes = "use_sliding_window false, sliding_window null: full attention on every layer; 131072 with YaRN per card",
  },
  {
    id = "qwen3-14b",
    aliases = {"Qwen/Qwen3-14B"},
    hf = "Qwen/Qwen3-14B",
    source = "NOT read from config.json text: Qwen/Qwen3-14B fields from a model registry in code (name Qwen/Qwen3-14B: 5120 hidden, 17408 FFN, 40 layers, 40 heads, 8 KV heads, head_dim 128, 40960 positions, bfloat16); tie false as for the other Qwen3 >= 8B configs; params computed from config shapes",
    family = "qwen3",
    layers = 40, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 17408, vocab = 151936, tie_embeddings = false,
    params = 14768307200, active = 14768307200,
    dtype = "bf16", max_context = 40960,
    notes = "use_sliding_window false: full attention on every layer",
  },
  {
    id = "qwen3-32b",
    aliases = {"Qwen/Qwen3-32B"},
    hf = "Qwen/Qwen3-32B",
    source = "Qwen3-32B config fields as copied in ronnywebdevs1/d-m-1 (identical shape: explicit head_dim 128, 5120 hidden, 64 heads, 8 KV heads, 64 layers, 25600 FFN); params computed from config shapes",
    family = "qwen3",
    layers = 64, hidden = 5120, heads = 64, kv_heads = 8, head_dim = 128,
    intermediate = 25600, vocab = 151936, tie_embeddings = false,
    params = 32762123264, active = 32762123264,
    dtype = "bf16", max_context = 40960,
    notes = "explicit head_dim 128 although hidden/heads = 80; use_sliding_window false",
  },
  {
    id = "qwen3-30b-a3b",
    aliases = {"Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Base"},
    hf = "Qwen/Qwen3-30B-A3B",
    source = "Qwen3-30B-A3B fields from a model registry in code (name Qwen/Qwen3-30B-A3B: 2048 hidden, 6144 FFN, 768 expert FFN) and derived config copies (AweAI-Team/Scale-SWE-Agent, redmoddata: explicit head_dim 128, 32 heads, 4 KV heads, 48 layers, 128 experts top-8, mlp_only_layers [] so every layer is MoE); max_position_embeddings 40960 as in Qwen3 configs; params computed from config shapes; active 3.3B from the card (computed 3353032704)",
    family = "qwen3_moe",
    layers = 48, hidden = 2048, heads = 32, kv_heads = 4, head_dim = 128,
    intermediate = 6144, vocab = 151936, tie_embeddings = false,
    experts = 128, experts_active = 8, moe_intermediate = 768,
    params = 30532122624, active = 3300000000,
    dtype = "bf16", max_context = 40960,
    notes = "use_sliding_window false: full attention; intermediate_size unused (all layers MoE). 2507 variants: 262144 positions",
  },
  {
    id = "qwen3-235b-a22b",
    aliases = {"Qwen/Qwen3-235B-A22B"},
    hf = "Qwen/Qwen3-235B-A22B",
    source = "NOT read from config.json text: fields from secondary code copies of the Qwen3-235B-A22B config (a weights-manifest config, test MOE_MODEL, slime training script): 94 layers, 4096 hidden, 64 heads, 4 KV heads, head_dim 128, 128 experts top-8, 1536 expert FFN, 12288 FFN, vocab 151936; max_position_embeddings 40960 assumed as in the other Qwen3 configs; params computed from config shapes; active 22B from the card (computed 22190763520)",
    family = "qwen3_moe",
    layers = 94, hidden = 4096, heads = 64, kv_heads = 4, head_dim = 128,
    intermediate = 12288, vocab = 151936, tie_embeddings = false,
    experts = 128, experts_active = 8, moe_intermediate = 1536,
    params = 235093634560, active = 22000000000,
    dtype = "bf16", max_context = 40960,
    notes = "full attention on every layer",
  },
  {
    id = "qwen3-next-80b-a3b",
    aliases = {"Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-next", "Qwen/Qwen3-Next-80B-A3B-Thinking"},
    hf = "Qwen/Qwen3-Next-80B-A3B-Instruct",
    source = "Qwen3-Next config fields as copied in derivative configs (dasLOL/dasdasd, AlexNG01/Affine_bee0: Qwen3NextForCausalLM, hidden 2048, explicit head_dim 256, intermediate 5120, full_attention_interval 4, layer_types linear,linear,linear,full); 16 heads / 2 KV heads / 48 layers / vocab 151936 from the vLLM Qwen3NextConfig docs (defaults = Qwen3-Next-80B-A3B-Instruct); linear_num_key_heads 16, linear_num_value_heads 32, linear key/value head dim 128, conv kernel 4 from vllm-xpu-kernels benchmark presets for the 80B-A3B models; 512 experts top-10, expert and shared-expert FFN 512, 262144 positions from a public config table; params computed from config shapes (main model, MTP module excluded); active 3B from the card (computed 3874929408 incl. embeddings)",
    family = "qwen3_next",
    layers = 48, hidden = 2048, heads = 16, kv_heads = 2, head_dim = 256,
    intermediate = 5120, vocab = 151936, tie_embeddings = false,
    experts = 512, experts_active = 10, shared_experts = 1, moe_intermediate = 512,
    params = 79674391296, active = 3000000000,
    dtype = "bf16", max_context = 262144,
    -- partial_rotary_factor 0.25, rope_scaling null (a Qwen3-Next-80B-A3B config.json as copied in
    -- public code: 48 layers, 512 experts, max_position_embeddings 262144): 64 of 256 dims rotate
    rope = {partial_rotary_factor = 0.25},
    -- the classes count 48 plain attention layers (905969664) where the 12
    -- gated-attention and 36 Gated DeltaNet layers' linear layers hold
    -- 1539833856 (hf.lua attention_params / linear_params): 'other' holds
    -- the difference with the shared experts, routers and norms
    other_note = "633864192 of the token mixers' linear layers beyond the 48 plain attention layers the class counts, the shared experts' gates (98304), routers (50331648), convolutions and norms",
    -- vLLM's Qwen3NextGatedDeltaNet builds in_proj_qkvz and out_proj with
    -- the quant_config (vllm/model_executor/models/qwen3_next.py): linear
    -- layers a quantized checkpoint quantizes that no class holds
    classes_unweighable = "its 36 Gated DeltaNet layers' in_proj_qkvz, in_proj_ba and out_proj and its 12 gated attention layers' doubled q_proj have no weight class (the attention class counts 48 plain attention layers)",
    layer_kinds = {
      {kind = "state", n = 3, state_bytes = 1097728, state_heads = 16, spec_state_bytes = 16384,
       note = "Gated DeltaNet: conv state (conv_kernel-1)*(key_dim*2+value_dim) = 3*(2048*2+4096) = 24576 elements + recurrent state num_v_heads*head_k_dim*head_v_dim = 32*128*128 = 524288 elements; 548864 elements * 2 bytes (bf16). Split over TP by the 16 key heads (32 value heads). spec_state_bytes: one conv row (8192 x 2 bytes) each speculative token adds"},
      {kind = "full", n = 1},
    },
    notes = "full-attention layers (3,7,...,47) use gated attention with 2 KV heads of dim 256; linear-attention state does not grow with context",
  },
  {
    id = "qwen3.6-27b",
    aliases = {"Qwen/Qwen3.6-27B", "qwen3.6"},
    hf = "Qwen/Qwen3.6-27B",
    source = "config.json of Qwen/Qwen3.6-27B as printed, with the checkpoint's tensor list, in a public model report of /models/opensource/Qwen3.6-27B (Qwen3_5ForConditionalGeneration, text_config qwen3_5_text: 64 layers, layer_types linear_attention x3 + full_attention repeated, full_attention_interval 4, hidden 5120, intermediate 17408, 24 heads, 4 KV heads, head_dim 256, attn_output_gate true, linear_num_key_heads 16, linear_num_value_heads 48, linear key/value head dim 128, linear_conv_kernel_dim 4, mamba_ssm_dtype float32, vocab 248320, tie_word_embeddings false, max_position_embeddings 262144, dtype bfloat16, partial_rotary_factor 0.25, mrope_section [11, 11, 10] interleaved, mtp_num_hidden_layers 1; vision_config depth 27, hidden 1152); params = the language model's tensors of that list summed (embed_tokens and lm_head 248320 x 5120 each, 48 Gated DeltaNet layers of 115876064, 16 gated attention layers of 104858112, 64 MLPs of 3 x 5120 x 17408, the norms) = 26895998464: the list's total 27781427952 less the vision tower (model.visual.*, 460730096) and the MTP module (mtp.*, 424699392)",
    family = "qwen3_5",
    layers = 64, hidden = 5120, heads = 24, kv_heads = 4, head_dim = 256,
    intermediate = 17408, vocab = 248320, tie_embeddings = false,
    params = 26895998464, active = 26895998464,
    dtype = "bf16", max_context = 262144,
    -- rope_parameters {rope_type default, rope_theta 1e7, partial_rotary_factor
    -- 0.25, mrope_section [11, 11, 10], mrope_interleaved true}: 64 of 256 dims
    -- rotate, M-RoPE sections (MRotaryEmbedding, 4 x max_position rows,
    -- mrope.py at 055e47c28003)
    rope = {partial_rotary_factor = 0.25, mrope = true},
    -- the attention class counts 64 plain attention layers (4697620480)
    -- where the 48 Gated DeltaNet layers' in_proj_qkv, in_proj_z,
    -- in_proj_a, in_proj_b and out_proj and the 16 gated attention layers'
    -- q_proj (doubled: 12288 rows), k, v and o hold 7237795840
    other_note = "2540175360 of the token mixers' linear layers beyond the 64 plain attention layers the class counts (in_proj_a and in_proj_b 23592960 of them), the 48 convolutions (1966080), A_log and dt_bias (4608), the gated norms (6144), q/k norms (8192) and the layer norms (660480)",
    -- vLLM's Qwen3_5DecoderLayer (vllm/model_executor/models/qwen3_5.py at
    -- 00def4f84211) builds GatedDeltaNetAttention (layers/mamba/
    -- gdn_linear_attn.py at 0218d0504d61), whose in_proj_qkvz, in_proj_ba
    -- and out_proj take the quant_config: linear layers a quantized
    -- checkpoint quantizes that no class holds
    classes_unweighable = "its 48 Gated DeltaNet layers' in_proj_qkv, in_proj_z, in_proj_a, in_proj_b and out_proj and its 16 gated attention layers' doubled q_proj have no weight class (the attention class counts 64 plain attention layers)",
    layer_kinds = {
      {kind = "state", n = 3, state_bytes = 3207168, state_heads = 16, spec_state_bytes = 20480,
       note = "Gated DeltaNet, vLLM's MambaStateShapeCalculator.gated_delta_net_state_shape (vllm/model_executor/layers/mamba/mamba_utils.py at 02d710837549): conv state (conv_kernel - 1) x (key_dim x 2 + value_dim) = 3 x (2048 x 2 + 6144) = 30720 elements in the model dtype (2 bytes) + recurrent state num_v_heads x head_v_dim x head_k_dim = 48 x 128 x 128 = 786432 elements in mamba_ssm_cache_dtype, float32 from the config's mamba_ssm_dtype (Qwen3_5ForConditionalGenerationConfig.verify_and_update_config, vllm/model_executor/models/config.py): 61440 + 3145728 bytes. Split over TP by the 16 key heads (48 value heads). spec_state_bytes: one conv row (10240 x 2 bytes) each speculative token adds (conv_kernel - 1 + num_spec rows)"},
      {kind = "full", n = 1},
    },
    notes = "full-attention layers (3,7,...,63) use gated attention with 4 KV heads of dim 256; linear-attention state does not grow with context; the vision tower (0.46B) and the MTP module (0.42B) are not in params",
  },
  ---------------------------------------------------------------- DeepSeek (MLA)
  {
    id = "deepseek-v2-lite",
    aliases = {"deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite-Chat"},
    hf = "deepseek-ai/DeepSeek-V2-Lite",
    source = "config.json of DeepSeek-V2-Lite as copied in ModelCloud/DeepSeek-V2-Lite-gptq-4bit (from /model/DeepSeek-V2-Lite/) and TechxGenus/DeepSeek-V2-Lite-Chat-AWQ (_name_or_path deepseek-ai/DeepSeek-V2-Lite-Chat): kv_lora_rank 512, q_lora_rank null, qk_nope 128, qk_rope 64, 64 routed + 2 shared experts, top-6, first_k_dense_replace 1; vocab 102400 and v_head_dim 128 not visible in the excerpts (DeepSeek-V2 values); head_dim = qk_nope+qk_rope (no head_dim key); params computed from config shapes (card: 15.7B); active 2.4B from the card",
    family = "deepseek_v2",
    layers = 27, hidden = 2048, heads = 16, kv_heads = 16, head_dim = 192,
    intermediate = 10944, vocab = 102400, tie_embeddings = false,
    experts = 64, experts_active = 6, shared_experts = 2, moe_intermediate = 1408,
    params = 15706484224, active = 2400000000,
    dtype = "bf16", max_context = 163840,
    dense_layers = 1,
    mla = { kv_lora_rank = 512, rope_dim = 64, qk_nope_head_dim = 128, v_head_dim = 128 },
    other_note = "the routers (3407872) and the norms (126464): exactly the rest (the 26 MoE layers' 2 shared experts, 449839104, are their own class)",
    notes = "MLA: KV cache per token per layer = kv_lora_rank + qk_rope_head_dim = 576 elements; layer 0 dense FFN, layers 1-26 MoE",
  },
  {
    id = "deepseek-v2",
    aliases = {"deepseek-ai/DeepSeek-V2", "deepseek-ai/DeepSeek-V2-Chat", "deepseek-v2-236b"},
    hf = "deepseek-ai/DeepSeek-V2",
    source = "DeepSeek-V2 config.json as reproduced in a GitHub sample config (DeepseekV2ForCausalLM: hidden 5120, 60 layers, 128 heads, kv_lora_rank 512, q_lora_rank 1536, qk_nope 128, qk_rope 64, 160 routed + 2 shared experts top-6, moe FFN 1536, dense FFN 12288, first_k_dense_replace 1, 163840 positions); vocab 102400 and v_head_dim 128 not visible in the excerpt; params computed from config shapes (card: 236B); active 21B from the card",
    family = "deepseek_v2",
    layers = 60, hidden = 5120, heads = 128, kv_heads = 128, head_dim = 192,
    intermediate = 12288, vocab = 102400, tie_embeddings = false,
    experts = 160, experts_active = 6, shared_experts = 2, moe_intermediate = 1536,
    params = 235741434880, active = 21000000000,
    dtype = "bf16", max_context = 163840,
    dense_layers = 1,
    mla = { kv_lora_rank = 512, rope_dim = 64, q_lora_rank = 1536, qk_nope_head_dim = 128, v_head_dim = 128 },
    other_note = "the routers (48332800) and the norms (742400): exactly the rest (the 59 MoE layers' 2 shared experts, 2783969280, are their own class)",
    notes = "MLA: 576 cached elements per token per layer",
  },
  {
    id = "deepseek-v3",
    aliases = {"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-Base", "deepseek-v3-671b"},
    hf = "deepseek-ai/DeepSeek-V3",
    source = "DeepSeek-V3 config.json fields as copied in DeepseekV3 derivative configs (JPAdams12th/dormant-model-2, GreenBitAI DeepSeek-R1 mlx, amd DeepSeek-R1: same architecture) incl. quantization_config fp8 e4m3 weight_block_size [128,128], plus inference/configs/config_671B.json duplicated from deepseek-ai/DeepSeek-V3-Base (vocab 129280, v_head_dim 128); head_dim = qk_nope+qk_rope; params computed from config shapes = 671026419200 (main model, MTP layer excluded; HF repo total 685B incl. 14B MTP); active 37B from the card",
    family = "deepseek_v3",
    layers = 61, hidden = 7168, heads = 128, kv_heads = 128, head_dim = 192,
    intermediate = 18432, vocab = 129280, tie_embeddings = false,
    experts = 256, experts_active = 8, shared_experts = 1, moe_intermediate = 2048,
    params = 671026419200, active = 37000000000,
    dtype = "bf16", max_context = 163840,
    -- DeepSeek's FP8 checkpoint stores the shared expert in FP8 with block
    -- scales as every linear layer (no ignore list; vLLM's Fp8Config quantizes
    -- each LinearBase not in ignored_layers: models.lua weight_classes)
    weight_formats = {attention = FP8_B128, mlp = FP8_B128, experts = FP8_B128,
                      shared_experts = FP8_B128},
    dense_layers = 3,
    mla = { kv_lora_rank = 512, rope_dim = 64, q_lora_rank = 1536, qk_nope_head_dim = 128, v_head_dim = 128 },
    other_note = "the routers and their score-correction biases (106445312) and the norms (1006592): exactly the rest (the 58 MoE layers' shared expert, 2554331136, is its own class, FP8 with block scales as the checkpoint stores it)",
    notes = "weights fp8 (e4m3, 128x128 block scales; norms/embeddings bf16); MLA 576 cached elements per token per layer; first 3 layers dense FFN, 58 MoE; num_nextn_predict_layers 1",
  },
  {
    id = "deepseek-v3.2",
    aliases = {"deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-ai/DeepSeek-V3.2", "deepseek-v3.2-exp"},
    hf = "deepseek-ai/DeepSeek-V3.2-Exp",
    source = "DeepSeek-V3 architecture (entry deepseek-v3) plus the DeepSeek-V3.2 sparse-attention indexer fields of its config (model_type deepseek_v32, index_n_heads 64, index_head_dim 128, index_topk 2048; n_layers 61, dim 7168, q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64 as in the V3.2 inference config reproduced in a public run script); params = DeepSeek-V3's 671026419200 + 61 indexers of wq_b 1536 x 64*128, wk 7168 x 128, k_norm 2 x 128 and weights_proj 7168 x 64 (DeepSeek-V3.2 inference/model.py Indexer) = 671877944064; active 37B as V3",
    family = "deepseek_v3",
    layers = 61, hidden = 7168, heads = 128, kv_heads = 128, head_dim = 192,
    intermediate = 18432, vocab = 129280, tie_embeddings = false,
    experts = 256, experts_active = 8, shared_experts = 1, moe_intermediate = 2048,
    params = 671877944064, active = 37000000000,
    dtype = "bf16", max_context = 163840,
    -- DeepSeek's FP8 checkpoint stores the shared expert in FP8 with block
    -- scales as every linear layer (no ignore list; vLLM's Fp8Config quantizes
    -- each LinearBase not in ignored_layers: models.lua weight_classes)
    weight_formats = {attention = FP8_B128, mlp = FP8_B128, experts = FP8_B128,
                      shared_experts = FP8_B128},
    dense_layers = 3,
    mla = { kv_lora_rank = 512, rope_dim = 64, q_lora_rank = 1536, qk_nope_head_dim = 128, v_head_dim = 128,
            index_head_dim = 128, index_n_heads = 64, index_topk = 2048 },
    other_note = "DeepSeek-V3's (its routers and norms: 107451904) and the 61 sparse-attention indexers' wk, weights_proj and k_norm (83967232; their wq_b, 767557632, is in the attention class: vLLM builds it with the checkpoint's quant_config, models.lua weight_class_params)",
    notes = "DeepSeek Sparse Attention: besides the MLA latent every layer caches the indexer's 128 keys in fp8 with an fp32 scale (132 bytes a token, vLLM DeepseekV32IndexerCache); vLLM's kv_cache_dtype fp8_ds_mla stores the latent in 656 bytes a token (kv format fp8_ds_mla)",
  },
  ---------------------------------------------------------------- Nemotron-H (NVIDIA)
  {
    id = "nemotron-nano-9b-v2",
    aliases = {"nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nemotron-nano-9b"},
    hf = "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
    source = "config.json fields of NVIDIA-Nemotron-Nano-9B-v2 (model_type nemotron_h) as quoted in a public test module (num_hidden_layers 56, hidden_size 4480, intermediate_size 15680, 40 heads, 8 KV heads, head_dim 128, vocab 131072, hybrid_override_pattern M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-, ssm_state_size 128, conv_kernel 4, 8 groups, mamba_num_heads 128, mamba_head_dim 80); max_position_embeddings 131072 and tie_word_embeddings false from the model card (128K context); params = from_hf's estimate from those shapes (tests/fixtures/hf/nemotron-nano-9b-v2): 8888227328, the card's 8.89B",
    family = "nemotron_h",
    layers = 56, hidden = 4480, heads = 40, kv_heads = 8, head_dim = 128,
    intermediate = 15680, vocab = 131072, tie_embeddings = false,
    params = 8888227328, dtype = "bf16", max_context = 131072,
    rope = false, -- NemotronHAttention builds no rotary_emb (vllm/model_executor/models/nemotron_h.py at 00b08dc44519)
    -- weight classes (models.lua weight_class_params): the 4 '*' layers hold
    -- attention, the 25 '-' layers an MLP of up_proj and down_proj (relu2, no
    -- gate: vLLM vllm/model_executor/models/nemotron_h.py NemotronHMLP,
    -- transformers modeling_nemotron_h.py NemotronHMLP)
    attention_layers = 4, mlp_layers = 25, mlp_matrices = 2,
    other_note = "the 27 Mamba2 mixers (3981045888: in_proj 4480 x 22656, out_proj 10240 x 4480, conv1d with its bias, dt_bias, A_log, D, norm) and the 57 norms (255360): exactly the rest",
    classes_unweighable = "its 27 Mamba2 mixers' in_proj and out_proj are linear layers a quantized checkpoint quantizes (vLLM nemotron_h.py / mamba_mixer2.py give them the quant_config) and have no weight class",
    -- M Mamba2 (state from its shapes, models.lua mamba2_state), * attention, - MLP only
    layer_kinds = {
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}, {kind = "state", mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", n = 2, mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}, {kind = "state", mamba2 = MAMBA2}, {kind = "full"}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}, {kind = "state", mamba2 = MAMBA2}, {kind = "full"}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}, {kind = "state", mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "full"}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}, {kind = "state", mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "full"}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", n = 2, mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}, {kind = "state", mamba2 = MAMBA2}, {kind = "none"},
      {kind = "state", mamba2 = MAMBA2}, {kind = "none"}, {kind = "state", mamba2 = MAMBA2},
      {kind = "none"}
    },
    notes = "27 Mamba2 layers (state: conv 3 x 12288 + SSM 128 x 80 x 128 elements, 2695168 bf16 bytes), 4 attention layers, 25 MLP-only layers",
  },
  ---------------------------------------------------------------- Falcon-Mamba (TII)
  {
    id = "falcon-mamba-7b",
    aliases = {"tiiuae/falcon-mamba-7b", "tiiuae/falcon-mamba-7b-instruct"},
    hf = "tiiuae/falcon-mamba-7b",
    source = "tiiuae/falcon-mamba-7b config.json as reproduced in public test and benchmark code (model_type falcon_mamba, num_hidden_layers 64, hidden_size 4096, intermediate_size 8192, state_size 16, conv_kernel 4, time_step_rank 256, use_conv_bias true, use_bias false, vocab 65024, tie_word_embeddings false, bfloat16; no max_position_embeddings); params = from_hf's estimate from those shapes (tests/fixtures/hf/falcon-mamba-7b): 7272665088, the card's 7.27B",
    family = "falcon_mamba",
    layers = 64, hidden = 4096, heads = 0, kv_heads = 0, head_dim = 0,
    intermediate = 8192, vocab = 65024, tie_embeddings = false,
    params = 7272665088, dtype = "bf16",
    max_context = 2048, -- no length key in config.json: vLLM assumes 2048 (_get_and_verify_max_len)
    -- a Mamba1 mixer in every block: its state from the shapes (models.lua mamba1_state)
    layer_kinds = {{kind = "state", mamba1 = {inner = 8192, state = 16, conv_kernel = 4}}},
    -- no attention and no MLP: a block is a norm and a Mamba1 mixer
    -- (transformers modeling_falcon_mamba.py FalconMambaBlock); the mixers'
    -- in_proj, x_proj, dt_proj and out_proj are 'other' (where a 3 x hidden
    -- x intermediate MLP had been counted, in_proj and out_proj's size)
    mlp_layers = 0,
    other_note = "the 64 Mamba1 mixers (in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj) and the norms",
    classes_unweighable = "its Mamba1 mixers' in_proj, x_proj, dt_proj and out_proj are the linear layers a quantized checkpoint quantizes and have no weight class",
    notes = "attention-free: every layer a Mamba1 state of conv 8192 x 3 + SSM 8192 x 16 elements (311296 bf16 bytes); nothing cached per token",
  },
  ---------------------------------------------------------------- Whisper (OpenAI): encoder-decoder
  {
    id = "whisper-large-v3",
    aliases = {"openai/whisper-large-v3"},
    hf = "openai/whisper-large-v3",
    source = "openai/whisper-large-v3 config.json (snapshot 06f233fe06e7) as transformers prints it in public distil-whisper training code: model_type whisper, is_encoder_decoder true, d_model 1280, encoder_layers 32, decoder_layers 32, encoder/decoder_attention_heads 20, encoder/decoder_ffn_dim 5120, max_source_positions 1500, max_target_positions 448, num_mel_bins 128, vocab_size 51866, float16; params = the shapes' count (encoder convs, positions, 32 layers; decoder embeddings tied to proj_out, positions, 32 layers of self- and cross-attention): 1543490560, the card's 1.55B",
    family = "whisper",
    -- the decoder's KV cache layers as vLLM names them: each of the 32
    -- decoder layers has a self-attention (FullAttentionSpec) and a
    -- cross-attention (CrossAttentionSpec) module; the encoder's 32
    -- self-attention layers hold no cache (EncoderOnlyAttention) and are
    -- weights only (in params)
    layers = 64, hidden = 1280, heads = 20, kv_heads = 20, head_dim = 64,
    intermediate = 5120, vocab = 51866, tie_embeddings = true,
    params = 1543490560, dtype = "fp16",
    -- weight classes: 32 encoder self-attention, 32 decoder self-attention
    -- and 32 decoder cross-attention modules (q, k, v, out_proj, 1280 x 1280
    -- each), and 32 + 32 MLPs of fc1 and fc2 (no gate: transformers
    -- modeling_whisper.py WhisperEncoderLayer / WhisperDecoderLayer, vLLM
    -- vllm/model_executor/models/whisper.py WhisperMLP)
    attention_layers = 96, mlp_layers = 64, mlp_matrices = 2,
    other_note = "the encoder's two convolutions, the encoder's and decoder's learned positions, biases and LayerNorms",
    max_context = 448, -- max_target_positions: the decoder's longest sequence
    rope = false, -- learned positions: no rotary embedding
    layer_kinds = {{kind = "full", n = 1}, {kind = "cross", encoder_tokens = 1500, n = 1}},
    notes = "encoder-decoder: 32 decoder self-attention layers (full) and 32 cross-attention layers that cache the encoder's 1500 tokens (30 s of audio) once per request, whatever its length",
  },
  ---------------------------------------------------------------- BGE (BAAI): encoder-only embeddings
  {
    id = "bge-large-en-v1.5",
    aliases = {"BAAI/bge-large-en-v1.5"},
    hf = "BAAI/bge-large-en-v1.5",
    source = "BAAI/bge-large-en-v1.5 config.json as pinned byte for byte in public test code (architectures BertModel, model_type bert, hidden_size 1024, num_hidden_layers 24, num_attention_heads 16, intermediate_size 4096, max_position_embeddings 512, type_vocab_size 2, vocab_size 30522, torch_dtype float32); params = the shapes' count (word, position and token-type embeddings, 24 layers, pooler): 335141888, the card's 335M",
    family = "bert",
    layers = 24, hidden = 1024, heads = 16, kv_heads = 16, head_dim = 64,
    intermediate = 4096, vocab = 30522, tie_embeddings = false,
    params = 335141888, dtype = "fp32", max_context = 512,
    rope = false, -- learned positions: no rotary embedding
    -- the MLP is two matrices, intermediate.dense and output.dense (no gate:
    -- transformers modeling_bert.py BertIntermediate / BertOutput)
    -- BertModel has no LM head (vLLM bert.py BertEmbeddingModel pools)
    mlp_matrices = 2, no_lm_head = true,
    other_note = "the position and token-type embeddings (526336), the pooler (1049600), biases and LayerNorms (321536)",
    -- bidirectional attention over the whole input in one pass: vLLM's
    -- EncoderOnlyAttention layers need no KV cache (EncoderOnlyAttentionSpec,
    -- max_memory_usage_bytes 0), so the model is attention-free to the KV
    -- cache manager
    layer_kinds = {{kind = "none", n = 1}},
    notes = "encoder-only embedding model: no KV cache at all (vLLM keeps its one null block); requests are limited by max_num_seqs and compute, not memory",
  },
  ---------------------------------------------------------------- Gemma 2 / Gemma 3 (Google)
  {
    id = "gemma-2-9b",
    aliases = {"google/gemma-2-9b-it", "google/gemma-2-9b", "gemma2-9b"},
    hf = "google/gemma-2-9b-it",
    source = "config.json of google/gemma-2-9b-it as copied in Q-PING/krx_Gemma_9B_it (_name_or_path google/gemma-2-9b-it, bfloat16) and of google/gemma-2-9b in ashercn97/blanked-v011: explicit head_dim 256, sliding_window 4096, cache_implementation hybrid; no tie_word_embeddings key in the original (Gemma default true; lm_head shares the embedding); params computed from config shapes (4 norms/layer)",
    family = "gemma2",
    layers = 42, hidden = 3584, heads = 16, kv_heads = 8, head_dim = 256,
    intermediate = 14336, vocab = 256000, tie_embeddings = true,
    params = 9241705984, active = 9241705984,
    dtype = "bf16", max_context = 8192,
    layer_kinds = { {kind = "sliding", window = 4096, n = 1}, {kind = "full", n = 1} },
    notes = "layer 0 sliding (transformers: is_sliding = not bool(layer_idx % 2)), layer 1 global, alternating",
  },
  {
    id = "gemma-2-27b",
    aliases = {"google/gemma-2-27b-it", "google/gemma-2-27b", "gemma2-27b"},
    hf = "google/gemma-2-27b-it",
    source = "Gemma-2-27B config fields as copied in amonig/dippy_1410357808 (derivative with the 27B shape: explicit head_dim 128, hidden 4608, 32 heads, 16 KV heads, 46 layers, 36864 FFN, query_pre_attn_scalar 144, sliding_window 4096, bfloat16); tied as all Gemma; params computed from config shapes",
    family = "gemma2",
    layers = 46, hidden = 4608, heads = 32, kv_heads = 16, head_dim = 128,
    intermediate = 36864, vocab = 256000, tie_embeddings = true,
    params = 27227128320, active = 27227128320,
    dtype = "bf16", max_context = 8192,
    layer_kinds = { {kind = "sliding", window = 4096, n = 1}, {kind = "full", n = 1} },
    notes = "explicit head_dim 128 although hidden/heads = 144; layer 0 sliding, alternating with global",
  },
  {
    id = "gemma-3-1b",
    aliases = {"google/gemma-3-1b-it", "google/gemma-3-1b-pt"},
    hf = "google/gemma-3-1b-it",
    source = "Gemma3ForCausalLM config as copied in MatanBT/mia-target-model and vishnurchityala/sql-gemma3 (model_name unsloth/gemma-3-1b-it): explicit head_dim 256, 1 KV head, 26 layers, layer_types 5 sliding then 1 full, _sliding_window_pattern 6, 32768 positions, vocab 262144; sliding_window value cut off in these excerpts: 512 taken from the Gemma 3 1B/270M family configs; params computed from config shapes (tied, q/k norms)",
    family = "gemma3_text",
    layers = 26, hidden = 1152, heads = 4, kv_heads = 1, head_dim = 256,
    intermediate = 6912, vocab = 262144, tie_embeddings = true,
    params = 999885952, active = 999885952,
    dtype = "bf16", max_context = 32768,
    -- two rotary tables (vllm/model_executor/models/gemma3.py at 004dc924965c: the sliding layers
    -- override the config with rope_local_base_freq and the default type, the global ones take
    -- rope_theta and rope_scaling): rope_scaling null in the 1B config, two bases, two keys
    rope = { {}, {} },
    layer_kinds = { {kind = "sliding", window = 512, n = 5}, {kind = "full", n = 1} },
    notes = "text-only model (no text_config nesting); layers 0-4 local, 5 global, repeat",
  },
  {
    id = "gemma-3-4b",
    aliases = {"google/gemma-3-4b-it", "google/gemma-3-4b-pt"},
    hf = "google/gemma-3-4b-it",
    source = "NOT read from the repo's config.json text: text_config shape from public code tables (gemma3-4b: hidden 2560, 10240 FFN, 8 heads, 4 KV heads, head_dim 256, vocab 262208, 34 layers, tied; google/gemma-3-4b-it hidden 2560 / 34 layers); sliding_window 1024 and pattern 6 and max_position_embeddings 131072 as in the Gemma 3 4B+ configs/Gemma3TextConfig defaults; params computed from the text decoder shapes only (SigLIP vision tower, ~0.4B, excluded)",
    family = "gemma3",
    layers = 34, hidden = 2560, heads = 8, kv_heads = 4, head_dim = 256,
    intermediate = 10240, vocab = 262208, tie_embeddings = true,
    params = 3880263168, active = 3880263168,
    dtype = "bf16", max_context = 131072,
    -- two rotary tables (vllm/model_executor/models/gemma3.py at 004dc924965c: the sliding layers
    -- override the config with rope_local_base_freq and the default type, the global ones take
    -- rope_theta and rope_scaling): the 4B+ configs' rope_scaling {rope_type linear, factor 8.0}, as quoted in public code
    rope = { {}, {type = "linear", factor = 8} },
    layer_kinds = { {kind = "sliding", window = 1024, n = 5}, {kind = "full", n = 1} },
    notes = "facts live under text_config; layer i is sliding when (i+1) % 6 != 0",
  },
  {
    id = "gemma-3-12b",
    aliases = {"google/gemma-3-12b-it", "google/gemma-3-12b-pt"},
    hf = "google/gemma-3-12b-it",
    source = "NOT read from the repo's config.json text: text_config from a Gemma3 text_config dict in code (hidden 3840, 15360 FFN, head_dim 256, layer_types 5 sliding + 1 full) and public code tables (gemma3-12b: 16 heads, 8 KV heads, 48 layers, vocab 262208, tied); sliding_window 1024, 131072 positions as in Gemma 3 4B+ configs; params computed from the text decoder shapes only (vision tower excluded)",
    family = "gemma3",
    layers = 48, hidden = 3840, heads = 16, kv_heads = 8, head_dim = 256,
    intermediate = 15360, vocab = 262208, tie_embeddings = true,
    params = 11766034176, active = 11766034176,
    dtype = "bf16", max_context = 131072,
    -- two rotary tables (vllm/model_executor/models/gemma3.py at 004dc924965c: the sliding layers
    -- override the config with rope_local_base_freq and the default type, the global ones take
    -- rope_theta and rope_scaling): the 4B+ configs' rope_scaling {rope_type linear, factor 8.0}, as quoted in public code
    rope = { {}, {type = "linear", factor = 8} },
    layer_kinds = { {kind = "sliding", window = 1024, n = 5}, {kind = "full", n = 1} },
    notes = "facts live under text_config; layer i is sliding when (i+1) % 6 != 0",
  },
  {
    id = "gemma-3-27b",
    aliases = {"google/gemma-3-27b-it", "google/gemma-3-27b-pt"},
    hf = "google/gemma-3-27b-it",
    source = "text_config of google/gemma-3-27b-it as reproduced in TensorRT-LLM tests (GEMMA3_27B config, layer count reduced there) and in code stating it mirrors google/gemma-3-27b-it/config.json: explicit head_dim 128, hidden 5376, 21504 FFN, 32 heads, 16 KV heads, 62 layers, query_pre_attn_scalar 168, sliding_window 1024, rope_scaling linear 8; sliding_window_pattern 6, max_position_embeddings 131072 and vocab 262208 are Gemma3TextConfig defaults (absent from the file); params computed from the text decoder shapes only (vision tower excluded; card 27.4B total)",
    family = "gemma3",
    layers = 62, hidden = 5376, heads = 32, kv_heads = 16, head_dim = 128,
    intermediate = 21504, vocab = 262208, tie_embeddings = true,
    params = 27009346304, active = 27009346304,
    dtype = "bf16", max_context = 131072,
    -- two rotary tables (vllm/model_executor/models/gemma3.py at 004dc924965c: the sliding layers
    -- override the config with rope_local_base_freq and the default type, the global ones take
    -- rope_theta and rope_scaling): the 4B+ configs' rope_scaling {rope_type linear, factor 8.0}, as quoted in public code
    rope = { {}, {type = "linear", factor = 8} },
    layer_kinds = { {kind = "sliding", window = 1024, n = 5}, {kind = "full", n = 1} },
    notes = "explicit head_dim 128 although hidden/heads = 168; facts under text_config; 62 layers = 10x(5 local + 1 global) + 2 local",
  },
  ---------------------------------------------------------------- Phi (Microsoft)
  {
    id = "phi-3-mini-4k",
    aliases = {"microsoft/Phi-3-mini-4k-instruct", "phi-3-mini", "phi3-mini"},
    hf = "microsoft/Phi-3-mini-4k-instruct",
    source = "config.json of microsoft/Phi-3-mini-4k-instruct as copied in mcding/CorrectDPO (_name_or_path microsoft/Phi-3-mini-4k-instruct) and omi-health/sum-small, and in mlc-llm presets: sliding_window 2047, num_key_value_heads 32 = heads (MHA); head_dim = hidden/heads; params computed from config shapes (card 3.8B)",
    family = "phi3",
    layers = 32, hidden = 3072, heads = 32, kv_heads = 32, head_dim = 96,
    intermediate = 8192, vocab = 32064, tie_embeddings = false,
    params = 3821079552, active = 3821079552,
    dtype = "bf16", max_context = 4096,
    layer_kinds = { {kind = "sliding", window = 2047, n = 1} },
    notes = "config sliding_window 2047 (< max_position_embeddings 4096) on every layer; the 128k variant uses 262144 (= full)",
  },
  {
    id = "phi-3-medium-4k",
    aliases = {"microsoft/Phi-3-medium-4k-instruct", "phi-3-medium", "phi3-medium"},
    hf = "microsoft/Phi-3-medium-4k-instruct",
    source = "config.json of microsoft/Phi-3-medium-4k-instruct (HF blame page at commit 3da3d15): 40 layers, 40 heads, 10 KV heads, sliding_window 2047; head_dim = hidden/heads; params computed from config shapes (card 14B)",
    family = "phi3",
    layers = 40, hidden = 5120, heads = 40, kv_heads = 10, head_dim = 128,
    intermediate = 17920, vocab = 32064, tie_embeddings = false,
    params = 13960238080, active = 13960238080,
    dtype = "bf16", max_context = 4096,
    layer_kinds = { {kind = "sliding", window = 2047, n = 1} },
    notes = "config sliding_window 2047 on every layer",
  },
  {
    id = "phi-3.5-moe",
    aliases = {"microsoft/Phi-3.5-MoE-instruct", "phi-3.5-moe-instruct"},
    hf = "microsoft/Phi-3.5-MoE-instruct",
    source = "NOT read from the repo's config.json text: PhiMoEConfig values reproduced in a GitHub script (hidden 4096, 6400 expert FFN, 131072 positions, 32 heads, 8 KV heads, 32 layers, 16 local experts top-2, original 4096); vocab 32064 as Phi-3; head_dim = hidden/heads; params computed from config shapes with attention/LayerNorm/lm_head biases as in transformers PhiMoE = 41.87B, matching the card 41.9B; active 6.6B from the card",
    family = "phimoe",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
    intermediate = 6400, vocab = 32064, tie_embeddings = false,
    experts = 16, experts_active = 2, moe_intermediate = 6400,
    params = 41873153344, active = 6600000000,
    dtype = "bf16", max_context = 131072,
    -- rope_scaling longrope, original_max_position_embeddings 4096 (the source above)
    rope = {type = "longrope", original_max_position = 4096},
  },
  {
    id = "phi-4",
    aliases = {"microsoft/phi-4", "phi4", "phi-4-14b"},
    hf = "microsoft/phi-4",
    source = "config.json of microsoft/phi-4 as copied in gaianet/phi-4-GGUF (_name_or_path microsoft/phi-4): model_type phi3, no head_dim key so head_dim = hidden/heads = 128, sliding_window null; params computed from config shapes (card 14B)",
    family = "phi3",
    layers = 40, hidden = 5120, heads = 40, kv_heads = 10, head_dim = 128,
    intermediate = 17920, vocab = 100352, tie_embeddings = false,
    params = 14659507200, active = 14659507200,
    dtype = "bf16", max_context = 16384,
    notes = "sliding_window null: full attention on every layer",
  },
  ---------------------------------------------------------------- Falcon (TII)
  {
    id = "falcon-7b",
    aliases = {"tiiuae/falcon-7b", "tiiuae/falcon-7b-instruct"},
    hf = "tiiuae/falcon-7b",
    source = "config.json of tiiuae/falcon-7b-instruct (HF page refs/pr/126) and of tiiuae/falcon-7b as copied in ybelkada/falcon-7b-sharded-bf16: multi_query true (1 KV head), new_decoder_architecture false, parallel_attn; no max_position_embeddings key (FalconConfig default 2048); head_dim = hidden/heads = 64; params computed from config shapes with tied lm_head (card 7B)",
    family = "falcon",
    layers = 32, hidden = 4544, heads = 71, kv_heads = 1, head_dim = 64,
    intermediate = 18176, vocab = 65024, tie_embeddings = true,
    params = 6921720704, active = 6921720704,
    dtype = "bf16", max_context = 2048,
    -- dense_h_to_4h and dense_4h_to_h, no gate (vLLM vllm/model_executor/
    -- models/falcon.py FalconMLP, commit 00620f91ea18)
    mlp_matrices = 2,
    notes = "MQA: one K/V head shared by 71 query heads; FFN 4*hidden (no intermediate_size key)",
  },
  {
    id = "falcon-40b",
    aliases = {"tiiuae/falcon-40b", "tiiuae/falcon-40b-instruct"},
    hf = "tiiuae/falcon-40b",
    source = "config.json of tiiuae/falcon-40b (HF page refs/pr/111): new_decoder_architecture true, num_kv_heads 8, 128 heads, 60 layers; no max_position_embeddings key (FalconConfig default 2048); head_dim = hidden/heads = 64; params = model.safetensors.index.json total_size 83671941120 / 2 (bf16) as quoted from that index in a public doc, less the stored lm_head.weight (65024 x 8192 = 532676608) that vLLM does not load: the model ties lm_head to the word embeddings and FalconForCausalLM.load_weights skips 'lm_head.' (vllm/model_executor/models/falcon.py at 00620f91ea18)",
    family = "falcon",
    layers = 60, hidden = 8192, heads = 128, kv_heads = 8, head_dim = 64,
    intermediate = 32768, vocab = 65024, tie_embeddings = true,
    params = 41303293952, active = 41303293952,
    dtype = "bf16", max_context = 2048,
    -- dense_h_to_4h and dense_4h_to_h, no gate (vLLM falcon.py FalconMLP,
    -- commit 00620f91ea18)
    mlp_matrices = 2,
    notes = "the checkpoint stores lm_head.weight (532676608 params, 41835970560 with it) although lm_head is tied by default; params count what vLLM loads. FFN 4*hidden (no intermediate_size key)",
  },
  ---------------------------------------------------------------- gpt-oss (OpenAI)
  {
    id = "gpt-oss-20b",
    aliases = {"openai/gpt-oss-20b", "gptoss-20b"},
    hf = "openai/gpt-oss-20b",
    source = "gpt-oss-20b config.json as copied in descript/mouse-20b and cryptonaut/AltiMind-sft (identical shape) and a dataset commit of model_data/gpt-oss-20b/config.json: explicit head_dim 64, layer_types starting sliding_attention then full_attention alternating, 32 local experts top-4, 131072 positions, attention_bias true; sliding_window 128 and vocab 201088 not visible in the excerpts (gpt-oss values); params/active computed from config shapes = 20.91B / 3.61B, equal to the model card's figures (active counts the unembedding, not the embedding)",
    family = "gpt_oss",
    layers = 24, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
    intermediate = 2880, vocab = 201088, tie_embeddings = false,
    experts = 32, experts_active = 4, moe_intermediate = 2880,
    params = 20914757184, active = 3608307264,
    dtype = "bf16", max_context = 131072, attention_bias = true,
    -- rope_scaling yarn, factor 32, original_max_position_embeddings 4096 (gpt-oss config.json);
    -- gpt_oss.py builds it in float32 (get_rope(..., dtype=torch.float32), at 0025d69bcf08)
    rope = {type = "yarn", factor = 32, original_max_position = 4096, dtype = "fp32"},
    weight_formats = {experts = "mxfp4"},
    weight_source = "weight classes: 24 x 32 experts x 3 x 2880 x 2880 = 19110297600 expert weights in MXFP4 (4.25 bits), the other 1804459584 parameters in bf16 = 13761264768 bytes, equal to openai/gpt-oss-20b model.safetensors.index.json metadata.total_size 13761264768 (quoted in public copies of the index; quantization_config mxfp4, modules_to_not_convert: attention, router, embeddings, lm_head)",
    layer_kinds = { {kind = "sliding", window = 128, n = 1}, {kind = "full", n = 1} },
    notes = "MoE expert weights MXFP4 (quantization_config mxfp4), attention/embeddings bf16; layer 0 sliding (layer_types), alternating; attention sinks",
  },
  {
    id = "gpt-oss-120b",
    aliases = {"openai/gpt-oss-120b", "gptoss-120b"},
    hf = "openai/gpt-oss-120b",
    source = "gpt-oss-120b config.json as copied in GohaDAYN/Affine-A10 (same shape) and the same dataset commit (36 layers, 128 local experts): explicit head_dim 64, layer_types sliding/full alternating starting with sliding, top-4; sliding_window 128 and vocab 201088 not visible in the excerpts; params/active computed from config shapes = 116.83B / 5.13B, equal to the model card's figures",
    family = "gpt_oss",
    layers = 36, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
    intermediate = 2880, vocab = 201088, tie_embeddings = false,
    experts = 128, experts_active = 4, moe_intermediate = 2880,
    params = 116829156672, active = 5132849472,
    dtype = "bf16", max_context = 131072, attention_bias = true,
    -- rope_scaling yarn, factor 32, original_max_position_embeddings 4096 (gpt-oss config.json);
    -- gpt_oss.py builds it in float32 (get_rope(..., dtype=torch.float32), at 0025d69bcf08)
    rope = {type = "yarn", factor = 32, original_max_position = 4096, dtype = "fp32"},
    weight_formats = {experts = "mxfp4"},
    weight_source = "weight classes: 36 x 128 experts x 3 x 2880 x 2880 = 114661785600 expert weights in MXFP4 (4.25 bits), the other 2167371072 parameters in bf16 = 65248815744 bytes, equal to the tensor bytes 65248815744 of openai/gpt-oss-120b's safetensors as inventoried in public tests (the files are 65248893184 bytes with their headers)",
    layer_kinds = { {kind = "sliding", window = 128, n = 1}, {kind = "full", n = 1} },
    notes = "MoE expert weights MXFP4, attention/embeddings bf16; layer 0 sliding, alternating",
  },
  ---------------------------------------------------------------- classic MHA references and others
  {
    id = "opt-66b",
    aliases = {"facebook/opt-66b", "opt66b"},
    hf = "facebook/opt-66b",
    source = "config.json of facebook/opt-66b as copied in inverse-scaling/opt-66b_eval and mit-han-lab/opt-66b-smoothquant (from /dataset/opt/opt-66b): no num_key_value_heads (MHA: kv_heads = heads); head_dim = hidden/heads; params computed from config shapes (learned positions, biases, LayerNorms, tied lm_head; nominal 66B)",
    family = "opt",
    layers = 64, hidden = 9216, heads = 72, kv_heads = 72, head_dim = 128,
    intermediate = 36864, vocab = 50272, tie_embeddings = true,
    params = 65719701504, active = 65719701504,
    dtype = "fp16", max_context = 2048,
    rope = false, -- learned positions: no rotary embedding
    -- fc1 and fc2, no gate (transformers modeling_opt.py OPTDecoderLayer,
    -- vLLM vllm/model_executor/models/opt.py OPTDecoderLayer)
    mlp_matrices = 2,
    notes = "ffn_dim 36864 (relu MLP, 2 matrices)",
  },
  {
    id = "gpt-3-175b",
    aliases = {"gpt-3", "gpt3-175b", "davinci"},
    hf = "none",
    source = "NOT from a config.json (never released on Hugging Face): Brown et al. 2020, 'Language Models are Few-Shot Learners', Table 2.1 (n_params 175.0B, n_layers 96, d_model 12288, n_heads 96, d_head 128, n_ctx 2048) as quoted in secondary sources; FFN = 4*d_model per the paper; vocab 50257 (GPT-2 BPE); dtype not published (16-bit assumed)",
    family = "gpt3",
    layers = 96, hidden = 12288, heads = 96, kv_heads = 96, head_dim = 128,
    intermediate = 49152, vocab = 50257,
    params = 175000000000, active = 175000000000,
    dtype = "fp16", max_context = 2048,
    rope = false, -- learned positions: no rotary embedding
    -- GPT-2's architecture (Brown et al. 2020 section 2.1: 'the same model
    -- and architecture as GPT-2'): a two-matrix MLP (c_fc, c_proj) and the
    -- output layer tied to the token embedding (transformers
    -- modeling_gpt2.py GPT2MLP; GPT2LMHeadModel ties lm_head.weight to wte)
    mlp_matrices = 2, tie_embeddings = true,
    other_note = "the nominal 175.0B's excess over the shapes (174604259328 with learned positions, biases and LayerNorms): 395740672",
    notes = "nominal parameter count; MHA reference; hf = none",
  },
  {
    id = "yi-34b",
    aliases = {"01-ai/Yi-34B", "yi-34b-base"},
    hf = "01-ai/Yi-34B",
    source = "NOT read from the repo's config.json text: Yi-34B config as reproduced in code (YI_34B_CONFIG with _name_or_path 01-ai/Yi-34B; and a full LlamaForCausalLM config dict labelled yi-1.5-34B with the same shape, rope_theta 5e6, bfloat16); head_dim = hidden/heads; params computed from config shapes (nominal 34B)",
    family = "llama",
    layers = 60, hidden = 7168, heads = 56, kv_heads = 8, head_dim = 128,
    intermediate = 20480, vocab = 64000, tie_embeddings = false,
    params = 34388917248, active = 34388917248,
    dtype = "bf16", max_context = 4096,
  },
  {
    id = "command-r",
    aliases = {"CohereForAI/c4ai-command-r-v01", "command-r-v01", "c4ai-command-r-v01"},
    hf = "CohereForAI/c4ai-command-r-v01",
    source = "NOT read from the repo's config.json text: CohereForCausalLM config reproduced in a Rust test (test_commandr_config_from_hf: hidden 8192, 64 heads, 64 KV heads, 40 layers, 22528 FFN, vocab 256000, max_position_embeddings 8192, logit_scale 0.0625, tie true); head_dim = hidden/heads; max_context from the model card (128K); dtype not seen (float16 assumed, unverified); params computed from config shapes (nominal 35B)",
    family = "cohere",
    layers = 40, hidden = 8192, heads = 64, kv_heads = 64, head_dim = 128,
    intermediate = 22528, vocab = 256000, tie_embeddings = true,
    params = 34980831232, active = 34980831232,
    dtype = "fp16", max_context = 131072,
    notes = "MHA (64 KV heads); config max_position_embeddings 8192 vs documented 128k context",
  },
  ---------------------------------------------------------------- vision-language (LLaVA)
  -- vision: a CLIP ViT-L/14 at 336 pixels (vLLM clip.py CLIPVisionModel: a
  -- class token, 576 patches, fc1/QuickGELU/fc2 MLP, LayerNorms) and
  -- LlavaMultiModalProjector (Linear 1024 -> 4096, GELU, Linear 4096 -> 4096);
  -- 576 tokens an image (vision_feature_select_strategy "default")
  {
    id = "llava-1.5-7b",
    aliases = {"llava-hf/llava-1.5-7b-hf", "llava-1.5-7b-hf", "liuhaotian/llava-v1.5-7b"},
    hf = "llava-hf/llava-1.5-7b-hf",
    source = "config.json of llava-hf/llava-1.5-7b-hf (HF snapshot 05ae2434cbb4) as transformers prints it in a public training log (LlavaConfig: text_config model_type llama with max_position_embeddings 4096, vocab_size 32064, float16, the other fields LlamaConfig's defaults: hidden 4096, 32 layers, 32 heads, intermediate 11008; vision_config clip_vision_model hidden_size 1024, intermediate_size 4096, 24 layers, 16 heads, image_size 336, patch_size 14; projector_hidden_act gelu, vision_feature_layer -2, vision_feature_select_strategy default, tie_word_embeddings false); params computed from the shapes: decoder 6738939904 + CLIP tower 303507456 + projector 20979712 = 7063427072 (from_hf gives the same)",
    family = "llama",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 32, head_dim = 128,
    intermediate = 11008, vocab = 32064, tie_embeddings = false,
    params = 7063427072, active = 7063427072,
    dtype = "fp16", max_context = 4096,
    vision = {model_type = "clip", hidden = 1024, intermediate = 4096, layers = 24, heads = 16,
              patch = 14, image_size = 336, class_token = true, merge = 1, in_channels = 3,
              out_hidden = 4096, gated = false, proj_hidden = 4096, params = 324487168},
    notes = "vLLM builds the CLIP layers up to vision_feature_layer -2 (23 of 24): it loads one layer fewer than the checkpoint holds",
  },
  ---------------------------------------------------------------- vision-language (Qwen)
  -- vision: the tower of config.json vision_config (Qwen2_5_VisionTransformer
  -- in vLLM's qwen2_5_vl.py): RMSNorm blocks with a gated SiLU MLP
  -- (gate_up, down), a patch merger of spatial_merge_size^2 = 4 patches
  -- (ln_q, Linear(4 x 1280, 5120), GELU, Linear(5120, out_hidden_size));
  -- max_pixels from preprocessor_config.json (12845056: Qwen2VLImageProcessor
  -- as the Qwen2/2.5-VL checkpoints configure it; video = true: videos as large
-- as the largest image, 16384 tokens each, vLLM's "{'image': 16384, 'video':
-- 16384}" profiling warning for Qwen2.5-VL-7B). Tower parameters from the
  -- shapes: patch embed 3 x 2 x 14 x 14 x 1280 (no bias), 32 blocks of 2
  -- norms, qkv and proj with biases, gate/up/down with biases, the merger.
  {
    id = "qwen2.5-vl-7b",
    aliases = {"Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b-instruct", "Qwen/Qwen2.5-VL-7B"},
    hf = "Qwen/Qwen2.5-VL-7B-Instruct",
    source = "config.json of Qwen/Qwen2.5-VL-7B-Instruct in its transformers-4.53 form as copied in kohya-ss/sd-scripts library/hunyuan_image_text_encoder.py at 5149be5a8708 (QWEN2_5_VL_CONFIG_JSON: text_config hidden 3584, 28 layers, 28 heads, 4 KV heads, intermediate 18944, vocab 152064, max_position_embeddings 128000, tie_word_embeddings false, torch_dtype bfloat16; vision_config depth 32, hidden_size 1280, intermediate_size 3420, num_heads 16, patch_size 14, temporal_patch_size 2, spatial_merge_size 2, out_hidden_size 3584, hidden_act silu); max_pixels 12845056 from the Qwen2.5-VL preprocessor_config.json as quoted in public code; head_dim = hidden/heads; params computed from config shapes: decoder 7615616512 (= the qwen2.5-7b entry) + vision tower 676550144 = 8292166656",
    family = "qwen2",
    layers = 28, hidden = 3584, heads = 28, kv_heads = 4, head_dim = 128,
    intermediate = 18944, vocab = 152064, tie_embeddings = false,
    params = 8292166656, active = 8292166656,
    dtype = "bf16", max_context = 128000,
    -- rope_scaling {type mrope, mrope_section [16, 24, 24]} (the default type with M-RoPE
    -- sections): MRotaryEmbedding, 4 x max_position rows (mrope.py at 055e47c28003)
    rope = {mrope = true},
    vision = {model_type = "qwen2_5_vl", hidden = 1280, intermediate = 3420, layers = 32,
              heads = 16, patch = 14, temporal_patch = 2, in_channels = 3, merge = 2,
              out_hidden = 3584, gated = true, proj_hidden = 5120, max_pixels = 12845056,
              params = 676550144, video = true},
    notes = "vision tower: 65536 patches and 16384 tokens for the largest image vLLM profiles with",
  },
  {
    id = "qwen2.5-vl-3b",
    aliases = {"Qwen/Qwen2.5-VL-3B-Instruct", "qwen2.5-vl-3b-instruct", "Qwen/Qwen2.5-VL-3B"},
    hf = "Qwen/Qwen2.5-VL-3B-Instruct",
    source = "NOT read from the repo's config.json text: the Qwen2.5-VL-3B-Instruct config as reproduced in public code (a test fixture quoting 'Real Qwen2.5-VL-3B config.json from HuggingFace Hub' and a Qwen2_5_VLConfig default of the 3B shape: hidden 2048, 36 layers, 16 heads, 2 KV heads, intermediate 11008, vocab 151936, max_position_embeddings 128000, tie_word_embeddings true, bfloat16; vision_config as the 7B's with out_hidden_size 2048); max_pixels 12845056 (Qwen2.5-VL preprocessor_config.json); head_dim = hidden/heads; params computed from config shapes: decoder 3085938688 + vision tower 668684288 = 3754622976",
    family = "qwen2",
    layers = 36, hidden = 2048, heads = 16, kv_heads = 2, head_dim = 128,
    intermediate = 11008, vocab = 151936, tie_embeddings = true,
    params = 3754622976, active = 3754622976,
    dtype = "bf16", max_context = 128000,
    -- rope_scaling {type mrope, mrope_section [16, 24, 24]} (the default type with M-RoPE
    -- sections): MRotaryEmbedding, 4 x max_position rows (mrope.py at 055e47c28003)
    rope = {mrope = true},
    vision = {model_type = "qwen2_5_vl", hidden = 1280, intermediate = 3420, layers = 32,
              heads = 16, patch = 14, temporal_patch = 2, in_channels = 3, merge = 2,
              out_hidden = 2048, gated = true, proj_hidden = 5120, max_pixels = 12845056,
              params = 668684288, video = true},
  },
}
