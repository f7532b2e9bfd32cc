// The browser table: one person (seat 0) against computer players, through the REST API in sealed mode.
// The page holds the match's token and the keys of the human seats only (sessionStorage, so a reload
// resumes); it shows the view of the human seat concerned and nothing else. No framework, no build step.
import { KINGDOMINO_TILES } from "/play/kingdomino-tiles.js";

const LEVELS = ["expert", "greedy", "random", "human"];
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
let game = null;      // {variant, players, levels, token, keys, hostKey, view, scores, log}
let variants = [];
let pending = null;   // Kingdomino: the first square chosen for a placement

// ---------------------------------------------------------------- REST
class Problem extends Error {
  constructor(status, body) { super(body.detail || body.title || `HTTP ${status}`); this.status = status; this.body = body; }
}
async function call(path, body) {
  const reply = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new Problem(reply.status, data);
  return data;
}
function carrier(seat) { return { token: game.token, seat_key: game.keys[seat] }; }
function take(answer) {
  if (answer.token) game.token = answer.token;
  if (answer.view) game.view = answer.view;
  if (answer.scores) game.scores = answer.scores;
  for (const e of answer.events || []) logEvent(e);
  save();
}
function save() { if (game) sessionStorage.setItem("domino-play", JSON.stringify(game)); }

// ---------------------------------------------------------------- names and messages
const isKD = () => game.variant === "kingdomino";
function name(seat) {
  if (seat === 0) return "You";
  const level = game.levels[seat];
  return level === "human" ? `Seat ${seat}` : `Seat ${seat} (${level})`;
}
function viewer(view) { return view.seat ?? view.player ?? null; }
function say(text) { $("status").textContent = text; }
function warn(text) {
  const m = $("message"); m.textContent = text; m.hidden = !text;
  if (text) document.body.dataset.warnings = Number(document.body.dataset.warnings || 0) + 1;
}
function logEvent(e) {
  const text = describe(e);
  if (!text) return;
  game.log.push(text);
  if (game.log.length > 60) game.log.shift();
}
function describe(e) {
  const who = e.seat != null ? name(e.seat) : e.player != null ? name(e.player) : "";
  switch (e.type) {
    case "played": return `${who} played ${e.action}`;
    case "drew": return e.tile ? `${who} drew ${e.tile}` : `${who} drew a tile`;
    case "passed": return `${who} knocked`;
    case "points_scored": return `${who} scored ${e.points}`;
    case "round_ended": return `Round ${e.record.number} over: ${e.record.ending}`;
    case "match_ended": return "Match over";
    case "round_dealt": return `Round ${e.number} dealt` + (e.leader != null ? `; ${name(e.leader)} leads` : "");
    case "tile_picked": return `${who} picked tile ${e.tile}`;
    case "tile_placed": return `${who} placed tile ${e.tile}`;
    case "tile_discarded": return `${who} discarded tile ${e.tile}`;
    case "row_laid": return `New row: ${e.tiles.join(", ")}`;
    case "game_over": return `Game over: ${e.scores.join(" / ")}`;
    case "dynasty_over": return `Dynasty over: ${e.scores.join(" / ")}`;
    case "timed_out": return `${who} timed out`;
    default: return null;
  }
}

// ---------------------------------------------------------------- setup form
async function loadVariants() {
  variants = (await call("/v1/variants")).variants;
  const select = $("variant");
  select.replaceChildren(...variants.map((v) => new Option(v.name, v.name)));
  select.value = variants.some((v) => v.name === "kozel") ? "kozel" : variants[0].name;
  select.addEventListener("change", fillPlayers);
  $("players").addEventListener("change", fillLevels);
  fillPlayers();
}
function playerCounts(v) {
  if (Array.isArray(v.players)) return v.players;
  if (v.min_players != null) { const out = []; for (let n = v.min_players; n <= v.max_players; n++) out.push(n); return out; }
  return [2, 3, 4];
}
function fillPlayers() {
  const v = variants.find((x) => x.name === $("variant").value);
  const counts = playerCounts(v);
  const select = $("players");
  const keep = Number(select.value);
  select.replaceChildren(...counts.map((n) => new Option(String(n), String(n))));
  select.value = String(counts.includes(keep) ? keep : counts.includes(4) ? 4 : counts[0]);
  fillLevels();
}
function fillLevels() {
  const n = Number($("players").value);
  const box = $("levels");
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  const selects = [];
  for (let seat = 1; seat < n; seat++) {
    const s = document.createElement("select");
    s.id = `level-${seat}`;
    s.setAttribute("aria-label", `Seat ${seat}`);
    s.replaceChildren(...LEVELS.map((l) => new Option(l, l)));
    s.value = old[seat - 1] || "expert";
    const label = document.createElement("label");
    label.append(`Seat ${seat} `, s);
    selects.push(label);
  }
  box.replaceChildren(...selects);
}

async function newMatch(event) {
  event?.preventDefault();
  warn("");
  const variant = $("variant").value, players = Number($("players").value);
  const levels = [null];
  for (let seat = 1; seat < players; seat++) levels.push($(`level-${seat}`).value);
  const bots = levels.map((level, seat) => ({ seat, level })).filter((b) => b.level && b.level !== "human");
  const body = { variant, players, mode: "sealed" };
  if (bots.length) body.bots = bots;
  try {
    const answer = await call("/v1/matches", body);
    game = { variant, players, levels, token: answer.token, hostKey: answer.host_key,
             keys: answer.seat_keys.map((k, seat) => (levels[seat] === "human" || seat === 0 ? k : null)),
             view: answer.view, scores: answer.scores, log: [] };
    take(answer);
    await showSeat(humanToMove() ?? 0);
  } catch (err) { warn(`Could not start the match: ${err.message}`); }
}
function humanToMove() {
  const seat = game.view.to_move;
  return seat != null && game.keys[seat] ? seat : null;
}
async function showSeat(seat) {
  take(await call("/v1/matches/view", carrier(seat)));
  render();
}

// ---------------------------------------------------------------- playing
async function play(action) {
  const seat = viewer(game.view);
  warn("");
  const before = game.token;
  try {
    take(await call("/v1/matches/apply", { ...carrier(seat), action }));
  } catch (err) {
    game.token = before;
    warn(err.message.includes(action) ? `Not allowed: ${err.message}` : `Not allowed: ${action}: ${err.message}`);
    return;
  }
  pending = null;
  const next = humanToMove();
  if (next != null && next !== viewer(game.view)) await showSeat(next);
  else render();
}
async function nextRound() {
  warn("");
  try {
    take(await call("/v1/matches/next-round", carrier(0)));
    await showSeat(humanToMove() ?? 0);
  } catch (err) { warn(`No next round: ${err.message}`); }
}
// A click on a tile that cannot be played: the engine says why (nothing changes).
function tryIllegal(tile) {
  const arms = Object.keys(game.view.ends || {});
  const action = game.view.layout.length ? `${tile}@${arms[0] || "E"}` : tile;
  play(action);
}

// ---------------------------------------------------------------- drawing: common
function render() {
  const view = game.view;
  $("table").hidden = false;
  const toMove = view.to_move;
  const over = isKD() ? view.game_over : view.round_over;
  if (over) say(isKD() ? "The game is over." : view.match_over ? "The match is over." : "The round is over.");
  else if (toMove == null) say("Waiting.");
  else if (toMove === viewer(view)) say(`${name(toMove)}: your turn` + (game.keys.filter(Boolean).length > 1 ? " (hot seat)" : ""));
  else say(`${name(toMove)} to move`);
  $("opponents").replaceChildren(...Array.from({ length: game.players }, (_, seat) => {
    const chip = document.createElement("span");
    chip.className = "seat" + (seat === toMove ? " to-move" : "");
    chip.dataset.seat = seat;
    const count = isKD() ? `${view.scores[seat]} pts` : `${view.hand_sizes[seat]} tiles`;
    chip.textContent = `${name(seat)}: ${count}`;
    return chip;
  }));
  if (isKD()) renderKingdomino(view); else renderMatching(view);
  renderScores(view);
  $("log").replaceChildren(...game.log.slice(-25).map((t) => { const li = document.createElement("li"); li.textContent = t; return li; }));
  $("log").scrollTop = 1e6;
  document.body.dataset.renders = Number(document.body.dataset.renders || 0) + 1;   // for tests and screen readers' tools
}

function renderScores(view) {
  const table = document.createElement("table");
  table.className = "scores";
  const head = table.insertRow();
  const sides = game.scores.length === game.players ? Array.from({ length: game.players }, (_, s) => name(s))
    : game.scores.map((_, i) => `Team ${i + 1}`);
  // "Seat 1" over "expert" rather than "Seat 1 (expert)": four seats' columns fit a phone's width.
  for (const label of ["", ...sides]) {
    const th = document.createElement("th");
    const [who, level] = label.split(" (");
    th.textContent = who;
    if (level) { const small = document.createElement("small"); small.textContent = level.slice(0, -1); th.append(small); }
    head.append(th);
  }
  if (isKD()) {
    addRow(table, "Points", view.scores);
    addRow(table, "Crowns", view.crowns);
    addRow(table, "Largest region", view.largest_region);
    if (view.dynasty) addRow(table, "Dynasty total", view.dynasty.totals?.map((t) => t.scores ?? t) ?? []);
  } else {
    const ledger = view.ledger;
    for (const record of ledger.history) {
      const row = addRow(table, `Round ${record.number}`, record.scores);
      if (record.ending === "fish") marker(row.cells[0], "fish", "fish");
      if (record.pot) marker(row.cells[0], "eggs", `eggs ${record.pot}`);
    }
    const total = addRow(table, /^(kozel|osel)/.test(game.variant) ? "Written" : "Score", game.scores);
    total.className = "total";
    if (/^(kozel|osel)/.test(game.variant)) {
      addRow(table, "Remembered", ledger.remembered);
      if (ledger.pot) marker(total.cells[0], "eggs", `eggs in the pot: ${ledger.pot}`);
    }
    if (view.match_over && view.losers?.length) {
      const animal = game.variant.startsWith("kozel") ? "the goat" : game.variant === "osel" ? "the donkey" : "lost";
      const row = addRow(table, animal === "lost" ? "Lost" : animal[4].toUpperCase() + animal.slice(5),
        sides.map((_, i) => (view.losers.includes(i) ? animal === "lost" ? "✗" : animal.slice(4) : "")));
      row.id = "losers";
    }
  }
  $("scores").replaceChildren(table);
}
function addRow(table, label, values) {
  const row = table.insertRow();
  row.insertCell().textContent = label;
  for (const v of values) row.insertCell().textContent = v;
  return row;
}
function marker(cell, kind, text) {
  const m = document.createElement("span");
  m.className = `marker ${kind}`;
  m.textContent = text;
  cell.append(m);
}

// ---------------------------------------------------------------- the matching games
function renderMatching(view) {
  $("board").replaceChildren(drawLayout(view.layout));
  const mine = viewer(view);
  $("hand-title").textContent = mine === 0 ? "Your hand" : `${name(mine)}'s hand`;
  const legal = view.to_move === mine ? view.legal || [] : [];
  const hand = [...view.hand].sort(byPips);
  $("hand").replaceChildren(...hand.map((tile) => {
    const actions = legal.filter((a) => a.split("+").some((p) => sameTile(p.split("@")[0], tile)));
    const b = document.createElement("button");
    b.type = "button";
    b.className = "tile" + (actions.length ? " legal" : "");
    b.dataset.tile = tile;
    b.setAttribute("aria-label", `tile ${tile}` + (actions.length ? ", playable" : ""));
    const [x, y] = tile.split("-");
    const top = document.createElement("span"); top.textContent = x;
    const bottom = document.createElement("span"); bottom.textContent = y;
    b.append(top, bottom);
    b.addEventListener("click", () => {
      if (!actions.length) return tryIllegal(tile);
      if (actions.length === 1) return play(actions[0]);
      choose(actions);
    });
    return b;
  }));
  $("choices").replaceChildren();
  $("extra-actions").replaceChildren(...legal.filter((a) => a === "draw" || a === "pass").map((a) => {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.action = a; b.className = "primary";
    b.textContent = a === "draw" ? "Draw a tile" : "Pass (knock)";
    b.addEventListener("click", () => play(a));
    return b;
  }));
  const over = $("round-end");
  over.hidden = !view.round_over;
  if (view.round_over) {
    $("round-result").textContent = `Round ${view.round_number}: ${view.ending}` +
      (view.winner != null ? `, won by ${name(view.winner)}` : "") + `. Round points ${view.round_points.join(" / ")}.` +
      (view.match_over ? " The match is over." : "");
    $("revealed").replaceChildren(...(view.revealed_hands || []).map((h, seat) => {
      const p = document.createElement("p"); p.textContent = `${name(seat)}: ${h.join(" ") || "-"}`; return p; }));
    $("next-round").hidden = !!view.match_over;
  }
}
const pips = (t) => t.split("-").map(Number).sort((a, b) => a - b);
const byPips = (a, b) => { const [a1, a2] = pips(a), [b1, b2] = pips(b); return a1 - b1 || a2 - b2; };
const sameTile = (a, b) => { const [a1, a2] = pips(a), [b1, b2] = pips(b); return a1 === b1 && a2 === b2; };
function choose(actions) {
  $("choices").replaceChildren(...actions.map((a) => {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.action = a;
    b.textContent = a.split("+").map((p) => { const [t, arm] = p.split("@"); return arm ? `${t} on ${arm.replace("!", " (closing)")}` : `${t} (lead)`; }).join(" + ");
    b.addEventListener("click", () => play(a));
    return b;
  }));
}

// The layout as the tiles lie: the lead at the centre, W and E arms along a line (W turning up and
// E down after as many tiles as the board's width holds at a readable size, 3 on a phone, at most 6),
// each spinner's N and S arms across, doubles crosswise. The SVG is scaled to the board (viewBox,
// width 100%), so however long the arms grow the drawing never makes the page wider than the screen.
const UNIT_PX = 22;   // the width of a tile's half the turn is worked out for
function turnAfter() {
  const board = $("board");
  const style = getComputedStyle(board);
  const width = board.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  if (!(width > 0)) return 6;
  return Math.max(3, Math.min(6, Math.floor((width / UNIT_PX - 2.8) / 4)));
}
function readLayout(layout) {
  const out = { lead: null, arms: {}, doubles: [], anchors: {} };
  const ends = {};
  for (const move of layout) for (const part of move.split("+")) {
    const m = /^(\d)-(\d)(?:@([NSEW]\d*)(!?))?$/.exec(part);
    if (!m) continue;
    const a = +m[1], b = +m[2], arm = m[3], closed = m[4] === "!";
    if (!arm) { out.lead = { near: a, far: b }; ends.W = a; ends.E = b; out.arms.W = []; out.arms.E = [];
      if (a === b) out.doubles.push(["", 0]); continue; }
    if (!(arm in ends)) {
      const k = Number(arm.slice(1) || 1);
      const where = out.doubles[k - 1] || ["", 0];
      out.anchors[arm] = where;
      const base = where[0] ? out.arms[where[0]][where[1]] : out.lead;
      ends[arm] = base.far; out.arms[arm] = [];
    }
    const near = ends[arm];
    const tile = { near, far: a === near ? b : a, closed };
    out.arms[arm].push(tile);
    ends[arm] = tile.far;
    if (tile.near === tile.far) out.doubles.push([arm, out.arms[arm].length - 1]);
  }
  return out;
}
function drawLayout(layout) {
  const svg = document.createElementNS(SVG, "svg");
  svg.id = "layout";
  svg.setAttribute("role", "img");
  if (!layout.length) {
    svg.setAttribute("viewBox", "-4 -1 8 2");
    svg.setAttribute("aria-label", "the table is empty");
    const t = document.createElementNS(SVG, "text");
    t.setAttribute("x", 0); t.setAttribute("y", 0.2); t.setAttribute("text-anchor", "middle");
    t.setAttribute("font-size", 0.6); t.setAttribute("fill", "#fff"); t.textContent = "The table is empty";
    svg.append(t);
    return svg;
  }
  const table = readLayout(layout);
  const spinners = new Set(Object.values(table.anchors).map((w) => w.join(":")));
  const turn = turnAfter();
  const rects = [];
  const place = (tile, x, y, w, h, horizontal, nearFirst, key) => {
    rects.push({ tile, x, y, w, h, horizontal, nearFirst, spinner: spinners.has(key) });
  };
  const lead = table.lead, leadDouble = lead.near === lead.far;
  if (leadDouble) place(lead, -0.5, -1, 1, 2, false, true, ":0");
  else place(lead, -1, -0.5, 2, 1, true, true, ":0");
  const positions = { "": [0, 0, leadDouble ? 1 : 2, leadDouble ? 2 : 1] };
  const half = leadDouble ? 0.5 : 1;
  const walk = (arm, start, dir, turnTo) => {
    let [cx, cy] = start, [dx, dy] = dir;
    // Not right after a spinner on this arm: its N and S arms need the room the turned arm would take.
    const lastSpinner = Math.max(-1, ...table.arms[arm].map((_, i) => (spinners.has(`${arm}:${i}`) ? i : -1)));
    const turnAt = Math.max(turn, lastSpinner + 2);
    table.arms[arm].forEach((tile, i) => {
      if (turnTo && i === turnAt) { cx -= dx * 0.5; cy -= dy * 0.5; [dx, dy] = turnTo; cx += dx * 0.5; cy += dy * 0.5; }
      const dbl = tile.near === tile.far, along = dx !== 0;
      const len = dbl ? 1 : 2, thick = dbl ? 2 : 1;
      const x0 = cx + dx * len, y0 = cy + dy * len;
      const w = along ? len : thick, h = along ? thick : len;
      const x = Math.min(cx, x0) - (along ? 0 : w / 2), y = Math.min(cy, y0) - (along ? h / 2 : 0);
      // A non-double lies along its arm (horizontal when the arm runs W-E); a double lies across it.
      place(tile, x, y, w, h, dbl ? !along : along, dx + dy > 0, `${arm}:${i}`);
      positions[`${arm}:${i}`] = [x + w / 2, y + h / 2, w, h];
      cx = x0; cy = y0;
    });
  };
  walk("W", [-half, 0], [-1, 0], [0, -1]);
  walk("E", [half, 0], [1, 0], [0, 1]);
  positions[":0"] = positions[""];
  for (const arm of Object.keys(table.arms).filter((a) => a !== "W" && a !== "E")) {
    const [ax, ay, , ah] = positions[table.anchors[arm].join(":")];
    const up = arm.startsWith("N");
    walk(arm, [ax, up ? ay - ah / 2 : ay + ah / 2], up ? [0, -1] : [0, 1], null);
  }
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const r of rects) {
    minX = Math.min(minX, r.x); minY = Math.min(minY, r.y); maxX = Math.max(maxX, r.x + r.w); maxY = Math.max(maxY, r.y + r.h);
    svg.append(domino(r));
  }
  const m = 0.4;
  svg.setAttribute("viewBox", `${minX - m} ${minY - m} ${maxX - minX + 2 * m} ${maxY - minY + 2 * m}`);
  svg.setAttribute("aria-label", `${rects.length} tiles on the table`);
  return svg;
}
const PIPS = { 0: [], 1: [[.5, .5]], 2: [[.25, .25], [.75, .75]], 3: [[.25, .25], [.5, .5], [.75, .75]],
  4: [[.25, .25], [.75, .25], [.25, .75], [.75, .75]], 5: [[.25, .25], [.75, .25], [.5, .5], [.25, .75], [.75, .75]],
  6: [[.25, .22], [.75, .22], [.25, .5], [.75, .5], [.25, .78], [.75, .78]] };
function domino(r) {
  const g = document.createElementNS(SVG, "g");
  const dbl = r.tile.near === r.tile.far;
  g.setAttribute("class", "domino" + (r.spinner ? " spinner" : "") + (r.tile.closed ? " closed" : ""));
  g.dataset.tile = `${Math.min(r.tile.near, r.tile.far)}-${Math.max(r.tile.near, r.tile.far)}`;
  const face = document.createElementNS(SVG, "rect");
  Object.entries({ x: r.x + 0.03, y: r.y + 0.03, width: r.w - 0.06, height: r.h - 0.06, rx: 0.12, class: "face" })
    .forEach(([k, v]) => face.setAttribute(k, v));
  g.append(face);
  const [first, second] = r.nearFirst ? [r.tile.near, r.tile.far] : [r.tile.far, r.tile.near];
  const halves = r.horizontal ? [[r.x, r.y, first], [r.x + r.w / 2, r.y, second]] : [[r.x, r.y, first], [r.x, r.y + r.h / 2, second]];
  const line = document.createElementNS(SVG, "line");
  const [x1, y1, x2, y2] = r.horizontal ? [r.x + r.w / 2, r.y + .15, r.x + r.w / 2, r.y + r.h - .15] : [r.x + .15, r.y + r.h / 2, r.x + r.w - .15, r.y + r.h / 2];
  Object.entries({ x1, y1, x2, y2, class: "mid" }).forEach(([k, v]) => line.setAttribute(k, v));
  g.append(line);
  for (const [hx, hy, value] of dbl ? [[r.x, r.y, r.tile.near], r.horizontal ? [r.x + r.w / 2, r.y, r.tile.near] : [r.x, r.y + r.h / 2, r.tile.near]] : halves) {
    for (const [px, py] of PIPS[value]) {
      const c = document.createElementNS(SVG, "circle");
      c.setAttribute("cx", hx + px); c.setAttribute("cy", hy + py); c.setAttribute("r", 0.09);
      g.append(c);
    }
  }
  const title = document.createElementNS(SVG, "title");
  title.textContent = `${r.tile.near}-${r.tile.far}` + (r.spinner ? " (spinner)" : "");
  g.append(title);
  return g;
}

// ---------------------------------------------------------------- Kingdomino
const TILE = Object.fromEntries(KINGDOMINO_TILES.map((t) => [t[0], t]));
const DIRS = { N: [0, 1], E: [1, 0], S: [0, -1], W: [-1, 0] };
function renderKingdomino(view) {
  const me = viewer(view);
  const legal = view.to_move === me ? view.legal || [] : [];
  const places = legal.filter((a) => a.startsWith("place ")).map((a) => {
    const [, tile, square, dir] = a.split(" "); const [x, y] = square.split(",").map(Number);
    return { action: a, tile: +tile, x, y, dir, x2: x + DIRS[dir][0], y2: y + DIRS[dir][1] };
  });
  const board = document.createElement("div");
  const rows = document.createElement("div");
  rows.className = "rows";
  const kingOwner = (k) => view.kings[k];
  const rowOf = (title, tiles, kind) => {
    const row = document.createElement("div");
    row.className = "row"; row.dataset.row = kind;
    row.append(title);
    for (const t of tiles) {
      const b = ktile(t.tile);
      if (t.king != null) { const k = document.createElement("span"); k.className = "king"; k.textContent = `♚ ${name(kingOwner(t.king))}`; b.append(k); }
      if (kind === "next") {
        const action = `pick ${t.tile}`;
        if (legal.includes(action)) b.classList.add("pickable");
        b.addEventListener("click", () => play(action));
      } else if (places.some((p) => p.tile === t.tile) || legal.includes(`discard ${t.tile}`)) b.classList.add("to-place");
      row.append(b);
    }
    return row;
  };
  rows.append(rowOf("To place:", view.current, "current"), rowOf("Next row:", view.next, "next"));
  board.append(rows);
  const kingdoms = document.createElement("div");
  kingdoms.className = "kingdoms";
  const size = view.options?.mighty_duel ? 6 : 4;
  view.grids.forEach((grid, player) => kingdoms.append(kingdom(grid, player, player === me ? places : [], size, player !== me)));
  board.append(kingdoms);
  $("board").replaceChildren(board);
  $("hand-title").textContent = places.length ? "Place your tile: click its first square, then the second" :
    legal.some((a) => a.startsWith("pick")) ? "Pick a tile of the next row" : "";
  $("hand").replaceChildren();
  $("choices").replaceChildren();
  $("extra-actions").replaceChildren(...legal.filter((a) => a.startsWith("discard")).map((a) => {
    const b = document.createElement("button"); b.type = "button"; b.dataset.action = a; b.className = "primary";
    b.textContent = `Discard tile ${a.split(" ")[1]} (it fits nowhere)`; b.addEventListener("click", () => play(a)); return b;
  }));
  $("round-end").hidden = !view.game_over;
  if (view.game_over) {
    $("round-result").textContent = `Game over. Winner: ${view.winners.map(name).join(", ")} (decided by ${view.decided_by}).`;
    $("revealed").replaceChildren();
    $("next-round").hidden = true;
  }
}
function ktile(number) {
  const [, t1, c1, t2, c2] = TILE[number];
  const b = document.createElement("button");
  b.type = "button"; b.className = "ktile"; b.dataset.tile = number;
  b.setAttribute("aria-label", `tile ${number}: ${t1} ${c1} crowns, ${t2} ${c2} crowns`);
  const num = document.createElement("span"); num.className = "num"; num.textContent = number;
  b.append(num, square(t1, c1), square(t2, c2));
  return b;
}
function square(terrain, crowns) {
  const s = document.createElement("span");
  s.className = `sq ${terrain}`;
  s.textContent = "♛".repeat(crowns);
  return s;
}
function kingdom(grid, player, places, size, small) {
  const box = document.createElement("div");
  box.className = "kingdom" + (small ? " small" : "");
  box.dataset.player = player;
  const h = document.createElement("h3"); h.textContent = name(player); box.append(h);
  const g = document.createElement("div");
  g.className = "grid";
  g.style.gridTemplateColumns = `repeat(${2 * size + 1}, auto)`;
  const at = new Map(grid.map((s) => [`${s.x},${s.y}`, s]));
  for (let y = size; y >= -size; y--) for (let x = -size; x <= size; x++) {
    const cell = document.createElement("button");
    cell.type = "button"; cell.className = "cell"; cell.dataset.x = x; cell.dataset.y = y;
    const s = at.get(`${x},${y}`);
    if (x === 0 && y === 0) { cell.classList.add("castle"); cell.textContent = "♜"; }
    else if (s) { cell.classList.add(s.terrain); cell.textContent = "♛".repeat(s.crowns); }
    if (!small) {
      if (pending) {
        if (places.some((p) => p.x === pending.x && p.y === pending.y && p.x2 === x && p.y2 === y)) cell.classList.add("second-ok");
        if (pending.x === x && pending.y === y) cell.classList.add("chosen");
      } else if (places.some((p) => p.x === x && p.y === y)) cell.classList.add("first-ok");
      cell.addEventListener("click", () => clickCell(x, y, places));
    }
    g.append(cell);
  }
  box.append(g);
  return box;
}
function clickCell(x, y, places) {
  const tile = game.view.current.find((t) => game.view.kings[t.king] === viewer(game.view))?.tile ?? places[0]?.tile;
  if (pending) {
    const found = places.find((p) => p.x === pending.x && p.y === pending.y && p.x2 === x && p.y2 === y);
    if (pending.x === x && pending.y === y) { pending = null; render(); return; }
    const dir = Object.entries(DIRS).find(([, [dx, dy]]) => pending.x + dx === x && pending.y + dy === y)?.[0];
    const action = found ? found.action : `place ${tile} ${pending.x},${pending.y} ${dir || "E"}`;
    pending = null;
    play(action);
    return;
  }
  if (places.some((p) => p.x === x && p.y === y)) { pending = { x, y }; warn(""); render(); return; }
  if (tile == null) { warn("Nothing to place now."); return; }
  play(`place ${tile} ${x},${y} E`);   // not a legal first square: the engine says why, nothing changes
}

// ---------------------------------------------------------------- start
$("setup").addEventListener("submit", newMatch);
$("next-round").addEventListener("click", nextRound);
// The arms turn where the board's width says: a new width (a phone turned sideways) redraws the layout.
let lastWidth = $("board").clientWidth;
new ResizeObserver(() => {
  const width = $("board").clientWidth;
  if (width === lastWidth) return;
  lastWidth = width;
  if (game && !isKD() && game.view?.layout) $("board").replaceChildren(drawLayout(game.view.layout));
}).observe($("board"));
loadVariants().then(() => {
  const saved = sessionStorage.getItem("domino-play");
  if (saved) { game = JSON.parse(saved); render(); }
}).catch((err) => warn(`The gateway does not answer: ${err.message}`));
