/**
 * A sealed match against the computer: the service keeps the match's latest version, this
 * holder keeps the latest `token` and its own seat's key, and the bots' seats are played by the
 * engine after every call (`create`, `apply`, `nextRound` answer every event up to this seat's
 * next turn). The calls are the generated client's; this class only carries the token.
 */
import { answer, type DominoClient } from "./client.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];
export type BotSeat = Schemas["BotSeat"];
export type MatchAnswer = Schemas["MatchAnswer"];
export type MatchEvent = NonNullable<MatchAnswer["events"]>[number];
export type SeatView = Schemas["SeatView"];
export type View = NonNullable<MatchAnswer["view"]>;

export interface SealedMatchRequest {
  variant: string;
  players: number;
  /** The seat this holder plays: the only key it keeps. */
  seat: number;
  /** The seats the computer plays (at least one seat stays a person's). */
  bots?: BotSeat[];
  options?: Schemas["NewMatch"]["options"];
}

export class SealedMatch {
  /** The latest token: every call sends it, every answer replaces it. */
  token: string;
  /** The match's version: +1 per change. */
  seq: number;
  /** This seat's latest view (its hand, the layout, whether the round and the match are over). */
  view: View | undefined;
  /** The score as players say it, per seat (or team). */
  scores: number[];

  private constructor(
    private readonly api: DominoClient,
    readonly matchId: string,
    readonly seat: number,
    private readonly seatKey: string,
    made: MatchAnswer,
  ) {
    this.token = required(made.token, "token");
    this.seq = made.seq ?? 0;
    this.view = made.view;
    this.scores = made.scores;
  }

  /** Create a sealed match, keep only `request.seat`'s key, and fetch that seat's view. */
  static async create(api: DominoClient, request: SealedMatchRequest): Promise<SealedMatch> {
    const made = await answer(api.POST("/v1/matches", {
      body: { variant: request.variant, players: request.players, options: request.options,
              bots: request.bots, mode: "sealed" },
    }));
    const key = required(made.seat_keys?.[request.seat], `seat ${request.seat}'s key`);
    const match = new SealedMatch(api, required(made.match_id, "match_id"), request.seat, key, made);
    await match.refresh();
    return match;
  }

  /** Whether the round is over (deal the next one with `nextRound`). */
  get roundOver(): boolean {
    return this.view !== undefined && "round_over" in this.view && this.view.round_over === true;
  }

  /** Whether the match is over. */
  get matchOver(): boolean {
    return this.view !== undefined && "match_over" in this.view && this.view.match_over === true;
  }

  /** This seat's legal actions (empty when it is not its turn). */
  async legal(): Promise<string[]> {
    const found = await answer(this.api.POST("/v1/matches/legal", { body: this.carrier() }));
    return found.seat === this.seat ? (found.actions ?? []) : [];
  }

  /** Play `action`; the events it caused, the bots' moves after it included. */
  async apply(action: string): Promise<MatchEvent[]> {
    return this.take(await answer(this.api.POST("/v1/matches/apply", { body: { ...this.carrier(), action } })));
  }

  /** Deal the next round (the bots then play up to this seat's turn). */
  async nextRound(): Promise<MatchEvent[]> {
    return this.take(await answer(this.api.POST("/v1/matches/next-round", { body: this.carrier() })));
  }

  /** Fetch this seat's view again. */
  async refresh(): Promise<View> {
    const seen = await answer(this.api.POST("/v1/matches/view", { body: this.carrier() }));
    this.view = seen.view;
    this.scores = seen.scores;
    return seen.view;
  }

  /** The latest token and this seat's key: the body of any other sealed call of the generated client
   * (`/v1/matches/suggest`, `/hints`, `/record` ...). */
  carrier(): { token: string; seat_key: string } {
    return { token: this.token, seat_key: this.seatKey };
  }

  private take(made: MatchAnswer): MatchEvent[] {
    this.token = made.token ?? this.token;
    this.seq = made.seq ?? this.seq;
    this.view = made.view ?? this.view;
    this.scores = made.scores;
    return made.events ?? [];
  }
}

function required<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) {
    throw new TypeError(`the gateway's answer has no ${what}`);
  }
  return value;
}
