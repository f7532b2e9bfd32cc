# mypy: allow-untyped-decorators
"""Web Push for the play page: a seat's browser subscription, registered with the seat's credential
(docs/notifications.md, Web Push).

- ``GET /v1/push/key``: the gateway's VAPID public key, the page's ``applicationServerKey`` (null without
  ``GATEWAY_VAPID_KEY``: a page asks before offering anything, and an answer that is no error logs none);
- ``PUT /v1/matches/{match_id}/push``: the seat's subscription (``Authorization: Bearer <seat credential>``,
  the body what ``PushSubscription.toJSON()`` answers); its turn while away, reminders and the match's end
  are pushed to it from then on; a new one replaces it;
- ``DELETE /v1/matches/{match_id}/push``: no more pushes to the seat.

And the notification feed of a player a host app vouches for (issue 38 item 5): ``GET
/v1/inbox/notifications?after=<cursor>&limit=`` with ``Authorization: Bearer <player assertion>`` (as ``GET
/v1/inbox``), what the notifier told of their seats (`outbox.Outbox.feed`), for an app that was closed.
"""
from __future__ import annotations

from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api_gateway.archive.players import PlayerIdError
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, operation
from api_gateway.http.problems import Problem, SealedForbidden, SealedModeDisabled, TableRefused
from api_gateway.http.schemas import StrictSchema
from api_gateway.http.tables_routes import _bearer, tables
from api_gateway.notify.notifier import Notifier
from api_gateway.notify.outbox import FEED_DAYS, FEED_KEPT, FeedCursorError
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
    key = fields.String(required=True, allow_none=True,
                        metadata={"description": "the gateway's VAPID public key (base64url of the uncompressed P-256 "
                                                 "point): the page's applicationServerKey; null: this gateway sends "
                                                 "no Web Push (no GATEWAY_VAPID_KEY)"})


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
    @operation(push_blp, "getPushKey")
    def get(self) -> Json:
        """The gateway's VAPID public key, for the page's `pushManager.subscribe` (null: no Web Push here)."""
        notifier: Notifier | None = current_app.extensions.get(NOTIFIER)
        return {"key": notifier.vapid.public_key if notifier is not None and notifier.vapid is not None else None}


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



# ---------------------------------------------------------------- the notification feed


class FeedArgsSchema(StrictSchema):
    after = fields.String(validate=validate.Length(1, 40), metadata={
        "description": "the cursor the last page answered (`next`): the items after it; none: from the oldest kept"})
    limit = fields.Integer(validate=validate.Range(1, FEED_KEPT), load_default=100,
                          metadata={"description": f"items at most (1 to {FEED_KEPT}; 100)"})


class FeedItemSchema(Schema):
    id = fields.String(required=True, metadata={"description": "this item's cursor"})
    type = fields.String(required=True, metadata={
        "description": "your-turn, match-over, table-dealt, invite-taken, resigned, aborted, gone (as the webhooks: "
                       "docs/notifications.md)"})
    created = fields.Float(required=True, metadata={"description": "when it was told (unix seconds)"})
    table_id = fields.String(required=True)
    match_id = fields.String(required=True, allow_none=True)
    seat = fields.Integer(required=True, metadata={"description": "your seat at that table"})
    data = fields.Dict(required=True, metadata={"description": "what the webhook's data says besides the ids: `seq`, "
                                                               "`result`, `by`, `taken`"})


class FeedSchema(Schema):
    player_id = fields.String(required=True, metadata={"description": "the player the assertion proves"})
    items = fields.List(fields.Nested(FeedItemSchema), required=True, metadata={
        "description": f"oldest first; a player's newest {FEED_KEPT} of the last {FEED_DAYS} days are kept"})
    next = fields.String(required=True, allow_none=True, metadata={
        "description": "the cursor to ask after next time (the last item's; with no item, the one sent)"})
    more = fields.Boolean(required=True, metadata={"description": "true: more items were there than `limit`"})


def _player() -> str:
    """The player a request's assertion proves (401 player-required without one, 400 invalid-player)."""
    scheme, _, value = request.headers.get("Authorization", "").strip().partition(" ")
    if not scheme:
        raise TableRefused("player-required", "send your player assertion as Authorization: Bearer <assertion>",
                           "Authorization")
    if scheme.lower() != "bearer" or not value.strip():
        raise PlayerIdError("Authorization: send the player assertion as Bearer <assertion>")
    archive = tables().archive
    if archive is None:
        raise PlayerIdError("player: this service keeps no players (no archive)")
    player: str = archive.player_for(value.strip())  # 400 invalid-player: forged, expired, another app's
    return player


@push_blp.after_request
def no_store(response: Response) -> Response:
    """A feed is one person's (and a subscription answer the seat's): never kept by a cache."""
    response.headers["Cache-Control"] = "no-store"
    return response


@push_blp.route("/inbox/notifications")
class Notifications(MethodView):
    @push_blp.arguments(FeedArgsSchema(), location="query", as_kwargs=True)
    @push_blp.response(200, FeedSchema)
    @operation(push_blp, "listNotifications", "validation-error", "malformed", "player-required", "invalid-player",
               "sealed-mode-disabled", "store-unavailable", credential=True)
    def get(self, limit: int, after: str | None = None) -> Json:
        """What you were told while away (Bearer: your player assertion), oldest first, after a cursor.

        Every notification of your seats' matches (your turn, the end, the deal, a seat taken, a resign,
        an abort, a victory claimed) whether or not your host app has a webhook endpoint, kept
        14 days, the newest 500. Ask with the last answer's `next` for what came since; 400 malformed
        names `after` when it is no cursor of this feed."""
        player = _player()
        notifier: Notifier | None = current_app.extensions.get(NOTIFIER)
        if notifier is None:
            raise SealedModeDisabled("this gateway hosts no tables (no live store): it tells nobody anything")
        try:
            found = notifier.outbox.feed(player, after, limit + 1, notifier.now())
        except FeedCursorError as exc:
            raise TableRefused("malformed", str(exc), "after") from None
        items = [{"id": cursor, **item} for cursor, item in found[:limit]]
        return {"player_id": player, "items": items, "next": items[-1]["id"] if items else after,
                "more": len(found) > limit}
