"""The models a turn uses: chosen by the configuration's model strings, or handed in ready (:class:`Models`).

The chat model of a turn is the agent's own (``model.name`` in its YAML) if it names one, else the configured
``chat_model`` (``openai:gpt-4o-mini``, ``ollama:llama3.2``, ``custom:<model>`` with ``$MEMSTACK_CUSTOM_BASE_URL``…),
else the offline responder, which says plainly that it is not a model. Model strings reach any OpenAI-compatible
endpoint: the base URL comes from ``$MEMSTACK_<PROVIDER>_BASE_URL`` (see :mod:`memstack.models.providers`).

A model that cannot be built (a missing API key, an unknown provider) is a :class:`~memstack.errors.ConfigError`
scoped to chat: it names the setting (``classifier_model`` / ``$MEMSTACK_CLASSIFIER_MODEL``…) and the variable to
set (``$OPENAI_API_KEY``…). The engine opens without its chat parts then, so managing memories still works, and the
first chat call raises that error (:class:`~memstack.engine.AsyncMemstack`). Chat models are built per model string
at the first turn that uses them, with the same message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from memstack.capture import Classifier, get_classifier
from memstack.capture.judge import OFFLINE_JUDGES, UpdateJudge, get_update_judge
from memstack.capture.pipeline import PipelineSettings
from memstack.config import Config
from memstack.context import Agent
from memstack.context.offline import OfflineResponder
from memstack.embed import Embedder
from memstack.errors import ConfigError
from memstack.guard import ContentGuard
from memstack.models import ChatModel, get_model
from memstack.recall.service import RecallSettings
from memstack.session import SessionSettings, Summarizer, get_summarizer
from memstack.turn.runner import TurnSettings

__all__ = [
    "ChatModels",
    "Models",
    "Tuning",
    "build_classifier",
    "build_guard",
    "build_summarizer",
    "build_update_judge",
    "check_models",
]

_GUARDS = ("auto", "rules", "semantic")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Models:
    """Ready-made models to use instead of the configuration's model strings (tests, custom clients).

    ``chat`` answers turns whose agent names no model; ``classifier`` detects memories; ``summarizer`` writes turn
    summaries; ``updates`` judges whether news supersedes a memory. What is handed in here is not closed by the
    engine: its owner closes it."""

    chat: ChatModel | None = None
    classifier: Classifier | None = None
    summarizer: Summarizer | None = None
    updates: UpdateJudge | None = None


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
            setting = "chat_model, $MEMSTACK_CHAT_MODEL" if spec == self._default_spec else "the agent's model.name"
            model = self._owned[spec] = _built(get_model, spec, f"chat model {spec!r} ({setting})")
        return model

    async def aclose(self) -> None:
        owned, self._owned = list(self._owned.values()), {}
        for model in owned:
            await model.aclose()


def _built(factory: Callable[..., T], spec: str, what: str, **options: Any) -> T:
    """``factory(spec)``, its ``ConfigError`` (which names the variable to set) saying which setting it is about."""
    try:
        return factory(spec, **options)
    except ConfigError as exc:
        raise ConfigError(f"the {what} cannot be used: {exc}") from None


_OFFLINE = frozenset({"offline", "offline:rules-v1", "offline:extractive"})


def check_models(config: Config, given: Models) -> None:
    """Can the configured classifier and summarizer be built? ``ConfigError`` naming the setting and the variable to
    set (a missing API key, an unknown provider) before anything is built, so nothing half-built is left open."""
    from memstack.models import parse_model_spec, resolve_endpoint

    wanted = (
        ("classifier", config.classifier_model, given.classifier),
        ("summarizer", config.summarizer_model, given.summarizer),
        ("update", config.update_model, given.updates),
    )
    for role, spec, ready in wanted:
        if ready is not None or spec is None or spec in _OFFLINE or spec in OFFLINE_JUDGES:
            continue
        what = f"{role} model {spec!r} ({role}_model, $MEMSTACK_{role.upper()}_MODEL)"
        _built(lambda s: resolve_endpoint(parse_model_spec(s).provider), spec, what)


def build_classifier(config: Config, embedder: Embedder, given: Classifier | None) -> tuple[Classifier, bool]:
    """The memory classifier and whether the engine owns (closes) it; ``ConfigError`` naming
    ``classifier_model`` and the variable to set when the configured model cannot be built."""
    if given is not None:
        return given, False
    spec = config.classifier_model
    what = f"classifier model {spec!r} (classifier_model, $MEMSTACK_CLASSIFIER_MODEL)"
    return _built(get_classifier, spec or "offline", what, embedder=embedder), True


def build_update_judge(config: Config, embedder: Embedder, given: UpdateJudge | None) -> tuple[UpdateJudge, bool]:
    """The update judge and whether the engine owns (closes) it: ``update_model``, else the classifier's model
    string, else offline (:attr:`~memstack.config.Config.update_judge`); ``ConfigError`` naming the setting and the
    variable to set when the model cannot be built."""
    if given is not None:
        return given, False
    spec = config.update_judge
    setting = "update_model, $MEMSTACK_UPDATE_MODEL" if config.update_model else "classifier_model, followed"
    what = f"update judge {spec!r} ({setting})"
    return _built(get_update_judge, spec, what, embedder=embedder), True


def build_summarizer(config: Config, given: Summarizer | None) -> Summarizer:
    """The session summarizer; ``ConfigError`` naming ``summarizer_model`` and the variable to set when the configured
    model cannot be built."""
    if given is not None:
        return given
    spec = config.summarizer_model
    what = f"summarizer model {spec!r} (summarizer_model, $MEMSTACK_SUMMARIZER_MODEL)"
    return _built(get_summarizer, spec or "offline", what)


def build_guard(setting: str, embedder: Embedder) -> ContentGuard | None:
    """The content guard for ``Tuning.guard``; ``None`` means the phrase rules alone (the assembler's default)."""
    if setting == "rules":
        return None
    from memstack.guard import SemanticGuard, SyncEmbedder, load_head

    usable = embedder.name == load_head().model and callable(getattr(embedder, "embed_sync", None))
    if not usable:
        if setting == "semantic":
            raise ConfigError(
                f"the semantic guard reads {load_head().model!r} embeddings; the embedder is {embedder.name!r}. "
                "Use embedder local:minilm, or guard 'rules'"
            )
        return None
    return SemanticGuard(cast(SyncEmbedder, embedder))
