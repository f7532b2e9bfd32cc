"""`--public-url`: the address people reach the gateway at, as a flag of `domino serve gateway` (GATEWAY_PUBLIC_URL)
and of `domino serve all`, which hands it to the gateway it starts."""
from __future__ import annotations

import sys

from api_gateway.server import prepare
from clients.serve_all import gateway_argv, parser


def test_the_gateway_flag_becomes_the_setting_its_workers_read() -> None:
    environ: dict[str, str] = {}
    cfg, _ = prepare(["--port", "0", "--metrics-port", "off", "--engine", "h:1", "--public-url", " http://192.168.1.20:8080/ "], environ)
    assert environ["GATEWAY_PUBLIC_URL"] == " http://192.168.1.20:8080/ "
    assert cfg.public_url == "http://192.168.1.20:8080"


def test_without_the_flag_the_environment_decides() -> None:
    environ = {"GATEWAY_PUBLIC_URL": "https://domino.example"}
    cfg, _ = prepare(["--port", "0", "--metrics-port", "off", "--engine", "h:1"], environ)
    assert cfg.public_url == "https://domino.example"


def test_serve_all_hands_the_public_url_to_the_gateway() -> None:
    args = parser().parse_args(["--host", "0.0.0.0", "--port", "0", "--public-url", "http://192.168.1.20:8080"])
    argv = gateway_argv(args, ["127.0.0.1:50051"])
    assert argv[:3] == [sys.executable, "-m", "api_gateway"]
    assert argv[argv.index("--public-url") + 1] == "http://192.168.1.20:8080"
    assert argv[argv.index("--host") + 1] == "0.0.0.0"


def test_serve_all_without_the_flag_passes_none() -> None:
    """GATEWAY_PUBLIC_URL, if set, reaches the gateway through the environment, unchanged."""
    assert "--public-url" not in gateway_argv(parser().parse_args([]), ["127.0.0.1:50051"])
