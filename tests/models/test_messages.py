"""Message values, their wire form, and JSON parsing: no network."""

import json

import pytest

from memstack.errors import InputError, MalformedResponse
from memstack.models import ChatResponse, Message, ToolCall, ToolSpec, as_messages, parse_json_object


def test_messages_round_trip_through_the_openai_wire_form() -> None:
    call = ToolCall("call_1", "recall_memory", {"query": "diet"})
    conversation = [
        Message.system("You are a tutor."),
        Message.user("What do I like?", name="maya"),
        Message.assistant(tool_calls=[call]),
        Message.tool("call_1", {"memories": ["likes tea"]}),
        Message.assistant("You like tea."),
    ]
    wire = [m.to_openai() for m in conversation]
    assert wire[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "recall_memory", "arguments": '{"query": "diet"}'},
            }
        ],
    }
    assert wire[3] == {"role": "tool", "content": '{"memories": ["likes tea"]}', "tool_call_id": "call_1"}
    assert wire[1]["name"] == "maya"
    assert [Message.from_openai(w) for w in wire] == conversation


def test_from_openai_joins_text_parts_and_maps_developer_to_system() -> None:
    message = Message.from_openai(
        {
            "role": "developer",
            "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}],
        }
    )
    assert message == Message.system("a\nb")


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"role": "wizard", "content": "x"}, "unknown message role"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"role": "user", "content": None}, "needs content"),
        ({"role": "user", "content": 3}, "must be a string"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}],
            },
            "malformed tool call",
        ),
    ],
)
def test_invalid_messages_raise_input_error(data: dict[str, object], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        Message.from_openai(data)


def test_only_assistants_call_tools_and_conversations_are_not_empty() -> None:
    with pytest.raises(InputError, match="only assistant"):
        Message("user", "x", tool_calls=(ToolCall("c", "f"),))
    with pytest.raises(InputError, match="at least one message"):
        as_messages([])


def test_tool_spec_validates_name_and_schema() -> None:
    spec = ToolSpec("save_memory", "Save a fact", {"type": "object", "properties": {"content": {"type": "string"}}})
    assert spec.to_openai()["function"]["parameters"]["properties"]["content"] == {"type": "string"}
    assert "strict" not in spec.to_openai()["function"]
    assert ToolSpec("f", "d", strict=True).to_openai()["function"]["strict"] is True
    with pytest.raises(InputError, match="tool name"):
        ToolSpec("save memory", "bad name")
    with pytest.raises(InputError, match="type"):
        ToolSpec("f", "d", {"type": "array"})


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"text"'])
def test_tool_call_arguments_must_be_a_json_object(raw: str) -> None:
    with pytest.raises(MalformedResponse) as info:
        ToolCall.parse("c1", "recall_memory", raw)
    assert info.value.body == raw and "recall_memory" in str(info.value)


def test_tool_call_without_arguments_gets_an_empty_object() -> None:
    assert ToolCall.parse("c1", "list_memories", "").arguments == {}
    assert ToolCall.parse("c1", "list_memories", None).arguments == {}


@pytest.mark.parametrize(
    "text",
    [
        '{"memories": []}',
        '  {"memories": []}\n',
        '```json\n{"memories": []}\n```',
        '```\n{"memories": []}\n```',
        'Here you go:\n```json\n{"memories": []}\n```\nAnything else?',
    ],
)
def test_parse_json_object_accepts_plain_and_fenced_objects(text: str) -> None:
    assert parse_json_object(text) == {"memories": []}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"memories": [', "not valid JSON"),
        ("Sure! I saved that.", "not valid JSON"),
        ("[1, 2]", "JSON list"),
        ("```json\n42\n```", "JSON int"),
        ("", "not valid JSON"),
    ],
)
def test_parse_json_object_rejects_everything_else_with_the_raw_text(text: str, fragment: str) -> None:
    with pytest.raises(MalformedResponse, match=fragment) as info:
        parse_json_object(text)
    assert info.value.body == text


def test_response_message_is_what_goes_back_into_the_conversation() -> None:
    call = ToolCall("c1", "recall_memory", {"query": "x"})
    assert ChatResponse("", (call,)).message == Message("assistant", None, tool_calls=(call,))
    assert ChatResponse("hi").message == Message.assistant("hi")
    assert json.loads(call.to_openai()["function"]["arguments"]) == {"query": "x"}
