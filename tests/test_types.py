"""The package's types: mypy, configured in pyproject.toml's ``[tool.mypy]``, finds
nothing in it, and every public function and method (a name without a leading
underscore, ``__init__`` and the other dunders included) annotates each of its
parameters and its return."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

LIBRARY = REPO / "workflow" / "sampled_metrics"
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def module_name(path: Path) -> str:
    """The dotted name of a module of the package: ``sampled_metrics.io.atomic``."""
    parts = path.relative_to(LIBRARY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module or class body, those under ``if`` and ``try`` too."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                yield from _statements(block)
            for handler in getattr(node, "handlers", []):
                yield from _statements(handler.body)


def _unannotated(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    """The parameters of ``function`` without an annotation, and "return" if it has none;
    a method's first parameter (self, cls) needs none, a static method's does."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args]
    static = any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list
    )
    if method and not static:
        parameters = parameters[1:]
    parameters += arguments.kwonlyargs
    missing = [p.arg for p in parameters if p.annotation is None]
    missing += [
        f"{stars}{p.arg}"
        for stars, p in (("*", arguments.vararg), ("**", arguments.kwarg))
        if p is not None and p.annotation is None
    ]
    return missing + ([] if function.returns else ["return"])


def unannotated(source: str, module: str) -> list[str]:
    """The public functions and methods (of public classes) of a module's ``source`` that
    miss an annotation, each as "module.name: what is missing"."""
    found = []
    for node in _statements(ast.parse(source).body):
        if isinstance(node, FUNCTIONS) and public(node.name):
            members = [(node.name, node, False)]
        elif isinstance(node, ast.ClassDef) and public(node.name):
            members = [
                (f"{node.name}.{f.name}", f, True)
                for f in _statements(node.body)
                if isinstance(f, FUNCTIONS) and public(f.name)
            ]
        else:
            continue
        for name, function, method in members:
            if missing := _unannotated(function, method):
                found.append(f"{module}.{name}: {', '.join(missing)}")
    return found


def test_every_public_function_is_annotated():
    missing = [
        line
        for path in sorted(LIBRARY.rglob("*.py"))
        for line in unannotated(path.read_text(), module_name(path))
    ]
    assert missing == [], f"{len(missing)} without annotations:\n" + "\n".join(missing)


def test_the_annotation_rule_can_fail():
    source = """
def f(x, y: int = 1, *args, k, **kw) -> int: ...
def g(x: int): ...
def _private(x): ...
class A:
    def __init__(self, n): ...
    def m(self) -> None: ...
    @staticmethod
    def s(x) -> None: ...
    @property
    def p(self): ...
    def _q(self, x): ...
class _B:
    def m(self, x): ...
if True:
    def h(x: int) -> int: ...
    def i() -> None: ...
    def j(): ...
"""
    assert unannotated(source, "m") == [
        "m.f: x, k, *args, **kw",
        "m.g: return",
        "m.A.__init__: n, return",
        "m.A.s: x",
        "m.A.p: return",
        "m.j: return",
    ]


@pytest.mark.slow
def test_mypy_finds_nothing(request):
    """mypy over the package as pyproject.toml configures it (the files, the Python
    version, the packages without types), with its cache kept in
    pytest's: cold, about ten seconds."""
    cache = request.config.cache.mkdir("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-2000:]
    # It checked every module of the package, not a few or none.
    checked = re.search(r"no issues found in (\d+) source files", result.stdout)
    assert checked, result.stdout
    assert int(checked[1]) == len(list(LIBRARY.rglob("*.py")))
