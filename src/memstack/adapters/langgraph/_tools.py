"""memstack's memory tools for LangChain agents: ``recall_memory``, ``save_memory`` and ``forget_memory`` bound to one
user, as LangChain ``StructuredTool``\\ s (async; their schemas read from the functions' signatures and ``Args:``
docstrings). They run wherever LangChain runs tools: ``model.bind_tools(tools)``, LangGraph's ``ToolNode``,
``create_react_agent``. What the model can fix (an unknown id, an empty query, a full tier) comes back to it as an
``error: …`` answer; a store or server that is down raises, as any failing tool does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool, StructuredTool

from memstack.adapters._common import tool_functions

if TYPE_CHECKING:
    from memstack.adapters._common import Engine

__all__ = ["memory_tools"]


def memory_tools(
    engine: Engine, user_id: str, *, tenant: str | None = None, agent_id: str | None = None
) -> list[BaseTool]:
    """The three memory tools for ``user_id`` (of ``tenant``; ``agent_id`` scopes what is saved and recalled), over an
    ``AsyncMemstack`` or an ``AsyncMemstackClient``."""
    functions = tool_functions(engine, user_id, tenant=tenant, agent_id=agent_id)
    return [StructuredTool.from_function(coroutine=fn, parse_docstring=True) for fn in functions]
