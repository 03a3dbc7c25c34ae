from pathlib import Path

import pytest

from memstack.config import SEED_TIER_LIMITS, Config, TierLimits
from memstack.errors import ConfigError, InputError


def test_defaults_are_embedded_sqlite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("MEMSTACK_HOME", "MEMSTACK_DATABASE_URL", "MEMSTACK_TIER_LIMITS", "MEMSTACK_DEFAULT_TIER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    cfg = Config.resolve()
    assert cfg.backend == "sqlite"
    assert cfg.sqlite_path == tmp_path / "xdg" / "memstack" / "memstack.db"  # the per-user store (tests/cli)


def test_a_self_hosted_install_has_no_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """No tiers unless configured (issue 23): nothing is refused for a limit, and a tier name a client sends (it
    is also shown to the model) selects nothing rather than failing."""
    for var in ("MEMSTACK_TIER_LIMITS", "MEMSTACK_DEFAULT_TIER"):
        monkeypatch.delenv(var, raising=False)
    tiers = Config.resolve().tiers
    assert not tiers.configured and tiers.limits == {}
    assert tiers.limit_for(None) is None and tiers.limit_for("free") is None and tiers.limit_for("gold") is None
    assert tiers.name_for(None) == "unlimited" and tiers.name_for("Pro") == "pro"


def test_the_seed_tiers_are_an_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_TIER_LIMITS", "free=50,lite=100,pro=500,premium=unlimited")
    tiers = Config.resolve().tiers
    assert tiers == TierLimits.seed() and dict(tiers.limits) == dict(SEED_TIER_LIMITS)
    assert tiers.limit_for(None) == 50 and tiers.limit_for("premium") is None and tiers.name_for(None) == "free"
    monkeypatch.delenv("MEMSTACK_TIER_LIMITS")
    monkeypatch.setenv("MEMSTACK_DEFAULT_TIER", "pro")  # alone: the seed's tiers, this one the default
    assert Config.resolve().tiers.limit_for(None) == 500


def test_arguments_beat_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMSTACK_HOME", str(tmp_path / "env"))
    monkeypatch.setenv("MEMSTACK_DATABASE_URL", "postgresql://u@h/db")
    assert Config.resolve().backend == "postgres"
    cfg = Config.resolve(home=tmp_path / "arg", database_url="sqlite:///x.db")
    assert cfg.home == tmp_path / "arg" and cfg.sqlite_path == Path("x.db")


def test_tier_limits_parse_and_errors() -> None:
    tiers = TierLimits.parse("free=10, team=unlimited", default_tier="free")
    assert tiers.limit_for(None) == 10 and tiers.limit_for("TEAM") is None
    with pytest.raises(InputError, match="unknown tier"):
        tiers.limit_for("gold")
    with pytest.raises(ConfigError, match="whole number"):
        TierLimits.parse("free=lots")


def test_bad_values_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_BADGE_WAIT_S", "soon")
    with pytest.raises(ConfigError, match="MEMSTACK_BADGE_WAIT_S"):
        Config.resolve()
    monkeypatch.delenv("MEMSTACK_BADGE_WAIT_S")
    with pytest.raises(ConfigError, match="unsupported database URL"):
        _ = Config.resolve(database_url="mysql://x").backend
    with pytest.raises(ConfigError, match="unknown setting"):
        Config.resolve(colour="blue")


#: (variable, a bad value, what must happen to say so). Every error names the variable to change.
BAD_SETTINGS = [
    ("MEMSTACK_TIER_LIMITS", "free=lots", "resolve"),
    ("MEMSTACK_TIER_LIMITS", "gold=3", "resolve"),  # no "free" tier, and no default tier chosen
    ("MEMSTACK_DEFAULT_TIER", "gold", "resolve"),
    ("MEMSTACK_VECTOR_CACHE_MB", "-3", "resolve"),
    ("MEMSTACK_RECALL_CACHE_MESSAGES", "many", "resolve"),
    ("MEMSTACK_BADGE_WAIT_S", "soon", "resolve"),
    ("MEMSTACK_POOL_SIZE", "1.5", "resolve"),
    ("MEMSTACK_SESSION_LEASE_S", "0", "resolve"),
    ("MEMSTACK_DATABASE_POOLER", "yes", "resolve"),
    ("MEMSTACK_DATABASE_URL", "mysql://x", "open"),
    ("MEMSTACK_EMBEDDER", "nope", "open"),
    ("MEMSTACK_EMBEDDER", "hash:many", "open"),
    ("MEMSTACK_CHAT_MODEL", "bogus:x", "chat"),
    ("MEMSTACK_CHAT_MODEL", "openai:gpt-4o-mini", "chat"),  # no OPENAI_API_KEY: that variable is named instead
    ("MEMSTACK_CLASSIFIER_MODEL", "zzz", "chat"),
    ("MEMSTACK_SUMMARIZER_MODEL", "bogus:x", "chat"),
    ("MEMSTACK_CUSTOM_BASE_URL", "notaurl", "chat"),
    ("MEMSTACK_EMBED_WORKERS", "x", "open"),
    ("MEMSTACK_URL", "notaurl", "client"),
]


@pytest.mark.parametrize(("variable", "value", "where"), BAD_SETTINGS, ids=[f"{v}={x}" for v, x, _ in BAD_SETTINGS])
def test_every_config_error_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, value: str, where: str
) -> None:
    from memstack import Memstack
    from memstack.client import MemstackClient

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MEMSTACK_HOME", str(tmp_path))
    monkeypatch.setenv(variable, value)
    if variable == "MEMSTACK_CUSTOM_BASE_URL":
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "custom:some-model")
    if variable != "MEMSTACK_EMBEDDER" and variable != "MEMSTACK_EMBED_WORKERS":
        monkeypatch.setenv("MEMSTACK_EMBEDDER", "hash:64")
    named = "OPENAI_API_KEY" if value.startswith("openai:") else variable
    with pytest.raises(ConfigError) as caught:
        if where == "resolve":
            Config.resolve()
        elif where == "client":
            MemstackClient()
        else:
            with Memstack() as ms:
                if where == "chat":
                    ms.chat("ana", "hello")
    assert named in str(caught.value) and variable in str(caught.value), str(caught.value)
