"""The gateway's JSON provider: orjson's speed, the json module's output and reach."""
from __future__ import annotations

import datetime
import decimal
import json

from flask import Flask

from api_gateway.http.json_provider import FastJSONProvider


def _app(debug: bool = False) -> Flask:
    app = Flask("t")
    app.json = FastJSONProvider(app)
    app.debug = debug
    return app


def test_answers_are_the_json_module_output_in_insertion_order() -> None:
    app = _app()
    payload = {"z": 1, "a": [1, 2, {"b": None, "c": True}], "s": "ü ✓ \"q\"", 3: "int key", "f": 0.5}
    with app.app_context():
        response = app.json.response(payload)
    assert response.mimetype == "application/json"
    assert response.get_data().endswith(b"\n")
    assert list(json.loads(response.get_data())) == ["z", "a", "s", "3", "f"]
    assert json.loads(response.get_data()) == json.loads(json.dumps(payload))


def test_what_orjson_refuses_falls_back_to_flask() -> None:
    app = _app()
    when = datetime.datetime(2026, 12, 1, 3, 0, tzinfo=datetime.UTC)
    payload = {"big": 2**70, "price": decimal.Decimal("1.50"), "when": when}
    with app.app_context():
        body = json.loads(app.json.response(payload).get_data())
        assert body == {"big": 2**70, "price": "1.50", "when": "Tue, 01 Dec 2026 03:00:00 GMT"}
        assert json.loads(app.json.dumps(payload)) == body
        assert app.json.dumps({"a": 1}, indent=2) == '{\n  "a": 1\n}'


def test_debug_mode_pretty_prints_as_flask_does() -> None:
    app = _app(debug=True)
    with app.app_context():
        assert app.json.response({"a": 1}).get_data() == b'{\n  "a": 1\n}\n'
