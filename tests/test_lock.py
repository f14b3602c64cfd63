"""The dependency locks (scripts/lock): every package pinned with its hashes, nothing but names,
versions and markers (no index, host or path of the machine that wrote them), pyproject.toml's
requirements met, the test lock pinning the same versions as the service's and the bench lock
the same as the test lock's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT_ROOT = Path(__file__).resolve().parents[1]
LOCKS = ("requirements.txt", "requirements-test.txt", "requirements-bench.txt")
HASH = re.compile(r"^ {4}--hash=sha256:[0-9a-f]{64}( \\)?$")


def entries(lock: str) -> dict[str, tuple[Requirement, int]]:
    """Each pinned package of a lock: its requirement and how many hashes it carries."""
    found: dict[str, tuple[Requirement, int]] = {}
    current: str | None = None
    for number, line in enumerate((PROJECT_ROOT / lock).read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith(" "):
            assert current and HASH.match(line), f"{lock}:{number}: not a hash: {line!r}"
            requirement, hashes = found[current]
            found[current] = (requirement, hashes + 1)
            continue
        requirement = Requirement(line.removesuffix("\\").strip())
        current = f"{canonicalize_name(requirement.name)} {requirement.marker or ''}"
        assert current not in found, f"{lock}:{number}: {requirement.name} twice"
        found[current] = (requirement, 0)
    return found


def pins(lock: str) -> dict[str, str]:
    return {
        canonicalize_name(r.name): str(r.specifier).removeprefix("==")
        for r, _ in entries(lock).values()
    }


@pytest.mark.parametrize("lock", LOCKS)
def test_every_package_is_pinned_with_hashes_and_nothing_else(lock: str) -> None:
    text = (PROJECT_ROOT / lock).read_text()
    for word in ("://", "file:", "index-url", "find-links", "--constraint", "--requirement"):
        assert word not in text, f"{lock} names {word!r}"
    # No path of the machine that wrote it either, not even in a comment of its header.
    assert not [line for line in text.splitlines() if "/" in line and line != "#    scripts/lock"]
    found = entries(lock)
    assert len(found) > 50
    for requirement, hashes in found.values():
        [specifier] = requirement.specifier
        assert specifier.operator == "==", requirement
        assert hashes >= 1, f"{requirement} has no hash"
        assert not requirement.url and not requirement.extras, requirement


def test_pyproject_requirements_are_met_by_the_locks() -> None:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    for lock, wanted in (
        ("requirements.txt", project["dependencies"]),
        (
            "requirements-test.txt",
            project["dependencies"] + project["optional-dependencies"]["test"],
        ),
        (
            "requirements-bench.txt",
            project["dependencies"]
            + project["optional-dependencies"]["test"]
            + project["optional-dependencies"]["bench"],
        ),
    ):
        pinned = pins(lock)
        for line in wanted:
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            assert name in pinned, f"{name} is in pyproject.toml, not in {lock}: run scripts/lock"
            assert requirement.specifier.contains(pinned[name], prereleases=True), (
                f"{lock} pins {name}=={pinned[name]}, pyproject.toml wants {requirement}"
            )


def test_the_test_lock_pins_the_services_versions() -> None:
    service, test = pins("requirements.txt"), pins("requirements-test.txt")
    assert {name: test.get(name) for name in service} == service
    assert {"pytest", "ruff", "mypy", "hypothesis", "psycopg", "playwright"} <= set(test)


def test_the_bench_lock_pins_the_test_locks_versions_and_the_baseline() -> None:
    test, bench = pins("requirements-test.txt"), pins("requirements-bench.txt")
    assert {name: bench.get(name) for name in test} == test
    assert "slack-bolt" in bench and "slack-bolt" not in test
