"""The credential scrubber: known key shapes, NAME=value pairs, configured values, logs."""

from __future__ import annotations

import io
import logging

import pytest

from clawseed_edge.agent.redact import (
    REDACTED,
    RedactingFilter,
    Scrubber,
    install_log_redaction,
    scrub,
)

ANTHROPIC = "sk-ant-api03-" + "A1b2C3d4" * 8
OPENAI = "sk-proj-" + "Z9y8X7w6" * 5
GITHUB = "ghp_" + "a" * 36
SLACK = "xoxb-1234567890-abcdefghij"
AWS = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize("secret", [ANTHROPIC, OPENAI, GITHUB, SLACK, AWS])
def test_known_key_prefixes_keep_four_characters(secret: str) -> None:
    out = scrub(f"the key is {secret}.")
    assert secret not in out
    assert out == f"the key is {secret[:4]}{REDACTED}."


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("ANTHROPIC_API_KEY=verysecretvalue123", "ANTHROPIC_API_KEY=very"),
        ("export GITHUB_TOKEN='abcdefghijklmnop'", "export GITHUB_TOKEN='abcd"),
        ('{"api_key": "localkey-0123456789"}', '{"api_key": "loca'),
        ("client_secret: s3cr3t-s3cr3t-s3cr3t", "client_secret: s3cr"),
        ("DB_PASSWORD=hunter2hunter2hunter2", "DB_PASSWORD=hunt"),
        ("https://x.example/?access_token=abcdef0123456789&page=2", "access_token=abcd"),
        ('api_key = "toml-style-value-0001"', 'api_key = "toml'),
    ],
)
def test_name_value_pairs_hide_the_value(text: str, kept: str) -> None:
    out = scrub(text)
    assert out.startswith(kept) or kept in out
    assert REDACTED in out
    value = text.split("=", 1)[-1] if "=" in text else text.split(":", 1)[-1]
    assert value.strip(" '\"}").split("&")[0] not in out


def test_bearer_tokens_are_hidden() -> None:
    out = scrub("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig")
    assert "payload" not in out and f"Bearer eyJh{REDACTED}" in out


def test_ordinary_text_is_untouched() -> None:
    text = (
        "max_tokens: 4096; task-force sk-learn; the key=value syntax; GPIO23 is the fan; "
        "monkey=3; token budget"
    )
    assert scrub(text) == text


def test_configured_values_are_hidden_anywhere_even_with_odd_characters() -> None:
    value = "p@ss,word&with#odd chars"
    scrubber = Scrubber([value, "short", ""])
    out = scrubber.scrub(f"x{value}y and MY_PASSWORD={value}")
    assert value not in out and "odd chars" not in out and "with#" not in out
    assert scrubber.values == (value,)  # too-short and blank values are ignored
    assert scrubber.scrub("short") == "short"
    assert "p@ss" not in repr(scrubber)


def test_short_values_keep_fewer_characters() -> None:
    assert scrub("PASSWORD=abc") == f"PASSWORD={REDACTED}"


def test_private_key_blocks_are_hidden() -> None:
    pem = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    out = scrub(f"id_rsa:\n{pem}\n")
    assert "b3BlbnNz" not in out and REDACTED in out


def test_a_long_hostile_input_is_scrubbed_whole() -> None:
    # Bounded repetitions: a megabyte without separators is scanned once, not backtracked.
    text = "a" * 1_000_000 + " " + ANTHROPIC
    out = Scrubber([ANTHROPIC]).scrub(text)
    assert ANTHROPIC not in out and len(out) < len(text)


def test_the_log_filter_scrubs_message_args_and_traceback() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test_redact_logger")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        install_log_redaction(Scrubber(["configured-secret-1"]), logger)
        install_log_redaction(Scrubber(["configured-secret-2"]), logger)  # merged, not doubled
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
        logger.warning("calling with %s and %s", "configured-secret-1", ANTHROPIC)
        try:
            raise RuntimeError("bad key configured-secret-2")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "configured-secret" not in text and ANTHROPIC not in text
    assert "conf" + REDACTED in text and "RuntimeError" in text


def test_our_loggers_are_scrubbed_whatever_handler_they_reach() -> None:
    ours = logging.getLogger("clawseed_edge.test_redact_late")
    stream = io.StringIO()
    late = logging.StreamHandler(stream)  # no filter of its own
    ours.addHandler(late)
    ours.propagate = False
    try:
        install_log_redaction(Scrubber(["configured-secret-3"]), logging.getLogger("unused"))
        ours.warning("value %s", "configured-secret-3")
    finally:
        ours.removeHandler(late)
        ours.filters.clear()
    assert "configured-secret-3" not in stream.getvalue() and REDACTED in stream.getvalue()


def test_scrub_data_walks_json_like_arguments() -> None:
    scrubber = Scrubber(["configured-secret-4"])
    args = {"command": "echo configured-secret-4", "env": [{"API_TOKEN": ANTHROPIC}], "n": 3}
    out = scrubber.scrub_data(args)
    assert out["n"] == 3 and "configured-secret-4" not in str(out) and ANTHROPIC not in str(out)
    assert args["command"] == "echo configured-secret-4"  # a copy; the input is unchanged
    deep: list[object] = ["configured-secret-4"]
    for _ in range(100):
        deep = [deep]
    assert "configured-secret-4" not in str(scrubber.scrub_data(deep))


def test_url_passwords_are_hidden_in_text_and_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    from clawseed_edge.agent.redact import RedactingFilter, Scrubber, scrub

    assert scrub("GET http://user:hunter2pw@10.0.0.5:8080/x") == (
        "GET http://user:[redacted]@10.0.0.5:8080/x"
    )
    assert "pass" not in scrub("mqtts://bob:p@ss@broker.local:8883")
    assert scrub("https://example.com:8443/a@b") == "https://example.com:8443/a@b"
    log = logging.getLogger("clawseed_edge.test_url_redaction")
    redacting = RedactingFilter(Scrubber())
    log.addFilter(redacting)
    try:
        with caplog.at_level(logging.WARNING, logger=log.name):
            log.warning("cannot reach %s", "http://admin:s3cretpass@127.0.0.1:11434")
    finally:
        log.removeFilter(redacting)
    assert "s3cretpass" not in caplog.text and "admin:[redacted]@" in caplog.text
