"""Flask's JSON answers encoded with orjson.

A sealed apply answers about 1.2 KB of JSON: the json module takes ~10 us to
encode it, orjson under 1 us. The output is the same JSON (compact, keys in
insertion order, non-string keys as strings). Anything orjson refuses (an
integer beyond 64 bits, a type only Flask's default handler knows) falls back
to Flask's own provider, so no answer can fail for being encoded this way.
Reading JSON (`loads`: Flask's `request.get_json`) goes through
`api_gateway.http.bodies.parse`, as the request schemas' bodies do.
"""
from __future__ import annotations

from typing import Any

import orjson
from flask.json.provider import DefaultJSONProvider
from werkzeug.sansio.response import Response

from api_gateway.http import bodies

# Dates go to Flask's handler (HTTP dates, as Flask writes them), not orjson's RFC 3339.
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


class FastJSONProvider(DefaultJSONProvider):
    """`DefaultJSONProvider` (sort_keys off) with orjson for `dumps` and `jsonify` answers."""

    sort_keys = False

    def _encode(self, obj: Any) -> bytes | None:
        try:
            return orjson.dumps(obj, default=self.default, option=_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):
            return None

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if not kwargs:
            encoded = self._encode(obj)
            if encoded is not None:
                return encoded.decode()
        return super().dumps(obj, **kwargs)

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return bodies.parse(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        if self._app.debug:  # pretty-printed, as Flask does in debug mode
            return super().response(*args, **kwargs)
        obj = self._prepare_response_obj(args, kwargs)
        encoded = self._encode(obj)
        if encoded is None:
            return super().response(obj)
        response_class: Any = self._app.response_class  # flask.Response (typed as werkzeug's base)
        answer: Response = response_class(encoded + b"\n", mimetype=self.mimetype)
        return answer
