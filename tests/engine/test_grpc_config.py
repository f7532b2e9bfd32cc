"""engine_service.config: flags over environment variables over defaults."""
from __future__ import annotations

import pytest

from engine_service.config import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_MESSAGE_BYTES, Config, load


def test_defaults() -> None:
    cfg = load([], {})
    assert cfg == Config()
    assert cfg.max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES == 256 * 1024
    # Answers (a long match's record) may be larger than requests: as large as the gateway's channel takes.
    assert cfg.max_answer_bytes == DEFAULT_MAX_ANSWER_BYTES == 4 * 1024 * 1024
    assert (cfg.bot_slots, cfg.max_call_seconds) == (1, 30.0)
    assert cfg.reflection is True and cfg.host == "127.0.0.1"


def test_environment_is_read() -> None:
    cfg = load([], {
        "ENGINE_PORT": "7000", "ENGINE_METRICS_PORT": "off", "ENGINE_WORKERS": "8",
        "ENGINE_MAX_MESSAGE_BYTES": "1024", "ENGINE_REFLECTION": "false", "LOG_LEVEL": "debug",
        "ENGINE_GRACE_SECONDS": "1.5", "ENGINE_SHUTDOWN_DELAY_SECONDS": "3",
        "ENGINE_MAX_CONCURRENT_RPCS": "50", "ENGINE_HOST": "0.0.0.0", "ENGINE_LOG_CALLS": "0",
        "ENGINE_MAX_ANSWER_BYTES": "2048", "ENGINE_BOT_SLOTS": "2", "ENGINE_MAX_CALL_SECONDS": "7.5",
    })
    assert cfg == Config(host="0.0.0.0", port=7000, metrics_port=None, workers=8, max_concurrent_rpcs=50,
                         max_message_bytes=1024, max_answer_bytes=2048, bot_slots=2, max_call_seconds=7.5,
                         reflection=False, grace_seconds=1.5, shutdown_delay_seconds=3.0, log_level="DEBUG",
                         log_calls=False)


def test_flags_win_over_environment() -> None:
    cfg = load(["--port", "0", "--metrics-port", "0", "--reflection", "--workers", "2"],
               {"ENGINE_PORT": "7000", "ENGINE_METRICS_PORT": "off", "ENGINE_REFLECTION": "false",
                "ENGINE_WORKERS": "9"})
    assert (cfg.port, cfg.metrics_port, cfg.reflection, cfg.workers) == (0, 0, True, 2)
    assert load(["--no-reflection", "--metrics-port", "off"], {}).reflection is False
    assert load(["--metrics-port", "off"], {"ENGINE_METRICS_PORT": "9000"}).metrics_port is None


@pytest.mark.parametrize("argv,env", [
    (["--port", "70000"], {}),
    (["--workers", "0"], {}),
    (["--log-level", "LOUD"], {}),
    ([], {"ENGINE_PORT": "eighty"}),
    ([], {"ENGINE_REFLECTION": "maybe"}),
    ([], {"ENGINE_GRACE_SECONDS": "-1"}),
    (["--bot-slots", "0"], {}),
    ([], {"ENGINE_MAX_CALL_SECONDS": "0"}),
])
def test_bad_settings_exit_with_usage_error(argv: list[str], env: dict[str, str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        load(argv, env)
    assert exit_info.value.code == 2
    assert "error" in capsys.readouterr().err
