"""Adapters for agent frameworks: memstack's memory as each framework's own parts (one module per framework, each in
its own extra: ``memstack.adapters.pydantic_ai`` needs ``memstack[pydantic-ai]``, ``memstack.adapters.openai_agents``
``memstack[openai-agents]``). Importing ``memstack`` imports none of them."""
