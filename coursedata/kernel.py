"""The check's kernel, under the grader's limits: ``python -m coursedata.kernel -f CONNECTION``.

Starts IPython's kernel (``ipykernel_launcher``) after limiting this process's address space to
:data:`coursedata.grading.MEMORY_MB`, as the grader limits each process of a graded kernel, so
that code that needs more memory fails in the student's check as it fails at grading. Where the
system cannot set that limit (Windows has no ``resource`` module), the kernel starts without it.
"""

from __future__ import annotations

import runpy
import sys

from coursedata.grading import MEMORY_MB


def limit_memory(mb: int = MEMORY_MB) -> bool:
    """Limit this process's address space (``RLIMIT_AS``) to ``mb`` MB; return whether it could."""
    try:
        import resource
    except ImportError:  # Windows
        return False
    limit = mb * 2**20
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        return False
    return True


if __name__ == "__main__":
    limit_memory()
    sys.argv[0] = "ipykernel_launcher"
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
