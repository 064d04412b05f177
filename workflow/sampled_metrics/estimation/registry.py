"""The estimators by name: one record per estimator family, each written out once.

A method is written in configs, tables and figures as its family's name, followed, for
a family with a parameter, by "_" and the parameter's value: ``sampled``, ``cls``,
``bv_0.1``, ``em``, ``bv_em_0.01``, ``mn_maxent``. :data:`ESTIMATORS` holds, for every
family (:class:`Estimator`): its name, its parameter (:class:`Parameter`), its kind
(one of the paper's corrections of section 5, a fixed vector over the sampled rank; or
learned from the sample), the label the tables and figures print, the colour of the
figures, and what it reads beyond each user's sampled rank and m (:data:`NEEDS`).

Everything that reads a method's name reads it here: :func:`parse_method` (the paper's
corrections), :func:`parse_estimator` (every estimator), :func:`paper_methods`,
:func:`estimator_label` (which ``outputs.labels.method_label`` prints) and
:func:`method_color`. Adding an estimator is one entry of :data:`ESTIMATORS` and its
function, computed where its kind is (``corrections.correction_vectors`` for the paper's,
``estimators.estimate`` for the learned ones).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ESTIMATORS",
    "LEARNED",
    "LEARNED_DISTRIBUTIONS",
    "NEEDS",
    "PAPER",
    "Estimator",
    "Parameter",
    "estimator_label",
    "find_estimator",
    "method_color",
    "paper_methods",
    "parse_estimator",
    "parse_method",
]

# The kinds of estimator.
PAPER = "paper"  # a correction of the paper (section 5): a fixed vector M^ over r~
LEARNED = "learned"  # learned from the sample being corrected (its users' sampled ranks)

# What an estimator may read beyond each user's sampled rank r~ and sample size m.
NEEDS = {
    "n": "the ranked-set size n of each user",
    "law": "the sampling law (with or without replacement)",
    "prior": "a prior p(r) over the exact ranks (uniform unless one is given)",
    "sample": "the sampled ranks of the other users (a distribution learned from them)",
}


@dataclass(frozen=True)
class Parameter:
    """A family's numeric parameter, written after its name (``bv_<gamma>``).

    Parameters
    ----------
    name : str
        As the documentation and the error messages name it (``gamma``).
    type : type
        What reads its text (``float``).
    low, high : float
        The values it may take, bounds included.

    Examples
    --------
    >>> gamma = Parameter("gamma", float, 0.0, 1.0)
    >>> gamma.read("0.1"), gamma.read("2"), gamma.read("x"), gamma.rule
    (0.1, None, None, 'a number in [0, 1]')
    """

    name: str
    type: type
    low: float
    high: float

    def read(self, text: str | None) -> float | None:
        """The value ``text`` writes, or None when it writes no value in [low, high] (or
        there is no text)."""
        if text is None:
            return None
        try:
            value = self.type(text)
        except ValueError:
            return None
        return value if self.low <= value <= self.high else None

    @property
    def rule(self) -> str:
        """What a value must be, in words."""
        return f"a number in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Estimator:
    """One estimator family: how it is written, what it is, how it is shown.

    Parameters
    ----------
    name : str
        As written in configs, without its parameter (``bv`` of ``bv_0.1``).
    kind : str
        :data:`PAPER` or :data:`LEARNED`.
    family : str
        Its family as :func:`parse_estimator` returns it: ``correction`` (a fixed
        vector), ``distribution`` (plug-in of a learned distribution), ``bv`` or ``mn``
        (a correction with a learned prior).
    label : str
        As the tables and figures print it; ``{}`` stands for the parameter as written.
    needs : tuple of str
        What it reads beyond each user's sampled rank and m (keys of :data:`NEEDS`).
    parameter : Parameter, optional
        The parameter written after the name; None: the name alone.
    learns : str, optional
        The distribution it learns from the sample (``em`` or ``maxent``).
    color : str, optional
        Its colour in the figures (a matplotlib colour); None: the figure's cycle.
    colors : tuple of (str, str), default ()
        Colours of some parameter values, as written (``("0.1", "tab:purple")``);
        other values take ``color``.

    Examples
    --------
    >>> ESTIMATORS["bv"].parameter.name, ESTIMATORS["mn_em"].learns
    ('gamma', 'em')
    """

    name: str
    kind: str
    family: str
    label: str
    needs: tuple[str, ...]
    parameter: Parameter | None = None
    learns: str | None = None
    color: str | None = None
    colors: tuple[tuple[str, str], ...] = ()

    @property
    def written(self) -> str:
        """How a method of the family is written: ``cls``, ``bv_<gamma>``."""
        return self.name if self.parameter is None else f"{self.name}_<{self.parameter.name}>"


_GAMMA = Parameter("gamma", float, 0.0, 1.0)  # the weight of the variance in BV (eqs 24-25)
_SYSTEM = ("n", "law", "prior")  # what the paper's systems of eqs 21-25 are built from
_LEARNED = ("n", "law", "sample")

# Every estimator family, in the order the error messages list them. The labels are the
# paper's (Tables 3 and 4); the learned estimators print as their names, and BV with a
# learned prior as "BV " and the rest of its name, as method_label has always printed
# them. The colours are the figures' (a family without one takes the figure's cycle).
ESTIMATORS = {
    "sampled": Estimator(
        "sampled", PAPER, "correction", label="Uncorrected", needs=(), color="tab:blue"
    ),
    "rank_estimate": Estimator(
        "rank_estimate",
        PAPER,
        "correction",
        label="Rank Estimate",
        needs=("n",),
        color="tab:orange",
    ),
    "ls": Estimator("ls", PAPER, "correction", label="LS", needs=_SYSTEM, color="tab:olive"),
    "cls": Estimator("cls", PAPER, "correction", label="CLS", needs=_SYSTEM, color="tab:green"),
    "bv": Estimator(
        "bv",
        PAPER,
        "correction",
        label="BV {}",
        needs=_SYSTEM,
        parameter=_GAMMA,
        colors=(
            ("1", "tab:red"),
            ("0.1", "tab:purple"),
            ("0.01", "tab:brown"),
            ("0.001", "tab:pink"),
        ),
    ),
    "em": Estimator(
        "em",
        LEARNED,
        "distribution",
        label="em",
        needs=_LEARNED,
        learns="em",
        color="tab:cyan",
    ),
    "maxent": Estimator(
        "maxent",
        LEARNED,
        "distribution",
        label="maxent",
        needs=_LEARNED,
        learns="maxent",
        color="tab:gray",
    ),
    "bv_em": Estimator(
        "bv_em", LEARNED, "bv", label="BV em_{}", needs=_LEARNED, parameter=_GAMMA, learns="em"
    ),
    "bv_maxent": Estimator(
        "bv_maxent",
        LEARNED,
        "bv",
        label="BV maxent_{}",
        needs=_LEARNED,
        parameter=_GAMMA,
        learns="maxent",
    ),
    "mn_em": Estimator(
        "mn_em", LEARNED, "mn", label="mn_em", needs=_LEARNED, learns="em", color="goldenrod"
    ),
    "mn_maxent": Estimator(
        "mn_maxent", LEARNED, "mn", label="mn_maxent", needs=_LEARNED, learns="maxent"
    ),
}

# The learned distributions, in order: those learned rank distributions whose plug-in
# estimate is a family of its own.
LEARNED_DISTRIBUTIONS = tuple(
    record.learns
    for record in ESTIMATORS.values()
    if record.family == "distribution" and record.learns is not None
)


def find_estimator(method: str, kind: str | None = None) -> tuple[Estimator, str | None] | None:
    """The family a method name is written from, and its parameter's text (unchecked).

    Parameters
    ----------
    method : str
        A method name.
    kind : str, optional
        Only the families of this kind (:data:`PAPER` or :data:`LEARNED`).

    Returns
    -------
    (Estimator, str or None) or None
        The family whose name is the method, or whose name and "_" begin it (the longest
        such name: ``bv_em_0.1`` is ``bv_em``'s), with the text after them (None for a
        family without a parameter); None when no family writes such a name.

    Examples
    --------
    >>> record, text = find_estimator("bv_em_0.1")
    >>> record.name, text
    ('bv_em', '0.1')
    >>> find_estimator("exact") is None, find_estimator("bv_em_0.1", PAPER)[1]
    (True, 'em_0.1')
    """
    found = None
    for record in ESTIMATORS.values():
        if kind is not None and record.kind != kind:
            continue
        if record.parameter is None:
            if method == record.name:
                return record, None
        elif method.startswith(f"{record.name}_") and (
            found is None or len(record.name) > len(found[0].name)
        ):
            found = record, method[len(record.name) + 1 :]
    return found


def _known(kind: str | None = None) -> str:
    """The names of the families (of ``kind``) as written, for error messages."""
    records = ESTIMATORS.values()
    return ", ".join(record.written for record in records if kind in (None, record.kind))


def estimator_label(method: str) -> str | None:
    """The label of an estimator as the tables and figures print it (parameter unchecked).

    Parameters
    ----------
    method : str
        A method name.

    Returns
    -------
    str or None
        None when no family writes such a name.

    Examples
    --------
    >>> estimator_label("sampled"), estimator_label("bv_0.01"), estimator_label("exact")
    ('Uncorrected', 'BV 0.01', None)
    """
    found = find_estimator(method)
    if found is None:
        return None
    record, text = found
    return record.label if text is None else record.label.format(text)


def method_color(method: str) -> str | None:
    """The colour of an estimator in the figures.

    Parameters
    ----------
    method : str
        A method name.

    Returns
    -------
    str or None
        A matplotlib colour; None when the registry gives the method none (the figure
        then takes its colour cycle).

    Examples
    --------
    >>> method_color("cls"), method_color("bv_0.1"), method_color("bv_0.2"), method_color("x")
    ('tab:green', 'tab:purple', None, None)
    """
    found = find_estimator(method)
    if found is None:
        return None
    record, text = found
    if text is None:
        return record.color
    return dict(record.colors).get(text, record.color)


def parse_method(method: str) -> tuple[str, float | None]:
    """Split a method name into (kind, gamma): "bv_0.1" -> ("bv", 0.1), "cls" -> ("cls", None).

    Parameters
    ----------
    method : str
        ``"sampled"``, ``"rank_estimate"``, ``"ls"``, ``"cls"`` or ``"bv_<gamma>"``.

    Returns
    -------
    kind : str
        The method without its parameter.
    gamma : float or None
        The gamma of ``bv_<gamma>``, None for the other methods.

    Raises
    ------
    ValueError
        Naming the method when it is unknown or its gamma is not a number in [0, 1].

    Examples
    --------
    >>> parse_method("bv_0.1"), parse_method("cls")
    (('bv', 0.1), ('cls', None))
    >>> parse_method("bv_2")
    Traceback (most recent call last):
    ValueError: method 'bv_2': gamma must be a number in [0, 1]
    """

    found = find_estimator(method, PAPER)
    if found is None:
        raise ValueError(f"unknown correction method {method!r}; known: {_known(PAPER)}")
    record, text = found
    if record.parameter is None:
        return record.name, None
    value = record.parameter.read(text)
    if value is None:
        rule = f"{record.parameter.name} must be {record.parameter.rule}"
        raise ValueError(f"method {method!r}: {rule}")
    return record.name, value


def parse_estimator(method: str) -> tuple[str, str | None, float | None]:
    """Split an estimator name into (family, learned distribution, gamma).

    Parameters
    ----------
    method : str
        ``sampled``, ``rank_estimate``, ``ls``, ``cls``, ``bv_<gamma>`` (the paper's);
        ``em``, ``maxent``; ``bv_em_<gamma>``, ``bv_maxent_<gamma>``; ``mn_em``,
        ``mn_maxent``.

    Returns
    -------
    family : str
        ``correction`` (a fixed vector), ``distribution`` (plug-in of a learned
        distribution), ``bv`` or ``mn`` (a correction with a learned prior).
    learned : str or None
        ``em`` or ``maxent`` for the learned families.
    gamma : float or None
        The gamma of BV.

    Raises
    ------
    ValueError
        Naming the method when it is unknown.

    Examples
    --------
    >>> parse_estimator("bv_em_0.1"), parse_estimator("mn_maxent"), parse_estimator("cls")
    (('bv', 'em', 0.1), ('mn', 'maxent', None), ('correction', None, None))
    """

    found = find_estimator(method)
    if found is None:
        raise ValueError(f"unknown estimator {method!r}; known: {_known()}")
    record, text = found
    value = None
    if record.parameter is not None:
        value = record.parameter.read(text)
        if value is None:
            rule = f"{record.parameter.name} must be {record.parameter.rule}"
            raise ValueError(f"method {method!r}: {rule}")
    # a correction of the paper is a fixed vector: parse_method reads its parameter
    return record.family, record.learns, None if record.kind == PAPER else value


def paper_methods(methods: Iterable[str]) -> list[str]:
    """The methods of the paper (no correction, and the corrections of section 5: a
    fixed vector over r~), in order, without the learned estimators.

    Parameters
    ----------
    methods : iterable of str
        Estimator names.

    Returns
    -------
    list of str

    Examples
    --------
    >>> paper_methods(["sampled", "mn_em", "bv_0.1", "em"])
    ['sampled', 'bv_0.1']
    """

    return [method for method in methods if parse_estimator(method)[0] == "correction"]
