/**
 * A seat's stream whose connection breaks (a phone losing its network): the reader connects again
 * with Last-Event-ID and hands out the change made meanwhile, once. The client reaches the gateway
 * through a TCP relay of the test's own, which cuts every connection on demand.
 */
import assert from "node:assert/strict";
import { createServer, connect, type Socket } from "node:net";
import { test } from "node:test";

import { createDominoClient, createTable, TableSeat, type Reconnect, type SeatEvent } from "../src/index.js";
import { client, gatewayUrl } from "./gateway.js";

/** A relay on a free loopback port to the gateway; `cut()` breaks every connection it carries. */
async function relay(): Promise<{ url: string; cut: () => number; close: () => void }> {
  const target = new URL(gatewayUrl());
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut: () => {
      const count = sockets.size;
      for (const socket of sockets) socket.destroy();
      return count;
    },
    close: () => server.close(),
  };
}

test("a stream whose connection breaks resumes with Last-Event-ID", { timeout: 30_000 }, async () => {
  const link = await relay();
  try {
    const opened = await createTable(client(), { variant: "block", players: 2 });
    const [first, second] = opened.invites ?? [];
    const direct = await TableSeat.join(client(), opened.table_id!, { invite: first!.code! });
    const relayed = await TableSeat.join(createDominoClient(link.url), opened.table_id!, { invite: second!.code! });
    await direct.waitForMatch();
    await relayed.waitForMatch();

    const reconnects: Reconnect[] = [];
    const seen: SeatEvent[] = [];
    for await (const event of relayed.events({ onReconnect: (why) => reconnects.push(why), retryMs: 50 })) {
      if (event.event === "presence") continue;   // who is here (no id): the stream may carry one at any time
      seen.push(event);
      if (seen.length === 1) {
        assert.equal(event.event, "view");
        assert.ok(link.cut() >= 2, "the stream's connection went through the relay");
        const mover = (await direct.legal()).seat === direct.seat ? direct : relayed;
        await mover.apply((await mover.legal()).actions[0]!);
      } else {
        break;
      }
    }
    const view = seen[0]!.id!;
    assert.deepEqual(seen.map((e) => [e.event, e.id]), [["view", view], ["update", view + 1]]);
    assert.deepEqual([reconnects[0]?.reason, reconnects[0]?.lastEventId], ["dropped", view], JSON.stringify(reconnects));
  } finally {
    link.close();
  }
});
