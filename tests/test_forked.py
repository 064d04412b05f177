"""sampled_metrics.io.forked: the map over forked processes."""

import os

import numpy as np
import pytest

from sampled_metrics.io import forked
from sampled_metrics.io.forked import forked_imap, forked_map


def test_the_workers_inherit_the_state_and_return_in_order():
    state = np.arange(10.0)  # read in the workers, never sent to them

    def task(array, k):
        return os.getpid(), float(array[k] * 2)

    found = forked_map(task, state, range(10), workers=2)
    assert [value for _, value in found] == [2.0 * k for k in range(10)]
    assert os.getpid() not in {pid for pid, _ in found}  # done by the workers
    alone = forked_map(task, state, range(10), workers=1)
    assert {pid for pid, _ in alone} == {os.getpid()}  # one worker: here


def test_blas_runs_on_one_thread_in_the_workers_and_here():
    from threadpoolctl import threadpool_info

    def threads(_, __):
        return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}

    for workers in (1, 2):
        assert set().union(*forked_map(threads, None, range(2), workers)) <= {1}


def test_an_error_in_a_task_reaches_the_caller():
    def task(_, k):
        if k == 3:
            raise ValueError("task 3 failed")
        return k

    with pytest.raises(ValueError, match="task 3 failed"):
        forked_map(task, None, range(6), workers=2)


def test_a_map_inside_a_task_leaves_the_outer_map_working():
    """A task that runs a map of its own (in one process, as the estimators do inside a
    protocol's task) must not take the outer map's state from its later tasks."""

    def inner(offset, k):
        return offset + k

    def outer(_, k):
        return sum(forked_map(inner, 10 * k, range(3), workers=1))

    expected = [30 * k + 3 for k in range(6)]
    for workers in (1, 2):
        assert forked_map(outer, None, range(6), workers) == expected


@pytest.mark.parametrize("workers", [1, 2])
def test_imap_yields_in_order_as_results_come_and_then_clears_its_state(workers):
    seen = []
    results = forked_imap(lambda state, task: state[task], [5, 6, 7], [2, 0, 1], workers)
    for result in results:
        seen.append(result)
        assert forked._RUNNING  # the map's state holds while results are taken
    assert seen == [7, 5, 6] and forked._RUNNING == []
