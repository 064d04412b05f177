"""Synthetic implicit-feedback data of any size, without a download.

A generated data set is shaped like real implicit feedback: a long-tailed item
popularity, a long-tailed user activity between a floor and a ceiling, no
repeated (user, item) pair, and an order of each user's events for the
leave-last-out split. The model (``docs/datasets.md``, "Synthetic data"):

* **Items.** Item ``i`` (ids ``1..items``, 1 the most popular) is drawn with
  probability ``p_i`` proportional to ``i ** -popularity_exponent`` (Zipf; 0:
  uniform).
* **Users.** Every user gets ``min_events_per_user`` events; the rest of
  ``interactions`` is shared among the users in proportion to a
  generalized-Pareto weight ``w_u = (V_u ** -b - 1) / b`` (``V_u`` uniform on
  (0, 1], ``b = activity_exponent``; ``b = 0``: ``-log V_u``, exponential), so
  that in the tail the activity of the users ranked by activity falls like
  ``rank ** -b``, and the least active users sit near the floor. No user gets
  more than ``max_events_per_user``: the share of a capped user goes to the
  others (water-filling). The counts are the floors of the shares, and the
  events left over go one each to users drawn at random: the total is exactly
  ``interactions``.
* **Events.** A user with ``c`` events draws items with replacement from ``p``
  until ``c`` distinct items have come up; ``time`` is the order in which they
  first came up (0..c-1). That is sequential sampling without replacement in
  proportion to popularity: each next item, the held-out last one too, is
  drawn from ``p`` restricted to the items the user has not had yet.

Generation is vectorized: the draws with replacement of many users at once
(the alias method), then two sorts of packed integer keys keep each user's
first ``c`` distinct items in order. Users who would need more draws than
there are items (the most active), and the few whose draws fell short, take
their remaining items from an exponential race over the catalogue
(Efraimidis-Spirakis keys ``E_i / p_i``, ``E_i`` exponential, smallest first),
which continues the same sequential sampling exactly. Everything random comes
from one ``numpy.random.Generator`` seeded with ``seed`` and consumed in a fixed
order (chunks of fixed sizes, no threads, no hashing, stable sorts): one seed
gives the same events on every run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["SYNTHETIC_KEYS", "check_synthetic", "synthetic_events"]

# The keys of a `format: synthetic` entry of config.yaml: the parameters of
# synthetic_events, all required.
SYNTHETIC_KEYS = (
    "users",
    "items",
    "interactions",
    "popularity_exponent",
    "activity_exponent",
    "min_events_per_user",
    "max_events_per_user",
    "seed",
)

# Draws with replacement per chunk of users, and random keys per block of the
# exponential race: fixed numbers, so that the stream of random numbers (and the
# events) never depend on the machine. They bound the working memory (about 60
# bytes a draw, 16 a key) besides the output (12 bytes an event).
_DRAWS_PER_CHUNK = 1 << 22
_KEYS_PER_BLOCK = 1 << 21
# A user draws for an expected c + _MARGIN * sqrt(c) + 1 distinct items (few fall short).
_MARGIN = 3.0
# Points of the grid of draw counts on which the expected distinct items are tabulated.
_GRID = 256


def check_synthetic(
    users: int,
    items: int,
    interactions: int,
    popularity_exponent: float,
    activity_exponent: float,
    min_events_per_user: int,
    max_events_per_user: int,
    seed: int,
) -> None:
    """Raise ``ValueError`` naming the first parameter that cannot work.

    The message starts with the parameter's name, the key of a ``format:
    synthetic`` entry of config.yaml, e.g. ``"interactions: ..."``.

    Parameters
    ----------
    users, items : int
        Number of users and of items (the catalogue), 1 to 2**31 - 1.
    interactions : int
        Number of distinct (user, item) events: from ``users *
        min_events_per_user`` to ``users * max_events_per_user``.
    popularity_exponent, activity_exponent : float
        Exponents of item popularity and user activity, in [0, 10].
    min_events_per_user, max_events_per_user : int
        Events of the least and the most active users: ``1 <= min <= max <= items``.
    seed : int
        Seed of the generator, at least 0.

    Examples
    --------
    >>> check_synthetic(100, 50, 3000, 1.0, 0.5, 20, 50, seed=0)
    >>> check_synthetic(100, 50, 6000, 1.0, 0.5, 20, 50, seed=0)
    Traceback (most recent call last):
    ...
    ValueError: interactions: 6000 is more than users x max_events_per_user = 100 x 50 = 5000
    """
    integers = {
        "users": users,
        "items": items,
        "interactions": interactions,
        "min_events_per_user": min_events_per_user,
        "max_events_per_user": max_events_per_user,
        "seed": seed,
    }
    for name, value in integers.items():
        least = 0 if name == "seed" else 1
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"{name}: {value!r} is not an integer")
        if value < least:
            raise ValueError(f"{name}: {value} must be at least {least}")
        if name in ("users", "items") and value >= 2**31:
            raise ValueError(f"{name}: {value} is too large (ids are int32, below 2**31)")
    for name, exponent in (
        ("popularity_exponent", popularity_exponent),
        ("activity_exponent", activity_exponent),
    ):
        if not isinstance(exponent, (int, float, np.integer, np.floating)) or isinstance(
            exponent, bool
        ):
            raise ValueError(f"{name}: {exponent!r} is not a number")
        if not 0 <= exponent <= 10:
            raise ValueError(f"{name}: {exponent} must be within [0, 10]")
    if max_events_per_user > items:
        raise ValueError(
            f"max_events_per_user: {max_events_per_user} is more than items = {items} "
            "(a user has each item at most once)"
        )
    if min_events_per_user > max_events_per_user:
        raise ValueError(
            f"min_events_per_user: {min_events_per_user} is more than "
            f"max_events_per_user = {max_events_per_user}"
        )
    most, least = users * max_events_per_user, users * min_events_per_user
    if interactions > most:
        raise ValueError(
            f"interactions: {interactions} is more than users x max_events_per_user = "
            f"{users} x {max_events_per_user} = {most}"
        )
    if interactions < least:
        raise ValueError(
            f"interactions: {interactions} is fewer than users x min_events_per_user = "
            f"{users} x {min_events_per_user} = {least}"
        )


def synthetic_events(
    users: int,
    items: int,
    interactions: int,
    *,
    popularity_exponent: float,
    activity_exponent: float,
    min_events_per_user: int,
    max_events_per_user: int,
    seed: int,
) -> pd.DataFrame:
    """Generate an implicit-feedback events frame (the model: this module's docstring).

    Parameters
    ----------
    users : int
        Number of users, ids ``1..users``; every one has events.
    items : int
        Number of items of the catalogue, ids ``1..items`` by popularity (1 the
        most popular). An item no user drew does not occur.
    interactions : int
        Number of events, exactly; no (user, item) pair repeats.
    popularity_exponent : float
        Item ``i`` is drawn in proportion to ``i ** -popularity_exponent``.
    activity_exponent : float
        Shape of the generalized-Pareto activity: in the tail, the activity of
        the users ranked by activity falls like ``rank ** -activity_exponent``
        (0: an exponential, light tail).
    min_events_per_user, max_events_per_user : int
        The fewest and the most events of a user (MovieLens keeps users with 20
        or more). Keep ``items - max_events_per_user`` at least the ``m`` of a
        sampled evaluation without replacement.
    seed : int
        Seed of the one random generator: the same seed gives the same frame.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``time`` (int32), one row per event, sorted
        by user then time; ``time`` is the position of the event in the user's
        history (0, 1, ...): the last one is held out by the split.

    Examples
    --------
    >>> events = synthetic_events(
    ...     100, 50, 2000, popularity_exponent=1.0, activity_exponent=0.5,
    ...     min_events_per_user=5, max_events_per_user=45, seed=1)
    >>> events.head(3)
       user  item  time
    0     1    13     0
    1     1    39     1
    2     1    21     2
    >>> len(events), events["user"].nunique(), events["item"].nunique()
    (2000, 100, 50)
    >>> sizes = events.groupby("user").size()
    >>> int(sizes.min()), int(sizes.max())
    (5, 45)
    >>> events["item"].value_counts().head(3).to_dict()  # item 1 the most popular
    {1: 95, 2: 92, 3: 75}
    >>> bool(events.duplicated(["user", "item"]).any())
    False
    """
    check_synthetic(
        users,
        items,
        interactions,
        popularity_exponent,
        activity_exponent,
        min_events_per_user,
        max_events_per_user,
        seed,
    )
    rng = np.random.default_rng(seed)
    popularity = _popularity(items, float(popularity_exponent))
    counts = _activity(
        users,
        interactions,
        float(activity_exponent),
        min_events_per_user,
        max_events_per_user,
        rng,
    )
    offsets = np.zeros(users + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    item = np.empty(interactions, dtype=np.int32)  # 0-based until the end
    time = np.empty(interactions, dtype=np.int32)

    draws = _draws_needed(counts, popularity)  # 0: more draws than items, race instead
    short, found = _draw_with_replacement(counts, draws, offsets, popularity, item, time, rng)
    race = np.concatenate([np.flatnonzero(draws == 0), short])
    have = np.concatenate([np.zeros(len(race) - len(short), dtype=np.int64), found])
    order = np.argsort(race, kind="stable")
    _race(race[order], have[order], counts, offsets, popularity, item, time, rng)

    item += 1
    user = np.repeat(np.arange(1, users + 1, dtype=np.int32), counts)
    return pd.DataFrame({"user": user, "item": item, "time": time}, copy=False)


# --------------------------------------------------------------------------
# Popularity and activity
# --------------------------------------------------------------------------


def _popularity(items: int, exponent: float) -> np.ndarray:
    """Zipf probabilities p_i ~ i ** -exponent, i = 1..items (float64, sum 1)."""
    logs = -exponent * np.log(np.arange(1, items + 1, dtype=np.float64))
    weights = np.exp(logs - logs.max())
    return weights / weights.sum()


def _activity(
    users: int, interactions: int, exponent: float, minimum: int, maximum: int, rng
) -> np.ndarray:
    """Events per user (int64): ``minimum`` each, the rest in proportion to
    generalized-Pareto weights of shape ``exponent``, at most ``maximum`` each,
    summing exactly to ``interactions``."""
    log_uniform = np.log1p(-rng.random(users))  # log V, V uniform on (0, 1]
    if exponent > 0:
        weights = np.expm1(-exponent * log_uniform) / exponent  # (V ** -b - 1) / b
    else:
        weights = -log_uniform  # the limit b -> 0: exponential
    counts = np.full(users, minimum, dtype=np.int64)
    rest, cap = interactions - users * minimum, maximum - minimum
    if rest == 0:
        return counts
    # Water-filling: the k heaviest users are capped, the others get scale * w.
    order = np.argsort(-weights, kind="stable")
    heaviest = weights[order]
    remaining = np.cumsum(heaviest[::-1])[::-1]  # sum of the weights from the k-th on
    capped = np.arange(users)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = (rest - capped * cap) / remaining
    fits = scale * heaviest <= cap
    k = int(np.argmax(fits)) if fits.any() else users
    if k == users:
        extra = np.full(users, cap, dtype=np.int64)
    else:
        extra = np.minimum(np.floor(scale[k] * weights), cap).astype(np.int64)
    # The floors leave a few events over (or, by rounding, one too many): one
    # each to (from) users drawn at random.
    left = rest - int(extra.sum())
    if left > 0:
        extra[rng.choice(np.flatnonzero(extra < cap), left, replace=False)] += 1
    elif left < 0:
        extra[rng.choice(np.flatnonzero(extra > 0), -left, replace=False)] -= 1
    return counts + extra


# --------------------------------------------------------------------------
# Draws with replacement (most users)
# --------------------------------------------------------------------------


def _draws_needed(counts: np.ndarray, popularity: np.ndarray) -> np.ndarray:
    """Per user, draws with replacement that give, in expectation, c + 3 sqrt(c)
    + 1 distinct items; 0 where that needs more draws than there are items."""
    items = len(popularity)
    grid = np.unique(np.round(np.geomspace(1, items, _GRID)).astype(np.int64))
    log_miss = np.log1p(-np.minimum(popularity, 1.0 - 1e-16))
    # expected distinct items after n draws: sum_i 1 - (1 - p_i) ** n
    distinct = np.array([items - np.exp(n * log_miss).sum() for n in grid])
    target = counts + _MARGIN * np.sqrt(counts) + 1
    draws = np.ceil(np.interp(target, distinct, grid)).astype(np.int64)
    draws = np.maximum(draws, counts)
    draws[target > distinct[-1]] = 0
    return draws


def _alias_table(popularity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table: draw j uniform, keep it with probability prob[j],
    else take alias[j]."""
    n = len(popularity)
    scaled = (popularity * n).tolist()
    prob = np.ones(n)
    alias = np.arange(n, dtype=np.int32)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s], alias[s] = scaled[s], g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    return prob, alias


def _draw_with_replacement(counts, draws, offsets, popularity, item, time, rng):
    """Fill the events of the users with ``draws > 0`` from draws with replacement,
    in chunks of users; return the users whose draws gave too few distinct
    items, and how many they gave (the user's first events, filled)."""
    items = len(popularity)
    prob, alias = _alias_table(popularity)
    light = np.flatnonzero(draws > 0)
    item_bits = max(int(items - 1).bit_length(), 1)
    # a chunk holds about _DRAWS_PER_CHUNK draws, and few enough users that a key
    # (user in the chunk, item, draw number < items) fits in 63 bits
    most_users = 1 << max(63 - 2 * item_bits, 0)
    by_draws = np.cumsum(draws[light]) // _DRAWS_PER_CHUNK
    by_users = np.arange(len(light)) // most_users
    bounds = np.flatnonzero(np.diff(by_draws) | np.diff(by_users)) + 1
    short, found = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    for chunk in np.split(light, bounds):
        if len(chunk):
            users, have = _fill_chunk(
                chunk, counts, draws, offsets, prob, alias, item_bits, item, time, rng
            )
            short.append(users)
            found.append(have)
    return np.concatenate(short), np.concatenate(found)


def _fill_chunk(chunk, counts, draws, offsets, prob, alias, item_bits, item, time, rng):
    """Draw for the users of ``chunk``, fill the events of their first distinct
    items; return the users that fell short and how many items they found."""
    n = draws[chunk]
    owner = np.repeat(np.arange(len(chunk), dtype=np.int64), n)  # index in the chunk
    starts = np.zeros(len(chunk), dtype=np.int64)
    np.cumsum(n[:-1], out=starts[1:])
    index = np.arange(len(owner), dtype=np.int64) - np.repeat(starts, n)  # draw number
    drawn = _alias_draw(prob, alias, len(owner), rng)
    draw_bits = max(int(n.max() - 1).bit_length(), 1)  # n <= items: at most item_bits
    # first draw of each (user, item): sort by user, item, draw number
    key = (((owner << item_bits) | drawn) << draw_bits) | index
    key.sort()
    pair = key >> draw_bits
    first = np.ones(len(key), dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    key = key[first]
    # each user's distinct items in order of first draw: sort by user, draw number
    owner = key >> (item_bits + draw_bits)
    key = (((owner << draw_bits) | (key & ((1 << draw_bits) - 1))) << item_bits) | (
        (key >> draw_bits) & ((1 << item_bits) - 1)
    )
    key.sort()
    owner = key >> (draw_bits + item_bits)
    found = np.bincount(owner, minlength=len(chunk))
    first_of = np.zeros(len(chunk), dtype=np.int64)
    np.cumsum(found[:-1], out=first_of[1:])
    position = np.arange(len(key), dtype=np.int64) - first_of[owner]
    keep = position < counts[chunk][owner]
    where = offsets[chunk][owner[keep]] + position[keep]
    item[where] = key[keep] & ((1 << item_bits) - 1)
    time[where] = position[keep]
    fell_short = found < counts[chunk]
    return chunk[fell_short], found[fell_short]


def _alias_draw(prob: np.ndarray, alias: np.ndarray, size: int, rng) -> np.ndarray:
    """``size`` items (int64) drawn with replacement through the alias table."""
    uniform = rng.random(size)
    uniform *= len(prob)
    drawn = uniform.astype(np.int64)
    uniform -= drawn  # the fraction: a second uniform
    return np.where(uniform < prob[drawn], drawn, alias[drawn])


# --------------------------------------------------------------------------
# Exponential race (the most active users, and the few whose draws fell short)
# --------------------------------------------------------------------------


def _race(race_users, have, counts, offsets, popularity, item, time, rng) -> None:
    """Fill the events of ``race_users`` after their first ``have`` (filled by
    draws with replacement) by the exponential race over the items they do not
    have yet, in blocks of users."""
    items = len(popularity)
    inverse = 1.0 / popularity
    rows = max(1, _KEYS_PER_BLOCK // items)
    for start in range(0, len(race_users), rows):
        block, had = race_users[start : start + rows], have[start : start + rows]
        need = counts[block] - had
        keys = rng.standard_exponential((len(block), items))
        keys *= inverse  # E_i / p_i: the smallest key arrives first
        # the items a user already has never arrive again
        before = np.repeat(np.cumsum(had) - had, had)  # events of the block's earlier users
        at = np.repeat(offsets[block], had) + np.arange(int(had.sum())) - before
        keys[np.repeat(np.arange(len(block)), had), item[at]] = np.inf
        most = int(need.max())
        chosen = np.argpartition(keys, most - 1, axis=1)[:, :most]
        order = np.argsort(np.take_along_axis(keys, chosen, axis=1), axis=1, kind="stable")
        chosen = np.take_along_axis(chosen, order, axis=1)
        for row, user in enumerate(block):
            first, last = offsets[user] + had[row], offsets[user + 1]
            item[first:last] = chosen[row, : need[row]]
            time[first:last] = np.arange(had[row], counts[user])
