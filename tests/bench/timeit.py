"""tests/bench/timeit.py: time a command the same way for every side of
`make bench`: run it N times with its standard output to a file and print
the best CPU seconds (user + system, from wait4's rusage: what the command
itself used, whatever else the machine runs), the best wall-clock seconds
and the peak resident memory in KB.

Usage: python3 timeit.py N OUTFILE command args...
"""
import os
import sys
import time


def run(argv, out):
    # the previous run's output is removed here, in the parent: truncating it
    # in the child (O_TRUNC) would charge freeing its pages (tens of
    # milliseconds for 80 MB) to the command measured
    try:
        os.unlink(out)
    except FileNotFoundError:
        pass
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.execvp(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit("timeit: %s failed (status %d)" % (" ".join(argv), status))
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss


def main():
    n, out, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    best = [min(x) for x in zip(*(run(argv, out) for _ in range(n)))]
    print("%.4f %.4f %d" % (best[0], best[1], best[2]))


if __name__ == "__main__":
    main()
