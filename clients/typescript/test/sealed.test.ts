/** A whole sealed Kozel match against three bots, through the generated client. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { answer, DominoProblem, SealedMatch } from "../src/index.js";
import { client } from "./gateway.js";

test("a sealed match against bots is played to its end", { timeout: 60_000 }, async () => {
  const match = await SealedMatch.create(client(), {
    variant: "kozel", players: 4, seat: 0,
    bots: [{ seat: 1, level: "greedy" }, { seat: 2, level: "random" }, { seat: 3, level: "greedy" }],
  });
  assert.match(match.matchId, /^[0-9a-f]+$/);
  let moves = 0;
  let rounds = 1;
  for (let step = 0; !match.matchOver; step++) {
    assert.ok(step < 2_000, "the match did not end in 2,000 calls");
    if (match.roundOver) {
      await match.nextRound();
      rounds++;
      continue;
    }
    const actions = await match.legal();
    assert.ok(actions.length > 0, `seat 0 has no legal action at seq ${match.seq}`);
    const events = await match.apply(actions[0]!);
    assert.ok(events.length >= 1);
    moves++;
  }
  assert.ok(rounds >= 2, `a Kozel match lasts more than one round (${rounds})`);
  assert.ok(moves >= rounds);
  assert.equal(match.scores.length, 4);
  const view = match.view;
  assert.ok(view !== undefined && "losers" in view);
  assert.ok((view.losers ?? []).length >= 1, "Kozel's match ends with a goat");
});

test("refusals are typed problems: an illegal action, a stale token", async () => {
  const match = await SealedMatch.create(client(), { variant: "kozel", players: 2, seat: 0,
                                                      bots: [{ seat: 1, level: "greedy" }] });
  const actions = await match.legal();
  const refused = (name: string, status: number) => (error: unknown): boolean => {
    assert.ok(error instanceof DominoProblem, String(error));
    assert.deepEqual([error.problemName, error.status], [name, status], error.message);
    return true;
  };
  await assert.rejects(match.apply("pass"), refused("illegal-action", 409));
  const stale = match.carrier();
  await match.apply(actions[0]!);
  await assert.rejects(answer(client().POST("/v1/matches/legal", { body: stale })), refused("stale-token", 409));
});
