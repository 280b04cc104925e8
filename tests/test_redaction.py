"""activities/redaction.py: which values of the worker's environment are credentials, and
that each is replaced wherever it appears in what an outside party answered."""

from __future__ import annotations

from switchback.activities import redaction


def test_credentials_are_redacted_by_name_and_by_endpoint(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-redaction-openai-0123456789")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-redaction-0123456789")
    monkeypatch.setenv("DB_PASSWORD", "pw-redaction-0123456789")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-redaction-0123456789")  # an id, not a secret
    monkeypatch.setenv("SHORT_KEY", "short")  # too short: would match ordinary text
    monkeypatch.setenv("HOSTNAME_LONG", "not-a-secret-0123456789")
    text = ("a sk-redaction-openai-0123456789 b tok-redaction-0123456789 c "
            "pw-redaction-0123456789 d AKIA-redaction-0123456789 e short f "
            "not-a-secret-0123456789")
    assert redaction.redact(text) == (
        "a [redacted OPENAI_API_KEY] b [redacted MY_SERVICE_TOKEN] c [redacted DB_PASSWORD] "
        "d AKIA-redaction-0123456789 e short f not-a-secret-0123456789")
    assert redaction.redact_bytes(text.encode()) == redaction.redact(text).encode()


def test_an_endpoint_key_variable_of_any_name_is_redacted(tmp_path, monkeypatch) -> None:
    (tmp_path / "endpoints.yaml").write_text(
        "endpoints:\n  default:\n    base_url: http://model.invalid/v1\n"
        "    api_key_env: LLM_CRED\n")
    monkeypatch.setenv("SWITCHBACK_ENDPOINTS_FILE", str(tmp_path / "endpoints.yaml"))
    monkeypatch.setenv("LLM_CRED", "cred-redaction-0123456789")
    assert redaction.redact("x cred-redaction-0123456789") == "x [redacted LLM_CRED]"
