"""The chat turn (DESIGN §1): what ``AsyncMemstack.chat`` runs.

- :mod:`memstack.turn.runner`: the turn itself, as a stream of events (``TurnRunner``);
- :mod:`memstack.turn.phase1`: the chat model call and the tool loop;
- :mod:`memstack.turn.tools`: the memory tools offered to the model (``recall_memory``, ``save_memory``,
  ``forget_memory``);
- :mod:`memstack.turn.turns`: the parts of an open engine (pipeline, session service, models, agents, background
  work) and graceful shutdown;
- :mod:`memstack.turn.models`, :mod:`memstack.turn.agents`, :mod:`memstack.turn.inputs`,
  :mod:`memstack.turn.background`: model choice, agent lookup, argument checks, background tasks.
"""
