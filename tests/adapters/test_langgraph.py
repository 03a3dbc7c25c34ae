"""memstack as LangGraph's store: ``MemstackStore`` driven through LangGraph's own ``BaseStore`` methods and ops and
through compiled graphs whose nodes read and write it, on an embedded ``AsyncMemstack`` and on the client against
a real server. (LangGraph ships no store conformance suite in its package; these cases follow what its in-memory
store promises: replace by key, exact namespaces, prefix search with filters and a query, namespace listing.)"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from memstack import AsyncMemstack, InputError
from memstack.adapters.langgraph import MemstackStore, memory_tools
from memstack.client import AsyncMemstackClient
from memstack.config import Config
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer

Backend = AsyncMemstack | AsyncMemstackClient


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = Config.resolve(home=tmp_path_factory.mktemp("lg-server"), embedder="hash:64")
    with BackgroundServer(create_app(config, settings=ServerSettings(auth="local"))) as running:
        yield running.url


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
        yield ms


@pytest.fixture
async def remote(server: str) -> AsyncIterator[AsyncMemstackClient]:
    async with AsyncMemstackClient(server) as client:
        yield client


@pytest.fixture(params=["embedded", "remote"])
def ms(request: pytest.FixtureRequest) -> Backend:
    backend: Backend = request.getfixturevalue(request.param)
    return backend


@pytest.fixture
def user(request: pytest.FixtureRequest) -> str:
    """A user id no other test uses (the server is shared by the module's tests)."""
    return f"u-{request.node.name}".replace("[", "-").replace("]", "")[:200]


async def test_a_put_item_reads_back_and_a_put_of_the_same_key_replaces_it(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    await store.aput((user, "prefs"), "drink", {"content": "Likes green tea", "kind": "drink", "cups": 3})
    first = await store.aget((user, "prefs"), "drink")
    assert first is not None
    assert first.value == {"content": "Likes green tea", "kind": "drink", "cups": 3}
    assert (first.namespace, first.key) == ((user, "prefs"), "drink")

    await store.aput((user, "prefs"), "drink", {"content": "Switched to black coffee", "kind": "drink", "cups": 2})
    second = await store.aget((user, "prefs"), "drink")
    assert second is not None
    assert second.value == {"content": "Switched to black coffee", "kind": "drink", "cups": 2}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert [m.content for m in await ms.list(user)] == ["Switched to black coffee"]  # one memory, edited in place


async def test_items_are_memories_of_the_user_the_namespace_names(ms: Backend, user: str) -> None:
    await MemstackStore(ms).aput((user, "notes"), "n1", {"content": "Allergic to peanuts", "source": "intake"})
    [memory] = await ms.list(user)
    assert memory.content == "Allergic to peanuts"
    assert memory.metadata["source"] == "intake"  # the value's other keys are memstack metadata
    assert [hit.memory.id for hit in await ms.search(user, "peanuts allergy")] == [memory.id]


async def test_namespaces_and_keys_keep_items_apart(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    await store.aput((user, "a"), "k", {"content": "Item in a"})
    await store.aput((user, "a", "b"), "k", {"content": "Item in a/b"})
    await store.aput((user, "b"), "k", {"content": "Same text"})
    await store.aput((user, "b"), "k2", {"content": "Same text"})  # not memstack's duplicate: another item
    assert (await store.aget((user, "a"), "k")).value["content"] == "Item in a"  # type: ignore[union-attr]
    assert (await store.aget((user, "a", "b"), "k")).value["content"] == "Item in a/b"  # type: ignore[union-attr]
    assert await store.aget((user, "a"), "missing") is None
    assert await store.aget((user, "c"), "k") is None
    assert len(await ms.list(user)) == 4


async def test_a_value_without_text_reads_back_as_it_was(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    value = {"name": "Alice", "langs": ["en", "de"], "profile": {"age": 30}, "content": ""}
    await store.aput((user, "profile"), "me", value)
    item = await store.aget((user, "profile"), "me")
    assert item is not None and item.value == value
    assert "Alice" in (await ms.list(user))[0].content  # stored as JSON: still found by meaning


async def test_delete_removes_the_item_and_leaves_the_others(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    await store.aput((user, "x"), "gone", {"content": "Delete me"})
    await store.aput((user, "x"), "kept", {"content": "Keep me"})
    await store.adelete((user, "x"), "gone")
    await store.adelete((user, "x"), "never-there")  # no error, as LangGraph's stores do
    assert await store.aget((user, "x"), "gone") is None
    assert [m.content for m in await ms.list(user)] == ["Keep me"]


async def test_search_filters_by_prefix_plain_values_and_operators(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    for i, (kind, stars) in enumerate([("book", 5), ("book", 2), ("film", 4), ("book", 4)]):
        await store.aput((user, "reviews", kind), f"r{i}", {"content": f"Review {i}", "kind": kind, "stars": stars})
    await store.aput((user, "other"), "o", {"content": "Review elsewhere", "kind": "book", "stars": 5})

    books = await store.asearch((user, "reviews"), filter={"kind": "book"})
    assert [item.key for item in books] == ["r3", "r1", "r0"]  # newest first
    good = await store.asearch((user, "reviews"), filter={"kind": "book", "stars": {"$gte": 4}})
    assert [item.key for item in good] == ["r3", "r0"]
    assert [item.key for item in await store.asearch((user,), filter={"stars": {"$gt": 4}})] == ["o", "r0"]
    assert [item.key for item in await store.asearch((user, "reviews"), limit=2, offset=1)] == ["r2", "r1"]
    assert await store.asearch((user, "reviews", "music")) == []


async def test_search_with_a_query_ranks_by_meaning_and_honours_min_score(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    await store.aput((user, "facts"), "tea", {"content": "Drinks green tea every morning"})
    await store.aput((user, "facts"), "bike", {"content": "Rides a bicycle to work"})
    await store.aput((user, "facts"), "cat", {"content": "Has a cat named Miso"})
    hits = await store.asearch((user, "facts"), query="green tea in the morning", limit=2)
    assert hits[0].key == "tea"
    assert hits[0].score is not None and len(hits) == 2
    strict = MemstackStore(ms, min_score=0.5)
    assert [hit.key for hit in await strict.asearch((user, "facts"), query="green tea in the morning")] == ["tea"]


async def test_list_namespaces_with_prefix_suffix_and_depth(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    for namespace in [(user, "a", "x"), (user, "a", "y"), (user, "b", "x"), (user, "b")]:
        await store.aput(namespace, "k", {"content": f"In {'/'.join(namespace)}"})
    everything = [(user, "a", "x"), (user, "a", "y"), (user, "b"), (user, "b", "x")]
    assert await store.alist_namespaces(prefix=(user,)) == everything
    assert await store.alist_namespaces(prefix=(user, "a")) == [(user, "a", "x"), (user, "a", "y")]
    assert await store.alist_namespaces(prefix=(user,), suffix=("x",)) == [(user, "a", "x"), (user, "b", "x")]
    assert await store.alist_namespaces(prefix=(user, "*", "y")) == [(user, "a", "y")]
    assert await store.alist_namespaces(prefix=(user,), max_depth=2) == [(user, "a"), (user, "b")]
    assert await store.alist_namespaces(prefix=(user,), limit=1, offset=1) == [(user, "a", "y")]


async def test_a_search_under_no_user_goes_through_every_user(embedded: AsyncMemstack) -> None:
    store = MemstackStore(embedded)
    await store.aput(("ana", "notes"), "k", {"content": "Ana plays chess"})
    await store.aput(("bo", "notes"), "k", {"content": "Bo plays go"})
    assert sorted(item.namespace for item in await store.asearch(())) == [("ana", "notes"), ("bo", "notes")]
    assert await store.alist_namespaces() == [("ana", "notes"), ("bo", "notes")]
    hits = await store.asearch((), query="chess")
    assert hits[0].namespace == ("ana", "notes")


async def test_layouts_put_tenant_and_agent_where_memstack_keeps_them(embedded: AsyncMemstack) -> None:
    tenants = MemstackStore(embedded, namespace=("{tenant}", "{user_id}"))
    await tenants.aput(("acme", "ana", "notes"), "k", {"content": "Ana works at Acme"})
    assert [m.content for m in await embedded.list("ana", tenant="acme")] == ["Ana works at Acme"]
    assert await embedded.list("ana") == []  # not in the default tenant
    assert await tenants.alist_namespaces(prefix=("acme",)) == [("acme", "ana", "notes")]
    with pytest.raises(InputError, match="span tenants"):
        await tenants.asearch(())

    agents = MemstackStore(embedded, namespace=("{user_id}", "agent", "{agent_id}"))
    await agents.aput(("bo", "agent", "planner", "plans"), "k", {"content": "Bo's trip is in May"})
    [memory] = await embedded.list("bo")
    assert memory.agent_id == "planner"
    with pytest.raises(InputError, match="layout"):
        await agents.aput(("bo", "plans"), "k", {"content": "No agent"})

    langmem = MemstackStore(embedded, namespace=("memories", "{user_id}"))
    await langmem.aput(("memories", "cy"), "k", {"content": "Cy likes jazz"})
    assert [m.content for m in await embedded.list("cy")] == ["Cy likes jazz"]
    assert await langmem.asearch(("elsewhere",)) == []


async def test_bad_values_and_filters_are_input_errors(embedded: AsyncMemstack) -> None:
    store = MemstackStore(embedded)
    with pytest.raises(InputError, match="keeps for itself"):
        await store.aput(("ana",), "k", {"content": "x", "langgraph:key": "other"})
    with pytest.raises(InputError, match="limit is"):
        await store.aput(("ana",), "k", {"content": "x", "blob": "y" * 5000})
    with pytest.raises(InputError, match="operator"):
        await store.asearch(("ana",), filter={"n": {"$regex": "a"}})
    assert await embedded.list("ana") == []  # nothing half-written


async def test_abatch_runs_every_op_in_order(ms: Backend, user: str) -> None:
    store = MemstackStore(ms)
    results = await store.abatch(
        [
            PutOp((user, "b"), "k", {"content": "First"}),
            GetOp((user, "b"), "k"),
            PutOp((user, "b"), "k", {"content": "Second"}),
            SearchOp((user,), query="Second"),
            ListNamespacesOp((MatchCondition("prefix", (user,)),)),
            PutOp((user, "b"), "k", None),
            GetOp((user, "b"), "k"),
        ]
    )
    assert results[0] is None and results[1].value == {"content": "First"}  # type: ignore[union-attr]
    assert [item.value["content"] for item in results[3]] == ["Second"]  # type: ignore[union-attr]
    assert results[4] == [(user, "b")] and results[6] is None


async def test_blocking_methods_work_from_another_thread_but_not_the_loop(embedded: AsyncMemstack) -> None:
    store = MemstackStore(embedded)
    await asyncio.to_thread(store.put, ("ana", "t"), "k", {"content": "Written from a thread"})
    item = await asyncio.to_thread(store.get, ("ana", "t"), "k")
    assert item is not None and item.value["content"] == "Written from a thread"
    with pytest.raises(RuntimeError, match="block the event loop"):
        store.get(("ana", "t"), "k")


class Turn(TypedDict):
    user_id: str
    message: str
    recalled: Annotated[list[str], operator.add]


async def remember(state: Turn, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    count = len(await runtime.store.asearch((state["user_id"], "memories")))
    await runtime.store.aput((state["user_id"], "memories"), f"m{count}", {"content": state["message"]})
    return {}


async def recall(state: Turn, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    hits = await runtime.store.asearch((state["user_id"], "memories"), query=state["message"], limit=1)
    return {"recalled": [hit.value["content"] for hit in hits]}


def sync_remember(state: Turn, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    count = len(runtime.store.search((state["user_id"], "memories")))
    runtime.store.put((state["user_id"], "memories"), f"m{count}", {"content": state["message"]})
    return {}


def sync_recall(state: Turn, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    hits = runtime.store.search((state["user_id"], "memories"), query=state["message"], limit=1)
    return {"recalled": [hit.value["content"] for hit in hits]}


def graph(store: MemstackStore, *, blocking: bool = False) -> Any:
    builder = StateGraph(Turn)
    builder.add_node("remember", sync_remember if blocking else remember)
    builder.add_node("recall", sync_recall if blocking else recall)
    builder.add_edge(START, "recall")  # what is remembered from earlier runs, then this message is kept
    builder.add_edge("recall", "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store)


async def test_a_compiled_graph_remembers_across_runs_in_memstack(ms: Backend, user: str) -> None:
    app = graph(MemstackStore(ms))
    first = await app.ainvoke({"user_id": user, "message": "My sister lives in Lisbon", "recalled": []})
    assert first["recalled"] == []
    out = await app.ainvoke({"user_id": user, "message": "Where does my sister live?", "recalled": []})
    assert out["recalled"] == ["My sister lives in Lisbon"]
    assert sorted(m.content for m in await ms.list(user)) == ["My sister lives in Lisbon", "Where does my sister live?"]


async def test_a_graph_run_with_invoke_in_a_thread_uses_the_blocking_store(embedded: AsyncMemstack) -> None:
    store = MemstackStore(embedded)
    await store.aput(("dee", "memories"), "m0", {"content": "Dee is training for a marathon"})
    app = graph(store, blocking=True)
    out = await asyncio.to_thread(app.invoke, {"user_id": "dee", "message": "marathon training", "recalled": []})
    assert out["recalled"] == ["Dee is training for a marathon"]
    assert len(await embedded.list("dee")) == 2


async def test_the_memory_tools_run_in_langgraphs_tool_node(ms: Backend, user: str) -> None:
    """A model's tool calls, as LangGraph's prebuilt ``ToolNode`` runs them for an agent: save, recall, forget by
    id, and a bad id answered to the model as an error it can fix."""
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.graph import MessagesState
    from langgraph.prebuilt import ToolNode

    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools(ms, user)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    agent = builder.compile()

    async def call(name: str, args: dict[str, Any]) -> str:
        asked = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
        (_, answer) = (await agent.ainvoke({"messages": [asked]}))["messages"]
        assert isinstance(answer, ToolMessage) and answer.tool_call_id == f"call-{name}"
        return str(answer.content)

    saved = await call("save_memory", {"content": "User keeps bees on the roof", "category": "fact"})
    assert saved.startswith("saved [mem_") and "User keeps bees on the roof" in saved
    memory_id = saved.split("[", 1)[1].split("]", 1)[0]
    assert memory_id in await call("recall_memory", {"query": "bees on the roof"})
    assert "error" not in await call("forget_memory", {"memory_id": memory_id})
    assert [m.content for m in await ms.list(user)] == []  # forgotten: restorable, no longer active
    assert (await call("forget_memory", {"memory_id": "mem_nope"})).startswith("error:")
