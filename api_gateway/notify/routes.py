# mypy: allow-untyped-decorators
"""The operator's webhook routes: the dead letters, read and replayed.

``GET /v1/operator/webhooks/dead`` lists the deliveries that failed for the last time (oldest first);
``POST /v1/operator/webhooks/dead/{id}/replay`` makes one due again (its attempts counted from nothing,
its ``webhook-id`` the same). Both take the operator's token (``GATEWAY_OPERATOR_TOKEN``) as
``Authorization: Bearer``; a gateway without that setting, or without webhooks, answers 404 as for any
path it does not have. (The document names no security scheme for them: the `bearer` scheme is an online
table's credential, and on a gateway without the setting a request without a token is 404, not 401.)
"""
from __future__ import annotations

import hmac
import time
from typing import Any

from flask import current_app, request
from flask.views import MethodView
from marshmallow import Schema, fields

from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import operation
from api_gateway.http.problems import Problem
from api_gateway.notify.notifier import Notifier

Json = dict[str, Any]
#: Where the app keeps its notifier (`app.extensions`), absent without webhooks.
NOTIFIER = "domino_notifier"
#: Dead letters listed at most.
LISTED = 500

operator_blp = Blueprint("operator", __name__, url_prefix="/v1/operator",
                         description="The operator's routes (GATEWAY_OPERATOR_TOKEN): webhook deliveries that "
                                     "failed for the last time, read and replayed (docs/notifications.md).")


class DeadLetterSchema(Schema):
    id = fields.String(required=True, metadata={"description": "the delivery's `webhook-id` (kept on replay)"})
    app = fields.String(required=True, metadata={"description": "the host app (its key id) it is for"})
    attempts = fields.Integer(required=True, metadata={"description": "attempts made"})
    created = fields.Float(required=True, metadata={"description": "when it was queued (unix seconds)"})
    error = fields.String(required=True, metadata={"description": "why the last attempt failed"})
    body = fields.String(required=True, metadata={"description": "the payload as sent (JSON text)"})


class DeadLettersSchema(Schema):
    items = fields.List(fields.Nested(DeadLetterSchema), required=True,
                        metadata={"description": f"the dead letters, oldest first (at most {LISTED})"})


class ReplayedSchema(Schema):
    id = fields.String(required=True)
    replayed = fields.Boolean(required=True, metadata={"description": "due again now"})


def _notifier() -> Notifier:
    """The notifier, once the caller showed the operator's token (404 without the setting or webhooks)."""
    token = current_app.config["GATEWAY_CONFIG"].operator_token
    notifier: Notifier | None = current_app.extensions.get(NOTIFIER)
    if not token or notifier is None:
        raise Problem(404, "Not Found", "no such path")
    sent = request.headers.get("Authorization", "")
    scheme, _, value = sent.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
        problem = Problem.of("operator-only", "send Authorization: Bearer <GATEWAY_OPERATOR_TOKEN>",
                             field="Authorization")
        problem.headers["WWW-Authenticate"] = "Bearer"
        raise problem
    return notifier


@operator_blp.route("/webhooks/dead")
class DeadLetters(MethodView):
    @operator_blp.response(200, DeadLettersSchema)
    @operation(operator_blp, "listDeadWebhooks", "operator-only", "not-found", "store-unavailable")
    def get(self) -> Json:
        """The webhook deliveries that failed for the last time (the operator's token)."""
        return {"items": [d.summary() for d in _notifier().outbox.dead(LISTED)]}


@operator_blp.route("/webhooks/dead/<string:delivery_id>/replay")
class Replay(MethodView):
    BODYLESS = True

    @operator_blp.response(200, ReplayedSchema)
    @operation(operator_blp, "replayDeadWebhook", "operator-only", "not-found", "store-unavailable")
    def post(self, delivery_id: str) -> Json:
        """A dead letter due again now, with the same `webhook-id` (the operator's token)."""
        notifier = _notifier()
        if len(delivery_id) > 100 or not notifier.outbox.replay(delivery_id, time.time()):
            raise Problem(404, "Not Found", f"no dead letter {delivery_id[:100]!r}")
        notifier.sender.wake()
        return {"id": delivery_id, "replayed": True}
