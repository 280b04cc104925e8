"""The live stream's two settings: `live_token_seconds` in a job's config (0 or 0.2-60, checked
like every key) and the operator's SWITCHBACK_LIVE_RETAIN (0 or 10-20,000, else 1,000)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from switchback.activities.config_files import live_retain
from switchback.workflows.contract import JobConfig


def test_live_token_seconds_is_checked() -> None:
    assert JobConfig().live_token_seconds == 0  # tokens are opt-in
    assert JobConfig(live_token_seconds=1.5).live_token_seconds == 1.5
    for bad in (0.1, -1, 61, "often"):
        with pytest.raises(ValidationError, match="live_token_seconds"):
            JobConfig(live_token_seconds=bad)
    with pytest.raises(ValidationError, match="live_tokens"):
        JobConfig.model_validate({"live_tokens": True})  # a misspelt key names itself


def test_retention_is_the_operators(monkeypatch) -> None:
    for value, kept in (("", 1000), ("0", 0), ("50", 50), ("5", 1000), ("many", 1000),
                        ("20001", 1000)):
        monkeypatch.setenv("SWITCHBACK_LIVE_RETAIN", value)
        assert live_retain() == kept, value
