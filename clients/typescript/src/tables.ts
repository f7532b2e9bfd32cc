/**
 * Online tables: the service hosts the match, each person holds only their own seat's
 * credential (sent as `Authorization: Bearer`), and follows the match on the seat's stream.
 * `createTable` opens a table with one invite per open seat; `TableSeat.join` takes a seat.
 */
import { answer, bearer, type DominoClient } from "./client.js";
import { seatEvents, type SeatEvent, type SeatStreamOptions } from "./events.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];
export type NewTable = Schemas["NewTable"];
export type NewTableAnswer = Schemas["NewTableAnswer"];
export type Table = Schemas["Table"];
export type JoinAnswer = Schemas["JoinAnswer"];
export type SeatAnswer = Schemas["SeatAnswer"];
export type MatchAnswer = Schemas["MatchAnswer"];

/** Open a table: its id, the host's key, one invite (seat, code, link) per open seat. */
export async function createTable(api: DominoClient, table: NewTable): Promise<NewTableAnswer> {
  return answer(api.POST("/v1/tables", { body: table }));
}

/**
 * How a private table is asked for: by one of its seats or its host (`credential`), by whoever holds one
 * of its unused invites (`invite`), or by its spectator link's code (`watch`); anyone else gets a 403
 * `spectators-off`. A public table needs none of them.
 */
export interface TableAccess { credential?: string; invite?: string; watch?: string }

/** A table as the lobby and its players see it (seats with each person's presence, status, the match). */
export async function getTable(api: DominoClient, tableId: string, access: TableAccess = {}): Promise<Table> {
  const query = { ...(access.invite ? { invite: access.invite } : {}), ...(access.watch ? { watch: access.watch } : {}) };
  return answer(api.GET("/v1/tables/{table_id}", {
    params: { path: { table_id: tableId }, query },
    ...(access.credential ? { headers: bearer(access.credential) } : {}),
  }));
}

/** A person's seat at a table, played by its credential alone (from any device). */
export class TableSeat {
  /** The match being played, once every open seat is taken. */
  matchId: string | undefined;

  constructor(
    private readonly api: DominoClient,
    readonly tableId: string,
    readonly seat: number,
    readonly credential: string,
    matchId?: string | null,
  ) {
    this.matchId = matchId ?? undefined;
  }

  /** Take a seat: by an invite's code, or (a public table) by its number. */
  static async join(
    api: DominoClient, tableId: string, how: { invite?: string; seat?: number; name?: string },
  ): Promise<TableSeat> {
    const joined = await answer(api.POST("/v1/tables/{table_id}/join", {
      params: { path: { table_id: tableId } }, body: how,
    }));
    if (joined.seat === undefined || joined.credential === undefined) {
      throw new TypeError("the join answer has no seat or credential");
    }
    return new TableSeat(api, tableId, joined.seat, joined.credential, joined.match_id);
  }

  /** The match's id, asking the table until every open seat is taken (at most `timeoutMs`). */
  async waitForMatch(timeoutMs = 10_000, pollMs = 100): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.matchId === undefined) {
      const table = await this.table();
      this.matchId = table.match_id ?? undefined;
      if (this.matchId !== undefined) break;
      if (Date.now() > deadline) throw new Error(`table ${this.tableId} dealt no match in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    return this.matchId;
  }

  /** The table now, asked with this seat's credential (a private table shows itself to its seats). */
  async table(): Promise<Table> {
    return getTable(this.api, this.tableId, { credential: this.credential });
  }

  /** The seat's latest: `seq`, `view`, `scores`, `turn`, `over`. */
  async view(): Promise<SeatAnswer> {
    return answer(this.api.GET("/v1/matches/{match_id}/seat", this.init()));
  }

  /** The seat to move, and this seat's legal actions on its turn. */
  async legal(): Promise<{ seat: number | null | undefined; actions: string[] }> {
    const found = await answer(this.api.GET("/v1/matches/{match_id}/legal", this.init()));
    return { seat: found.seat, actions: found.actions ?? [] };
  }

  /** Play `action` (the service's bots move after it). */
  async apply(action: string): Promise<MatchAnswer> {
    return answer(this.api.POST("/v1/matches/{match_id}/apply", { ...this.init(), body: { action } }));
  }

  /** Deal the next round once this one is over. */
  async nextRound(): Promise<MatchAnswer> {
    return answer(this.api.POST("/v1/matches/{match_id}/next-round", { ...this.init(), body: {} }));
  }

  /**
   * Resign: this seat's side loses and the match ends (as this seat's timeout where the variant has a
   * timeout rule). Its events: `resigned`, then the end. A match already over: 409 `illegal-action`.
   */
  async resign(): Promise<MatchAnswer> {
    return answer(this.api.POST("/v1/matches/{match_id}/resign", this.init()));
  }

  /**
   * Abort: the match ends with no result and no rating; only before every person at the table has made
   * a move (409 `abort-closed` after). Its events: `aborted`, then the end.
   */
  async abort(): Promise<MatchAnswer> {
    return answer(this.api.POST("/v1/matches/{match_id}/abort", this.init()));
  }

  /**
   * Claim victory over a person whose seat has been gone (no open stream, no call) for the table's
   * `claim_after` seconds (the table's seats say `here` and `away_since`); else 409 `claim-refused`.
   * Its events: `gone`, then the end.
   */
  async claim(): Promise<MatchAnswer> {
    return answer(this.api.POST("/v1/matches/{match_id}/claim", this.init()));
  }

  /** The seat's live stream (see `seatEvents`): resumed with Last-Event-ID when a connection breaks. */
  events(options: Omit<SeatStreamOptions, "matchId" | "credential"> = {}): AsyncGenerator<SeatEvent> {
    return seatEvents(this.api, { ...options, matchId: this.requireMatch(), credential: this.credential });
  }

  private init(): { params: { path: { match_id: string } }; headers: { Authorization: string } } {
    return { params: { path: { match_id: this.requireMatch() } }, headers: bearer(this.credential) };
  }

  private requireMatch(): string {
    if (this.matchId === undefined) throw new Error("no match yet: call waitForMatch() first");
    return this.matchId;
  }
}
