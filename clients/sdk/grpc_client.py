"""The gRPC engine from Python: the JSON face's client, and a thin typed wrapper over the typed stubs.

- `EngineClient` (`clients.engine_client`, re-exported): states, views and events as
  the same JSON dicts as over REST; refusals raise the rules' own exceptions.
- `TypedEngine`: `domino.v1.Engine` with protobuf messages in and out, each method
  typed with its request and answer message, on an `EngineClient`'s channel (its
  deadline, its retries of UNAVAILABLE), refusals mapped the same way.

>>> from domino.v1 import engine_pb2 as pb                      # doctest: +SKIP
>>> with EngineClient("127.0.0.1:50051") as client:
...     engine = TypedEngine(client)
...     answer = engine.new_match(pb.NewMatchRequest(variant="kozel", players=4, seed=42))
"""
from __future__ import annotations

from typing import Any

import grpc
from domino.v1 import engine_pb2 as pb

from clients.engine_client import Answer, EngineClient, EngineError, ReplayResult, Standings, _raise

__all__ = ["Answer", "EngineClient", "EngineError", "ReplayResult", "Standings", "TypedEngine"]


class TypedEngine:
    """`domino.v1.Engine`'s calls, protobuf in and out, with the client's deadline and error mapping."""

    def __init__(self, client: EngineClient) -> None:
        self.client = client

    def _call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.client.stub, method)(request, timeout=self.client._timeout)
        except grpc.RpcError as err:
            _raise(err)

    def list_variants(self, request: pb.ListVariantsRequest) -> pb.ListVariantsResponse:
        answer: pb.ListVariantsResponse = self._call("ListVariants", request)
        return answer

    def new_match(self, request: pb.NewMatchRequest) -> pb.MatchResponse:
        answer: pb.MatchResponse = self._call("NewMatch", request)
        return answer

    def start_round(self, request: pb.StartRoundRequest) -> pb.MatchResponse:
        answer: pb.MatchResponse = self._call("StartRound", request)
        return answer

    def legal_actions(self, request: pb.StateRequest) -> pb.LegalActionsResponse:
        answer: pb.LegalActionsResponse = self._call("LegalActions", request)
        return answer

    def apply(self, request: pb.ApplyRequest) -> pb.MatchResponse:
        answer: pb.MatchResponse = self._call("Apply", request)
        return answer

    def replay(self, request: pb.ReplayRequest) -> pb.ReplayResponse:
        answer: pb.ReplayResponse = self._call("Replay", request)
        return answer

    def settle(self, request: pb.SettleRequest) -> pb.MatchResponse:
        answer: pb.MatchResponse = self._call("Settle", request)
        return answer

    def view(self, request: pb.ViewRequest) -> pb.SeatView:
        answer: pb.SeatView = self._call("View", request)
        return answer

    def timeout(self, request: pb.TimeoutRequest) -> pb.MatchResponse:
        answer: pb.MatchResponse = self._call("Timeout", request)
        return answer

    def create_tournament(self, request: pb.CreateTournamentRequest) -> pb.TournamentResponse:
        answer: pb.TournamentResponse = self._call("CreateTournament", request)
        return answer

    def record_tournament_round(self, request: pb.RecordTournamentRoundRequest) -> pb.TournamentResponse:
        answer: pb.TournamentResponse = self._call("RecordTournamentRound", request)
        return answer

    def tournament_standings(self, request: pb.TournamentStateRequest) -> pb.TournamentStandingsResponse:
        answer: pb.TournamentStandingsResponse = self._call("TournamentStandings", request)
        return answer

    def new_kingdomino(self, request: pb.NewKingdominoRequest) -> pb.KingdominoResponse:
        answer: pb.KingdominoResponse = self._call("NewKingdomino", request)
        return answer

    def kingdomino_legal_actions(self, request: pb.KingdominoStateRequest) -> pb.KingdominoLegalResponse:
        answer: pb.KingdominoLegalResponse = self._call("KingdominoLegalActions", request)
        return answer

    def kingdomino_apply(self, request: pb.KingdominoApplyRequest) -> pb.KingdominoResponse:
        answer: pb.KingdominoResponse = self._call("KingdominoApply", request)
        return answer

    def kingdomino_replay(self, request: pb.KingdominoReplayRequest) -> pb.KingdominoReplayResponse:
        answer: pb.KingdominoReplayResponse = self._call("KingdominoReplay", request)
        return answer

    def kingdomino_view(self, request: pb.KingdominoViewRequest) -> pb.KingdominoView:
        answer: pb.KingdominoView = self._call("KingdominoView", request)
        return answer

    def kingdomino_timeout(self, request: pb.KingdominoTimeoutRequest) -> pb.KingdominoResponse:
        answer: pb.KingdominoResponse = self._call("KingdominoTimeout", request)
        return answer

    # The calls on a game of either kind: its state a GameState, the answer in that kind's messages.

    def suggest(self, request: pb.SuggestRequest) -> pb.SuggestResponse:
        answer: pb.SuggestResponse = self._call("Suggest", request)
        return answer

    def seat_bot(self, request: pb.SeatBotRequest) -> pb.GameResponse:
        answer: pb.GameResponse = self._call("SeatBot", request)
        return answer

    def end_match(self, request: pb.EndMatchRequest) -> pb.GameResponse:
        answer: pb.GameResponse = self._call("EndMatch", request)
        return answer

    def hints(self, request: pb.HintsRequest) -> pb.HintsResponse:
        answer: pb.HintsResponse = self._call("Hints", request)
        return answer

    def export_record(self, request: pb.ExportRecordRequest) -> pb.ExportRecordResponse:
        answer: pb.ExportRecordResponse = self._call("ExportRecord", request)
        return answer

    def import_record(self, request: pb.ImportRecordRequest) -> pb.ImportRecordResponse:
        answer: pb.ImportRecordResponse = self._call("ImportRecord", request)
        return answer

    def replay_record(self, request: pb.ReplayRecordRequest) -> pb.ReplayRecordResponse:
        answer: pb.ReplayRecordResponse = self._call("ReplayRecord", request)
        return answer
