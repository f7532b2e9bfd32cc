import { createDominoClient, SealedMatch } from "@domino/client";

const api = createDominoClient(process.env["DOMINO_GATEWAY_URL"] ?? "http://127.0.0.1:8080");
const match = await SealedMatch.create(api, {
  variant: "kozel", players: 4, seat: 0,           // our seat; the computer plays the other three
  bots: [{ seat: 1, level: "expert" }, { seat: 2, level: "greedy" }, { seat: 3, level: "random" }],
});
while (!match.matchOver) {
  if (match.roundOver) {
    await match.nextRound();                        // the bots play up to our first turn
  } else {
    const actions = await match.legal();            // e.g. ["1-1"], ["3-6@E", "draw"]
    await match.apply(actions[0]!);
  }
}
console.log("written points", match.scores);
