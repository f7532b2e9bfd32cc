/**
 * A seat's live stream, `GET /v1/matches/{match_id}/events` (`text/event-stream`): the seat's view
 * first, then one `update` per change as this seat may see it, `end` once the match is over.
 *
 * The request is the generated client's (`parseAs: "stream"`); the bytes are read by
 * eventsource-parser. Each event's `id` is the match's version after it: the reader keeps the
 * latest, and when the connection breaks or the server closes the stream early (`closed`: idle,
 * max-duration, shutdown ...) it connects again with `Last-Event-ID`, so every change is handed
 * out once, in order, across reconnections. A refusal worth waiting out (429, 502, 503, 504) is
 * tried again after the gateway's Retry-After (else a doubling wait); any other is thrown. The event names and their data's schemas are the
 * document's `x-events` (`SEAT_EVENT_SCHEMAS`, checked against the served document by the tests).
 */
import { EventSourceParserStream, type EventSourceMessage } from "eventsource-parser/stream";

import { bearer, type DominoClient } from "./client.js";
import { DominoProblem } from "./problem.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** Each event's `data`, by event name. */
export interface SeatEventData {
  view: Schemas["SeatStreamView"];
  update: Schemas["SeatStreamUpdate"];
  end: Record<string, never>;
  presence: Schemas["SeatStreamPresence"];
  closed: Schemas["StreamClosed"];
}

/** The component schema of each event's data in the document's `x-events` (null: an inline `{}`). */
export const SEAT_EVENT_SCHEMAS: { readonly [K in keyof SeatEventData]: string | null } = {
  view: "SeatStreamView",
  update: "SeatStreamUpdate",
  end: null,
  presence: "SeatStreamPresence",
  closed: "StreamClosed",
};

/** One event handed out: `view`, `update`, `presence` (no id: who is here) or `end` (`closed` is handled by
 * reconnecting). */
export type SeatEvent = {
  [K in Exclude<keyof SeatEventData, "closed">]: { event: K; id: number | undefined; data: SeatEventData[K] };
}[Exclude<keyof SeatEventData, "closed">];

/** Why the reader connected again, and from where. */
export interface Reconnect {
  reason: "closed" | "dropped" | "unavailable";
  /** The server's `closed` reason, or the error that broke the connection. */
  detail: string;
  lastEventId: number | undefined;
  /** Failed connections in a row so far (0 after a clean `closed`). */
  failures: number;
}

export interface SeatStreamOptions {
  matchId: string;
  /** The seat's credential (or the table's host key, for the public view). */
  credential: string;
  /** Resume after this event id (the `seq` of the last change already seen). */
  lastEventId?: number;
  /** Stops the stream (the iterator then throws the signal's reason). */
  signal?: AbortSignal;
  /** Failed connections in a row before giving up (default 10). */
  maxFailures?: number;
  /** The first wait after a failed connection, doubled up to 5 s (default 250 ms; a Retry-After answered wins). */
  retryMs?: number;
  onReconnect?: (why: Reconnect) => void;
}

/** Statuses worth connecting again for: the service is restarting, busy or unreachable for a moment. */
const TRANSIENT = new Set([429, 502, 503, 504]);

/**
 * The seat's events, resumed across broken connections, until `end` (handed out, then the
 * iteration stops). Leaving the loop early closes the connection.
 */
export async function* seatEvents(api: DominoClient, options: SeatStreamOptions): AsyncGenerator<SeatEvent> {
  let lastEventId = options.lastEventId;
  let failures = 0;
  const maxFailures = options.maxFailures ?? 10;
  for (;;) {
    const connection = new AbortController();
    const stop = (): void => connection.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", stop, { once: true });
    let why: Reconnect;
    let askedWait: number | undefined;   // seconds, the gateway's Retry-After
    try {
      const opened = await open(api, options, lastEventId, connection.signal);
      if (opened instanceof DominoProblem) {
        if (!TRANSIENT.has(opened.status)) throw opened;
        why = { reason: "unavailable", detail: opened.message, lastEventId, failures: ++failures };
        askedWait = opened.retryAfter;
      } else {
        failures = 0;
        let closed = "the connection ended";
        for await (const message of opened) {
          const event = parse(message);
          if (event === undefined) continue;
          if (event.event === "closed") {
            closed = event.data.reason ?? "closed";
            break;
          }
          if (event.id !== undefined && lastEventId !== undefined && event.id <= lastEventId) continue;
          lastEventId = event.id ?? lastEventId;
          yield event;
          if (event.event === "end") return;
        }
        why = { reason: closed === "the connection ended" ? "dropped" : "closed", detail: closed, lastEventId,
                failures };
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof DominoProblem) throw error;
      why = { reason: "dropped", detail: String(error), lastEventId, failures: ++failures };
    } finally {
      options.signal?.removeEventListener("abort", stop);
      connection.abort();
    }
    if (failures > maxFailures) {
      throw new Error(`the seat stream of ${options.matchId} failed ${failures} times in a row: ${why.detail}`);
    }
    options.onReconnect?.(why);
    if (failures > 0) {
      const backoff = Math.min(5000, (options.retryMs ?? 250) * 2 ** (failures - 1));
      await wait(askedWait === undefined ? backoff : Math.min(30_000, askedWait * 1000), options.signal);
    }
  }
}

/** One connection: its parsed messages, or the problem it was refused with. */
async function open(
  api: DominoClient, options: SeatStreamOptions, lastEventId: number | undefined, signal: AbortSignal,
): Promise<ReadableStream<EventSourceMessage> | DominoProblem> {
  const headers: Record<string, string> = { ...bearer(options.credential), Accept: "text/event-stream" };
  if (lastEventId !== undefined) headers["Last-Event-ID"] = String(lastEventId);
  const { data, error, response } = await api.GET("/v1/matches/{match_id}/events", {
    params: { path: { match_id: options.matchId } }, headers, signal, parseAs: "stream", cache: "no-store",
  });
  if (!response.ok || !data) return new DominoProblem(response.status, error, response.headers.get("Retry-After"));
  return data.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
}

function parse(message: EventSourceMessage): SeatEvent | { event: "closed"; data: SeatEventData["closed"] } | undefined {
  const id = message.id === undefined || message.id === "" ? undefined : Number(message.id);
  switch (message.event) {
    case "view":
      return { event: "view", id, data: JSON.parse(message.data) as SeatEventData["view"] };
    case "update":
      return { event: "update", id, data: JSON.parse(message.data) as SeatEventData["update"] };
    case "end":
      return { event: "end", id, data: {} };
    case "presence":
      return { event: "presence", id: undefined, data: JSON.parse(message.data) as SeatEventData["presence"] };
    case "closed":
      return { event: "closed", data: JSON.parse(message.data) as SeatEventData["closed"] };
    default:
      return undefined; // an event this client does not know yet: a newer gateway's
  }
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
