"""Work spread over forked processes that inherit what they read: only the tasks (small)
and the results cross between processes, never the arrays a task works on."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["forked_imap", "forked_map"]

# (function, state) of the running map, inherited by its forked workers; empty between maps.
_RUNNING: list = []


def forked_map(
    function: Callable[[Any, Any], Any],
    state: object,
    tasks: Sequence[Any],
    workers: int,
    *,
    chunksize: int = 1,
    progress: str | None = None,
) -> list:
    """``[function(state, task) for task in tasks]``, in ``workers`` forked processes.

    The workers are forked once the map starts, so they inherit ``function`` and
    ``state`` (arrays, models) as they are; each task and each result is pickled. BLAS
    runs on one thread in each worker (the workers share the cores), and here with one
    worker or one task, where everything runs in order: the same bits either way.

    Parameters
    ----------
    function : callable
        ``function(state, task) -> result``.
    state : object
        What every task reads.
    tasks : sequence
    workers : int
    chunksize : int, default 1
        Tasks sent to a worker at a time.
    progress : str, optional
        A tqdm bar over the tasks with this description.

    Returns
    -------
    list
        The results, in the order of ``tasks``.

    Examples
    --------
    >>> forked_map(lambda state, task: state * task, 10, [1, 2, 3], workers=2)
    [10, 20, 30]
    """
    return list(
        forked_imap(function, state, tasks, workers, chunksize=chunksize, progress=progress)
    )


def forked_imap(
    function: Callable[[Any, Any], Any],
    state: object,
    tasks: Sequence[Any],
    workers: int,
    *,
    chunksize: int = 1,
    progress: str | None = None,
) -> Iterator[Any]:
    """:func:`forked_map`'s results yielded one by one, in the order of ``tasks``, as they
    come: the caller keeps only what it makes of them (a worker runs ahead by at most
    the tasks it was sent). The map's state and BLAS's one thread hold until the last
    result is taken or the generator is closed.

    Examples
    --------
    >>> [r for r in forked_imap(lambda state, task: state + task, 1, [1, 2], workers=2)]
    [2, 3]
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from threadpoolctl import threadpool_limits

    tasks = list(tasks)
    outer = _RUNNING[:]  # a map inside a task of another (in its worker, or here)
    _RUNNING[:] = [function, state]
    pool = None
    try:
        if workers > 1 and len(tasks) > 1:
            pool = ProcessPoolExecutor(
                workers,
                multiprocessing.get_context("fork"),
                initializer=threadpool_limits,
                initargs=(1,),
            )
            results = pool.map(_run, tasks, chunksize=chunksize)
        else:
            results = map(_run, tasks)
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(tasks), desc=progress)
        with threadpool_limits(1):
            yield from results
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        _RUNNING[:] = outer


def _run(task):
    function, state = _RUNNING
    return function(state, task)
