"""Short forms of C++ function names (kernels, ops) for a narrow table.

A demangled kernel name such as ``void at::native::elementwise_kernel<(int)128, (int)2,
...>(int, T2)`` says what it is in its function name; its return type, template arguments
and parameter list mostly repeat what every kernel of its family has. A narrow table
shows the function name first (as the ``:base`` form of ``nsys stats`` reports does),
without its return type and namespaces, but with its template
arguments at their first level, which name the kernel of a generic launcher
(``Kernel2<cutlass_80_...>``, ``elementwise_kernel<..., BinaryFunctor<…>>``), and of the
arguments of one template only those that differ between its kernels of the table; more
of a name is kept only where that is needed to tell it from another name of the table.
Arguments left out are marked (``<…>``, ``(…)``); ``--wide`` and ``--json`` keep every name
whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ELIDED = "…"
# "at::native::", "cudnn::engines_precompiled::", "<unnamed>::": where a kernel is, not
# which one it is. (A name starts a qualifier only where no word character precedes it:
# tried from inside a long name, the name was re-read from each of its letters.)
_QUALIFIER = re.compile(r"(?:(?:(?<!\w)[A-Za-z_]\w*|<unnamed>|\(anonymous namespace\))::)+")
_CLOSERS = {"<": ">", "(": ")", "[": "]"}


@dataclass
class _Group:
    """A bracketed part of a name: ``<...>``, ``(...)`` or ``[...]``. ``named``: it follows
    a name (template arguments, a parameter list), unlike ``(anonymous namespace)`` or
    ``<unnamed>``. ``closed``: False when the name was cut inside it."""

    opener: str
    named: bool
    parts: list[str | _Group] = field(default_factory=list)
    closed: bool = False

    def text(self) -> str:
        inner = "".join(p if isinstance(p, str) else p.text() for p in self.parts)
        return self.opener + inner + (_CLOSERS[self.opener] if self.closed else "")

    def collapsed(self) -> str:
        """The group with its contents left out (``()`` stays: nothing is left out)."""
        return self.opener + (ELIDED if self.parts else "") + (
            _CLOSERS[self.opener] if self.closed else "")


def _parsed(name: str) -> list[str | _Group]:
    """``name`` as text and bracketed groups; a ``>`` or ``)`` that closes nothing (``->``)
    is text, and groups still open at the end (a name cut by its tool) stay open."""
    top: list[str | _Group] = []
    stack: list[_Group] = []
    text = ""

    def flush() -> None:
        nonlocal text
        if text:
            (stack[-1].parts if stack else top).append(text)
            text = ""

    for i, char in enumerate(name):
        after_name = i > 0 and (name[i - 1].isalnum() or name[i - 1] in "_>")
        if char in _CLOSERS:
            flush()
            group = _Group(char, named=after_name and char != "[")
            (stack[-1].parts if stack else top).append(group)
            stack.append(group)
        elif stack and char == _CLOSERS[stack[-1].opener]:
            flush()
            stack.pop().closed = True
        else:
            text += char
    flush()
    return top


def _parameters(parts: list[str | _Group]) -> _Group | None:
    """The parameter list that ends a signature (then at most `` const`` or ``[clone
    .kd]``), or None: the ``(gpu:0)`` of ``Place(gpu:0):Unknown`` is not one."""
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if isinstance(part, _Group) and part.named:
            return part if part.opener == "(" else None
        if isinstance(part, str) and part.strip() not in ("", "const"):
            return None
    return None


def _rendered(parts: list[str | _Group], nested: bool = False) -> str:
    """The name with its parameter list left out, and its template arguments shown
    without their own arguments (a generic kernel such as ``cutlass::Kernel2<...>`` is
    named by its first template argument)."""
    out = []
    parameters = None if nested else _parameters(parts)
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif not part.named or (not nested and part.opener == "(" and part is not parameters):
            out.append(part.text())
        elif nested or part is parameters:
            out.append(part.collapsed())
        else:
            out.append(part.opener + _rendered(part.parts, nested=True)
                       + (_CLOSERS[part.opener] if part.closed else ""))
    return "".join(out)


def _forms(name: str) -> list[str]:
    """The forms of ``name``, shortest first: the function name with its template
    arguments (theirs and every parameter list left out, and the namespaces of a C++
    signature), without its return type, whole."""
    bare = name.removeprefix("void ")
    parts = _parsed(bare)
    if _parameters(parts) is None and not any(
            isinstance(p, _Group) and p.named and p.opener == "<" for p in parts):
        return [bare, bare, name]   # not a signature: "aten::mm" stays so
    return [_QUALIFIER.sub("", _rendered(parts)), bare, name]


def _template_arguments(name: str) -> tuple[str, list[str], str] | None:
    """``name``'s first form split around its first template argument list: the text
    before it, its arguments, the text after; None without template arguments."""
    parts = _parsed(name.removeprefix("void "))
    for i, part in enumerate(parts):
        if isinstance(part, _Group) and part.named and part.opener == "<":
            return (_rendered(parts[:i]), _rendered(part.parts, nested=True).split(","),
                    (">" if part.closed else "") + _rendered(parts[i + 1:]))
    return None


def _told_by_their_differences(names: list[str]) -> dict[str, str]:
    """Names of one template with as many arguments (``elementwise_kernel<4, Fill<…>>``,
    ``elementwise_kernel<4, Add<…>>``) with the arguments they all share as ``…``: what
    tells them apart moves next to the function's name."""
    families: dict[tuple[str, int], list[tuple[str, list[str], str]]] = {}
    split = {name: _template_arguments(name) for name in names}
    for name, parts in split.items():
        if parts is not None:
            families.setdefault((parts[0], len(parts[1])), []).append((name, *parts[1:]))
    out = {}
    for (head, _), members in families.items():
        if len(members) < 2:
            continue
        shared = [len({args[k] for _, args, _ in members}) == 1
                  for k in range(len(members[0][1]))]
        for name, args, rest in members:
            shown: list[str] = []
            for arg, same in zip(args, shared, strict=True):
                if not same:
                    shown.append(arg)
                elif not shown or shown[-1].strip() != ELIDED:   # (a run of them: one …)
                    shown.append(arg[:len(arg) - len(arg.lstrip())] + ELIDED)
            out[name] = _QUALIFIER.sub("", f"{head}<{','.join(shown)}{rest}")
    return out


def shortened(names: list[str]) -> dict[str, str]:
    """Each of ``names`` in its shortest form that no other name of ``names`` shares (see
    the module): distinct names stay distinct.

    >>> short = shortened(["void gemm<float, 128>(float*, int)", "void gemm<half, 128>(half*, int)",
    ...                    "void softmax_kernel<float>(float const*, float*)", "aten::mm"])
    >>> for name in short.values(): print(name)
    gemm<float, …>(…)
    gemm<half, …>(…)
    softmax_kernel<float>(…)
    aten::mm
    >>> list(shortened(["Place(gpu:0):Unknown", "vector_add(float*, int) [clone .kd]"]).values())
    ['Place(gpu:0):Unknown', 'vector_add(…) [clone .kd]']
    >>> shortened(["void at::native::reduce_kernel<512, 1>(int)", "void cub::reduce_kernel<512, 1>(int)"])
    {'void at::native::reduce_kernel<512, 1>(int)': 'at::native::reduce_kernel<512, 1>(int)', 'void cub::reduce_kernel<512, 1>(int)': 'cub::reduce_kernel<512, 1>(int)'}
    """
    distinct = list(dict.fromkeys(names))
    forms = {name: _forms(name) for name in distinct}
    apart = _told_by_their_differences(distinct)
    forms = {name: [apart.get(name, form[0]), *form] for name, form in forms.items()}
    chosen: dict[str, str] = {}
    for level in range(4):
        counts: dict[str, int] = {}
        for name in distinct:
            counts[forms[name][level]] = counts.get(forms[name][level], 0) + 1
        for name in distinct:
            form = forms[name][level]
            if name not in chosen and form and counts[form] == 1:
                chosen[name] = form
    short = {name: chosen.get(name, name) for name in distinct}
    if len(set(short.values())) < len(distinct):   # (a form equal to another name's whole)
        return {name: name for name in distinct}
    return short
