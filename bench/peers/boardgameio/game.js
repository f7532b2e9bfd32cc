'use strict';
/**
 * The 2-player block domino game of `domino bench peers`, on boardgame.io 0.50.
 *
 * The same rules as the engine's `block` variant (docs/variants.md, BL): a double-six set,
 * 7 tiles each, the other 14 never used; seat 0 leads any tile; a line layout with a west
 * and an east end; a seat that can play must, one that cannot passes; the hand ends when a
 * seat is out or both pass in a row; the fewest pips left wins the others' pips. A tile that
 * fits both ends is two moves (W and E), as in the engine.
 *
 * Hands are hidden by `playerView`: a seat receives its own hand and the public sizes,
 * nothing of the other hand nor of the unused tiles. Moves run on the server only
 * (`client: false`), as every move of ours does (no optimistic client copy).
 */
const { INVALID_MOVE } = require('boardgame.io/core');

/** The 28 tiles as "low-high" strings, the engine's names. */
const TILES = [];
for (let a = 0; a <= 6; a++) for (let b = a; b <= 6; b++) TILES.push(`${a}-${b}`);

const pips = (tile) => tile.split('-').map(Number);
const total = (hand) => hand.reduce((sum, t) => sum + pips(t)[0] + pips(t)[1], 0);

/** The legal moves of `hand` against `ends` (null before the lead): [{tile, end}], or [] (a pass). */
function legalMoves(hand, ends) {
  if (ends === null) return hand.map((tile) => ({ tile, end: null }));
  const moves = [];
  for (const tile of hand) {
    const [a, b] = pips(tile);
    if (a === ends.W || b === ends.W) moves.push({ tile, end: 'W' });
    if (a === ends.E || b === ends.E) moves.push({ tile, end: 'E' });
  }
  return moves;
}

function play({ G, playerID }, tile, end) {
  const hand = G.hands[playerID];
  const move = legalMoves(hand, G.ends).find((m) => m.tile === tile && m.end === (G.ends === null ? null : end));
  if (!move) return INVALID_MOVE;
  const [a, b] = pips(tile);
  G.hands[playerID] = hand.filter((t) => t !== tile);
  G.handSizes[playerID] -= 1;
  if (G.ends === null) {
    G.ends = { W: a, E: b };
    G.layout.push(tile);
  } else {
    const open = G.ends[end];
    G.ends[end] = a === open ? b : a;
    if (end === 'W') G.layout.unshift(tile);
    else G.layout.push(tile);
  }
  G.passes = 0;
  return undefined;
}

function pass({ G, playerID }) {
  if (legalMoves(G.hands[playerID], G.ends).length > 0) return INVALID_MOVE;
  G.passes += 1;
  return undefined;
}

const BlockDominoes = {
  name: 'block',
  minPlayers: 2,
  maxPlayers: 2,
  setup: ({ random }) => {
    const deck = random.Shuffle(TILES);
    return { hands: { 0: deck.slice(0, 7), 1: deck.slice(7, 14) }, handSizes: { 0: 7, 1: 7 },
      layout: [], ends: null, passes: 0 };
  },
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    play: { move: play, client: false },
    pass: { move: pass, client: false },
  },
  endIf: ({ G }) => {
    if (G.handSizes[0] > 0 && G.handSizes[1] > 0 && G.passes < 2) return undefined;
    if (!G.hands[0] || !G.hands[1]) return { over: true }; // a seat's filtered copy: the server decides
    const left = [total(G.hands[0]), total(G.hands[1])];
    if (left[0] === left[1]) return { draw: true, points: 0 };
    const winner = left[0] < left[1] ? '0' : '1';
    return { winner, points: left[1 - Number(winner)] };
  },
  playerView: ({ G, playerID }) => ({
    ...G,
    hands: playerID === null || playerID === undefined ? {} : { [playerID]: G.hands[playerID] },
  }),
};

module.exports = { BlockDominoes, TILES, legalMoves };
