"""Where a sub-command writes its own files (``plan``'s design): never over one of its
inputs, and over an existing file only when asked (``--force``). The rank files of the
adapters' commands are guarded by their sidecars
(:func:`~sampled_metrics.frameworks.rank_meta.check_overwrite`).
"""

from __future__ import annotations

from pathlib import Path

from ..frameworks.rank_meta import sidecar_path

__all__ = ["check_outputs", "rank_file_inputs"]


def rank_file_inputs(files: list) -> dict:
    """Each rank file and its sidecar, as inputs: path -> what it is.

    Examples
    --------
    >>> rank_file_inputs(["r.csv"])
    {'r.csv': 'the rank file r.csv', 'r.csv.meta.json': 'the sidecar of r.csv'}
    """
    inputs = {}
    for path in files:
        inputs[str(path)] = f"the rank file {path}"
        inputs[str(sidecar_path(path))] = f"the sidecar of {path}"
    return inputs


def check_outputs(option: str, outputs: list, inputs: dict, *, force: bool) -> None:
    """Stop before an output is written over an input, or over an existing file
    without ``force``; nothing is written by the caller before.

    Parameters
    ----------
    option : str
        The option that names ``outputs[0]`` (``--out``).
    outputs : list of path
        The files the command writes: the one the option names, then the files named
        after it (its sidecar).
    inputs : dict
        Each input's path -> what it is (:func:`rank_file_inputs`).
    force : bool
        Replace existing outputs (never an input).

    Raises
    ------
    ValueError
        An output is an input (the same file, whatever the path's spelling).
    FileExistsError
        An output exists and ``force`` is False.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> ranks = folder / "ranks.csv"
    >>> _ = ranks.write_text("user,A\\n1,1\\n")
    >>> check_outputs("--out", [ranks, folder / "x"], rank_file_inputs([ranks]), force=True)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: --out ...ranks.csv is the rank file ...ranks.csv: writing there would destroy an
    input; give another file
    >>> check_outputs("--out", [ranks.with_name("chosen.csv")], {}, force=False)
    >>> check_outputs("--out", [ranks], {}, force=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileExistsError: --out ...ranks.csv: ...ranks.csv exists already; give --force to replace
    it, or another file
    """
    named = outputs[0]
    for output in outputs:
        for path, what in inputs.items():
            if Path(output).resolve() == Path(path).resolve():
                which = "" if output == named else f" (its {Path(output).name})"
                raise ValueError(f"{option} {named}{which} is {what}: writing there would "
                                 "destroy an input; give another file")  # fmt: skip
    if Path(named).is_dir():
        raise IsADirectoryError(f"{named}: is a directory: {option} names a file")
    existing = [output for output in outputs if Path(output).exists()]
    if existing and not force:
        raise FileExistsError(f"{option} {named}: {existing[0]} exists already; give --force "
                              "to replace it, or another file")  # fmt: skip
