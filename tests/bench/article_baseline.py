"""tests/bench/article_baseline.py: the Python baseline of `make bench`.

The Python functions of the article that examples/recompute_article_ledger.lua
checks (kv_cache_bytes and memory_budget, written as in the article),
extended only as far as each shape needs to compute exactly what kvplan
computes, so that the two CSV files can be compared byte for byte:

  * integers instead of floats: bytes are exact, every tensor rounded up
    to whole bytes once (kvplan's kvp_format_bytes), usable memory
    floor(utilization * total) (vLLM's gpu_memory_utilization);
  * storage formats with group scales and zero points: bits(n elements in
    rows of `row`) = n * bits + n / row * ceil(row / group) * (scale + zero);
  * vLLM's rule as kvplan applies it (shapes b and d): KV in blocks of 16
    tokens, one null block kept out of the pool, KV heads replicated when tp
    exceeds them, tp must divide the heads, and vLLM's startup check: one
    request of max_model_len (the model's context) must fit the KV budget,
    else vLLM refuses to start and no row fits; (shape a) the article's own rule:
    each request reserves its whole sequence length contiguously;
  * shape c, optimization combinations over hybrid and MLA models: vLLM's
    hybrid KV cache manager for models of sliding-window and full layers
    (layers of one KV spec form a type; group size = the fewest layers of a
    type, or the most when below 1.5 times the fewest; a block is one page
    in each of the group-size tensors of the GPU; a request takes, in each
    group, ceil(n / 16) blocks (full) or the blocks of its window's last
    W tokens plus one (sliding)), per-layer pages for MLA; fp8 KV;
    contiguous allocation (each request reserves max_model_len, windows
    capped); SGLang's budget (mem_fraction_static 0.88 at tp 1, 0.87 at
    tp 2, of the memory less the overhead, minus the weights; tokens of one
    page each, no null block); the weights on one GPU are facts kvplan writes
    (per engine and tp: vLLM loads gpt-oss's MXFP4 experts repacked), like
    the model shapes;
  * GiB columns printed with Python's "%.2f" (exact binary value, rounded
    half to even: what kvplan prints).

Usage: python3 article_baseline.py SHAPE INPUTS > out.csv (INPUTS: the facts
kvplan wrote with inputs=FILE).
"""
import csv
import math
import sys

GiB = 2 ** 30


def cdiv(a, b):
    return -(-a // b)


def format_bits(n, row, fmt):
    """Bits of n elements stored in `fmt` (bits, group, scale, zero)."""
    bits, group, scale, zero = fmt
    b = n * bits
    if group > 0:
        groups = cdiv(n, group) if row == 0 else (n // row) * cdiv(row, group)
        b += groups * (scale + zero)
    return b


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, head_dim_v, seq_len, batch, kv_fmt):
    """KV Cache footprint for a single generation (current seq_len only):
    the article's function, each layer's K and V rows in kv_fmt, rounded up to
    whole bytes once per layer."""
    per_token_per_layer = (format_bits(n_kv_heads * head_dim, head_dim, kv_fmt) +
                           format_bits(n_kv_heads * head_dim_v, head_dim_v, kv_fmt))  # bits
    return n_layers * cdiv(per_token_per_layer * seq_len, 8) * batch


def memory_budget(weights, kv_per_req, max_concurrent, total, utilization=0.95,
                  overhead=2 * GiB):
    """The article's function in bytes: usable = floor(utilization * total),
    reserved = weights + CUDA context/temp buffers; returns the requests that
    fit (0 when nothing is left), the KV budget and whether max_concurrent
    requests fit."""
    usable = min(math.floor(total * utilization), total)
    reserved = weights + overhead
    budget_for_kv = usable - reserved
    if weights > usable or reserved > usable or budget_for_kv <= 0:
        return 0, budget_for_kv, False
    max_requests = budget_for_kv // kv_per_req
    return max_requests, budget_for_kv, max_concurrent * kv_per_req <= budget_for_kv


def read(path):
    facts = {"model": [], "gpu": [], "kv": [], "weights": []}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] in ("model", "gpu", "kv", "weights"):
                facts[w[0]].append((w[1],) + tuple(int(x) for x in w[2:]))
            else:
                facts[w[0]] = [int(x) for x in w[1:]]
    return facts


def gib(v):
    return "%.2f" % (max(v, 0) / GiB)


def shape_a(facts, out):
    """Article-shaped: models x GPUs x sequence lengths x KV x weight formats x
    concurrency, each request reserving its sequence length."""
    out.writerow(["model", "gpu", "max_model_len", "kv", "weights", "concurrency", "weights_gib",
                  "kv_budget_gib", "seq_bytes", "max_concurrency", "fits"])
    for (mid, layers, heads, kvh, hd, hdv, params, maxctx) in facts["model"]:
        for (gid, total) in facts["gpu"]:
            for seq_len in facts["lens"]:
                for (kname, *kfmt) in facts["kv"]:
                    kv_per_req = kv_cache_bytes(layers, kvh, hd, hdv, seq_len, 1, kfmt)
                    for (wname, *wfmt) in facts["weights"]:
                        weights = cdiv(format_bits(params, 0, wfmt), 8)
                        for conc in facts["conc"]:
                            n, budget, fits = memory_budget(weights, kv_per_req, conc, total)
                            out.writerow([mid, gid, seq_len, kname, wname, conc, gib(weights),
                                          gib(budget), kv_per_req, n,
                                          "true" if fits else "false"])


def vllm_b(layers, heads, kvh, hd, params, total, tp, replicated, util=0.9):
    """One deployment under vLLM's rule as kvplan applies it (bf16 KV and
    weights, paged in blocks of 16 with a null block, nothing reserved):
    KV bytes per token, the KV budget, one block's bytes, whether the
    deployment fits at all. `replicated`: the parameters every TP rank holds
    whole (the RMSNorms: vLLM builds them unsplit), at tp > 1 off the split
    weights and added whole."""
    h = max(1, kvh // tp)                       # KV heads replicated past tp
    per_tok = kv_cache_bytes(layers, h, hd, hd, 1, 1, (16, 0, 0, 0))
    block = 16 * per_tok
    usable = min(math.floor(total * util), total)
    rep = min(replicated * 2, params * 2) if tp > 1 else 0
    weights = cdiv(params * 2 - rep, tp) + rep
    ok_tp = heads % tp == 0 and (kvh % tp == 0 if tp <= kvh else tp % kvh == 0)
    budget = usable - weights
    return per_tok, budget, block, ok_tp and weights <= usable and budget >= block


def rows_b(facts):
    """The rows of shape b: (model, gpu, tp, context, concurrency, KV bytes a
    token, KV budget, max concurrency, fits)."""
    for (mid, layers, heads, kvh, hd, hdv, params, maxctx, replicated) in facts["model"]:
        for (gid, total) in facts["gpu"]:
            for tp in (1, 2, 4, 8):
                per_tok, budget, block, ok = vllm_b(layers, heads, kvh, hd, params, total, tp,
                                                    replicated)
                # vLLM refuses to start when one request of max_model_len (the
                # model's context here) does not fit the KV budget: then no row fits
                starts = cdiv(maxctx, 16) * block <= budget
                for c in range(1, facts["contexts"][0] + 1):
                    ctx = 512 * c
                    seq = cdiv(ctx, 16) * block
                    live = ok and ctx <= maxctx
                    maxc = (budget - block) // seq if live else 0
                    for conc in (1, 2, 4, 8, 16, 32, 64, 128):
                        yield (mid, gid, tp, ctx, conc, per_tok, budget, maxc,
                               live and starts and conc * seq + block <= budget)


HEADER_B = ["model", "gpu", "tp", "context", "concurrency", "kv_bytes_per_token",
            "kv_budget_gib", "max_concurrency", "fits"]


def shape_b(facts, out):
    """Many C-axis rows: models x GPUs x tp x context x concurrency."""
    out.writerow(HEADER_B)
    for (mid, gid, tp, ctx, conc, per_tok, budget, maxc, fits) in rows_b(facts):
        out.writerow([mid, gid, tp, ctx, conc, per_tok, gib(budget), maxc,
                      "true" if fits else "false"])


def shape_d(facts, out):
    """Shape b with what the kvplan script does in Lua, done the same way in
    Python: each row is a record (a dict) that a filter function sees, and a
    column function computes a value from it."""
    keep = lambda r: r["max_concurrency"] >= 1                            # the filter
    budget_per_request = lambda r: r["kv_budget_bytes"] // r["concurrency"]  # the column
    out.writerow(HEADER_B + ["budget_per_request"])
    for (mid, gid, tp, ctx, conc, per_tok, budget, maxc, fits) in rows_b(facts):
        row = {"model": mid, "gpu": gid, "tp": tp, "context": ctx, "concurrency": conc,
               "kv_bytes_per_token": per_tok, "kv_budget_bytes": max(budget, 0),
               "max_concurrency": maxc, "fits": fits}
        if not keep(row):
            continue
        out.writerow([mid, gid, tp, ctx, conc, per_tok, gib(budget), maxc,
                      "true" if fits else "false", budget_per_request(row)])


def shape_d2(facts, out):
    """Shape b with the filter of shape d given as data (kvplan's declarative
    filter, evaluated in C): in Python, the same condition in the loop."""
    out.writerow(HEADER_B)
    for (mid, gid, tp, ctx, conc, per_tok, budget, maxc, fits) in rows_b(facts):
        if maxc >= 1:
            out.writerow([mid, gid, tp, ctx, conc, per_tok, gib(budget), maxc,
                          "true" if fits else "false"])


def read_e(path):
    facts = {"model": [], "gpu": []}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "model":
                facts["model"].append((w[1],) + tuple(int(x) for x in w[2:]))
            elif w[0] == "gpu":
                facts["gpu"].append((w[1], int(w[2]), w[3] == "1", w[4] == "1", int(w[5])))
            elif w[0] == "nontorch":
                facts["nontorch"] = [float(x) for x in w[1:]]
            else:
                facts[w[0]] = [int(x) for x in w[1:]]
    return facts


def sort_sampler_bytes(S, V, b):
    """The PyTorch sort path of vLLM's top-k/top-p sampler, S rows of V
    logits (kvplan's predict.c): the larger of the sort moment (fp32 logits,
    the sort's values and indices, the segmented sort's temporaries) and the
    scatter moment."""
    int_max = 2147483647
    scatter, sort = S * V * (b + 26), S * V * (b + 16)
    g = 1 if V > int_max else min(S, int_max // V)
    temps = V * 20 if g == 1 or V >= 1000000 else g * V * (20 if g >= 128 else 32)
    return max(sort + temps, scatter)


def vllm_activation(H, I, heads, kvh, hd, V, N, S, tp, hidden, workspace, b=2):
    """vLLM V1's profiled activation peak as kvplan predicts it (compiled
    forward, the sort sampler): the largest of the MLP, attention and
    sampler terms on one GPU, each holding torch's cuBLAS workspace; the
    sampler beside the hidden states the release keeps (predict.c
    sampler_hidden: 0 N H, 1 S H, 2 2 S H, 3 N H + 2 S H)."""
    S = min(S, N)
    Ip = cdiv(I, tp)
    mlp = max(2 * H + 3 * Ip, 3 * H + Ip)              # compiled: gate_up freed
    q, kv = cdiv(heads, tp), max(1, kvh // tp)
    attn = 3 * H + (q + 2 * kv) * hd + q * hd
    hid = {0: N * H, 1: S * H, 2: 2 * S * H, 3: N * H + 2 * S * H}[hidden] * b
    sampler = hid + sort_sampler_bytes(S, V, b)
    return max(N * mlp * b, N * attn * b, sampler) + workspace


def deployment_e(m, gpu, tp, version, nontorch):
    """One deployment of shape e (vLLM's budget at 0.9, bf16, its reserves
    predicted): (activation, non-torch memory, one block's bytes, KV budget,
    fits at all)."""
    (mid, layers, heads, kvh, hd, params, maxctx, H, I, V, replicated) = m
    (gid, total, a100, p2p, workspace) = gpu
    v1, big_seqs, nccl, ctx_counted, hidden = version
    base, context, connection, channels, custom_ar = nontorch
    # V1's defaults (the server's): 8192 tokens and big_seqs sequences on a
    # GPU of >= 70 GiB that is not an A100, else 2048 and 256
    N, S = (8192, big_seqs) if total >= 70 * GiB and not a100 else (2048, 256)
    act = vllm_activation(H, I, heads, kvh, hd, V, N, min(S, N), tp, hidden, workspace)
    # non-torch: the base, the context when counted, and at tp > 1 when the
    # snapshot precedes the distributed init and the GPUs are P2P: NCCL's
    # buffers (tp's communicator) and the custom all-reduce's (tp 2, 4, 6, 8)
    nt = base
    if ctx_counted:
        nt += context
    if nccl and p2p and tp > 1:
        nt += channels * connection + (custom_ar if tp in (2, 4, 6, 8) else 0)
    # and at tp > 1 on P2P GPUs, in every release: torch's own NCCL
    # communicator of the tp group, formed lazily at the profile run's logits
    # gather, after the snapshot (its ring: one connection a channel)
    if p2p and tp > 1:
        nt += channels * connection
    overhead = math.floor(nt)
    h = max(1, kvh // tp)
    block = 16 * layers * 2 * h * hd * 2
    usable = min(math.floor(total * 0.9), total)
    # the parameters every TP rank holds whole (vllm_b): off the split, whole
    rep = min(replicated * 2, params * 2) if tp > 1 else 0
    weights = cdiv(params * 2 - rep, tp) + rep
    reserved = weights + act + overhead
    ok_tp = heads % tp == 0 and (kvh % tp == 0 if tp <= kvh else tp % kvh == 0)
    budget = usable - reserved
    return act, overhead, block, budget, ok_tp and weights <= usable and reserved <= usable and \
        budget >= block


def shape_e(facts, out):
    """vLLM's budget with its reserves predicted: models x GPUs x
    max_model_len x tp (kvplan's row order: options, then tp), at context
    max_model_len (the ledger's max_len: a given max_model_len may pass the
    model's) and concurrency 1 and 64."""
    assert facts["version"][0] == 1
    out.writerow(["model", "gpu", "tp", "max_model_len", "concurrency", "activation_bytes",
                  "overhead_bytes", "kv_budget_gib", "max_concurrency", "fits"])
    for m in facts["model"]:
        for gpu in facts["gpu"]:
            for mml in facts["lens"]:
                for tp in (1, 2, 4, 8):
                    act, overhead, block, budget, ok = deployment_e(m, gpu, tp, facts["version"],
                                                                    facts["nontorch"])
                    seq = cdiv(mml, 16) * block
                    maxc = (budget - block) // seq if ok else 0
                    for conc in (1, 64):
                        fits = ok and conc * seq + block <= budget
                        out.writerow([m[0], gpu[0], tp, mml, conc, act, overhead, gib(budget),
                                      maxc, "true" if fits else "false"])


def read_c(path):
    facts = {"model": [], "gpu": [], "combo": [], "ctx": [], "conc": []}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "cmodel":   # id heads, weights on a GPU (vLLM tp 1, 2; SGLang tp 1, 2), kv
                facts["model"].append({"id": w[1], "shapes": {}, "heads": int(w[2]),
                                       "weights": {("vllm", 1): int(w[3]), ("vllm", 2): int(w[4]),
                                                   ("sglang", 1): int(w[5]),
                                                   ("sglang", 2): int(w[6])},
                                       "kv": tuple(int(x) for x in w[7:11])})
            elif w[0] == "cweights":   # gpu, the model's weights on it (as cmodel's)
                facts["model"][-1].setdefault("gpu_weights", {})[w[1]] = {
                    ("vllm", 1): int(w[2]), ("vllm", 2): int(w[3]),
                    ("sglang", 1): int(w[4]), ("sglang", 2): int(w[5])}
            elif w[0] == "shape":   # kind window kv_heads head_dim head_dim_v rank rope count
                layer = (w[1],) + tuple(int(x) for x in w[2:8])
                facts["model"][-1]["shapes"][layer] = int(w[8])
            elif w[0] == "gpu":
                facts["gpu"].append((w[1], int(w[2])))
            elif w[0] == "combo":
                facts["combo"].append(w[1])
            else:
                facts[w[0]] = [int(x) for x in w[1:]]
    return facts


def token_bits(layer, tp, fmt):
    """Bits one token adds to one layer on one GPU."""
    kind, window, kvh, hd, hdv, rank, rope = layer
    if kind == "mla":
        return format_bits(rank + rope, rank + rope, fmt)   # the latent, on every rank
    h = max(1, kvh // tp)
    return format_bits(h * hd, hd, fmt) + format_bits(h * hdv, hdv, fmt)


def window_blocks(window, n, block, step=1):
    """Blocks of a sliding-window layer for n tokens (vLLM SlidingWindowSpec)."""
    span = window - 1 + step
    return cdiv(n, block) if n <= span else cdiv(span, block) + 1


def deployment_c(m, total, combo, tp, max_len=8192, overhead=GiB):
    """One deployment of shape c: (kv budget, request bytes at n, null bytes,
    room, fits at all)."""
    sglang, contiguous = "budget-sglang" in combo, "contiguous" in combo
    fmt = (8, 0, 0, 0) if "kv-fp8" in combo else m["kv"]
    block = 1 if sglang else 16
    shapes = m["shapes"]                          # one KV spec: its layers
    if sglang:
        util = 0.88 if tp < 2 else 0.87
        usable = min(math.floor(max(total - overhead, 0) * util), total)
    else:
        usable = min(math.floor(total * 0.9), total)
    weights = m["weights"][("sglang" if sglang else "vllm", tp)]  # on one GPU: a fact
    reserved = weights if sglang else weights + overhead
    budget = usable - reserved
    ok = m["heads"] % tp == 0
    for (kind, window, kvh, *_) in shapes:
        if kind in ("full", "sliding") and not (kvh % tp == 0 if tp <= kvh else tp % kvh == 0):
            ok = False
    pages = {l: cdiv(block * token_bits(l, tp, fmt), 8) for l in shapes}
    hybrid = not sglang and not contiguous and len({(l[0] == "mla" or l[0] == "full", l[1])
                                                     for l in shapes}) > 1
    if hybrid:                                    # vLLM's KV cache groups
        fewest, most = min(shapes.values()), max(shapes.values())
        size = most if 2 * most < 3 * fewest else fewest
        groups = {l: cdiv(c, size) for l, c in shapes.items()}
        page = max(pages.values())
        block_bytes = page * max(cdiv(c, groups[l]) for l, c in shapes.items())

        def own(n):
            blocks = 0
            for l in shapes:
                k = cdiv(n, block) if l[0] != "sliding" else window_blocks(l[1], n, block)
                blocks += k * groups[l]
            return blocks * block_bytes
    else:
        block_bytes = sum(pages[l] * c for l, c in shapes.items())

        def own(n):
            if contiguous:                        # max_model_len reserved, windows capped
                return sum(cdiv((min(max_len, l[1]) if l[0] == "sliding" else max_len) *
                                token_bits(l, tp, fmt), 8) * c for l, c in shapes.items())
            return sum((cdiv(n, block) if l[0] != "sliding" else window_blocks(l[1], n, block)) *
                       pages[l] * c for l, c in shapes.items())
    null = block_bytes if not sglang and not contiguous else 0
    if sglang:                                    # whole pages of the tokens that fit
        bits = sum(token_bits(l, tp, fmt) * c for l, c in shapes.items())
        blocks = (budget * 8) // bits if budget > 0 else 0
        room, no_block = blocks * block_bytes, blocks < 1
    else:
        room = budget
        no_block = budget <= 0 if contiguous else budget < block_bytes
    fits = ok and weights <= usable and reserved <= usable and not no_block
    return budget, own, null, room, fits


def shape_c(facts, out):
    """Optimization combinations over hybrid and MLA models."""
    out.writerow(["model", "gpu", "optim", "tp", "context", "concurrency", "kv_budget_gib",
                  "max_concurrency", "fits"])
    for model in facts["model"]:
        for (gid, total) in facts["gpu"]:
            m = dict(model, weights=model.get("gpu_weights", {}).get(gid, model["weights"]))
            for combo in facts["combo"]:
                for tp in (1, 2):
                    budget, own, null, room, ok = deployment_c(m, total, combo, tp)
                    for ctx in facts["ctx"]:
                        seq = own(ctx)
                        live = ok and ctx <= 8192 and seq + null <= room
                        maxc = (room - null) // seq if live else 0
                        for conc in facts["conc"]:
                            fits = live and conc * seq + null <= room
                            out.writerow([m["id"], gid, combo, tp, ctx, conc, gib(budget), maxc,
                                          "true" if fits else "false"])


def main(shape, path):
    out = csv.writer(sys.stdout, lineterminator="\n")
    if shape == "c":
        shape_c(read_c(path), out)
        return
    if shape == "e":
        shape_e(read_e(path), out)
        return
    {"a": shape_a, "b": shape_b, "d": shape_d, "d2": shape_d2}[shape](read(path), out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
