"""The engine's edge: where a state, a request and an answer change form between the wire and the rules.

Everything inside the engine is the rules' values (`engine_service.rules`) and what
a call does with them (`engine_service.calls`); everything that crosses the wire is
a message or JSON. These modules are the only places that convert between the two:

- `wire`: a `MatchState`'s bytes <-> `Match`, by hand (the hot path of both faces);
- `codec`: the typed face's other messages (events, views, options, deals);
- `kingdomino_codec`: Kingdomino's messages (`KingdominoState`, its view, its events);
- `tournament_codec`: the Bykovo micro-tournament's (`TournamentState`, its events);
- `game_state`: a sealed game of either kind (`GameState`, whose `kind` says which);
- `json_face`: the `JsonEngine` servicer, the calls in the JSON of docs/rest.md.

The typed `Engine` servicer (`engine_service.servicer`) and the JSON one both read
requests through these and answer through them. (`wire` and `codec` are compiled
with mypyc with the rules: scripts/build_compiled.sh.)
"""
