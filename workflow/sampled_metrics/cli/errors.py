"""Bad input as data: :class:`InputError` carries where the problem is (file, row,
user, model, column, option) and what would fix it, and builds its one line from them,
so that a caller reads the user or the column from the error, never from its text.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad input, in one line that names the file and the row or the column.

    Parameters
    ----------
    problem : str
        What is wrong (the whole line when no field is given).
    path : str, optional
        The file.
    line : int, optional
        The row: its line in a text file (header = line 1), or its 1-based row number
        in a parquet file (``row_word`` "row").
    row_word : {"line", "row"}, default "line"
    user, model, column, option : str, optional
        The user, the model, the column and the option the problem is about.
    fix : str, optional
        What to do about it.

    Examples
    --------
    >>> str(InputError("ranks.csv: line 3: column m: 'x' is not an integer"))
    "ranks.csv: line 3: column m: 'x' is not an integer"
    >>> error = InputError("exact rank 1 cannot give sampled rank 33", path="exact.csv",
    ...                    line=5, user="u7", model="A", fix="give A's ranks")
    >>> print(error)
    exact.csv: line 5: user u7, model A: exact rank 1 cannot give sampled rank 33; give A's ranks
    >>> error.user, error.line
    ('u7', 5)
    """

    def __init__(
        self,
        problem: str,
        *,
        path: object = None,
        line: int | None = None,
        row_word: str = "line",
        user: object = None,
        model: str | None = None,
        column: str | None = None,
        option: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        self.row_word = row_word
        self.user = None if user is None else str(user)
        self.model = model
        self.column = column
        self.option = option
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one line: file, row, user and model, column, the problem, the fix."""
        parts = [] if self.path is None else [self.path]
        if self.line is not None:
            parts.append(f"{self.row_word} {self.line}")
        who = [f"user {self.user}"] if self.user is not None else []
        who += [f"model {self.model}"] if self.model is not None else []
        if who:
            parts.append(", ".join(who))
        if self.column is not None:
            parts.append(f"column {self.column}")
        text = ": ".join([*parts, self.problem])
        return f"{text}; {self.fix}" if self.fix else text
