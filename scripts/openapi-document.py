"""Write the gateway's OpenAPI document, exactly as `GET /openapi.json` serves it, to a file (or stdout).

The input of the generated clients (clients/typescript: `make ts-client`; docs/sdk.md, "Other
languages"): no engine, database or port is needed, the app answers in this process. A running
gateway serves the same document at /openapi.json.

    .venv/bin/python scripts/openapi-document.py clients/typescript/openapi.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from api_gateway.app import create_app
from api_gateway.config import GatewayConfig
from api_gateway.tokens import KeyRing


def document() -> dict[str, object]:
    """The served document: a gateway app with sealed mode on (a throwaway key), asked in-process."""
    app = create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5,
                                   token_keys=KeyRing.generate("openapi")))
    found: dict[str, object] = app.test_client().get("/openapi.json").get_json()
    return found


def main(argv: list[str]) -> int:
    text = json.dumps(document(), indent=2, ensure_ascii=False) + "\n"
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
