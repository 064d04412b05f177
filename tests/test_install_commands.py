"""Every install command of the documentation installs the pinned versions
(`pip install -c constraints.txt ...`), as .ci/run and the README's test command do."""

import re

from conftest import REPO

DOCUMENTS = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "profiles").rglob("*.yaml")),
    REPO / ".ci" / "run",
]
# `pip install` up to the end of the command (a backtick, `&&`, a comment or the line's end).
PIP_INSTALL = re.compile(r"pip install[^`&#\n]*")


def code(text: str, markdown: bool) -> str:
    """The code of a document: of Markdown its fenced blocks and inline code (an inline
    span broken over two lines joined), of anything else all of it."""
    if not markdown:
        return text
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    spans = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]
    return "\n".join(blocks + spans)


def install_commands(text: str, markdown: bool = True) -> list[str]:
    return [m.group(0).strip() for m in PIP_INSTALL.finditer(code(text, markdown))]


def test_every_install_command_uses_the_constraints_file():
    found = 0
    for path in DOCUMENTS:
        for command in install_commands(path.read_text(), path.suffix == ".md"):
            if "--upgrade pip" in command:
                continue
            found += 1
            assert "-c constraints.txt" in command, f"{path.relative_to(REPO)}: {command}"
    assert found >= 4  # README (workflow, test, slurm), docs/cluster.md, the profile, .ci/run


def test_a_command_broken_over_two_lines_is_found():
    text = 'Install with `pip install -e\n".[slurm]"` and run; the pip install above.'
    assert install_commands(text) == ['pip install -e ".[slurm]"']


def test_ci_runs_the_property_tests_derandomized():
    """.ci/run sets CI, under which conftest loads hypothesis's derandomized profile:
    the same examples on every CI run, so CI never fails on a lucky draw."""
    import os

    from hypothesis import settings

    run = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^export .*\bCI=1\b", run, re.MULTILINE)
    if os.environ.get("CI"):
        assert settings.default.derandomize and settings.default.deadline is None
    else:
        assert not settings.default.derandomize
