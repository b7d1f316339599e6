"""One spelling per thing across profilers and platforms, so that two runs of one program
recorded differently can be diffed row by row.

- kernels: the demangled signature's return type, template arguments and parameter list
  dropped (Kineto writes ``<8, ...>`` where Nsight Systems writes ``<(int)8, ...>``);
- copies and memsets: ``Memcpy HtoD`` / ``Memcpy DtoH`` / ``Memcpy DtoD`` and ``Memset``,
  whether the profiler wrote ``Memcpy HtoD (Pageable -> Device)`` (Kineto, Nsight Systems)
  or ``CopyHostToDevice`` / ``FillBuffer`` (rocprofiler, rpd);
- runtime calls: ``gpu`` for their ``cuda`` / ``hip`` prefix, without a version suffix
  (``cudaLaunchKernel`` and ``hipLaunchKernel`` are ``gpuLaunchKernel``, as portable code
  spells them).

Host ops keep their names (``aten::mm`` is the same everywhere; Python frames hold
parentheses that are not parameter lists).
"""

from __future__ import annotations

import re

# Spellings, not judgements: a row's kind comes from its activity (the vocabulary); these
# only respell a row already of that kind (whether a name is a memset at all is
# copy_time.copy_kind's, the vocabulary's rule)
_COPY = re.compile(r"^(?:Memcpy\s+(?P<short>[HDP]to[HDP])\b.*"
                   r"|Copy(?P<from>Host|Device|Peer)To(?P<to>Host|Device|Peer)\w*)$")
_MEMSET = re.compile(r"^(?:Memset\b.*|FillBuffer\w*)$")
_RUNTIME = re.compile(r"^(?:cuda|hip|gpu)(?P<call>[A-Z]\w*?)(?:_v\d+|R\d{4})?$")
_ANONYMOUS = "(anonymous namespace)::"


def kernel_base(name: str) -> str:
    """A demangled kernel signature without return type, template arguments and
    parameters.

    >>> kernel_base("void at::native::vectorized_elementwise_kernel<(int)8, at::native::"
    ...             "FillFunctor<float>>(int, T2, T3)")
    'at::native::vectorized_elementwise_kernel'
    >>> kernel_base("saxpy(double *, double *, double, int)"), kernel_base("sm80_xmma_gemm")
    ('saxpy', 'sm80_xmma_gemm')
    """
    text = name.replace(_ANONYMOUS, "")
    kept = []
    depth = 0
    for char in text:
        if char == "<":
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif char == "(" and not depth:
            break   # the parameter list
        elif not depth:
            kept.append(char)
    base = "".join(kept).strip()
    return base.rsplit(" ", 1)[-1] if base else name


def normalised(name: str, kind: str) -> str:
    """The name of a row of kind ``kind`` (``kernel``, ``memcpy``, ``communication``,
    ``cpu``, ``idle``) in the one spelling.

    >>> [normalised(n, "memcpy") for n in ("Memcpy HtoD (Pageable -> Device)",
    ...  "CopyHostToDevice", "Memset (Device)", "FillBuffer")]
    ['Memcpy HtoD', 'Memcpy HtoD', 'Memset', 'Memset']
    >>> normalised("hipGetDevicePropertiesR0600", "cpu"), normalised("cudaLaunchKernel", "cpu")
    ('gpuGetDeviceProperties', 'gpuLaunchKernel')
    >>> normalised("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "communication")
    'ncclDevKernel_Generic'
    """
    if kind == "memcpy":
        if _MEMSET.match(name):
            return "Memset"
        found = _COPY.match(name)
        if found:
            short = found["short"] or f"{found['from'][0]}to{found['to'][0]}"
            return f"Memcpy {short}"
        return name
    if kind in ("kernel", "communication") and ("(" in name or "<" in name):
        return kernel_base(name)
    if kind == "cpu":
        found = _RUNTIME.match(name)
        return f"gpu{found['call']}" if found else name
    return name


def is_runtime(name: str) -> bool:
    """A CUDA or HIP runtime call, in either spelling.

    >>> is_runtime("hipLaunchKernel"), is_runtime("gpuMemcpyAsync"), is_runtime("aten::mm")
    (True, True, False)
    """
    return _RUNTIME.match(name) is not None


def platform(names: list[str]) -> str:
    """``"rocm"``, ``"cuda"`` or ``""``: whose runtime the host called (by its calls' names).

    >>> platform(["aten::mm", "hipLaunchKernel"]), platform(["cudaMalloc"]), platform([])
    ('rocm', 'cuda', '')
    """
    if any(n.startswith("hip") and is_runtime(n) for n in names):
        return "rocm"
    return "cuda" if any(n.startswith("cuda") and is_runtime(n) for n in names) else ""
