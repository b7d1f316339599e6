"""Stack frames of allocator snapshots: the full stack as text and the user's own frame.

Every trace entry carries its own list of frame dicts (``name``, ``filename``, ``line``),
innermost first: the allocator's C++ internals, then the dispatcher, then Python. Equal
stacks are interned so that a million allocations from the same line cost one string.
"""

from __future__ import annotations

import re
from typing import Any

from .expansion import Budget, short_text

# Files of the installed torch package, and of the device backends that plug into it
# (Ascend's torch_npu, torch_xla, Cambricon's torch_mlu, Intel's and Habana's extensions),
# are the framework, not the user's model code (a virtual environment may itself live under
# a folder called torch, so match the package).
FRAMEWORK = re.compile(r"[/\\](?:site|dist)-packages[/\\](?:torch|torch_npu|torch_xla|torch_mlu|"
                       r"intel_extension_for_pytorch|habana_frameworks)[/\\]")
NO_STACK = "<no stack recorded>"
# Without Python frames (the autograd engine's threads), the backward node or the aten op
# found in the C++ frames names the site.
AUTOGRAD_NODE = re.compile(r"autograd::generated::(\w+?Backward\d*)")
ATEN_OP = re.compile(r"at::_ops::(\w+)::")


def frame_text(frame: dict[str, Any]) -> str:
    """One frame as ``file:line function`` (C++ frames without a file: the function).

    >>> frame_text({"name": "forward", "filename": "/m/resnet.py", "line": 96})
    '/m/resnet.py:96 forward'
    >>> frame_text({"name": "c10::alloc()", "filename": "??", "line": 0})
    'c10::alloc()'
    """
    return "".join(_frame_parts(frame))


def _frame_parts(frame: dict[str, Any]) -> tuple[str, ...]:
    """The pieces of :func:`frame_text` (texts the frame holds, not copies of them)."""
    filename = text_of(frame.get("filename") or "??")
    name = text_of(frame.get("name", "?"))
    return (name,) if filename == "??" else (filename, ":", text_of(frame.get("line", 0)),
                                             " ", name)


def stack_length(frames: list[dict[str, Any]]) -> int:
    """The length of the stack text of ``frames`` (:func:`frame_text` of each, one per
    line), found without writing it: what a memo-shared name repeated in every frame
    would expand to is known, and charged, before anything is built.

    >>> stack_length([{"name": "f", "filename": "/m/a.py", "line": 12}] * 3)
    38
    """
    return sum(len(part) for frame in frames for part in _frame_parts(frame)) \
        + max(len(frames) - 1, 0)


def text_of(value: Any) -> str:
    """A frame field as text: text as it is, anything else as a short ``repr`` (a list
    shared through the pickle's memo may stand for billions of items).

    >>> text_of("forward"), text_of(96), text_of(None)
    ('forward', '96', 'None')
    """
    if value is None or isinstance(value, (str, float)):
        return str(value)
    return short_text(value)   # (an int too: a pickle's LONG4 may hold 10,000 digits)


def user_frame(frames: list[dict[str, Any]]) -> str:
    """The innermost Python frame outside the framework (else the innermost Python frame,
    else the autograd node or aten op of the C++ frames).

    Shown as ``file.py:line function`` with the file's base name: the site an allocation
    is attributed to.

    >>> user_frame([{"name": "f", "filename": "/v/site-packages/torch/nn/conv.py", "line": 5},
    ...             {"name": "forward", "filename": "/m/resnet.py", "line": 96}])
    'resnet.py:96 forward'
    >>> user_frame([{"name": "at::_ops::mm::call(x)", "filename": "??", "line": 0},
    ...    {"name": "torch::autograd::generated::MmBackward0_apply_functional", "filename": "??"}])
    'MmBackward0 (autograd)'
    """
    first_python = None
    for frame in frames:
        filename = text_of(frame.get("filename", ""))
        if not filename.endswith(".py"):
            continue
        if first_python is None:
            first_python = frame
        if not FRAMEWORK.search(filename):
            return _short(frame)
    if first_python is not None:
        return _short(first_python)
    names = [text_of(f.get("name", "")) for f in frames]
    for pattern, label in ((AUTOGRAD_NODE, "{} (autograd)"), (ATEN_OP, "aten::{}")):
        for name in names:
            if found := pattern.search(name):
                return label.format(found.group(1))
    return NO_STACK


def _short(frame: dict[str, Any]) -> str:
    filename = text_of(frame.get("filename", "")).replace("\\", "/").rsplit("/", 1)[-1]
    return f"{filename}:{text_of(frame.get('line', 0))} {text_of(frame.get('name', '?'))}"


class StackTable:
    """Interns stacks: equal frame lists give the same (stack text, user frame) pair.

    The streaming decoder gives equal stacks as one shared list, so the list's identity is
    looked up first (the list is kept with the answer, so its id stays its own).
    """

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget   # charged for each new stack text (memo amplification)
        self._seen: dict[tuple[tuple[Any, Any, Any], ...], tuple[str, str]] = {}
        self._same_list: dict[int, tuple[list[dict[str, Any]], tuple[str, str]]] = {}
        self.malformed = 0   # frames that are not a list of objects: no stack

    def __call__(self, frames: list[dict[str, Any]] | None) -> tuple[str, str]:
        """(full stack, one frame per line; user frame) of ``frames``.

        >>> table = StackTable()
        >>> a = table([{"name": "forward", "filename": "/m/net.py", "line": 3}])
        >>> a == ('/m/net.py:3 forward', 'net.py:3 forward'), a is table([dict(
        ...     name="forward", filename="/m/net.py", line=3)])
        (True, True)
        """
        if not frames:
            return "", NO_STACK
        same = self._same_list.get(id(frames))
        if same is not None and same[0] is frames:
            return same[1]
        if not isinstance(frames, list) or not all(isinstance(f, dict) for f in frames):
            self.malformed += 1   # (the builder counts it)
            return "", NO_STACK
        key = tuple((_hashable(f.get("filename")), _hashable(f.get("line")),
                     _hashable(f.get("name"))) for f in frames)
        found = self._seen.get(key)
        if found is None:
            if self.budget is not None:   # charged before the text exists (memo bombs)
                self.budget.spend(stack_length(frames), "$.device_traces (a stack)")
            found = ("\n".join(frame_text(f) for f in frames), user_frame(frames))
            self._seen[key] = found
        self._same_list[id(frames)] = (frames, found)
        return found


def _hashable(value: Any) -> Any:
    """A frame field as a key (a list or an object where text belongs: its repr)."""
    return value if isinstance(value, (str, int, float, type(None))) else short_text(value)
