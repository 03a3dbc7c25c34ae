"""The engine is the only door: no interface (the HTTP server and its web UI, the CLI, MCP) touches the store.

Every module of :data:`INTERFACES` is parsed (nothing is imported) and fails the test when it

- reads an attribute named ``store`` of anything (``engine.store``, ``ms.store``, ``st.engine.store``, or
  ``getattr(x, "store")``): what an interface needs of the data is a method or namespace of ``AsyncMemstack``
  (``engine.sessions``, ``engine.agents``, ``engine.contexts``, ``engine.keys``, ``engine.users``…), so the
  library, the HTTP API, the Python client, MCP and the CLI can all offer the same things;
- imports a module of ``memstack.store`` (the package opens stores; its backends are stores), except the pairs in
  :data:`ALLOWED`, each with its reason.

It reads the syntax tree, so a comment or a docstring naming ``engine.store`` is not a use, and a use split over
lines or through an alias (``s = ms.store``) is.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from test_layers import SRC, imports_of, module_name  # tests/test_layers.py (this directory is on sys.path)

#: The interfaces: packages whose modules may reach memstack's data only through the engine.
INTERFACES = ("memstack.server", "memstack.cli", "memstack.mcp")

#: Imports of ``memstack.store`` modules an interface may make: (importing module, imported module) → why.
ALLOWED: Mapping[tuple[str, str], str] = {
    ("memstack.server.auth", "memstack.store.base"): "the key cache keys accepted secrets by the digest the store "
    "keeps (hash_api_key), and holds the engine's keys as the KeyStore Protocol; no store object",
    ("memstack.server.openai_compat", "memstack.store.fence"): "a completions call holds the erasure fence the "
    "engine pinned for it (engine.users.fence) while it waits for its turn and until its stream ends (fenced)",
    ("memstack.cli.reembed", "memstack.store.reembed"): "a store half way through a reembed refuses to open as an "
    "engine (ReembedInProgress): `memstack reembed` works on the backend itself",
    ("memstack.cli.reembed", "memstack.store"): "and opens that backend with store.open_reembed (the store package "
    "is the one module that names the backends; the neutral reembed module may not import them)",
}


def store_uses(source: str) -> list[int]:
    """The lines of ``source`` that read an attribute named ``store`` (also through ``getattr``)."""

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "store"
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr", "setattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "store"
        )

    return sorted(node.lineno for node in ast.walk(ast.parse(source)) if named(node))  # type: ignore[attr-defined]


def interface_modules(src: Path = SRC) -> dict[str, Path]:
    found = {}
    for path in sorted((src / "memstack").rglob("*.py")):
        name = module_name(path, src)
        if any(name == p or name.startswith(p + ".") for p in INTERFACES):
            found[name] = path
    return found


def door_violations(src: Path = SRC, allowed: Mapping[tuple[str, str], str] = ALLOWED) -> list[str]:
    out = []
    modules = interface_modules(src)
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(src)
        for line in store_uses(source):
            out.append(f"{rel}:{line} reads .store: use the engine's methods and namespaces (engine.sessions, …)")
        package = path.name == "__init__.py"
        for imp in imports_of(source, name, package=package):
            target = imp.target
            if (target == "memstack.store" or target.startswith("memstack.store.")) and (name, target) not in allowed:
                out.append(f"{rel}:{imp.line} imports {target}: an interface reaches the data through the engine")
    return out


def test_no_interface_touches_the_store() -> None:
    assert interface_modules(), "no interface module found: is INTERFACES right?"
    assert door_violations() == []


def test_every_allowed_import_is_still_made() -> None:
    """An exception that is no longer needed goes: ALLOWED only shrinks."""
    made = set()
    for name, path in interface_modules().items():
        source = path.read_text(encoding="utf-8")
        made |= {(name, i.target) for i in imports_of(source, name, package=path.name == "__init__.py")}
    assert [pair for pair in ALLOWED if pair not in made] == []


def test_the_check_reads_code_not_text(tmp_path: Path) -> None:
    cli = tmp_path / "memstack" / "cli"
    cli.mkdir(parents=True)
    (cli / "__init__.py").write_text('"""Nothing here touches engine.store."""\n# not even ms.store.keys\n')
    (cli / "sly.py").write_text(
        "from memstack.store import open_store\n"
        "async def f(ms):\n"
        "    s = (ms\n"
        "         .store)\n"
        "    keys = getattr(ms, 'store').keys\n"
        "    return s, keys\n"
    )
    found = door_violations(tmp_path, allowed={})
    assert [v.split(" ", 1)[0] for v in found] == [
        "memstack/cli/sly.py:3",
        "memstack/cli/sly.py:5",
        "memstack/cli/sly.py:1",
    ]
