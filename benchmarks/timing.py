"""The best of several timed runs, for the benchmark scripts."""

import time


def best_time(fn, repeats: int) -> tuple:
    """(the fastest of ``repeats`` calls of ``fn`` in seconds, the last call's result)."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result
