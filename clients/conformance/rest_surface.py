"""The REST gateway as a conformance surface (`domino conformance --rest URL`).

Standard library only (urllib), so the command line needs nothing beyond the
engine's own dependencies. Scenarios run in transparent mode: every call sends
the state as JSON and reads the new state back, exactly as a trusted backend
would. Problem answers (RFC 9457) become the rules' exceptions:

- 400 and 422 -> `MalformedError`
- 409 -> `IllegalActionError` (`MisdealError` when the problem type is misdeal)
- anything else, or no answer -> `SurfaceError`
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from engine_service.rules.errors import IllegalActionError, MalformedError, MisdealError

from .surface import State, SurfaceError

MISDEAL_TYPE = "/v1/problems/misdeal"


class RestSurface:
    """Runs every step through a running gateway at `base_url` (e.g. http://127.0.0.1:8080)."""

    name = "rest"

    def __init__(self, base_url: str, timeout: float = 15.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout = timeout
        #: Kingdomino scenarios (FORMAT.md "Kingdomino scenarios") through the same routes.
        self.kingdomino = RestKingdomino(self)

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.base_url + path, data=data, method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as reply:
                answer: dict[str, Any] = json.loads(reply.read().decode("utf-8"))
                return answer
        except urllib.error.HTTPError as err:
            raise self._refusal(path, err) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise SurfaceError(f"REST gateway {self.base_url}{path}: {exc}") from None

    @staticmethod
    def _refusal(path: str, err: urllib.error.HTTPError) -> Exception:
        """The exception a problem answer stands for."""
        try:
            problem = json.loads(err.read().decode("utf-8"))
        except (ValueError, OSError):
            problem = {}
        finally:
            err.close()
        if not isinstance(problem, dict):
            problem = {}
        detail = str(problem.get("detail") or problem.get("title") or err.reason)
        if problem.get("errors"):
            detail = f"{detail}: {json.dumps(problem['errors'], sort_keys=True)}"
        if err.code in (400, 422):
            return MalformedError(detail)
        if err.code == 409:
            if problem.get("type") == MISDEAL_TYPE or detail.startswith("misdeal:"):
                return MisdealError(detail)
            return IllegalActionError(detail)
        return SurfaceError(f"REST gateway {path}: HTTP {err.code}: {detail}")

    def new_match(self, variant: str, players: int, options: dict[str, Any],
                  setup: dict[str, Any] | None, deal: dict[str, Any] | None) -> State:
        body: dict[str, Any] = {"variant": variant, "players": players, "options": options or {}}
        if setup is not None:
            body["setup"] = setup
        if deal is None:
            body["no_deal"] = True
        else:
            body["deal"] = deal
        state: State = self._post("/v1/matches", body)["state"]
        return state

    def start_round(self, state: State, deal: dict[str, Any]) -> State:
        new: State = self._post("/v1/matches/next-round", {"state": state, "deal": deal})["state"]
        return new

    def legal(self, state: State) -> tuple[int, list[str]]:
        answer = self._post("/v1/matches/legal", {"state": state})
        return int(answer["seat"]), list(answer["actions"])

    def apply(self, state: State, action: str, seat: int | None = None) -> State:
        body: dict[str, Any] = {"state": state, "action": action}
        if seat is not None:
            body["seat"] = seat
        new: State = self._post("/v1/matches/apply", body)["state"]
        return new

    def settle(self, state: State, ending: str, hands: list[list[str]],
               last_placer: int | None = None) -> State:
        body: dict[str, Any] = {"state": state, "ending": ending, "hands": hands}
        if last_placer is not None:
            body["last_placer"] = last_placer
        new: State = self._post("/v1/matches/settle", body)["state"]
        return new

    def timeout(self, state: State, seat: int) -> State:
        new: State = self._post("/v1/matches/timeout", {"state": state, "seat": seat})["state"]
        return new

    def close(self) -> None:
        pass


class RestKingdomino:
    """Kingdomino through the gateway's /v1/matches routes (transparent mode): `variant: "kingdomino"`
    on creation, then the state the answers carry; the summary is player 0's view."""

    def __init__(self, rest: RestSurface) -> None:
        self._rest = rest

    def new_game(self, players: int, options: dict[str, Any], deal: dict[str, Any]) -> State:
        state: State = self._rest._post("/v1/matches", {"variant": "kingdomino", "players": players,
                                                        "options": options or {}, "deal": deal})["state"]
        return state

    def legal(self, state: State) -> tuple[int | None, list[str]]:
        answer = self._rest._post("/v1/matches/legal", {"state": state})
        return answer["seat"], list(answer["actions"])

    def apply(self, state: State, action: str) -> State:
        new: State = self._rest._post("/v1/matches/apply", {"state": state, "action": action})["state"]
        return new

    def summary(self, state: State) -> dict[str, Any]:
        view = self._rest._post("/v1/matches/view", {"state": state, "seat": 0})["view"]
        return {key: view[key] for key in ("to_move", "scores", "largest_region", "crowns", "game_over", "winners")}
