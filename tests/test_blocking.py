"""The blocking API shows the real parameters of each method to ``help()``, IDEs and ``inspect.signature``: those of
the coroutine it runs, without ``self``, never ``(*args, **kwargs)``."""

from __future__ import annotations

import inspect
import pydoc

import pytest

from memstack import AsyncMemstack, Memstack
from memstack.blocking import Blocking
from memstack.client import AsyncMemstackClient, MemstackClient

PAIRS = [(Memstack, AsyncMemstack), (MemstackClient, AsyncMemstackClient)]


@pytest.mark.parametrize(("blocking", "core"), PAIRS, ids=["Memstack", "MemstackClient"])
def test_every_blocking_method_has_its_coroutines_signature(blocking: type, core: type) -> None:
    names = [name for name, value in vars(blocking).items() if isinstance(value, Blocking)]
    assert len(names) >= 15
    for name in names:
        shown = inspect.signature(getattr(blocking, name))
        real = inspect.signature(getattr(core, name))
        assert list(shown.parameters.values()) == list(real.parameters.values())[1:], name
        assert shown.return_annotation == real.return_annotation, name
        assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in shown.parameters.values()), name
        assert getattr(blocking, name).__doc__ == getattr(core, name).__doc__, name
        assert getattr(blocking, name).__qualname__ == f"{blocking.__name__}.{name}"


def test_help_shows_the_parameters() -> None:
    text = pydoc.render_doc(Memstack, renderer=pydoc.plaintext)
    assert "add(user_id: 'str | UserRef', content: 'str', *, category:" in text
    assert "search(user_id: 'str | UserRef', query: 'str', *, limit: 'int' = 5" in text
    assert "(*args, **kwargs)" not in text


def test_calling_on_the_class_says_what_to_do() -> None:
    with pytest.raises(TypeError, match=r"Memstack\.add is a method: call it on an instance"):
        Memstack.add("alice", "Prefers tea")
