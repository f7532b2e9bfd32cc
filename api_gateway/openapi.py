"""What the OpenAPI document says beyond the fields: request shape rules and examples.

marshmallow describes each field; the rules that tie fields together (give
`state`, or `token` and `seat_key`; `seed` or `deal`, not both) are written here
once per schema as JSON Schema (`oneOf`, `not`, `required`) and merged into the
schema's component by `ShapeRules`, an apispec plugin. The schemas' own
`validates_schema` methods enforce the same rules on requests; schemathesis
(tests/gateway/test_gateway_schemathesis.py) sends requests valid and invalid by
the document and fails on any disagreement.

The examples Swagger UI prefills are real requests (`openapi_examples.json`, made
by `python -m clients.openapi_examples` with the rules, posted to a real gateway
by tests/gateway/test_gateway_examples.py).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apispec import BasePlugin

Json = dict[str, Any]

#: Operation name -> its named examples ({"summary", "value"}), each a body it accepts as it stands.
EXAMPLES: dict[str, dict[str, Json]] = json.loads((Path(__file__).parent / "openapi_examples.json").read_text())


class ShapeRules(BasePlugin):
    """Merges a marshmallow schema's `OPENAPI_RULES` (JSON Schema keywords) into its component."""

    def schema_helper(self, name: str, definition: Json, **kwargs: Any) -> Json | None:
        schema = kwargs.get("schema")
        cls = schema if isinstance(schema, type) else type(schema)
        rules: Json | None = getattr(cls, "OPENAPI_RULES", None)
        return dict(rules) if rules else None
