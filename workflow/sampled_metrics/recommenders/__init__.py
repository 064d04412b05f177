"""The recommenders of section 9 of Krichene & Rendle (KDD 2020).

One small interface for all of them::

    model = fit_recommender(spec, train, seed)
    block = model.scores(users)      # float32, shape (len(users), n_items)

``spec`` is a plain dict from the configuration, ``{"type": ..., **hyperparameters}``
(an optional ``"name"`` is kept as ``model.name`` for messages). ``train`` is a
binary ``scipy.sparse.csr_matrix`` of shape (n_users, n_items). Unknown types
and bad hyperparameters raise ``ValueError`` naming the offending key, so a new
recommender is one more configuration entry (another ``ials`` or ``item_knn``
with other hyperparameters), and a new *kind* of recommender is one call to
:func:`register_recommender`.

Modules, one per family:

* :mod:`.ials`      ``ials``: recommender X, iALS on the paper's loss through ``implicit``
* :mod:`.item_knn`  ``item_knn``: recommenders Y and Z, eqs 27-30
* :mod:`.baselines` ``popularity`` and ``bpr`` (and EASE's names, re-exported)
* :mod:`.ease`      ``ease``: Steck's closed form, one items x items array inverted in place
* :mod:`.registry`  type name -> builder, validator, defaults; the paper's X, Y, Z
* :mod:`.memory`    the peak memory of a fit (the start-up check)
* :mod:`.scores`    score matrices of a fitted model
* :mod:`.storage`   fitted models on disk

Every model keeps the arrays its scores read C-contiguous (rows as the products read
them), after the fit and after unpickling.
"""

from .ials import IALS_DEFAULTS, IALSModel, fit_ials, ials_objective, implicit_parameters
from .item_knn import ITEM_KNN_DEFAULTS, ItemKNN, cosine_similarity
from .memory import fit_memory_bytes, fit_memory_shortfalls
from .registry import (
    PAPER_RECOMMENDERS,
    fit_recommender,
    hyperparameter_defaults,
    recommender_types,
    register_recommender,
    validate_spec,
)
from .scores import PrecomputedScores, all_scores
from .storage import load_model, save_model

__all__ = [
    "IALS_DEFAULTS",
    "ITEM_KNN_DEFAULTS",
    "PAPER_RECOMMENDERS",
    "IALSModel",
    "ItemKNN",
    "PrecomputedScores",
    "all_scores",
    "cosine_similarity",
    "fit_ials",
    "fit_memory_bytes",
    "fit_memory_shortfalls",
    "fit_recommender",
    "hyperparameter_defaults",
    "ials_objective",
    "implicit_parameters",
    "load_model",
    "recommender_types",
    "register_recommender",
    "save_model",
    "validate_spec",
]
