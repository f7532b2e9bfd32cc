# mypy: allow-untyped-decorators
"""Web Push for the play page: a seat's browser subscription, registered with the seat's credential
(docs/notifications.md, Web Push).

- ``GET /v1/push/key``: the gateway's VAPID public key, the page's ``applicationServerKey`` (404 without
  ``GATEWAY_VAPID_KEY``);
- ``PUT /v1/matches/{match_id}/push``: the seat's subscription (``Authorization: Bearer <seat credential>``,
  the body what ``PushSubscription.toJSON()`` answers); its turn while away, reminders and the match's end
  are pushed to it from then on; a new one replaces it;
- ``DELETE /v1/matches/{match_id}/push``: no more pushes to the seat.
"""
from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView
from marshmallow import Schema, fields

from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, operation
from api_gateway.http.problems import Problem, SealedForbidden, TableRefused
from api_gateway.http.schemas import StrictSchema
from api_gateway.http.tables_routes import _bearer, tables
from api_gateway.notify.notifier import Notifier
from api_gateway.notify.routes import NOTIFIER
from api_gateway.notify.webpush import Subscription, SubscriptionError

Json = dict[str, Any]
#: The problems of a call on a seat's match by its credential (as the tables' routes document them).
_MATCH = ("invalid-credential", "wrong-table", "sealed-forbidden", "unknown-match", "match-expired",
          "sealed-mode-disabled", "store-unavailable")

push_blp = Blueprint("push", __name__, url_prefix="/v1",
                     description="Web Push: a seat's browser subscription for \"your turn\" and the match's end "
                                 "while its tab is closed (docs/notifications.md).")


class PushKeysSchema(StrictSchema):
    p256dh = fields.String(required=True, metadata={"description": "the browser's P-256 public key (base64url, "
                                                                   "an uncompressed point)"})
    auth = fields.String(required=True, metadata={"description": "the browser's authentication secret (base64url, "
                                                                 "16 bytes)"})


class PushSubscriptionSchema(StrictSchema):
    endpoint = fields.String(required=True, metadata={"description": "the push service's URL for this browser "
                                                                     "(https)"})
    expirationTime = fields.Float(allow_none=True, metadata={  # noqa: N815 - the browser's name for it
        "description": "as the browser gives it (ignored: a push service answering 404 or 410 ends it)"})
    keys = fields.Nested(PushKeysSchema, required=True)


class PushedSchema(Schema):
    match_id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "the seat the credential holds"})
    subscribed = fields.Boolean(required=True, metadata={"description": "true: this seat's browser is pushed "
                                                                        "its turn and the match's end"})


class PushKeySchema(Schema):
    key = fields.String(required=True, metadata={"description": "the gateway's VAPID public key (base64url of the "
                                                                "uncompressed P-256 point): the page's "
                                                                "applicationServerKey"})


def _notifier() -> Notifier:
    """The notifier, when this gateway pushes (404 without ``GATEWAY_VAPID_KEY``)."""
    notifier: Notifier | None = current_app.extensions.get(NOTIFIER)
    if notifier is None or notifier.vapid is None:
        raise Problem(404, "Not Found", "this gateway sends no Web Push (no GATEWAY_VAPID_KEY)")
    return notifier


def _seat(match_id: str) -> int:
    """The seat the request's credential holds at the match (the host key holds none: 403)."""
    seat = tables().context(match_id, _bearer()).seat
    if seat is None:
        raise SealedForbidden("the host key holds no seat: register a seat's browser with its credential",
                              "Authorization")
    return seat


@push_blp.route("/push/key")
class PushKey(MethodView):
    @push_blp.response(200, PushKeySchema)
    @operation(push_blp, "getPushKey", "not-found")
    def get(self) -> Json:
        """The gateway's VAPID public key, for the page's `pushManager.subscribe` (404: no Web Push here)."""
        notifier = _notifier()
        assert notifier.vapid is not None
        return {"key": notifier.vapid.public_key}


@push_blp.route("/matches/<string:match_id>/push")
class Push(MethodView):
    @push_blp.arguments(PushSubscriptionSchema(), examples={"browser": {
        "summary": "what PushSubscription.toJSON() answers",
        "value": {"endpoint": "https://push.example.net/wpush/v2/gAAAAABh", "expirationTime": None,
                  "keys": {"p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
                           "auth": "tBHItJI5svbpez7KI4CCXg"}}}})
    @push_blp.response(200, PushedSchema)
    @operation(push_blp, "createPushSubscription", *BODY, "malformed", *_MATCH, "not-found", credential=True)
    def put(self, body: Json, match_id: str) -> Json:
        """Push this seat's turn (while away), reminders and the match's end to its browser (seat credential).

        The body is the browser's push subscription (`PushSubscription.toJSON()`); it replaces the seat's
        earlier one. 400 malformed names the member that is not a valid subscription (`endpoint`: https, a public
        address; `keys.p256dh`: a P-256 point; `keys.auth`: 16 bytes); 404 when this gateway sends no Web Push."""
        notifier = _notifier()
        seat = _seat(match_id)
        try:
            subscription = Subscription.parse(body, notifier.reach)
        except SubscriptionError as exc:
            raise TableRefused("malformed", str(exc), exc.field) from None
        notifier.outbox.subscribe(match_id, seat, subscription.dump(), notifier.now())
        return {"match_id": match_id, "seat": seat, "subscribed": True}

    @push_blp.response(200, PushedSchema)
    @operation(push_blp, "leavePushSubscription", *_MATCH, "not-found", credential=True)
    def delete(self, match_id: str) -> Json:
        """Push nothing more to this seat's browser (seat credential)."""
        notifier = _notifier()
        seat = _seat(match_id)
        notifier.outbox.forget(match_id, seat)
        return {"match_id": match_id, "seat": seat, "subscribed": False}

