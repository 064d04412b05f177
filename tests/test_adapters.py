"""The framework adapters where their frameworks are not installed (this project's
environment): the rank rule of a held-out item in and beyond a framework's top k
(``adapters.topk``, what RecBole's RankRecorder applies to each batch), the one-line
error of a missing framework, and of a bad RecBole eval mode. The adapters against the
frameworks themselves: tests/test_recbole_adapter.py, tests/test_cornac_adapter.py.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from sampled_metrics.frameworks.adapters import FrameworkNotInstalled, cornac, recbole
from sampled_metrics.frameworks.adapters.topk import held_out_ranks

ITEMS = 30


def tied_rows(rows: int, above: int, tied: int, listed_tied: int = 0, k: int = 3):
    """``rows`` copies of one row: ``above`` negatives score 0.9, the held-out item
    (item 29) and ``tied`` negatives 0.5, the rest 0.1; the top k lists the best
    ``k - listed_tied`` items above it and ``listed_tied`` of the tied ones."""
    target = ITEMS - 1
    scores = np.full(ITEMS, 0.1)
    scores[:above] = 0.9
    tied_items = np.arange(above, above + tied)
    scores[tied_items] = 0.5
    scores[target] = 0.5
    top = np.concatenate([np.arange(k - listed_tied), tied_items[:listed_tied]])
    negative = np.ones(ITEMS, dtype=bool)
    negative[target] = False
    return (
        np.tile(scores, (rows, 1)),
        np.full(rows, target),
        np.tile(negative, (rows, 1)),
        np.tile(top, (rows, 1)),
    )


def test_beyond_the_top_k_a_tied_item_takes_a_uniform_place_among_its_ties():
    """5 negatives above, 10 tied: the rank is 6 + U, U uniform on 0..10, over users
    (one seed) and over seeds (one user)."""
    scores, targets, negative, top = tied_rows(2200, above=5, tied=10)
    by_user = held_out_ranks(scores, targets, negative, top, np.arange(2200), seed=3)
    by_seed = np.array([held_out_ranks(*tied_rows(1, 5, 10), [7], seed=s)[0] for s in range(2200)])
    for ranks in (by_user, by_seed):
        counts = np.bincount(ranks, minlength=17)
        assert counts[:6].sum() == 0 and counts[17:].sum() == 0
        # 200 expected per place, binomial sd 13.5: within 5 sd
        assert np.abs(counts[6:17] - 200).max() < 68, counts[6:17]
        # mean 6 + 10 / 2, sd of the mean 3.16 / sqrt(2200) = 0.067
        assert abs(ranks.mean() - 11) < 0.35


def test_tied_items_in_the_top_k_come_before_the_held_out_item_beyond_it():
    """2 negatives above, 8 tied, 1 of them listed in the top 3: the held-out item is
    after the 3 listed, then uniform among the 7 other tied ones."""
    scores, targets, negative, top = tied_rows(1600, above=2, tied=8, listed_tied=1)
    ranks = held_out_ranks(scores, targets, negative, top, np.arange(1600), seed=0)
    assert ranks.min() == 4 and ranks.max() == 11
    assert abs(ranks.mean() - (4 + 7 / 2)) < 0.3
    assert held_out_ranks(scores, targets, negative, top, targets, ties="optimistic")[0] == 4
    assert held_out_ranks(scores, targets, negative, top, targets, ties="pessimistic")[0] == 11


def test_optimistic_and_pessimistic_put_the_held_out_item_first_or_last_of_its_ties():
    scores, targets, negative, top = tied_rows(1, above=5, tied=10)
    assert held_out_ranks(scores, targets, negative, top, [0], ties="optimistic")[0] == 6
    assert held_out_ranks(scores, targets, negative, top, [0], ties="pessimistic")[0] == 16
    # an item that is not a negative (history, another held-out item) never counts
    negative[0, 5:9] = False
    assert held_out_ranks(scores, targets, negative, top, [0], ties="pessimistic")[0] == 12


def test_in_the_top_k_the_rank_is_the_frameworks_place_whatever_the_tie_order():
    """Items 3 and 4 and the held-out item 29 tie; the top 4 lists 0 (not a negative:
    another held-out item), 4, 29, 3: the held-out item is second among the negatives,
    under every tie order and seed."""
    scores, targets, negative, _ = tied_rows(1, above=3, tied=2, k=3)
    negative[0, 0] = False
    top = np.array([[0, 4, ITEMS - 1, 3]])
    for ties in ("random", "optimistic", "pessimistic"):
        for seed in range(20):
            assert held_out_ranks(scores, targets, negative, top, [1], ties=ties, seed=seed) == 2


def test_a_bad_tie_order_or_seed_is_one_line():
    args = tied_rows(1, above=1, tied=1)
    with pytest.raises(ValueError, match="^ties 'average': give one of random, optimistic"):
        held_out_ranks(*args, [0], ties="average")
    with pytest.raises(ValueError, match="seed must be a non-negative integer, not -1"):
        held_out_ranks(*args, [0], seed=-1)


@pytest.mark.parametrize("missing", ["recbole", "torch"])
@pytest.mark.parametrize(
    "call",
    [
        lambda: recbole.ranks_from_checkpoint("saved/BPR.pth", ["recbole-uni100", "full"]),
        lambda: recbole.RankRecorder(object(), object()),
        lambda: recbole.record_ranks(object(), object()),
        lambda: recbole.eval_loader({}, None, None, None, None, "full"),
    ],
)
def test_without_recbole_or_torch_the_adapter_says_where_to_run_it(monkeypatch, missing, call):
    monkeypatch.setitem(sys.modules, missing, None)  # import fails as if not installed
    with pytest.raises(FrameworkNotInstalled) as raised:
        call()
    says_commands_that_work(str(raised.value), "recbole", "RecBole and torch",
                            "your RecBole environment")  # fmt: skip
    assert isinstance(raised.value, ImportError)


def says_commands_that_work(message: str, framework: str, needs: str, elsewhere: str) -> None:
    """The message names what is missing and two commands on this repository: the
    script that builds the framework's environment, and an editable install of this
    project without its dependencies (no package index has it)."""
    (repository,) = set(re.findall(r"`cd (\S+) && python -m pip install --no-deps", message))
    root = Path(repository)
    assert message == (
        f"sampled-metrics {framework} needs {needs} (not installed here): run it in an "
        f"environment that has it: `bash {root}/.ci/envs/{framework}.sh` builds one with this "
        f"package (then `{root}/.envs/{framework}/bin/sampled-metrics {framework} ...`), or "
        f"`cd {root} && python -m pip install --no-deps -c constraints.txt -e .` adds this "
        f"package to {elsewhere} (docs/{framework}.md)"
    )
    assert (root / ".ci" / "envs" / f"{framework}.sh").is_file()
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "sampled-metrics"
    assert (root / "docs" / f"{framework}.md").is_file()


@pytest.mark.parametrize(
    "call",
    [
        lambda: cornac.rank_files([object()], object()),
        lambda: cornac.exact_ranks(object(), None, None),
        lambda: cornac.cornac_order(object(), 0, [1, 2]),
    ],
)
def test_without_cornac_the_adapter_says_where_to_run_it(monkeypatch, call):
    monkeypatch.setitem(sys.modules, "cornac", None)
    with pytest.raises(FrameworkNotInstalled) as raised:
        call()
    says_commands_that_work(str(raised.value), "cornac", "cornac", "your cornac environment")


@pytest.mark.parametrize("mode", ["uni-100", "uni0", "pop", "Full", "uni100x"])
def test_a_bad_eval_mode_is_one_line_before_recbole_is_needed(monkeypatch, mode):
    """The protocol (and a loader's mode) is checked first: the error is its own, even
    without RecBole."""
    monkeypatch.setitem(sys.modules, "recbole", None)
    expected = f"^RecBole eval mode '{mode}': give full, uniN or popN, N > 0 \\(uni100, pop50\\)$"
    with pytest.raises(ValueError, match=f"^unknown protocol '{mode}'; give full, ncf"):
        recbole.ranks_from_checkpoint("saved/BPR.pth", ["full", mode])
    with pytest.raises(ValueError, match=expected):
        recbole.eval_loader({}, None, None, None, None, mode)


def test_quiet_hides_other_libraries_warnings_and_info_for_the_call_only(caplog):
    """Inside: deprecations and INFO records dropped, RuntimeWarning, WARNING records
    and errors kept; after: the filters and the logging threshold as they were."""
    import logging
    import warnings

    from sampled_metrics.frameworks.adapters.quiet import quiet

    filters = list(warnings.filters)
    caplog.set_level(logging.INFO)
    log = logging.getLogger("recbole.trainer")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyError), quiet():
            warnings.warn("np.float is deprecated", DeprecationWarning, stacklevel=1)
            warnings.warn("torch.load weights_only", FutureWarning, stacklevel=1)
            warnings.warn("a framework's advice", UserWarning, stacklevel=1)
            warnings.warn("overflow in the scores", RuntimeWarning, stacklevel=1)
            log.info("Loading model structure")
            log.warning("a real problem")
            raise KeyError("an error still raises")
        warnings.warn("after the call", DeprecationWarning, stacklevel=1)
        log.info("after the call")
    assert [str(w.message) for w in caught] == ["overflow in the scores", "after the call"]
    assert [r.getMessage() for r in caplog.records] == ["a real problem", "after the call"]
    assert warnings.filters[-len(filters) :] == filters and logging.root.manager.disable == 0
