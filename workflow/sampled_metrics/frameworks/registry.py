"""The frameworks people evaluate with (NCF, Elliot, RecBole, BERT4Rec, DaisyRec): one
record each (:data:`FRAMEWORKS`), holding where its sampling protocol was read
(repository, files, commit), what it does and the protocols the study simulates
(:data:`FRAMEWORK_PROTOCOLS`). Adding a framework is adding one record.

**Protocol names** (one vocabulary: the command line's ``--protocol``, the adapters,
the config's ``protocols.run`` and the rank files' sidecars): a protocol of
:data:`FRAMEWORK_PROTOCOLS` by its name (``ncf``, ``elliot``, ``recbole-uni100``, ...);
where the framework's number of sampled items is a setting, the protocol's ``sized``
pattern with that number N of sampled items per held-out item: ``recbole-uniN``,
``recbole-popN``, ``recbole-seq-uniN`` (RecBole's eval mode ``uniN``/``popN``),
``elliot-N`` (Elliot's ``num_items``), ``daisyrec-N`` (DaisyRec's ``cand_num`` - 1; the
registered ``elliot`` and ``daisyrec`` are ``elliot-100`` and ``daisyrec-999``); and
:data:`FULL` for a full ranking. :func:`protocol_by_name` reads a name,
:meth:`Protocol.file_law` says which law reads a file of its sampled ranks.

Each framework ranks the held-out item among items it draws itself; what differs is
how (read in each framework's code, docs/cli.md and docs/popularity.md):

========================  =====  =====  ===========  ==========  ============  =======  ==========
protocol                  m      alpha  replacement  duplicates  pool          paired   ties
========================  =====  =====  ===========  ==========  ============  =======  ==========
``ncf``                   99     0      no           --          unseen + t    yes      pessimistic
``elliot``                100    0      no           --          unseen        yes      index
``recbole-uni100``        100    0      yes          collapse    unseen        no       random
``recbole-pop100``        100    1      yes          collapse    unseen        no       random
``recbole-seq-uni100``    100    0      yes          collapse    all but t     no       random
``bert4rec``              100    1      no           --          unseen        yes      random
``daisyrec``              999    0      yes          count       unseen        no       random
========================  =====  =====  ===========  ==========  ============  =======  ==========

"unseen": every item the user has no training interaction with, but the held-out
one. alpha: draws proportional to count ** alpha, counts over all interactions
(training and held-out: RecBole's ``Sampler._get_candidates_list`` and BERT4Rec's
vocabulary counter count every phase). "collapse": an item drawn twice is scored
once (RecBole's dense score matrix); "count": it takes two places (DaisyRec). "all but
t": RecBole's sequential models (``RepeatableSampler``: the used ids are the positive
item alone), so the user's history can be drawn, scored as the model scores it.

"paired": every model is ranked among the same drawn items (BERT4Rec reseeds numpy with
12345 at each evaluation, NCF reads a fixed test.negative file, Elliot a fixed
negative file); RecBole redraws in its dataloader's collate from the global generator
and DaisyRec draws its candidates after training, so each model gets its own draws.
"ties": the framework's order among tied scores (``beaten``'s module docstring:
"pessimistic" NCF's heapq.nlargest with the held-out item inserted last, "index"
Elliot's tf.nn.top_k, "random" an unspecified order, the pipeline's tie policy).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..estimation.laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from .beaten import TIE_ORDERS

__all__ = [
    "FRAMEWORKS",
    "FRAMEWORK_PROTOCOLS",
    "FULL",
    "HANSEN_HURWITZ",
    "Framework",
    "Protocol",
    "protocol_by_name",
    "protocol_names",
]

# The name of a full ranking (every item the held-out item competes with is ranked).
FULL = "full"

# The estimator the study adds for the protocols with replacement: each beaten draw
# weighed by 1 / its probability, the mean over users of M(r^), r^ the Hansen-Hurwitz
# estimate of the rank clipped to 1..n (studies.protocols.estimates).
HANSEN_HURWITZ = "hansen_hurwitz"


@dataclass(frozen=True)
class Protocol:
    """How a framework draws the items a held-out item is ranked among.

    Parameters
    ----------
    name : str
        The protocol's name (a key of :data:`FRAMEWORK_PROTOCOLS`).
    m : int
        Draws per held-out item.
    alpha : float
        Draw probabilities proportional to count ** alpha (0: uniform).
    replacement : bool
        Independent draws (True) or successive draws of distinct items (False).
    collapse : bool
        With replacement: an item drawn twice is ranked once.
    target_in_pool : bool
        The held-out item may be drawn (NCF); it is then dropped, not ranked twice.
    source : str
        Where the protocol was read.
    paired : bool, default True
        Every model ranked among the same draws (False: each model its own draws).
    ties : {"pessimistic", "index", "random"}, default "random"
        The framework's order among tied scores ("random": unspecified, the pipeline's
        tie policy stands in; ``beaten.tie_order_for``).
    history_in_pool : bool, default False
        The user's training items can be drawn (only the held-out item is excluded).
    sized : str or None, default None
        Where the number of sampled items is a setting of the framework: the name of
        the same protocol with N sampled items, ``N`` standing for the number
        (``"recbole-uni{N}"``); :func:`protocol_by_name` reads it.

    Examples
    --------
    >>> FRAMEWORK_PROTOCOLS["bert4rec"].law, FRAMEWORK_PROTOCOLS["daisyrec"].law
    ('hypergeometric', 'binomial')
    """

    name: str
    m: int
    alpha: float
    replacement: bool
    collapse: bool
    target_in_pool: bool
    source: str
    paired: bool = True
    ties: str = "random"
    history_in_pool: bool = False
    sized: str | None = None

    def __post_init__(self) -> None:
        if self.ties not in TIE_ORDERS:
            raise ValueError(f"protocol {self.name}: ties {self.ties!r} not one of {TIE_ORDERS}")

    @property
    def law(self) -> str:
        """The law a user of the framework would correct with: binomial with
        replacement, hypergeometric without (exact only for alpha = 0, no collapse)."""
        return WITH_REPLACEMENT if self.replacement else WITHOUT_REPLACEMENT

    def file_law(self, distinct_m: bool) -> tuple[str | None, str]:
        """The law that reads a file of this protocol's sampled ranks exactly, or None
        with the reason none does.

        Parameters
        ----------
        distinct_m : bool
            The file's m column holds each row's number of distinct items drawn
            (RecBole's adapter), not the draws.

        Returns
        -------
        law : str or None
            ``binomial`` with replacement (every draw ranked: DaisyRec),
            ``hypergeometric`` without, and with replacement when an item drawn twice
            is ranked once and m is each row's distinct items (given d distinct draws
            the set drawn is uniform over the d-subsets of the pool); None for
            popularity-biased draws, and for collapsed draws counted as m draws.
        reason : str
            Why there is no law ("" when there is one).

        Examples
        --------
        >>> FRAMEWORK_PROTOCOLS["recbole-uni100"].file_law(distinct_m=True)
        ('hypergeometric', '')
        >>> FRAMEWORK_PROTOCOLS["daisyrec"].file_law(distinct_m=False)
        ('binomial', '')
        >>> FRAMEWORK_PROTOCOLS["bert4rec"].file_law(distinct_m=False)[1]
        'bert4rec draws by popularity: neither law holds (docs/popularity.md)'
        """
        if self.alpha != 0:
            return None, f"{self.name} draws by popularity: neither law holds (docs/popularity.md)"
        if self.collapse and not distinct_m:
            return None, (
                f"{self.name} ranks an item drawn twice once: the law is hypergeometric in "
                "each row's distinct items drawn, which the file's m does not count"
            )
        if self.collapse or not self.replacement:
            return WITHOUT_REPLACEMENT, ""
        return WITH_REPLACEMENT, ""


@dataclass(frozen=True)
class Framework:
    """A framework people evaluate with: where its sampling protocol was read, what it
    does and the protocols the study simulates.

    Parameters
    ----------
    name : str
        The framework's name.
    repository : str
        Its repository (owner/name on GitHub).
    files : tuple of str
        The files the protocol was read in (with the function, where one names it).
    commit : str
        The commit read.
    summary : str
        What the framework does, in one sentence.
    protocols : tuple of Protocol
        The protocols the study simulates (a protocol whose number of sampled items is
        a setting, one value of it: ``Protocol.sized`` names the others).

    Examples
    --------
    >>> ncf = FRAMEWORKS[0]
    >>> ncf.name, [p.name for p in ncf.protocols]
    ('NCF', ['ncf'])
    >>> ncf.source.split(": ")[0], ncf.source[-16:]
    ('hexiangnan/neural_collaborative_filtering', '(commit 4aab159)')
    """

    name: str
    repository: str
    files: tuple
    commit: str
    summary: str
    protocols: tuple

    @property
    def source(self) -> str:
        """Where the protocol was read: repository, files and commit, in one line."""
        return f"{self.repository}: {', '.join(self.files)} (commit {self.commit})"


FRAMEWORKS = (
    Framework(
        "NCF",
        repository="hexiangnan/neural_collaborative_filtering",
        files=("Data/ml-1m.test.negative", "Dataset.py", "evaluate.py"),
        commit="4aab159",
        summary="NCF's test.negative: 99 distinct items per user drawn uniformly from the items "
        "the user has no training interaction with, ranked with the held-out item",
        protocols=(
            Protocol(
                "ncf", 99, 0.0, False, False, True,
                "NCF's test.negative (docs/cli.md, protocol ncf): 99 distinct items outside the "
                "user's training items; the held-out item is not excluded",
                ties="pessimistic",
            ),
        ),
    ),
    Framework(
        "Elliot",
        repository="sisinflab/elliot",
        files=("elliot/negative_sampling/negative_sampling.py", "elliot/dataset/dataset.py"),
        commit="fc27efe",
        summary="Elliot's negative_sampling strategy random: num_items distinct items per user "
        "drawn uniformly from the items outside the user's training and test sets "
        "(--protocol elliot-N, N = num_items)",
        protocols=(
            Protocol(
                "elliot", 100, 0.0, False, False, False,
                "Elliot's negative_sampling strategy random with num_items: 100",
                ties="index",
                sized="elliot-{N}",
            ),
        ),
    ),
    Framework(
        "RecBole",
        repository="RUCAIBox/RecBole",
        files=(
            "recbole/sampler/sampler.py",
            "recbole/config/configurator.py",
            "recbole/data/dataloader/general_dataloader.py",
            "recbole/trainer/trainer.py",
        ),
        commit="7b02be5",
        summary="RecBole's eval mode uniN: N items per held-out item drawn uniformly with "
        "replacement from the items the user never interacted with (--protocol recbole-uniN)",
        protocols=(
            Protocol(
                "recbole-uni100", 100, 0.0, True, True, False,
                "RecBole's eval mode uni100: 100 uniform draws with "
                "replacement, used ids redrawn, a repeated item one column of the scores",
                paired=False,
                sized="recbole-uni{N}",
            ),
            Protocol(
                "recbole-pop100", 100, 1.0, True, True, False,
                "RecBole's eval mode pop100: as uni100 with the alias table of the item counts "
                "over all phases (recbole/sampler/sampler.py, alpha 1.0; commit 7b02be5)",
                paired=False,
                sized="recbole-pop{N}",
            ),
            Protocol(
                "recbole-seq-uni100", 100, 0.0, True, True, False,
                "RecBole's eval mode uni100 for sequential models: RepeatableSampler, whose "
                "used ids are the positive item alone, so the user's history can be drawn "
                "(recbole/sampler/sampler.py)",
                paired=False,
                history_in_pool=True,
                sized="recbole-seq-uni{N}",
            ),
        ),
    ),
    Framework(
        "BERT4Rec",
        repository="FeiSun/BERT4Rec",
        files=("run.py",),
        commit="b5a1c2e",
        summary="BERT4Rec's EvalHooks with use_pop_random: 100 distinct items per user drawn "
        "successively with probabilities proportional to the item counts, the items the user "
        "rated dropped",
        protocols=(
            Protocol(
                "bert4rec", 100, 1.0, False, False, False,
                "BERT4Rec's EvalHooks with use_pop_random: np.random.choice(ids, 101, "
                "replace=False, p=counts / sum), rated items dropped, until 100 (FeiSun/BERT4Rec "
                "run.py, commit b5a1c2e)",
            ),
        ),
    ),
    Framework(
        "DaisyRec",
        repository="AmazingDD/daisyRec",
        files=("daisy/utils/utils.py build_candidates_set", "daisy/assets/basic.yaml"),
        commit="7b46481",
        summary="DaisyRec's candidate set: cand_num = 1000 items, the user's test items and "
        "1000 - (their number) items drawn uniformly with replacement from the items "
        "outside the user's training and test sets",
        protocols=(
            Protocol(
                "daisyrec", 999, 0.0, True, False, False,
                "DaisyRec's candidate set of 1000: 999 uniform draws with "
                "replacement, a repeated item two places",
                paired=False,
                sized="daisyrec-{N}",
            ),
        ),
    ),
)  # fmt: skip

# The study's protocols by name, in the frameworks' order.
FRAMEWORK_PROTOCOLS = {
    protocol.name: protocol for framework in FRAMEWORKS for protocol in framework.protocols
}


def protocol_names() -> str:
    """Every protocol name :func:`protocol_by_name` reads, in one line (for messages).

    Returns
    -------
    str
        The names, comma-separated: ``full``, the registered protocols, then the sized
        patterns (``recbole-uniN``, ...).

    Examples
    --------
    >>> protocol_names().split(", ")[:3]
    ['full', 'ncf', 'elliot']
    """
    names = [FULL, *FRAMEWORK_PROTOCOLS]
    names += [p.sized for p in FRAMEWORK_PROTOCOLS.values() if p.sized]
    return ", ".join(names)


def protocol_by_name(name: str) -> Protocol | None:
    """The protocol of a name (the rule: this module's docstring); None for
    :data:`FULL`.

    Parameters
    ----------
    name : str
        ``full``, a name of :data:`FRAMEWORK_PROTOCOLS`, or a ``sized`` pattern with its
        number: ``recbole-uni20``, ``elliot-50``, ``daisyrec-499``.

    Returns
    -------
    Protocol or None

    Raises
    ------
    ValueError
        An unknown name, or a number below 1; the message lists the names.

    Examples
    --------
    >>> p = protocol_by_name("recbole-uni20")
    >>> p.name, p.m, p.collapse, p.law
    ('recbole-uni20', 20, True, 'binomial')
    >>> protocol_by_name("elliot-100") == FRAMEWORK_PROTOCOLS["elliot"]
    True
    >>> try:
    ...     protocol_by_name("uni100")
    ... except ValueError as error:
    ...     print(str(error)[:46])
    unknown protocol 'uni100'; give full, ncf, ell
    """
    if name == FULL:
        return None
    if name in FRAMEWORK_PROTOCOLS:
        return FRAMEWORK_PROTOCOLS[name]
    for protocol in FRAMEWORK_PROTOCOLS.values():
        if protocol.sized is None:
            continue
        stem = protocol.sized.removesuffix("{N}")
        number = name.removeprefix(stem)
        if name.startswith(stem) and number.isdigit() and not number.startswith("0"):
            if protocol.m == int(number):
                return protocol
            return replace(protocol, name=name, m=int(number))
    raise ValueError(
        f"unknown protocol {name!r}; give {protocol_names()} (N: sampled items per held-out item)"
    )
