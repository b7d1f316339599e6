"""The import layers hold in the code, lazy imports included (issue 33, item 7).

Every module of ``traceconv/`` belongs to one layer of :data:`LAYERS`, listed from the bottom
up; a module imports its own layer and the layers below it, never one above. ``formats`` and
``analysis`` are siblings: neither imports the other (what both need lives in the model or
the core). Imports are read from the source, not from a running interpreter, so an import
inside a function counts as much as one at the top, and so do ``importlib.import_module``
strings and the ``"traceconv.x.y[:name]"`` module paths the format table loads on first use.

The model's methods that belong to upper layers (``Trace.save``, ``to_pandas``,
``to_arrow``) reach them through :mod:`traceconv.implementations`, which the package fills at
import: a registration, not an import.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "traceconv"

# (rank, layer, the modules and packages it holds), bottom first; a module imports its own
# layer and lower ranks. A new module needs a line here.
LAYERS: list[tuple[int, str, tuple[str, ...]]] = [
    # plain helpers that know no trace: numbers, units, text, errors, the terminal's and
    # markup's escaping, the control pictures, the settings of a process that converts
    (0, "base", ("errors", "numbers", "units", "keys", "json_decode", "text_encoding",
                 "special_files", "gcpause", "terminal", "markup", "control_pictures",
                 "version", "implementations", "process_setup")),
    # the trace and the helpers every reader and analysis builds on (nesting, slice index,
    # live bytes, timeline order, aggregate breakdown, the check report)
    (1, "model", ("model",)),
    # shared above the model: the input layer (and its SQLite access), the output layer and the rules that protect
    # inputs, the activity words of every producer
    (2, "core", ("io", "sqlite_access", "plugin_scan", "vocabularies", "output_files",
                 "outputs", "spilled_texts", "memory_check", "spool")),
    # siblings (one rank): one package per external format / the user-facing analyses
    (3, "formats", ("formats",)),
    (3, "analysis", ("analysis",)),
    # tables, JSON shapes, the summary table writer, the HTML report
    (4, "presentation", ("presentation", "report")),
    # the format table names modules of the layers below (formats and presentation)
    (5, "registry", ("registry", "output_names", "schemas")),
    (6, "api", ("api",)),
    (7, "batch", ("batch",)),
    # the splitter, and the conversion of a trace too big to hold that goes through it
    (8, "splitting", ("splitting", "streaming")),
    (9, "cli", ("cli", "__main__")),
    # traceconv/__init__.py: the public names, and the registrations the model reaches
    (10, "package", ("",)),
]
RANK = {layer: rank for rank, layer, _ in LAYERS}

MODULE_PATH = re.compile(r"traceconv(?:\.\w+)+(?::\w+)?")


def module_name(path: Path) -> str:
    """``traceconv/a/b.py`` -> ``traceconv.a.b``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str | None:
    """The layer of a ``traceconv`` module: the one naming its longest prefix."""
    inside = module.split(".", 1)[1] if "." in module else ""
    best: tuple[int, str] | None = None
    for _, layer, members in LAYERS:
        for member in members:
            holds = inside == member or member != "" and inside.startswith(member + ".")
            if holds and (best is None or len(member) > best[0]):
                best = (len(member), layer)
    return best[1] if best else None


def existing(name: str, modules: set[str] | dict[str, Path]) -> str:
    """The deepest module ``name`` imports: ``traceconv.a.b.attr`` -> ``traceconv.a.b``."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imported_names(source: str, module: str, is_package: bool) -> list[tuple[str, int]]:
    """Every dotted name ``source`` imports, with its line: ``import``, ``from ... import``
    (relative ones resolved against ``module``), at any depth (functions, ``if
    TYPE_CHECKING``), ``importlib.import_module("...")`` with a literal name (relative with
    a package too), and string constants that are module paths (``"traceconv.x:func"``).

    >>> src = "from .. import v\\nimport importlib\\ndef f():\\n    from .c import d\\n" \\
    ...       "    importlib.import_module('.e', __package__)\\nX = 'traceconv.g:h'\\n"
    >>> sorted(imported_names(src, "traceconv.a.b", False))   # doctest: +NORMALIZE_WHITESPACE
    [('importlib', 2), ('traceconv.a.c', 4), ('traceconv.a.c.d', 4), ('traceconv.a.e', 5),
     ('traceconv.g', 6), ('traceconv.v', 1)]
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[str, int]] = []

    def absolute(name: str, level: int) -> str:
        if not level:
            return name
        base = package[:len(package) - level + 1]
        return ".".join([*base, name] if name else base)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = absolute(node.module or "", node.level)
            if node.module:
                found.append((origin, node.lineno))
            found += [(f"{origin}.{alias.name}", node.lineno) for alias in node.names]
        elif isinstance(node, ast.Call) and _calls_import_module(node) and node.args:
            name = node.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                level = len(name.value) - len(name.value.lstrip("."))
                found.append((absolute(name.value[level:], level), node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and MODULE_PATH.fullmatch(node.value):
            found.append((node.value.partition(":")[0], node.lineno))
    return found


def _calls_import_module(call: ast.Call) -> bool:
    function = call.func
    return (isinstance(function, ast.Attribute) and function.attr == "import_module"
            or isinstance(function, ast.Name) and function.id in ("import_module", "__import__"))


@cache
def imports_of(module: str) -> tuple[tuple[str, int], ...]:
    """The ``traceconv`` modules ``module`` imports (deepest existing one per name), with
    the line of the import."""
    path = MODULES[module]
    names = imported_names(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
    targets = {(existing(name, MODULES), line) for name, line in names
               if name == "traceconv" or name.startswith("traceconv.")}
    return tuple(sorted((target, line) for target, line in targets if target != module))


def allowed(source_layer: str, target_layer: str) -> bool:
    """Same layer, or a lower rank (the siblings ``formats`` and ``analysis`` share one)."""
    return source_layer == target_layer or RANK[target_layer] < RANK[source_layer]


def test_every_module_has_a_layer():
    assert not [m for m in MODULES if layer_of(m) is None], "add them to LAYERS"


def test_the_layers_are_in_order():
    assert [rank for rank, _, _ in LAYERS] == sorted(rank for rank, _, _ in LAYERS)
    assert layer_of("traceconv.formats.chrome.reader") == "formats"
    assert layer_of("traceconv.io") == "core" and layer_of("traceconv") == "package"
    assert not allowed("formats", "analysis") and not allowed("analysis", "formats")
    assert allowed("presentation", "formats") and allowed("presentation", "analysis")
    assert not allowed("model", "api") and not allowed("formats", "cli")


@pytest.mark.parametrize("layer", [layer for _, layer, _ in LAYERS])
def test_no_module_imports_a_layer_above_its_own(layer: str):
    broken = [f"{MODULES[m].relative_to(PACKAGE.parent)}:{line} imports {target} "
              f"({layer} -> {layer_of(target)})"
              for m in MODULES if layer_of(m) == layer
              for target, line in imports_of(m)
              if not allowed(layer, layer_of(target) or "package")]
    assert not broken, "\n".join(broken)


# Every way a module can import another, as written in ``traceconv/a/b.py`` (a module of
# the package ``traceconv.a``), and the module each one names (worked out by hand).
IMPORT_FORMS = [
    ("import traceconv.x.y", "traceconv.x.y"),
    ("import traceconv.x.y as z", "traceconv.x.y"),
    ("from traceconv.x import y", "traceconv.x.y"),
    ("from . import y", "traceconv.a.y"),
    ("from .y import z", "traceconv.a.y"),
    ("from .. import y", "traceconv.y"),
    ("from ..x.y import z", "traceconv.x.y"),
    ("def f():\n    from ..x import y", "traceconv.x.y"),
    ("class C:\n    def m(self):\n        import traceconv.x", "traceconv.x"),
    ("if TYPE_CHECKING:\n    from ..x import y", "traceconv.x.y"),
    ("try:\n    from ..x import y\nexcept ImportError:\n    pass", "traceconv.x.y"),
    ("import importlib\nimportlib.import_module('traceconv.x')", "traceconv.x"),
    ("from importlib import import_module\nimport_module('..x', __package__)", "traceconv.x"),
    ("def f():\n    return __import__('traceconv.x')", "traceconv.x"),
    ("ROWS = [('w', 'traceconv.x.y')]", "traceconv.x.y"),
    ("SNIFF = 'traceconv.x.sniffing:chrome'", "traceconv.x.sniffing"),
]


@pytest.mark.parametrize(("source", "expected"), IMPORT_FORMS,
                         ids=[form.split("\n")[-1].strip() for form, _ in IMPORT_FORMS])
def test_the_walker_sees_every_import_form(source: str, expected: str):
    names = [name for name, _ in imported_names(source, "traceconv.a.b", False)]
    assert expected in names


def test_the_walker_sees_imports_in_the_tree():
    """The rules above are not vacuous on the real tree: a function-level import, a
    relative one, the format table's module strings."""
    transformations = {t for t, _ in imports_of("traceconv.analysis.transformations")}
    assert "traceconv.analysis.merge" in transformations   # inside _merge()
    registry = {target for target, _ in imports_of("traceconv.registry")}
    assert {"traceconv.formats.chrome", "traceconv.formats.sniffing"} <= registry
    assert "traceconv.version" in {target for target, _ in imports_of("traceconv.cli.app")}
    assert sum(len(imports_of(m)) for m in MODULES) > 1000


def test_the_model_reaches_upper_layers_only_through_registrations():
    """``Trace.save``/``to_pandas`` work on a trace made from the model alone, in a fresh
    interpreter: the package registered them when ``traceconv.model`` was imported."""
    import subprocess
    import sys

    code = ("from traceconv.model import Trace\n"
            "t = Trace(); p = t.add_process('python', pid=7)\n"
            "_ = t.add_slice(t.add_track('main', process=p, tid=7), 0, 100, 'step')\n"
            "print(t.to_arrow().column('dur').to_pylist())\n"
            "import sys; print('traceconv.api' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=PACKAGE.parent, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[100]", "False"]
