"""tests/bench/validate_log.py: a vLLM serving log of SIZE bytes for
`make bench`'s kvplan validate line: the startup lines of a raw log
(tests/validation/raw/, as pasted into a GitHub thread), then serving lines
of the kinds a vLLM 0.10 server prints per request and per stats interval
(loggers.py's throughput line, uvicorn's access line, the request's
received and added lines), then the startup log's KV lines: a log as long
as a server's, whose figures are all at its two ends. Deterministic.

Usage: python3 validate_log.py OUT SIZE HEAD.log TAIL.log
"""
import sys


def main():
    out, size, head, tail = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(head) as f:
        first = f.read()
    with open(tail) as f:
        last = f.read()
    stats = ("INFO 09-03 16:31:%02d [loggers.py:123] Engine 000: Avg prompt throughput: %d.%d tokens/s, "
             "Avg generation throughput: %d.%d tokens/s, Running: %d reqs, Waiting: 0 reqs, "
             "GPU KV cache usage: %d.%d%%, Prefix cache hit rate: %d.%d%%\n")
    access = "INFO:     127.0.0.1:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
    received = ("INFO 09-03 16:31:%02d [logger.py:43] Received request chatcmpl-%d: prompt: '<|im_start|>user\\n"
                "Write a haiku about KV caches<|im_end|>\\n', params: SamplingParams(n=1, temperature=0.7, "
                "top_p=0.8, max_tokens=%d), prompt_token_ids: None, lora_request: None.\n")
    added = "INFO 09-03 16:31:%02d [async_llm.py:270] Added request chatcmpl-%d.\n"
    with open(out, "w") as f:
        f.write(first)
        n, i, buf = len(first), 0, []
        room = size - len(last)
        while n < room:
            k = i % 4
            if k == 0:
                s = stats % (i % 60, i % 900, i % 10, i % 700, i % 10, i % 64, i % 90, i % 10, i % 50, i % 10)
            elif k == 1:
                s = access % (30000 + i % 30000)
            elif k == 2:
                s = received % (i % 60, i, 64 + i % 4000)
            else:
                s = added % (i % 60, i)
            s = s[:max(1, room - n - 1)] + "\n" if n + len(s) > room else s
            buf.append(s)
            n += len(s)
            i += 1
            if len(buf) >= 10000:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
        f.write(last)


if __name__ == "__main__":
    main()
