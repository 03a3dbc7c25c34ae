"""The models a turn uses: chosen by the configuration's model strings, or handed in ready (:class:`Models`).

The chat model of a turn is the agent's own (``model.name`` in its YAML) if it names one, else the configured
``chat_model`` (``openai:gpt-4o-mini``, ``ollama:llama3.2``, ``custom:<model>`` with ``$MEMSTACK_CUSTOM_BASE_URL``…),
else the offline responder, which says plainly that it is not a model. Model strings reach any OpenAI-compatible
endpoint: the base URL comes from ``$MEMSTACK_<PROVIDER>_BASE_URL`` (see :mod:`memstack.models.providers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from memstack.capture import Classifier, get_classifier
from memstack.capture.pipeline import PipelineSettings
from memstack.config import Config
from memstack.context import Agent
from memstack.context.guard import ContentGuard
from memstack.embed import Embedder
from memstack.errors import ConfigError
from memstack.models import ChatModel, get_model
from memstack.models.offline import OfflineResponder
from memstack.recall.service import RecallSettings
from memstack.session import SessionSettings, Summarizer, get_summarizer
from memstack.turn.runner import TurnSettings

__all__ = ["ChatModels", "Models", "Tuning", "build_classifier", "build_guard", "build_summarizer"]

_GUARDS = ("auto", "rules", "semantic")


@dataclass(frozen=True, slots=True)
class Models:
    """Ready-made models to use instead of the configuration's model strings (tests, custom clients).

    ``chat`` answers turns whose agent names no model; ``classifier`` detects memories; ``summarizer`` writes turn
    summaries. What is handed in here is not closed by the engine: its owner closes it."""

    chat: ChatModel | None = None
    classifier: Classifier | None = None
    summarizer: Summarizer | None = None


@dataclass(frozen=True, slots=True)
class Tuning:
    """Settings of the parts behind a turn, beyond :class:`~memstack.config.Config`; ``None`` keeps the defaults.

    ``turn``: badge wait (else ``config.badge_wait_s``), tool rounds, summaries offered, message limits.
    ``capture``: the detection pipeline (confidence, leases, retries). ``session``: session memory (window,
    summarizer timeout, consolidation cadence). ``guard``: the content check of every assembly and of every memory
    written: ``rules`` (phrase rules), ``semantic`` (rules plus the semantic head over MiniLM embeddings: needs the
    ``local:minilm`` embedder) or ``auto`` (semantic when the embedder is MiniLM, else rules). ``recall``: how
    memories and archived messages are ranked together (layer 6, ``AsyncMemstack.recall``)."""

    turn: TurnSettings | None = None
    capture: PipelineSettings | None = None
    session: SessionSettings | None = None
    guard: str = "auto"
    recall: RecallSettings | None = None

    def __post_init__(self) -> None:
        if self.guard not in _GUARDS:
            raise ConfigError(f"guard must be one of {', '.join(_GUARDS)}, got {self.guard!r}")


class ChatModels:
    """Chat models by model string, created on first use and closed with :meth:`aclose`."""

    def __init__(self, config: Config, given: ChatModel | None = None) -> None:
        self._default_spec = config.chat_model
        self._given = given
        self._owned: dict[str, ChatModel] = {}
        self._offline = OfflineResponder()

    def for_agent(self, agent: Agent) -> ChatModel:
        if agent.model.name is not None:
            return self._for_spec(agent.model.name)
        return self.default

    @property
    def default(self) -> ChatModel:
        """The model of agents that name none."""
        return self._given if self._given is not None else self._for_spec(self._default_spec)

    def _for_spec(self, spec: str | None) -> ChatModel:
        if spec is None or spec.strip() in ("offline", "offline:responder"):
            return self._offline
        model = self._owned.get(spec)
        if model is None:
            model = self._owned[spec] = get_model(spec)  # ConfigError for an unknown provider or a missing key
        return model

    async def aclose(self) -> None:
        owned, self._owned = list(self._owned.values()), {}
        for model in owned:
            await model.aclose()


def build_classifier(config: Config, embedder: Embedder, given: Classifier | None) -> tuple[Classifier, bool]:
    """The memory classifier and whether the engine owns (closes) it."""
    if given is not None:
        return given, False
    return get_classifier(config.classifier_model, embedder=embedder), True


def build_summarizer(config: Config, given: Summarizer | None) -> Summarizer:
    return given if given is not None else get_summarizer(config.summarizer_model)


def build_guard(setting: str, embedder: Embedder) -> ContentGuard | None:
    """The content guard for ``Tuning.guard``; ``None`` means the phrase rules alone (the assembler's default)."""
    if setting == "rules":
        return None
    from memstack.context.semantic import SemanticGuard, SyncEmbedder, load_head

    usable = embedder.name == load_head().model and callable(getattr(embedder, "embed_sync", None))
    if not usable:
        if setting == "semantic":
            raise ConfigError(
                f"the semantic guard reads {load_head().model!r} embeddings; the embedder is {embedder.name!r}. "
                "Use embedder local:minilm, or guard 'rules'"
            )
        return None
    return SemanticGuard(cast(SyncEmbedder, embedder))
