"""tests/bench/seed_baseline.py: the Python baseline of `make bench`.

The same sweep as sweep.lua (models x GPUs x tp x context x concurrency),
computed with seed 000's own functions (kv_cache_bytes and memory_budget,
copied from 000_570d0a9d6d24205b.txt) and written with Python's csv module,
with the same columns at the same precision. Reads the facts kvplan wrote.
"""
import csv
import sys


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, dtype_bytes=2):
    """KV Cache footprint for a single generation (current seq_len only)."""
    per_token_per_layer = 2 * n_kv_heads * head_dim * dtype_bytes  # one K + one V
    return n_layers * per_token_per_layer * seq_len * batch


def memory_budget(model_gb, kv_gb_per_req, max_concurrent, total_gb, safety=0.05):
    usable = total_gb * (1 - safety)
    reserved = model_gb + 2.0            # weights + CUDA context/temp buffers
    budget_for_kv = usable - reserved
    max_requests = int(budget_for_kv // kv_gb_per_req)
    return max_requests, budget_for_kv


def main(path):
    models, gpus, contexts = [], [], 0
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "model":
                models.append((w[1],) + tuple(int(x) for x in w[2:]))
            elif w[0] == "gpu":
                gpus.append((w[1], int(w[2])))
            elif w[0] == "contexts":
                contexts = int(w[1])
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["model", "gpu", "tp", "context", "concurrency", "kv_bytes_per_token",
                  "kv_budget_gib", "max_concurrency", "fits"])
    for (mid, layers, heads, kvh, hd, params, maxctx) in models:
        for (gid, total) in gpus:
            for tp in (1, 2, 4, 8):
                h = max(1, kvh // tp)
                per_tok = kv_cache_bytes(layers, h, hd, 1, 1)
                for c in range(1, contexts + 1):
                    ctx = 512 * c
                    kv_gb = kv_cache_bytes(layers, h, hd, ctx, 1) / 2**30
                    for conc in (1, 2, 4, 8, 16, 32, 64, 128):
                        n, budget = memory_budget(params * 2 / tp / 2**30, kv_gb, conc, total / 2**30)
                        out.writerow([mid, gid, tp, ctx, conc, per_tok, "%.2f" % max(budget, 0.0),
                                      max(n, 0), "true" if n >= conc else "false"])


if __name__ == "__main__":
    main(sys.argv[1])
