"""sampled_metrics.io.forked: the map over forked processes."""

import os

import numpy as np
import pytest

from sampled_metrics.io.forked import forked_map


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
