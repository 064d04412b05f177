"""The toy example's data (sections 3.2 and 4.2): the ranks recommenders A, B and C
give the held-out item of five instances among n = 10,000 items (Table 1). A module
of its own, without the library's computations, so that checking a configuration
against it (``pipeline.validation``) imports nothing else."""

__all__ = ["TOY_RANKS"]

TOY_RANKS = {
    "A": [100, 100, 100, 100, 100],
    "B": [40, 40, 8437, 9266, 4482],
    "C": [212, 2, 743, 5342, 1548],
}
