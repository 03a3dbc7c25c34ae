"""Provider rows, model strings and endpoint resolution: no network."""

import pytest

from memstack.errors import ConfigError
from memstack.models import (
    PROVIDERS,
    Provider,
    get_model,
    parse_model_spec,
    providers,
    register_provider,
    resolve_endpoint,
)
from memstack.models.providers import NO_KEY

EXPECTED_ROWS = {"openai", "gemini", "ollama", "vllm", "llamacpp", "lmstudio", "groq", "openrouter", "custom"}


def test_every_documented_endpoint_is_a_row() -> None:
    assert set(PROVIDERS) >= EXPECTED_ROWS
    for name in EXPECTED_ROWS - {"custom"}:
        row = PROVIDERS[name]
        assert row.base_url is not None and row.base_url.startswith("http"), name
        assert row.api_key_env, name
    assert {n for n in EXPECTED_ROWS if PROVIDERS[n].key_required} == {"openai", "gemini", "groq", "openrouter"}


@pytest.mark.parametrize(
    ("spec", "provider", "model"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("ollama:llama3.2", "ollama", "llama3.2"),
        ("ollama:qwen2.5:7b", "ollama", "qwen2.5:7b"),
        ("openrouter:meta-llama/llama-3.1-8b-instruct", "openrouter", "meta-llama/llama-3.1-8b-instruct"),
        (" Groq:llama-3.1-8b-instant ", "groq", "llama-3.1-8b-instant"),
    ],
)
def test_model_strings_split_at_the_first_colon(spec: str, provider: str, model: str) -> None:
    parsed = parse_model_spec(spec)
    assert (parsed.provider.name, parsed.model) == (provider, model)
    assert str(parsed) == f"{provider}:{model}"


@pytest.mark.parametrize(("spec", "fragment"), [("gpt-4o", "provider:model"), ("openai:", "provider:model")])
def test_malformed_model_strings_say_how_to_write_them(spec: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        parse_model_spec(spec)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown model provider 'anthropc'") as info:
        parse_model_spec("anthropc:claude")
    assert "ollama" in str(info.value) and "custom:<model>" in str(info.value)


@pytest.mark.parametrize("name", ["openai", "gemini", "groq", "openrouter"])
def test_missing_key_names_the_variable_to_set(name: str) -> None:
    with pytest.raises(ConfigError, match=PROVIDERS[name].api_key_env or "") as info:
        resolve_endpoint(name, environ={})
    assert "api_key=" in str(info.value)


def test_keys_come_from_the_argument_then_the_provider_variable() -> None:
    env = {"OPENAI_API_KEY": "sk-env", "GROQ_API_KEY": " "}
    assert resolve_endpoint("openai", environ=env).api_key == "sk-env"
    assert resolve_endpoint("openai", api_key="sk-arg", environ=env).api_key == "sk-arg"
    with pytest.raises(ConfigError, match="GROQ_API_KEY"):  # blank counts as unset
        resolve_endpoint("groq", environ=env)


def test_local_servers_need_no_key() -> None:
    for name in ("ollama", "vllm", "llamacpp", "lmstudio"):
        endpoint = resolve_endpoint(name, environ={})
        assert endpoint.api_key == NO_KEY
        assert endpoint.base_url.startswith("http://localhost:")
    assert resolve_endpoint("ollama", environ={"OLLAMA_API_KEY": "k"}).api_key == "k"


def test_base_url_comes_from_the_argument_then_env_then_the_row() -> None:
    env = {"MEMSTACK_OLLAMA_BASE_URL": "http://gpu-box:11434/v1/"}
    assert resolve_endpoint("ollama", environ={}).base_url == "http://localhost:11434/v1"
    assert resolve_endpoint("ollama", environ=env).base_url == "http://gpu-box:11434/v1"
    assert resolve_endpoint("ollama", base_url="http://other/v1", environ=env).base_url == "http://other/v1"
    assert resolve_endpoint("gemini", api_key="k", environ={}).base_url.endswith("/v1beta/openai")


def test_custom_endpoints_need_a_base_url() -> None:
    with pytest.raises(ConfigError, match="MEMSTACK_CUSTOM_BASE_URL"):
        resolve_endpoint("custom", environ={})
    endpoint = resolve_endpoint("custom", environ={"MEMSTACK_CUSTOM_BASE_URL": "http://10.0.0.5:9000/v1"})
    assert endpoint.base_url == "http://10.0.0.5:9000/v1" and endpoint.api_key == NO_KEY


def test_headers_merge_row_defaults_with_the_caller_s() -> None:
    endpoint = resolve_endpoint("openrouter", api_key="sk-or-secret", headers={"X-Trace": "1"}, environ={})
    assert dict(endpoint.headers) == {"X-Title": "memstack", "X-Trace": "1"}
    assert "sk-or-secret" not in repr(endpoint)  # keys stay out of logs


def test_register_provider_adds_a_row() -> None:
    saved = dict(providers._REGISTRY)
    register_provider(Provider("corp-gateway", "https://llm.corp.example/v1", "CORP_LLM_KEY", True))
    try:
        assert parse_model_spec("corp-gateway:gpt-4o").provider.name == "corp-gateway"
        with pytest.raises(ConfigError, match="CORP_LLM_KEY"):
            resolve_endpoint("corp-gateway", environ={})
        assert PROVIDERS["corp-gateway"].base_url_env == "MEMSTACK_CORP_GATEWAY_BASE_URL"
    finally:
        providers._REGISTRY.clear()
        providers._REGISTRY.update(saved)
    assert "corp-gateway" not in PROVIDERS
    with pytest.raises(ConfigError, match="contain no ':'"):
        register_provider(Provider("a:b", None, None, False))


def test_get_model_reads_the_environment_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MEMSTACK_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = get_model("openai:gpt-4o-mini")
    assert model.name == "openai:gpt-4o-mini"
    assert model.endpoint.base_url == "http://127.0.0.1:9/v1" and model.endpoint.api_key == "sk-test"
    assert get_model("ollama:llama3.2:3b").name == "ollama:llama3.2:3b"
