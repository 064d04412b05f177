"""The package's shape: sub-packages in layers, imports only downward, no import circle,
no module over 500 lines. Read from the source with ``ast`` (nothing is imported), so a
new module is checked the day it lands; docs/architecture.md draws the same layers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIBRARY = Path(__file__).resolve().parents[1] / "workflow" / "sampled_metrics"

# Bottom to top: a module may import its own layer or a lower one, never a higher one.
LAYERS = (
    ("io",),
    ("estimation",),
    ("passes", "data", "recommenders"),
    ("outputs",),
    ("frameworks",),
    ("reproduction", "studies"),
    ("pipeline", "cli"),
)
LAYER = {package: level for level, packages in enumerate(LAYERS) for package in packages}
# Packages of one layer that never import each other.
APART = {
    ("pipeline", "cli"),
    ("cli", "pipeline"),
    ("reproduction", "studies"),
    ("studies", "reproduction"),
}
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(LIBRARY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The package's modules that ``path`` imports, as absolute dotted names (a
    ``from package import name`` counts as the module ``package.name`` when that is one)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
    return {m for m in found if m in MODULES and m != name}


MODULES = {module_name(path): path for path in sorted(LIBRARY.rglob("*.py"))}
GRAPH = {name: imported_modules(path) for name, path in MODULES.items()}


def layer_of(module: str) -> str | None:
    """The sub-package a module belongs to (None for the top-level __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_sub_package_has_a_layer():
    packages = {layer_of(m) for m in MODULES} - {None}
    assert packages == set(LAYER), f"place these in LAYERS: {packages ^ set(LAYER)}"


def test_imports_point_down_or_sideways_never_up():
    upward = [
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if layer_of(module) is not None
        and layer_of(target) is not None
        and (
            LAYER[layer_of(target)] > LAYER[layer_of(module)]
            or (layer_of(module), layer_of(target)) in APART
        )
    ]
    assert upward == []


def test_nothing_in_the_library_imports_the_public_face():
    """The top-level ``__init__`` is the users' door; the library's modules use the
    modules themselves."""
    assert [m for m, targets in GRAPH.items() if "sampled_metrics" in targets] == []


def private_imports(path: Path) -> list[str]:
    """``module.name`` for every underscore name ``path`` imports from another sub-package."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
            if not node.level:
                target = node.module or ""
            if target.startswith("sampled_metrics") and layer_of(target) != layer_of(name):
                found += [f"{target}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_private_names_stay_in_their_sub_package():
    """A leading underscore is private to its sub-package (estimation, passes, ...)."""
    leaks = {m: private_imports(path) for m, path in MODULES.items()}
    assert {m: names for m, names in leaks.items() if names} == {}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_circle():
    assert strongly_connected(GRAPH) == []


def test_the_circle_check_can_fail():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_500_lines(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines; split it by concept"
