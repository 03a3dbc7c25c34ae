from pathlib import Path

import pytest

from memstack.config import Config, TierLimits
from memstack.errors import ConfigError, InputError


def test_defaults_are_embedded_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MEMSTACK_HOME", "MEMSTACK_DATABASE_URL", "MEMSTACK_TIER_LIMITS"):
        monkeypatch.delenv(var, raising=False)
    cfg = Config.resolve()
    assert cfg.backend == "sqlite"
    assert cfg.sqlite_path == Path(".memstack/memstack.db")
    assert cfg.tiers.limit_for("free") == 50 and cfg.tiers.limit_for("premium") is None


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
