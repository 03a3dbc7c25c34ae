"""Adapters: memstack inside the agent frameworks, each in its own extra (``memstack[langgraph]``), written against
the public API only (``AsyncMemstack`` or ``AsyncMemstackClient``), so each works embedded and against a server.
Nothing in memstack imports an adapter: ``import memstack`` never needs a framework installed."""
