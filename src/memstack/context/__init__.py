"""Layered context assembly (DESIGN §2): agents, session metadata, the ten-layer stack, budget, manifest, and
``validate_no_override`` (the content guard it applies is :mod:`memstack.guard`).

::

    from memstack.context import ContextRequest, assemble, build_session

    ctx = assemble(ContextRequest(message="What time does the library close tomorrow?",
                                  session=build_session({"timezone": "Europe/Paris"})))
    ctx.messages      # system message (layers 1-8) + thread + current turn, ready for the chat model
    ctx.manifest      # every fragment: layer, source, tokens, kept / trimmed / quarantined, flags, reason
"""

from __future__ import annotations

from memstack.context.agent import (
    Agent,
    AgentTool,
    Characteristics,
    CoreSpec,
    MemorySettings,
    ModelSettings,
    agent_from_request,
    default_agent,
    load_agent,
    parse_agent,
)
from memstack.context.assemble import (
    AssembledContext,
    ContextRequest,
    DelegatedTask,
    MemoryHit,
    SummaryLine,
    assemble,
    turn_log_text,
)
from memstack.context.manifest import Manifest, ManifestEntry
from memstack.context.render import ChatMessage, escape_data
from memstack.context.session_meta import ClientInfo, SessionMeta, build_session, parse_user_agent
from memstack.context.stack import DEFAULT_STACK, LayerSpec, LayerStack, Mutability, OnFlag, Placement, Trim
from memstack.context.validate import validate_no_override

__all__ = [
    "DEFAULT_STACK",
    "Agent",
    "AgentTool",
    "AssembledContext",
    "Characteristics",
    "ChatMessage",
    "ClientInfo",
    "ContextRequest",
    "CoreSpec",
    "DelegatedTask",
    "LayerSpec",
    "LayerStack",
    "Manifest",
    "ManifestEntry",
    "MemoryHit",
    "MemorySettings",
    "ModelSettings",
    "Mutability",
    "OnFlag",
    "Placement",
    "SessionMeta",
    "SummaryLine",
    "Trim",
    "agent_from_request",
    "assemble",
    "build_session",
    "default_agent",
    "escape_data",
    "load_agent",
    "parse_agent",
    "parse_user_agent",
    "turn_log_text",
    "validate_no_override",
]
