"""Other machines' arithmetic: which OpenBLAS kernels this processor runs, and code run under one.

NumPy's and SciPy's wheels each bundle OpenBLAS built for many processors; at start it picks the
kernel for the processor it finds (``threadpoolctl`` reports it as ``architecture``). Another
kernel adds and multiplies in another order, so the last bits of a dot product or a solve differ:
a cosine that is exactly 1 on one machine is ``1 + 2.2e-16`` on another. ``OPENBLAS_CORETYPE``,
set before NumPy is imported, makes this processor compute as another would (CONTRIBUTING.md).

NumPy's own loops (``exp``, ``log``, sums) are compiled for several instruction sets too and pick
the widest the processor has; ``NPY_DISABLE_CPU_FEATURES`` narrows them, so each choice also runs
NumPy at a narrower level than the machine's (its baseline, or without the widest vectors the
processor has: AVX-512 where it has it, else AVX2).

A kernel that needs an instruction set the processor lacks would stop the process at its first
such instruction, so :func:`other_kernels` offers only kernels the processor can run, checks by
asking OpenBLAS and NumPy that each choice really took over, and says which it chose and why.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Kernel:
    """An OpenBLAS kernel that can be forced with ``OPENBLAS_CORETYPE``."""

    name: str
    #: The processor flags (``/proc/cpuinfo``) its instructions need.
    needs: frozenset[str]


#: x86-64 kernels, from the one every x86-64 processor runs (SSE3) to AVX-512.
X86_64 = (
    Kernel("Prescott", frozenset({"pni"})),          # SSE3, which Linux calls pni
    Kernel("Nehalem", frozenset({"sse4_2"})),
    Kernel("SandyBridge", frozenset({"avx"})),
    Kernel("Haswell", frozenset({"avx2", "fma"})),
    Kernel("Zen", frozenset({"avx2", "fma"})),
    Kernel("SkylakeX", frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl"})),
)
#: 64-bit Arm kernels, the generic one first.
AARCH64 = (Kernel("ARMV8", frozenset()), Kernel("CORTEXA57", frozenset()),
           Kernel("NEOVERSEN1", frozenset()))

#: What the tests ask for, in order: one kernel that every processor of the architecture runs,
#: then one with wide vectors (AVX2 on x86-64), each with the kernels to fall back on.
WANTED = {"x86_64": (("Prescott", "Nehalem"), ("Haswell", "SkylakeX", "SandyBridge", "Nehalem")),
          "aarch64": (("ARMV8", "CORTEXA57"), ("NEOVERSEN1", "CORTEXA57"))}


def cpu_flags() -> frozenset[str]:
    """The processor's feature flags, as Linux lists them (empty where there is no such list)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def known_kernels() -> tuple[Kernel, ...]:
    """The kernels of this processor's architecture."""
    return {"x86_64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}.get(platform.machine(), ())


def runs_here(kernel: Kernel, flags: frozenset[str] | None = None) -> bool:
    """Whether this processor has every instruction set ``kernel`` needs."""
    return kernel.needs <= (cpu_flags() if flags is None else flags)


def blas_environment(kernel: str | None, numpy_off: str = "") -> dict[str, str]:
    """The environment for a process that computes under ``kernel`` (``None``: the kernel of this
    process, the machine's default unless ``OPENBLAS_CORETYPE`` is set) with NumPy's features
    ``numpy_off`` switched off, single-threaded as the book's build and the tests are."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if kernel is not None:
        env["OPENBLAS_CORETYPE"] = kernel
    if numpy_off:
        env["NPY_DISABLE_CPU_FEATURES"] = numpy_off
    return env


#: Printed by a process: the kernels of the OpenBLAS libraries NumPy and SciPy loaded, and the
#: instruction sets NumPy's own loops use beyond its baseline.
REPORT = ("import json, numpy, scipy.linalg, threadpoolctl\n"
          "from numpy._core import _multiarray_umath as m\n"
          "print(json.dumps({'openblas': sorted({i.get('architecture') or '?' for i in "
          "threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'}), "
          "'numpy': [f for f in m.__cpu_dispatch__ if m.__cpu_features__.get(f)]}))")


def numpy_features(narrower: str, enabled: list[str]) -> str:
    """The value of ``NPY_DISABLE_CPU_FEATURES`` that leaves NumPy at level ``narrower`` of the
    ``enabled`` features (listed narrowest first, as NumPy dispatches them): ``"baseline"`` (none
    beyond what every processor of the architecture has) or ``"no-widest"`` (the widest vectors
    this processor has off: every AVX-512 feature where there is one, else the widest feature).

    >>> numpy_features("no-widest", ["X86_V3", "X86_V4", "AVX512_ICL"])
    'X86_V4 AVX512_ICL'
    >>> numpy_features("no-widest", ["X86_V3"])
    'X86_V3'
    """
    if narrower == "baseline":
        return " ".join(enabled)
    widest = [f for f in enabled if "512" in f or f.endswith("_V4")]
    return " ".join(widest or enabled[-1:])


def reported(kernel: str | None, numpy_off: str = "") -> dict[str, list[str]]:
    """What a new process computes with under ``kernel`` and ``numpy_off``: ``"openblas"``, one
    name per distinct library kernel (``[]`` if NumPy and SciPy use no OpenBLAS), and ``"numpy"``,
    the instruction sets of NumPy's own loops beyond its baseline."""
    done = subprocess.run([sys.executable, "-c", REPORT], capture_output=True, text=True,
                          env=blas_environment(kernel, numpy_off), timeout=120, check=True)
    return json.loads(done.stdout)


@dataclass(frozen=True)
class Choice:
    """A kernel chosen for a test, what OpenBLAS reports for it, NumPy's features switched off
    and those it still uses, and why it was chosen."""

    kernel: str
    reports: tuple[str, ...]
    numpy_off: str
    numpy: tuple[str, ...]
    note: str

    def environment(self) -> dict[str, str]:
        """The environment of a process that computes this way."""
        return blas_environment(self.kernel, self.numpy_off)


def choose(wanted: tuple[str, ...], avoid: set[tuple[str, ...]], numpy_level: str = "") -> Choice:
    """The first kernel of ``wanted`` that runs here and computes unlike every kernel's report in
    ``avoid`` (this process's, and the kernels already chosen), with NumPy at ``numpy_level``
    (see :func:`numpy_features`; ``""`` leaves NumPy as it is).

    Raises
    ------
    RuntimeError
        If no kernel of ``wanted`` qualifies: the test cannot do what it promises, so it fails
        and says so rather than passing.
    """
    by_name = {k.name: k for k in known_kernels()}
    notes = []
    for name in wanted:
        kernel = by_name.get(name)
        if kernel is None:
            notes.append(f"{name} is not a kernel of this {platform.machine()} processor")
            continue
        if not runs_here(kernel):
            notes.append(f"{name} cannot run here (the processor lacks "
                         f"{', '.join(sorted(kernel.needs - cpu_flags()))})")
            continue
        here = reported(name)
        reports = tuple(here["openblas"])
        if not reports:
            raise RuntimeError("NumPy and SciPy load no OpenBLAS here: OPENBLAS_CORETYPE "
                               "cannot change their arithmetic (see CONTRIBUTING.md)")
        if reports in avoid:
            notes.append(f"{name} computes as {'/'.join(reports)}, as a kernel already used")
            continue
        off = numpy_features(numpy_level, here["numpy"]) if numpy_level else ""
        numpy = tuple(reported(name, off)["numpy"])
        level = f", NumPy's loops at {'/'.join(numpy) or 'their baseline'}" if off else ""
        return Choice(name, reports, off, numpy, "; ".join(notes + [f"using {name}{level}"]))
    raise RuntimeError("no other OpenBLAS kernel to run: " + "; ".join(notes))


def other_kernels() -> list[Choice]:
    """The kernels the tests run under besides this process's (the one the book's build used):
    one per entry of :data:`WANTED`, the first with NumPy's loops at their baseline, the second
    without the widest vectors this processor has."""
    wanted = WANTED.get({"arm64": "aarch64"}.get(platform.machine(), platform.machine()))
    if wanted is None:
        raise RuntimeError(f"no OpenBLAS kernels are known for a {platform.machine()} processor")
    avoid = {tuple(reported(None)["openblas"])}
    chosen = []
    for names, numpy_level in zip(wanted, ("baseline", "no-widest")):
        choice = choose(names, avoid, numpy_level)
        avoid.add(choice.reports)
        chosen.append(choice)
    return chosen
