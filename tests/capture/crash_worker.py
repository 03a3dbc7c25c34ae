"""A process that runs one memory detection and can be killed at a chosen point (``memstack``'s crash tests).

Usage: ``python crash_worker.py DATABASE_URL BASE_URL MODE`` (``sqlite:///path`` or ``postgresql://…``). MODE
``classify`` just runs (the test kills it while the classifier is answering); MODE ``stored`` holds the process
still right after the first memory is written and before that write is checkpointed on the job, the narrowest
window there is. Each pipeline event is printed as one JSON line on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import UTC, datetime

from memstack.capture.llm import LLMClassifier
from memstack.capture.pipeline import CapturePipeline, PipelineEvent, PipelineSettings
from memstack.config import Config
from memstack.embed import get_embedder
from memstack.models import get_model
from memstack.store import open_store
from memstack.types import UserRef

AT = datetime(2024, 5, 9, 14, 0, tzinfo=UTC)
MESSAGE = "I'm a nurse and I live in Lyon"


async def main(database_url: str, base_url: str, mode: str) -> None:
    embedder = get_embedder("local:minilm")
    store = await open_store(Config(database_url=database_url), dim=embedder.dim, embedder=embedder.name)
    model = get_model("openai:classifier-mini", base_url=base_url, api_key="sk-scripted")
    classifier = LLMClassifier(model, owns_model=True, timeout_s=60.0)

    def on_event(event: PipelineEvent) -> None:
        print(json.dumps({"event": event.name, "job": event.job_id, **event.detail}), flush=True)
        if mode == "stored" and event.name == "stored":
            time.sleep(3600)  # written, not yet checkpointed: wait here to be killed

    pipeline = CapturePipeline(store, embedder, classifier, settings=PipelineSettings(lease_s=1.0), on_event=on_event)
    await embedder.embed(["warm up"])
    print(json.dumps({"event": "ready"}), flush=True)
    await pipeline.start(UserRef("alice"), MESSAGE, at=AT, session_id="s1", turn=3)
    print(json.dumps({"event": "finished"}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
