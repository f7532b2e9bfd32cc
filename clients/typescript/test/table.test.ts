/**
 * A table between two clients: each takes its seat with its invite, follows its own seat's stream
 * and moves when the stream says it is its turn, to the match's end (block, 2 players: one hand);
 * each seat sees every version once, in order. The gateway closes every stream after a second
 * (GATEWAY_SPECTATE_MAX=1): the resume test waits for that close and makes its change only after
 * it, so the stream must have been resumed with Last-Event-ID to hand the change out.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { createTable, DominoProblem, getTable, TableSeat, type Reconnect, type SeatEvent } from "../src/index.js";
import { client } from "./gateway.js";

/** The events that are versions of the match (all but `presence`). */
type Versioned = Exclude<SeatEvent, { event: "presence" }>;

interface Played {
  ids: number[];
  moves: number;
  reconnects: Reconnect[];
  last: Versioned | undefined;
  lastUpdate: Versioned | undefined;
  here?: number[];
}

async function follow(seat: TableSeat, maxMoves: number): Promise<Played> {
  const played: Played = { ids: [], moves: 0, reconnects: [], last: undefined, lastUpdate: undefined };
  for await (const event of seat.events({ onReconnect: (why) => played.reconnects.push(why) })) {
    if (event.event === "presence") {   // who is here (no id): not a version of the match
      played.here = event.data.here;
      continue;
    }
    played.last = event;
    if (event.id !== undefined) played.ids.push(event.id);
    if (event.event === "end") break;
    played.lastUpdate = event;
    if (event.data.turn === seat.seat) {
      assert.ok(played.moves < maxMoves, `seat ${seat.seat} moved ${maxMoves} times without the match ending`);
      const legal = await seat.legal();
      assert.equal(legal.seat, seat.seat);
      await seat.apply(legal.actions[0]!);
      played.moves++;
    }
  }
  return played;
}

test("two clients play a table to its end, each following its own seat's stream", { timeout: 60_000 }, async () => {
  const host = client();
  const opened = await createTable(host, { variant: "block", players: 2, name: "TypeScript table" });
  const invites = opened.invites ?? [];
  assert.equal(invites.length, 2);
  const anna = await TableSeat.join(client(), opened.table_id!, { invite: invites[0]!.code!, name: "Anna" });
  const boris = await TableSeat.join(client(), opened.table_id!, { invite: invites[1]!.code!, name: "Boris" });
  const matchId = await boris.waitForMatch();
  assert.equal(await anna.waitForMatch(), matchId);
  assert.deepEqual(new Set([anna.seat, boris.seat]), new Set([0, 1]));

  const [a, b] = await Promise.all([follow(anna, 30), follow(boris, 30)]);

  for (const played of [a, b]) {
    assert.equal(played.last?.event, "end");
    const first = played.ids[0]!;
    assert.deepEqual(played.ids.slice(0, -1), played.ids.slice(0, -1).map((_, i) => first + i),
                     "every version once, in order, across reconnections");
    const data = played.lastUpdate?.data;
    assert.ok(data !== undefined && data.view !== undefined && "match_over" in data.view);
    assert.equal(data.view.match_over, true);
  }
  // Seat 0 leads, so the match has a move; a seat may have none: one that cannot play is skipped (RULES.md
  // BL), and a deal where the other plays out its seven tiles while this one never fits ends without its turn.
  assert.ok(a.moves + b.moves >= 1);
  assert.deepEqual(a.ids, b.ids, "both seats saw the same versions");
  const final = await anna.view();
  assert.equal(final.over, true);
  assert.equal(final.scores?.length, 2);
});

test("a seat's stream resumes after Last-Event-ID, and goes on across a close by the server", { timeout: 30_000 }, async () => {
  const host = client();
  const opened = await createTable(host, { variant: "block", players: 2 });
  const [first, second] = opened.invites ?? [];
  const lead = await TableSeat.join(client(), opened.table_id!, { invite: first!.code! });
  const other = await TableSeat.join(client(), opened.table_id!, { invite: second!.code! });
  await lead.waitForMatch();
  await other.waitForMatch();
  const [mover, watcher] = (await lead.legal()).seat === lead.seat ? [lead, other] : [other, lead];

  // the first event is the seat's view; leaving the loop closes the connection
  let seen: number | undefined;
  for await (const event of watcher.events()) {
    assert.equal(event.event, "view");
    seen = event.id;
    break;
  }
  assert.ok(seen !== undefined);
  await mover.apply((await mover.legal()).actions[0]!);

  // resumed after `seen`: the move comes as the next update, no view again
  const reconnects: Reconnect[] = [];
  let moved = false;
  const after: SeatEvent[] = [];
  for await (const event of watcher.events({
    lastEventId: seen,
    onReconnect: (why) => {
      reconnects.push(why);
      if (!moved && why.lastEventId === seen! + 1) {   // closed by the server after the update: move only now
        moved = true;
        void watcher.legal().then((legal) => watcher.apply(legal.actions[0]!));
      }
    },
  })) {
    if (event.event === "presence") continue;   // who is here (no id): the stream may carry one at any time
    after.push(event);
    if (after.length === 2) break;
  }
  assert.deepEqual(after.map((e) => [e.event, e.id]), [["update", seen + 1], ["update", seen + 2]]);
  assert.ok(reconnects.some((why) => why.reason === "closed" && why.detail === "max-duration" &&
                                     why.lastEventId === seen! + 1 && why.failures === 0), JSON.stringify(reconnects));
});

test("a seat resigns, the other seat's view is over; a private table shows itself to its seats only", { timeout: 30_000 }, async () => {
  const host = client();
  const opened = await createTable(host, { variant: "block", players: 2, name: "Exits" });
  const invites = opened.invites ?? [];
  // an unused invite shows the private table; nobody in particular gets a 403 spectators-off
  assert.equal((await getTable(host, opened.table_id!, { invite: invites[0]!.code! })).table_id, opened.table_id);
  await assert.rejects(getTable(host, opened.table_id!),
                       (err: unknown) => err instanceof DominoProblem && err.status === 403 && err.problemName === "spectators-off");
  const anna = await TableSeat.join(client(), opened.table_id!, { invite: invites[0]!.code!, name: "Anna" });
  const boris = await TableSeat.join(client(), opened.table_id!, { invite: invites[1]!.code!, name: "Boris" });
  await anna.waitForMatch();
  await anna.view();                                        // a call on the match: she is here
  const table = await anna.table();
  assert.equal(table.rated, true);
  assert.equal(table.seats?.[anna.seat]?.here, true);
  const resigned = await anna.resign();
  assert.deepEqual(resigned.events?.[0], { type: "resigned", seat: anna.seat });
  assert.equal((await boris.view()).over, true);
  await assert.rejects(boris.resign(), (err: unknown) => err instanceof DominoProblem && err.status === 409);
  await assert.rejects(boris.abort(), (err: unknown) => err instanceof DominoProblem && err.status === 409);
});
