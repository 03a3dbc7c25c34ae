"""Renamed parameters: one vocabulary across the API (``user_id`` for whose data, ``limit`` for how many), while the
old names (``user=``, ``k=``) keep working for a release with a :class:`DeprecationWarning` naming the new one.

::

    @renamed(user="user_id", k="limit")
    async def search(self, user_id: ..., query: str, *, limit: int = 5) -> ...

The wrapper is a plain function that renames the keyword and calls the method, so the warning is raised where the
call is made (for a coroutine, before it is awaited; for :class:`~memstack.Memstack`, in the caller's thread, not on
its loop thread), and it points at the first frame outside memstack: Python shows a ``DeprecationWarning`` by default
only when it is attributed to ``__main__``, and one attributed to memstack's own wrappers would never be seen.
``inspect.signature`` shows the new names only (the wrapper keeps ``__wrapped__``), so the client's signatures still
match the library's, and type checkers flag the old names.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["REMOVED_IN", "renamed"]

#: The release in which the old names stop working.
REMOVED_IN = "0.3"

F = TypeVar("F", bound=Callable[..., Any])

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _outside_memstack() -> int:
    """The ``stacklevel`` of the first caller outside the memstack package, seen from :func:`_warn`."""
    level, frame = 3, sys._getframe(3)  # 0: this function, 1: _warn, 2: the wrapper, 3: its caller (stacklevel 3)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        next_frame = frame.f_back
        if next_frame is None:
            break
        frame, level = next_frame, level + 1
    return level


def _warn(qualname: str, old: str, new: str) -> None:
    warnings.warn(
        f"{qualname}({old}=...) is deprecated: use {new}= (the same value). {old}= stops working in "
        f"memstack {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=_outside_memstack(),
    )


def _called(args: tuple[Any, ...], name: str) -> str | None:
    """The method as its caller names it ("AsyncMemstack.search", not the mixin that defines it)."""
    if args and callable(getattr(type(args[0]), name, None)):
        return f"{type(args[0]).__name__}.{name}"
    return None


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Accept each old keyword (``user="user_id"``) as its new name, with a ``DeprecationWarning``; giving both is a
    ``TypeError``, as any repeated argument is."""

    def decorate(fn: F) -> F:
        qualname = fn.__qualname__

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old in kwargs:
                    name = _called(args, fn.__name__) or qualname
                    if new in kwargs:
                        raise TypeError(f"{name}() got both {old}= and {new}=; pass only {new}=")
                    _warn(name, old, new)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        mark = getattr(inspect, "markcoroutinefunction", None)  # Python 3.12+: still a coroutine function to inspect
        if mark is not None and inspect.iscoroutinefunction(fn):
            mark(wrapper)
        return cast(F, wrapper)

    return decorate
