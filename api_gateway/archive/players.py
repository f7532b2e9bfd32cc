"""Player ids: one the host app vouches for, or a guest id the service makes.

A rating means something only when the same person gets the same id match after
match. The service keeps no accounts; two kinds of id, told apart by prefix:

- ``app:<user>``: the host app's own user id, **vouched for** by the host app with
  a *player assertion* it signs on its server: a JWT whose ``sub`` is the user,
  checked with a key the operator holds (``GATEWAY_PLAYER_KEYS``: HMAC secrets or
  Ed25519 public keys, by ``kid``). The user's client passes it on when it takes a
  seat; `api_gateway.archive.assertions` checks it and answers the player id.
- ``guest:<22 characters>``: 128 random bits the service makes for a seat taken
  without an assertion (`guest_id`). A guest keeps its id as long as its client
  keeps it; it is rated like anyone else.

`user` is 1-64 characters of ``A-Z a-z 0-9 . _ ~ @ + -`` (an email address
fits); anything else is refused, so an id is always safe in a URL path.
"""
from __future__ import annotations

import base64
import re
import secrets

# The assertion's names, where the rest of the gateway has always found them.
from api_gateway.archive.assertions import PlayerIdError, PlayerKeys

__all__ = ["PLAYER_ID", "PREFIX_GUEST", "PlayerIdError", "PlayerKeys", "check_player_id", "guest_id"]

PREFIX_GUEST = "guest:"
PLAYER_ID = re.compile(r"^(?:app:[A-Za-z0-9._~@+-]{1,64}|guest:[A-Za-z0-9_-]{22})\Z")


def check_player_id(player: str) -> str:
    """`player` itself when it is a player id (matched whole: no trailing newline), else PlayerIdError."""
    if not isinstance(player, str) or not PLAYER_ID.match(player):
        raise PlayerIdError(f"not a player id: {str(player)[:80]!r} (app:<user> or guest:<22 characters>)")
    return player


def guest_id() -> str:
    """A new guest id: 128 random bits."""
    return PREFIX_GUEST + base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()
