"""Finding, in Python source, every place that creates, changes or removes a file.

Used by tests/test_output_layer.py to prove that :mod:`traceconv.output_files` is the only
module of traceconv that does (the one way out). It reads code, not docstrings: a doctest
that writes a scratch file is an example, not traceconv writing.

>>> [why for _, why in write_calls("open(p, 'wb').write(b'x')\\nopen(p).read()")]
["open(..., 'wb')"]
"""

from __future__ import annotations

import ast

# mode arguments that write: any of these letters ("r+b" updates in place)
_WRITE_MODE_LETTERS = frozenset("wax+")
# callables whose second argument (or mode=) is a file mode
_MODE_OPENERS = {("", "open"), ("io", "open"), ("builtins", "open"), ("os", "fdopen"),
                 ("gzip", "open"), ("gzip", "GzipFile"), ("lzma", "open"), ("lzma", "LZMAFile"),
                 ("bz2", "open"), ("bz2", "BZ2File"), ("codecs", "open")}
_WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"})
_OS_WRITES = frozenset({"replace", "rename", "renames", "remove", "unlink", "rmdir",
                        "removedirs", "makedirs", "mkdir", "mkfifo", "mknod", "link",
                        "symlink", "chmod", "fchmod", "chown", "truncate", "ftruncate",
                        "utime", "write", "dup2"})
_SHUTIL_WRITES = frozenset({"copy", "copy2", "copyfile", "copytree", "move", "rmtree",
                            "copymode", "copystat", "make_archive", "unpack_archive"})
_NUMPY_WRITES = frozenset({"save", "savez", "savez_compressed", "savetxt"})
# methods that write whatever object they are called on (pathlib, numpy arrays)
_WRITING_METHODS = frozenset({"write_bytes", "write_text", "touch", "mkdir", "symlink_to",
                              "hardlink_to", "unlink", "rmdir", "rename", "chmod", "tofile"})
_WRITING_MODULES = frozenset({"tempfile"})


def write_calls(source: str) -> list[tuple[int, str]]:
    """(line, what) for every place in ``source`` that writes, creates or removes a file."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if a.name.split(".")[0] in _WRITING_MODULES]
        elif isinstance(node, ast.ImportFrom):
            found += _imported(node)
        elif isinstance(node, ast.Call):
            why = _writing_call(node)
            if why is not None:
                found.append((node.lineno, why))
    return sorted(found)


def _imported(node: ast.ImportFrom) -> list[tuple[int, str]]:
    module = (node.module or "").split(".")[0]
    if module in _WRITING_MODULES:
        return [(node.lineno, f"from {module} import ...")]
    writes = {"os": _OS_WRITES | {"open"}, "shutil": _SHUTIL_WRITES}.get(module, frozenset())
    return [(node.lineno, f"from {module} import {a.name}") for a in node.names
            if a.name in writes]


def _callee(node: ast.Call) -> tuple[str, str]:
    """("module or object", "name") of what is called: ("", "open"), ("os", "replace"),
    ("?", "write_text") for a method of an unknown object."""
    func = node.func
    if isinstance(func, ast.Name):
        return "", func.id
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else "?"
        return owner, func.attr
    return "?", ""


def _writing_call(node: ast.Call) -> str | None:
    owner, name = _callee(node)
    if (owner, name) in _MODE_OPENERS:
        mode = _argument(node, 1, "mode")
        if mode is None:
            return None   # the default mode reads
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            return f"{name}(..., {mode.value!r})" if _WRITE_MODE_LETTERS & set(mode.value) \
                else None
        return f"{name}(..., mode not a constant)"
    if owner == "os" and name == "open":
        flags = _argument(node, 1, "flags")
        named = {n.attr if isinstance(n, ast.Attribute) else n.id
                 for n in ast.walk(flags) if isinstance(n, ast.Attribute | ast.Name)} \
            if flags is not None else set()
        return f"os.open(..., {'|'.join(sorted(named & _WRITE_FLAGS))})" \
            if named & _WRITE_FLAGS else None
    if owner == "os" and name in _OS_WRITES:
        return f"os.{name}"
    if owner == "shutil" and name in _SHUTIL_WRITES:
        return f"shutil.{name}"
    if owner in ("np", "numpy") and name in _NUMPY_WRITES:
        return f"{owner}.{name}"
    if owner in _WRITING_MODULES:
        return f"{owner}.{name}"
    if owner not in ("", "os", "shutil") and name in _WRITING_METHODS:
        return f".{name}()"
    return None


def _argument(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for given in node.keywords:
        if given.arg == keyword:
            return given.value
    return node.args[position] if len(node.args) > position else None
