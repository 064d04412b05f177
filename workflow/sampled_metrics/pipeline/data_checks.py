"""What a data set's sizes must allow, checked before any model is trained: at start-up
when the sizes are known (a synthetic entry's, or a catalogue size in ``facts``), else
right after the split. Each problem raises one :class:`~.config.ConfigError` naming the
key.

* :func:`check_data_sizes`: ``sampling.m`` against the smallest pool without
  replacement, and against the catalogue with replacement
  (:func:`check_draws_with_replacement`);
* :func:`check_fit_memory`: what each model's fit needs against the memory available.
"""

from __future__ import annotations

from .config import ConfigError

__all__ = [
    "MAX_DRAWS_PER_ITEM",
    "check_data_sizes",
    "check_draws_with_replacement",
    "check_fit_memory",
]


# With replacement, sampling.m at most this many times the number of items. A user's
# sampled rank is informed by at most n_u - 1 distinct items (n_u <= the number of items),
# and ranking m > n_u draws costs more than ranking the user's n_u items exactly, which
# informs more. A factor of 10 leaves room to study the binomial law around n (Figure 6
# goes to n - 1) and refuses draws that only cost: the draw plan and the ranking pass
# handle repetitions x m draws per user (m = 40,000 on 40 items ran for minutes).
MAX_DRAWS_PER_ITEM = 10


def check_data_sizes(
    config: dict, name: str, n_items: int, smallest_pool: int, source: str
) -> None:
    """What a data set's sizes must allow, checked before any model is trained (at
    start-up when the sizes are known, else right after the split).

    With ``smallest_pool`` the fewest items outside a user's history (train and
    held-out item), the smallest ranked set is ``n_u = smallest_pool + 1``:

    * ``sampling.m`` <= smallest_pool with ``sampling.law: hypergeometric`` (m distinct
      items); with ``binomial`` a pool of at least 1 item, and m at most
      :data:`MAX_DRAWS_PER_ITEM` times the number of items
      (:func:`check_draws_with_replacement`);
    * ``estimation.law: hypergeometric`` needs m <= n - 1 (section 4.3), n the
      smallest n_u with ``estimation.n: per_user``, else the number of items.

    What only the protocol study or Figure 6 needs stops nothing: a protocol of
    ``protocols.run`` drawing more distinct items than the smallest pool
    (``studies.protocols.files.left_out_reason``) and a sample size of Figure 6 above n - 1
    (``reproduction.curves.largest_sample_size``) are left out by their rules, which
    name them and why in their outputs.

    Parameters
    ----------
    config : dict
        The validated configuration.
    name : str
        The data set's key of ``datasets``.
    n_items : int
        Its number of items.
    smallest_pool : int
        The fewest items outside a user's history.
    source : str
        Where the sizes come from (named in the message).

    Raises
    ------
    ConfigError
        Naming the key whose value the sizes do not allow.

    Examples
    --------
    >>> from sampled_metrics.pipeline.validation import load_config
    >>> config = load_config("config.yaml")  # the repository's, from its top folder
    >>> check_data_sizes(config, "ml-1m", 3706, 1391, "split")
    >>> check_data_sizes(config, "ml-1m", 120, 99, "split")  # elliot, Figure 6 left out
    Traceback (most recent call last):
    sampled_metrics.pipeline.config.ConfigError: sampling.m: 100 is larger than the smallest
    candidate pool, 99 items (ml-1m: 120 items; split); lower sampling.m or set
    sampling.law: binomial
    >>> config["sampling"]["m"] = 20
    >>> check_data_sizes(config, "ml-1m", 120, 99, "split")
    """
    from ..estimation.laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT, sampling_law

    sampling, estimation = config["sampling"], config["estimation"]
    m = sampling["m"]
    where = f"{name}: {n_items} items; {source}"
    with_replacement = sampling_law(sampling["law"]).replacement
    if not with_replacement and m > smallest_pool:
        raise ConfigError(
            f"sampling.m: {m} is larger than the smallest candidate pool, {smallest_pool} "
            f"items ({where}); lower sampling.m or set sampling.law: {WITH_REPLACEMENT}"
        )
    if smallest_pool < 1:
        raise ConfigError(
            f"sampling.law: {sampling['law']}: a user has interacted with every item "
            f"({where}), there is nothing to sample for them"
        )
    check_draws_with_replacement(config, name, n_items, source)
    smallest_n = smallest_pool + 1 if estimation["n"] == "per_user" else n_items
    if not sampling_law(estimation["law"]).replacement and m > smallest_n - 1:
        raise ConfigError(
            f"estimation.law: {WITHOUT_REPLACEMENT} needs sampling.m <= n - 1 = "
            f"{smallest_n - 1} for every user, got m = {m} ({where}); choose binomial"
        )


def check_draws_with_replacement(config: dict, name: str, n_items: int, source: str) -> None:
    """With ``sampling.law: binomial``, ``sampling.m`` at most :data:`MAX_DRAWS_PER_ITEM`
    times the number of items, the largest ranked set a user can have.

    Parameters
    ----------
    config : dict
        The validated configuration.
    name : str
        The data set's key of ``datasets``.
    n_items : int
        Its number of items (from its facts at start-up, else from its split).
    source : str
        Where it comes from (named in the message).

    Raises
    ------
    ConfigError
        Naming ``sampling.m``, the number of items and why.

    Examples
    --------
    >>> from sampled_metrics.pipeline.validation import load_config
    >>> config = load_config("config.yaml")
    >>> config["sampling"].update(law="binomial", m=400)
    >>> check_draws_with_replacement(config, "tiny", 40, "split")
    >>> config["sampling"]["m"] = 40000
    >>> check_draws_with_replacement(config, "tiny", 40, "split")
    Traceback (most recent call last):
    sampled_metrics.pipeline.config.ConfigError: sampling.m: 40000 draws with replacement
    (sampling.law: binomial) are more than 10 times the 40 items of tiny (split), the largest
    ranked set a user can have: a user's sampled rank is informed by at most that many
    distinct items, so such draws cost more than ranking every item exactly and add almost
    no information; lower sampling.m to at most 400
    """
    from ..estimation.laws import sampling_law

    sampling = config["sampling"]
    m, largest = sampling["m"], MAX_DRAWS_PER_ITEM * n_items
    if sampling_law(sampling["law"]).replacement and m > largest:
        raise ConfigError(
            f"sampling.m: {m} draws with replacement (sampling.law: {sampling['law']}) are "
            f"more than {MAX_DRAWS_PER_ITEM} times the {n_items} items of {name} ({source}), "
            "the largest ranked set a user can have: a user's sampled rank is informed by at "
            "most that many distinct items, so such draws cost more than ranking every item "
            f"exactly and add almost no information; lower sampling.m to at most {largest}"
        )


def check_fit_memory(
    config: dict,
    name: str,
    n_users: int,
    n_items: int,
    n_events: int,
    source: str,
    available: int | None = None,
) -> None:
    """Stop before any model is trained when a configured model's fit needs more memory
    than the machine has (``recommenders.memory.fit_memory_bytes``, an estimate from
    measured fits), naming each such model and the memory it needs.

    Parameters
    ----------
    config : dict
        The validated configuration.
    name : str
        The data set's key of ``datasets``.
    n_users, n_items, n_events : int
        Its training matrix's shape and number of events.
    source : str
        Where the sizes come from (named in the message).
    available : int or None
        Bytes; None: what ``data.compressed.memory_available`` reads (``MemAvailable``,
        cut to the cgroup's room); nothing is checked where that is unknown.

    Raises
    ------
    ConfigError
        One line per model that does not fit, each naming ``recommenders.<model>``.

    Examples
    --------
    >>> from sampled_metrics.pipeline.validation import load_config
    >>> config = load_config("config.yaml")  # the repository's, from its top folder
    >>> check_fit_memory(config, "ml-1m", 6040, 3706, 994_169, "split", available=2**34)
    >>> check_fit_memory(config, "ml-1m", 6040, 3706, 994_169, "split", available=2**28)
    Traceback (most recent call last):
    sampled_metrics.pipeline.config.ConfigError: ml-1m (6,040 users; split): recommenders.Y: its
    fit needs about 0.4 GB (item_knn, 3,706 items, 994,169 events); 0.2 GB available: leave
    it out (Y: null) or use a larger machine
    recommenders.Z: its fit needs about 0.4 GB (item_knn, 3,706 items, 994,169 events); 0.2
    GB available: leave it out (Z: null) or use a larger machine
    recommenders.EASE: its fit needs about 0.3 GB (ease, 3,706 items, 994,169 events); 0.2
    GB available: leave it out (EASE: null) or use a larger machine
    """
    from ..data.compressed import memory_available
    from ..recommenders.memory import fit_memory_shortfalls

    if available is None:
        memory = memory_available()
        if memory is None:
            return
        available = memory.available
    shortfalls = fit_memory_shortfalls(
        config["recommenders"], n_users, n_items, n_events, available
    )
    if shortfalls:
        where = f"{name} ({n_users:,} users; {source})"
        raise ConfigError(f"{where}: " + "\n".join(shortfalls))
