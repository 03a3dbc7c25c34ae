"""Adapters: memstack inside the agent frameworks, one module per framework, each in its own extra
(``memstack.adapters.langgraph`` needs ``memstack[langgraph]``, ``memstack.adapters.pydantic_ai``
``memstack[pydantic-ai]``, ``memstack.adapters.openai_agents`` ``memstack[openai-agents]``), written against the public
API only (``AsyncMemstack`` or ``AsyncMemstackClient``), so each works embedded and against a server. Nothing in
memstack imports an adapter: ``import memstack`` never needs a framework installed."""
