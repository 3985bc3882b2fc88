"""A cap on how much more the test process may map, for tests of work refused for want of memory."""

from __future__ import annotations

import contextlib
import resource

GIB = 1 << 30


@contextlib.contextmanager
def address_space_capped(extra: int = 2 * GIB):
    """The process may map at most `extra` more bytes meanwhile: a guard that fails allocates until a RuntimeError
    here, where without the cap the kernel would end the test's worker (it did, before the guard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    mapped = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (mapped + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
