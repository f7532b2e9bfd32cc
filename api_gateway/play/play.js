// The browser table: one person (seat 0) against computer players, through the REST API in sealed mode.
// The page holds the match's token and the keys of the human seats only (sessionStorage, so a reload
// resumes); it shows the view of the human seat concerned and nothing else. No framework, no build step.
// Play with friends (docs/tables.md): a seat at an online table, its credential in localStorage per table
// (a reload comes back to the seat), the other seats' moves arriving on the seat's event stream.
import { KINGDOMINO_TILES } from "/play/kingdomino-tiles.js";
import { lang, setLanguage, t as tr, translatePage, variantName } from "/play/i18n.js";
import { offerPush } from "/play/push.js";

const LEVELS = ["expert", "greedy", "random", "human"];
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
let game = null;      // {variant, players, levels, token, keys, hostKey, view, scores, log, moves}
                      // at a table also {table, credential, me, names, matchId, seq, seen, invites}
let variants = [];
let pending = null;   // Kingdomino: the first square chosen for a placement
let choosing = null;  // the matching games: {tile, actions} while a tile that fits several ends waits for one

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
  if (game.table) { absorb(answer); return; }
  if (answer.token) game.token = answer.token;
  if (answer.view) { game.view = answer.view; keepRounds(answer.view); }
  if (answer.scores) game.scores = answer.scores;
  for (const e of answer.events || []) { remember(e); logEvent(e); }
  save();
}
// The round's turns in order, each a seat's play or knock (a draw does not end a turn): what the board
// marks as the last moves.
function remember(e) {
  if (e.type === "round_dealt") { game.moves = []; game.movesRound = e.number; }
  if (e.type === "played" || e.type === "passed") game.moves.push({ seat: e.seat, action: e.action ?? null });
  // The exits of a match (issue 37): how it ended, said by the status line; and the seats that have acted,
  // for the abort button (an abort is open only until every person has made a move).
  if (EXITS.includes(e.type)) game.exit = { type: e.type, seat: e.seat ?? e.player };
  const actor = e.seat ?? e.player;
  if (ACTS.includes(e.type) && actor != null && !(game.acted ?? []).includes(actor)) game.acted = [...(game.acted ?? []), actor];
}
const EXITS = ["resigned", "aborted", "gone"];
const ACTS = ["played", "passed", "drew", "tile_picked", "tile_placed", "tile_discarded"];
// The turns since the seat's own last turn in this round (all of them before its first).
function turnsSince(seat) {
  const moves = game.moves;
  let from = moves.length;
  while (from > 0 && moves[from - 1].seat !== seat) from--;
  return moves.slice(from);
}
// The tiles played since then (the board marks them) ...
const movesSince = (seat) => turnsSince(seat).filter((m) => m.action);
// ... and the seats that knocked since then, which the board cannot show (their chips say so): only while
// the round they knocked in is being played (not once it is over, nor in the next round when its deal
// reached the page as a view without its events, as after a seat dealt it at a table).
function knockedSince(seat, view) {
  const stale = view.round_over || (game.movesRound != null && game.movesRound !== view.round_number);
  return new Set(stale ? [] : turnsSince(seat).filter((m) => !m.action).map((m) => m.seat));
}
// The match's score table, a row per finished round. A state keeps the last round's row only (a call's
// cost must not grow with the match), so the page keeps every row it has seen, by round number, with the
// game it saves: a reload keeps them, and a view with no row yet is a match that has finished no round.
function keepRounds(view) {
  const rows = view?.ledger?.history;
  if (!rows) return;
  if (rows.length === 0) { game.rounds = {}; return; }
  game.rounds = game.rounds ?? {};
  for (const row of rows) game.rounds[row.number] = row;
}
const roundRows = () => Object.values(game.rounds ?? {}).sort((a, b) => a.number - b.number);
function save() {
  if (game?.watching) return;   // a spectator holds nothing: its link opens the view again
  if (game?.tournament) return;  // a tournament's round: the tournament's credential comes back to it
  if (game?.table) localStorage.setItem(tableKey(game.table.table_id), JSON.stringify(game));
  else if (game) sessionStorage.setItem("domino-play", JSON.stringify(game));
}

// ---------------------------------------------------------------- names and messages
const isKD = () => game.variant === "kingdomino";
// The person's own seat: 0 against the computer, the seat taken at a table.
const me = () => game.me ?? 0;
// At a table a person is named by the name they gave ("Boris"), a bot by its seat and level.
const person = (seat) => (game.table ? game.names?.[seat] : null);
// Seats are numbered from 1 on the screen, as people count them (the API's seat 0 is "Seat 1").
const seatNo = (seat) => seat + 1;
function name(seat) {
  if (seat === me()) return tr("you");
  if (person(seat)) return person(seat);
  const level = game.levels[seat];
  return level === "human" || level === "person" ? tr("seat", seatNo(seat)) : tr("seat.level", seatNo(seat), level);
}
// Where room is short (seat chips, kings, marks on the board): "You", "Seat 2" (at a table, "Boris").
const shortName = (seat) => (seat === me() ? tr("you") : person(seat) || tr("seat", seatNo(seat)));
// A verb in the present that agrees with the seat: "You lead", "Seat 2 (expert) leads" (i18n.js: leads, wins).
const does = (seat, verb) => tr(verb, name(seat), seat === me());
// The seat after a verb or a preposition: "won by you".
const whom = (seat) => (seat === me() ? tr("you.lower") : name(seat));
// The variant as /v1/variants describes it, its family (RULES.md section) and an option's value in this match.
const variantOf = () => variants.find((v) => v.name === game.variant) || { options: [] };
const family = () => variantOf().family;
const option = (key) => game.view?.options?.[key] ?? variantOf().options.find((o) => o.name === key)?.default;
function viewer(view) { return view.seat ?? view.player ?? null; }
function say(text) { $("status").textContent = text; }
function warn(text) {
  const m = $("message"); m.textContent = text; m.hidden = !text;
  if (text) document.body.dataset.warnings = Number(document.body.dataset.warnings || 0) + 1;
}
// The log: its lines (`log`, in the page's language) and the events they tell (`told`), so that the
// language switch retells the whole log.
function logEvent(e) {
  const text = describe(e);
  if (!text) return;
  game.log.push(text);
  game.told = [...(game.told || []), e].slice(-60);
  if (game.log.length > 60) game.log.shift();
}
function describe(e) {
  const who = e.seat != null ? name(e.seat) : e.player != null ? name(e.player) : "";
  switch (e.type) {
    case "played": return tr("log.played", who, e.action);
    case "drew": return e.tile ? tr("log.drew", who, e.tile) : tr("log.drew-one", who);
    case "passed": return tr("log.knocked", who);
    // In play (All Fives, Threes and Fives): why, the open ends' count that scored.
    case "points_scored": return tr("log.scored", who, e.points, e.count);
    case "round_ended": return tr("log.round-over", e.record.number, tr("ending", e.record.ending));
    case "match_ended": return tr("log.match-over");
    case "round_dealt": return tr("log.dealt", e.number) + (e.leader != null ? `; ${does(e.leader, "leads")}` : "");
    case "tile_picked": return tr("log.picked", who, e.tile);
    case "tile_placed": return tr("log.placed", who, e.tile);
    case "tile_discarded": return tr("log.discarded", who, e.tile);
    case "row_laid": return tr("log.row", e.tiles.join(", "));
    case "game_over": return tr("log.game-over", sidePoints(e.scores));
    case "dynasty_over": return tr("log.dynasty-over", sidePoints(e.scores));
    case "timed_out": return tr("log.timed-out", who);
    case "resigned": return tr("log.resigned", who, e.seat === me());
    case "aborted": return tr("log.aborted", who);
    case "gone": return tr("log.gone", who);
    default: return null;
  }
}

// ---------------------------------------------------------------- setup form
async function loadVariants() {
  variants = (await call("/v1/variants")).variants;
  const select = $("variant");
  select.replaceChildren(...variants.map((v) => new Option(variantName(v.name), v.name)));
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
    s.setAttribute("aria-label", tr("seat", seatNo(seat)));
    s.replaceChildren(...LEVELS.map((l) => new Option(tr("level", l), l)));
    s.value = old[seat - 1] || "expert";
    const label = document.createElement("label");
    label.append(`${tr("seat", seatNo(seat))} `, s);
    selects.push(label);
  }
  box.replaceChildren(...selects);
}

async function newMatch(event) {
  event?.preventDefault();
  warn("");
  leaveTable();
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
             view: answer.view, scores: answer.scores, log: [], told: [], moves: [] };
    pending = choosing = null;
    take(answer);
    $("setup-box").open = false;
    await showSeat(humanToMove() ?? 0);
  } catch (err) { warn(tr("no-start", err.message)); }
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
  if (game.table) return playAtTable(action);
  const seat = viewer(game.view);
  warn("");
  const before = game.token;
  try {
    take(await call("/v1/matches/apply", { ...carrier(seat), action }));
  } catch (err) {
    game.token = before;
    warn(tr("not-allowed", err.message.includes(action) ? err.message : `${action}: ${err.message}`));
    return;
  }
  pending = choosing = null;
  const next = humanToMove();
  if (next != null && next !== viewer(game.view)) await showSeat(next);
  else render();
}
async function nextRound() {
  warn("");
  if (game.table) return nextRoundAtTable();
  try {
    take(await call("/v1/matches/next-round", carrier(0)));
    await showSeat(humanToMove() ?? 0);
  } catch (err) { warn(tr("no-next", err.message)); }
}
// A click on a tile that cannot be played: the engine says why (nothing changes).
function tryIllegal(tile) {
  const arms = Object.keys(game.view.ends || {});
  const action = game.view.layout.length ? `${tile}@${arms[0] || "E"}` : tile;
  play(action);
}

// ---------------------------------------------------------------- drawing: common
// One place draws each part of the page from `game`: the title, the status line, the seats, the board
// and hand (per game), the scores and their legend, the log.
function render() {
  const view = game.view;
  showScreen("table");
  $("match-title").textContent = `${variantName(game.variant)}, ${tr("players", game.players)}`
    + (game.table ? ` · ${tableName(game.table)}` : "");
  renderTableBar(view);
  renderStatus(view);
  renderSeats(view);
  if (isKD()) renderKingdomino(view); else renderMatching(view);
  renderScores(view);
  renderLegend(view);
  renderRatingChange(view);
  $("log").replaceChildren(...game.log.slice(-25).map((text) => { const li = document.createElement("li"); li.textContent = text; return li; }));
  $("log").scrollTop = 1e6;
  document.body.dataset.renders = Number(document.body.dataset.renders || 0) + 1;   // for tests and screen readers' tools
}
// A match ends mid-round too: a seat's turn clock ran out under the variant's timeout rule.
const isOver = (view) => (isKD() ? view.game_over : view.round_over || view.match_over);
// The seat to move, or null once the round (game) is over.
const toMove = (view) => (isOver(view) ? null : view.to_move ?? null);
// " Boris's time ran out." when a turn clock ended the match: the archive's `timed_out` once the page has the
// match's record, else the seat whose clock the last line shows at 0.
function timedOut() {
  // (Against the computer there is neither: a match with no id is not archived.)
  const archived = game.ratingChange && game.ratingChange.matchId === game.matchId ? game.ratingChange.timedOut : undefined;
  const zero = (game.clocks?.remaining || []).findIndex((left) => left <= 0);
  const seat = archived !== undefined ? archived : zero >= 0 ? zero : null;
  return seat == null ? "" : seat === me() ? tr("status.your-time") : tr("status.their-time", name(seat));
}
// " Boris resigned.", " The match was aborted: no result, no rating.", " Boris was gone: victory claimed."
function exitText() {
  const exit = game.exit;
  if (!exit) return "";
  if (exit.type === "resigned") return exit.seat === me() ? tr("status.you-resigned") : tr("status.resigned", name(exit.seat));
  if (exit.type === "aborted") return tr("status.aborted", name(exit.seat), exit.seat === me());
  return tr("status.gone", name(exit.seat));
}
function renderStatus(view) {
  const seat = toMove(view);
  // a Bykovo tournament's round is one round of the table's match (a Swiss plays the whole match: rounds as any table's)
  if (game.tournament && !game.swiss && view.round_over) { say(tr("tour.round-over")); return; }
  if (game.exit) say(tr("status.match-over") + exitText());
  else if (isOver(view)) say(isKD() ? tr("status.game-over") : view.match_over ? tr("status.match-over") + timedOut() : tr("status.round-over"));
  else if (seat == null) say(tr("status.waiting"));
  else if (seat === viewer(view)) say(seat === me() ? tr("status.your-turn") : tr("status.seat-turn", name(seat)) + (game.keys.filter(Boolean).length > 1 ? tr("status.hot-seat") : ""));
  else if (game.table && game.table.seats[seat]?.kind === "open" && !game.table.seats[seat].taken) say(tr("status.wait-seat", seatNo(seat)));
  else say(tr("status.to-move", name(seat)));
  // At a table the other moves come while this tab may be in the background: its title says when it is yours.
  if (game.table) document.title = (seat != null && seat === me() ? tr("title.your-turn") : "") + tr("page.title");
}
// What to do now, above the board, with the buttons that do it when they belong there.
function setPrompt(text, ...buttons) { const p = $("prompt"); p.replaceChildren(text, ...buttons); p.hidden = !text; }
// A chip per seat: its name, its level, its tiles and its score (Kingdomino: points), and "knocked" when
// it knocked since the viewer's last turn; the seat to move highlighted. The score is on the first
// screen beside the board on a phone, where the score table is below it.
function renderSeats(view) {
  const moving = toMove(view);
  const knocked = isKD() ? new Set() : knockedSince(viewer(view), view);
  $("opponents").replaceChildren(...Array.from({ length: game.players }, (_, seat) => {
    const chip = document.createElement("span");
    chip.className = `seat seat-${seat}` + (seat === moving ? " to-move" : "") + (knocked.has(seat) ? " knocked" : "");
    chip.dataset.seat = seat;
    const who = document.createElement("b"); who.textContent = shortName(seat);
    const here = presence(seat);
    if (here) {
      const dot = document.createElement("span");
      dot.className = `presence ${here.state}`; dot.dataset.presence = here.state; dot.title = here.text;
      who.prepend(dot);
    }
    const level = document.createElement("small"); level.textContent = seatNote(seat);
    const count = document.createElement("span");
    count.textContent = isKD() ? tr("chip.points", view.scores[seat]) : tr("tiles", view.hand_sizes[seat]);
    chip.append(who, level, count);
    const said = [count.textContent];
    if (!isKD()) {
      const score = document.createElement("small");
      score.className = "chip-score";
      // A side's score (a team's when the scores are the teams', seats 0+2 and 1+3).
      score.textContent = tr("chip.score", game.scores[seat % game.scores.length]);
      chip.append(score);
      said.push(score.textContent);
    }
    if (knocked.has(seat)) {
      const did = document.createElement("small");
      did.className = "did"; did.textContent = tr("chip.knocked");
      chip.append(did);
      said.push(did.textContent);
    }
    const clock = clockChip(seat, chip);
    if (clock) said.push(clock);
    const rated = ratingChip(seat, chip);
    if (rated) said.push(rated);
    if (here) said.push(here.text);
    chip.title = `${name(seat)}: ${said.join(", ")}`;
    return chip;
  }));
  tickClocks();
}

// The families whose scores are penalties (RULES.md K, O, B): the first to reach the limit loses.
const LOSER = { K: "goat", O: "donkey", B: "out" };
const BYKOVO_LIMIT = 100;   // RULES.md B: 4 seats play to 100
const remembers = () => family() === "K" || family() === "O";
function sideNames() {
  return game.scores.length === game.players ? Array.from({ length: game.players }, (_, s) => name(s))
    : game.scores.map((_, i) => tr("team", i + 1));
}
// Points side by side, each with its side's name: "Anna 14 · Boris 17 · Seat 3 2" (not "14 / 17 / 2").
function sidePoints(points) {
  const names = points.length === game.players ? points.map((_, s) => shortName(s)) : points.map((_, i) => tr("team", i + 1));
  return points.map((p, i) => `${names[i]} ${p}`).join(" · ");
}
// What the score table's rows and markers mean, each with its label and explanation (the legend and the
// tooltips): {id: [label, explanation]}.
function scoreTerms() {
  const f = family();
  if (remembers()) {
    const threshold = option("open_threshold") ?? 13, animal = LOSER[f];
    // Eggs only where a fish scored to the single highest hand can tie (RULES.md K max_takes_all, O).
    const eggs = f === "K" ? option("fish_scoring") === "max_takes_all" : option("fish_scoring") !== "own";
    return {
      written: [tr("scores.written"), tr("term.written", option("target"), animal)],
      remembered: [tr("scores.remembered"), tr("term.remembered", threshold)],
      fish: [tr("scores.fish"), tr("term.fish")],
      ...(eggs && { eggs: [tr("scores.eggs-term"), tr("term.eggs")] }),
    };
  }
  if (f === "B") return { score: [tr("scores.score"), tr("term.bykovo", BYKOVO_LIMIT)], fish: [tr("scores.fish"), tr("term.bykovo-fish")] };
  if (f === "BL") return { score: [tr("scores.score"), tr("term.block")] };
  return { score: [tr("scores.score"), tr("term.score", option("target"))] };
}
// The seats (teams) nearest to losing where high is bad: "Closest to the goat: Seat 2 (64 of 101)".
function closestToLosing(view) {
  const animal = LOSER[family()];
  if (!animal || view.match_over) return null;
  const limit = family() === "B" ? BYKOVO_LIMIT : option("target");
  const top = Math.max(...game.scores);
  const what = animal === "out" ? tr("closest.out") : tr("animal", animal);
  if (!(top > 0)) return tr("closest.none", what);
  const names = sideNames().filter((_, i) => game.scores[i] === top);
  return tr("closest.some", what, names.join(", "), top, limit);
}
function renderScores(view) {
  const table = document.createElement("table");
  table.className = "scores";
  const head = table.insertRow();
  const sides = sideNames();
  const terms = isKD() ? {} : scoreTerms();
  // "Seat 2" over "expert" rather than "Seat 2 (expert)", and a long name cut short (whole in its title):
  // four seats' columns fit a phone's width and the side column of a wide screen.
  for (const label of ["", ...sides]) {
    const th = document.createElement("th");
    const [who, level] = label.split(" (");
    const full = document.createElement("span"); full.className = "who"; full.textContent = who;
    th.append(full);
    if (who) th.title = label;
    if (level) { const small = document.createElement("small"); small.textContent = level.slice(0, -1); th.append(small); }
    head.append(th);
  }
  if (isKD()) {
    addRow(table, tr("scores.points"), view.scores);
    addRow(table, tr("scores.crowns"), view.crowns);
    addRow(table, tr("scores.largest"), view.largest_region);
    if (view.dynasty) addRow(table, tr("scores.dynasty"), view.dynasty.totals?.map((x) => x.scores ?? x) ?? []);
  } else {
    const ledger = view.ledger;
    for (const record of roundRows()) {
      const row = addRow(table, tr("scores.round", record.number), record.scores);
      if (record.ending === "fish") marker(row.cells[0], "fish", tr("scores.fish"), terms.fish?.[1]);
      if (record.pot) marker(row.cells[0], "eggs", tr("scores.eggs", record.pot), terms.eggs?.[1]);
    }
    const total = addRow(table, remembers() ? tr("scores.written") : tr("scores.score"), game.scores,
      (terms.written ?? terms.score)?.[1]);
    total.className = "total";
    if (remembers()) {
      addRow(table, tr("scores.remembered"), ledger.remembered, terms.remembered[1]);
      if (ledger.pot) marker(total.cells[0], "eggs", tr("scores.pot", ledger.pot), terms.eggs?.[1]);
    }
    // The losers' row: "Goat" and a mark under each loser (not the word again: "goat goat").
    if (view.match_over && view.losers?.length) {
      const animal = LOSER[family()];
      const label = animal ? tr("scores.loser", animal) : tr("scores.lost");
      const row = addRow(table, label, sides.map((_, i) => (view.losers.includes(i) ? "✗" : "")));
      row.id = "losers";
      for (const [i, cell] of [...row.cells].slice(1).entries()) if (view.losers.includes(i)) cell.title = tr("scores.loses");
    }
  }
  $("scores").replaceChildren(table);
}
// Under the score table: what its words mean, whether high is good, and who is closest to losing.
function renderLegend(view) {
  const lines = Object.values(isKD() ? {} : scoreTerms()).map(([term, text]) => {
    const li = document.createElement("li");
    const b = document.createElement("b"); b.textContent = term;
    li.append(b, `: ${text}`);
    return li;
  });
  const closest = closestToLosing(view);
  if (closest) { const li = document.createElement("li"); li.id = "closest"; li.textContent = closest; lines.push(li); }
  $("score-legend").replaceChildren(...lines);
}
// A row of the score table; `explanation` is its label's tooltip.
function addRow(table, label, values, explanation) {
  const row = table.insertRow();
  const head = row.insertCell();
  head.textContent = label;
  if (explanation) head.title = explanation;
  for (const v of values) row.insertCell().textContent = v;
  return row;
}
function marker(cell, kind, text, explanation) {
  const m = document.createElement("span");
  m.className = `marker ${kind}`;
  m.textContent = text;
  if (explanation) m.title = explanation;
  cell.append(m);
}

// ---------------------------------------------------------------- the matching games
function renderMatching(view) {
  const mine = viewer(view);
  const legal = view.to_move === mine ? view.legal || [] : [];
  const moves = legalMoves(view);
  if (choosing && !choosing.actions.every((a) => legal.includes(a))) choosing = null;
  $("board").className = "layout";
  setPrompt(choosing ? tr("choose.prompt", choosing.tile) : "");
  // A heading over nothing read as a hand that failed to show: the seat that went out is told so.
  const whose = mine === me() ? tr("hand.yours") : tr("hand.of", name(mine));
  $("hand-title").textContent = (view.hand || []).length ? whose : tr("hand.empty", whose);
  renderHand(view, legal, moves);
  renderChoices(moves);
  $("extra-actions").replaceChildren(...legal.filter((a) => a === "draw" || a === "pass").map((a) => {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.action = a; b.className = "primary";
    b.textContent = a === "draw" ? tr("action.draw") : tr("action.pass");
    b.addEventListener("click", () => play(a));
    return b;
  }));
  renderRoundEnd(view);
  drawBoard();   // last: the drawing is scaled to the room the rest leaves
}
// Each legal action with its structured form (the view's legal_moves, in the same order), by action.
function legalMoves(view) {
  const legal = view.legal || [];
  return new Map(legal.map((a, i) => [a, (view.legal_moves || [])[i]]));
}
function renderHand(view, legal, moves) {
  const hand = [...(view.hand || [])].sort(byPips);   // (a spectator's public view holds no hand)
  $("hand").replaceChildren(...hand.map((tile) => {
    const actions = legal.filter((a) => moves.get(a)?.placements.some((p) => sameTile(p.tile, tile)));
    const b = document.createElement("button");
    b.type = "button";
    b.className = "tile" + (actions.length ? " legal" : "") + (choosing?.tile === tile ? " chosen" : "");
    b.dataset.tile = tile;
    b.setAttribute("aria-label", tr("tile.aria", tile, actions.length > 0));
    const [x, y] = tile.split("-");
    const top = document.createElement("span"); top.textContent = x;
    const bottom = document.createElement("span"); bottom.textContent = y;
    b.append(top, bottom);
    b.addEventListener("click", () => {
      if (!actions.length) return tryIllegal(tile);
      if (actions.length === 1) return play(actions[0]);
      choose(tile, actions);
    });
    return b;
  }));
}
function renderRoundEnd(view) {
  $("round-end").hidden = !view.round_over;
  if (!view.round_over) return;
  // Each seat's round points with its name: "Round points: You 0 · Boris 17 · Seat 3 2".
  $("round-result").textContent = tr("round.result", view.round_number, tr("ending", view.ending)) +
    (view.winner != null ? tr("round.won-by", whom(view.winner), view.winner === me(), view.ending) : "") + tr("round.points", sidePoints(view.round_points)) +
    (view.match_over ? tr("round.match-over") : "");
  $("revealed").replaceChildren(...(view.revealed_hands || []).map((h, seat) => {
    const p = document.createElement("p"); p.textContent = `${name(seat)}: ${h.join(" ") || "-"}`; return p; }));
  // a Bykovo tournament deals its next round elsewhere; a Swiss's match is dealt on to its end here
  $("next-round").hidden = !!view.match_over || (!!game.tournament && !game.swiss);
}
const pips = (t) => t.split("-").map(Number).sort((a, b) => a - b);
const byPips = (a, b) => { const [a1, a2] = pips(a), [b1, b2] = pips(b); return a1 - b1 || a2 - b2; };
const sameTile = (a, b) => { const [a1, a2] = pips(a), [b1, b2] = pips(b); return a1 === b1 && a2 === b2; };
// The open end a move of one tile goes to (3-6 on W -> "W"), or null for a lead or a move of several tiles.
function endOf(move) {
  return move && move.placements.length === 1 ? move.placements[0].arm : null;
}
// A tile that fits several ends: the board marks each end it fits (a tap plays there) and the buttons
// below name every move, closing ones included.
function choose(tile, actions) {
  choosing = { tile, actions };
  render();
}
function renderChoices(moves) {
  $("choices").replaceChildren(...(choosing?.actions || []).map((a) => {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.action = a;
    b.textContent = (moves.get(a)?.placements || []).map((p) => (p.arm ? tr("choice.on", p.tile, p.arm, p.closes) : tr("choice.lead", p.tile))).join(" + ");
    b.addEventListener("click", () => play(a));
    return b;
  }));
}
// A tap on an end the chosen tile fits: the move there, or (an Osel double that may close the arm or not)
// only that end's buttons.
function tapEnd(actions) {
  if (actions.length === 1) return play(actions[0]);
  choosing = { ...choosing, actions };
  render();
}
function drawBoard() {
  const view = game.view;
  const playedBy = new Map(movesSince(viewer(view)).map((m) => [m.action, m.seat]));
  const moves = legalMoves(view);
  const targets = new Map();
  for (const a of choosing?.actions || []) {
    const end = endOf(moves.get(a));
    if (end) targets.set(end, [...(targets.get(end) || []), a]);
  }
  $("board").replaceChildren(drawLayout(view.layout, view.table, Object.keys(view.ends || {}), playedBy,
    choosing && { tile: choosing.tile, targets }));
}

// The layout as the tiles lie: the lead at the centre, W and E arms along a line (W turning up and
// E down after as many tiles as the board's width holds at a readable size, 3 on a phone, at most 6;
// on a layout with no spinner, then back and forth in rows above and below the line), each spinner's
// N and S arms across, doubles crosswise. The SVG is scaled to the board (viewBox),
// so however long the arms grow the drawing never makes the page wider than the screen.
// Each open end is labelled with its arm's name; the moves played since the viewer's last move are
// outlined in their seat's colour with the seat's badge; while a tile waits for an end, each end it
// fits shows where it would lie, a target to tap.
const UNIT_PX = 22;       // the width of a tile's half the turn is worked out for
const MAX_UNIT_PX = 34;   // a short layout is not blown up past this
const MIN_MARK_PX = 15;   // however long the layout, a seat's badge and an end's name stay readable
// The board's inner width and height in pixels (0 before it is laid out).
function boardSize() {
  const board = $("board");
  const style = getComputedStyle(board);
  return [board.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
    board.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)];
}
function turnAfter() {
  const [width] = boardSize();
  if (!(width > 0)) return 6;
  return Math.max(3, Math.min(6, Math.floor((width / UNIT_PX - 2.8) / 4)));
}
// The view's table (docs/rest.md: the arms as the tiles lie, the open ones that hold no tile yet
// included), as the drawing walks it: each tile {near, far, closed, move} (move: its index in layout),
// and where each spinner's side grows from (["", 0]: the lead).
function readTable(table) {
  const [west, east] = table.lead;
  const out = { lead: { near: west, far: east, move: 0 }, arms: {}, anchors: {} };
  for (const [arm, line] of Object.entries(table.arms)) {
    out.arms[arm] = line.tiles.map(([near, far], i) =>
      ({ near, far, closed: line.closed && i === line.tiles.length - 1, move: line.order[i] }));
    if (line.from) out.anchors[arm] = [line.from.arm || "", line.from.index];
  }
  return out;
}
const svgNode = (tag, attributes, text) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  if (text != null) node.textContent = text;
  return node;
};
// The rectangle of a tile laid from (cx, cy) going (dx, dy): a double lies across the arm.
function step(cx, cy, dx, dy, double) {
  const along = dx !== 0, len = double ? 1 : 2, thick = double ? 2 : 1;
  const x1 = cx + dx * len, y1 = cy + dy * len;
  const w = along ? len : thick, h = along ? thick : len;
  return { x: Math.min(cx, x1) - (along ? 0 : w / 2), y: Math.min(cy, y1) - (along ? h / 2 : 0), w, h,
           along, from: [cx, cy, dx, dy], next: [x1, y1] };
}
// An arm's pen: where its next tile starts and which way it goes. An arm runs `turnAt` tiles, then
// turns once (`turnTo`: W up, E down); with a `bound` (a line with no spinner arms to make room for)
// it then goes back and forth in rows as wide as the line, 2.5 units apart, so that a long layout
// fills a tall board (a phone's) instead of running off in a thin column. Pure: `nextTile` returns
// the tile's rectangle and the pen after it, so a tile that might go there is drawn the same way.
function pen(start, dir, turnTo, turnAt, bound) {
  return { x: start[0], y: start[1], dx: dir[0], dy: dir[1], turnTo, turnAt, bound, rowDx: dir[0],
           stretch: "first", count: 0, tiles: 0, moved: 0, lastHalf: 0.5 };
}
function nextTile(before, double) {
  const p = { ...before }, len = double ? 1 : 2;
  // Round the corner: back `back` units, then out past the last tile's half-width the new way. The first
  // turn lies the new tile over the last one's far half; the rows' turns lie it half a unit further
  // out, so the rows stand 2.5 units apart and a badge fits between them.
  const turn = ([ex, ey], stretch, back) => {
    p.x += -p.dx * back + ex * p.lastHalf; p.y += -p.dy * back + ey * p.lastHalf;
    [p.dx, p.dy] = [ex, ey]; p.stretch = stretch; p.tiles = 0; p.moved = 0;
  };
  if (p.stretch === "first" && p.turnTo && p.count === p.turnAt) turn(p.turnTo, "climb", 0.5);
  else if (p.stretch === "climb" && p.bound && p.moved >= 2) { p.rowDx = -p.rowDx; turn([p.rowDx, 0], "row", 0); }
  else if (p.stretch === "row" && p.tiles > 0 && Math.abs(p.x + p.dx * len) > p.bound) turn(p.turnTo, "climb", 0);
  const rect = { ...step(p.x, p.y, p.dx, p.dy, double), stretch: p.stretch, rowDx: p.rowDx };
  [p.x, p.y] = rect.next;
  p.count += 1; p.tiles += 1; p.moved += len; p.lastHalf = double ? 1 : 0.5;
  return { rect, pen: p };
}
function drawLayout(layout, viewTable, openArms, playedBy, choice) {
  const svg = svgNode("svg", { id: "layout", role: "img" });
  if (!layout.length) {
    svg.setAttribute("viewBox", "-4 -1 8 2");
    svg.setAttribute("aria-label", tr("board.empty"));
    svg.append(svgNode("text", { x: 0, y: 0.2, "text-anchor": "middle", "font-size": 0.6, fill: "#fff" }, tr("board.empty")));
    return svg;
  }
  const table = readTable(viewTable);
  const spinners = new Set(Object.values(table.anchors).map((w) => w.join(":")));
  const turn = turnAfter();
  const rects = [], pens = {};
  const place = (tile, r, horizontal, nearFirst, key, arm) => {
    rects.push({ tile, ...r, horizontal, nearFirst, spinner: spinners.has(key), arm });
  };
  const lead = table.lead, leadDouble = lead.near === lead.far;
  if (leadDouble) place(lead, { x: -0.5, y: -1, w: 1, h: 2 }, false, true, ":0", "");
  else place(lead, { x: -1, y: -0.5, w: 2, h: 1 }, true, true, ":0", "");
  const positions = { "": [0, 0, leadDouble ? 1 : 2, leadDouble ? 2 : 1] };
  const half = leadDouble ? 0.5 : 1;
  // Rows back and forth only where no spinner's N or S arm needs the room above and below the line.
  const bound = Object.keys(table.arms).every((a) => a === "W" || a === "E") ? half + 2 * turn : 0;
  const walk = (arm, start, dir, turnTo) => {
    // Not right after a spinner on this arm: its N and S arms need the room the turned arm would take.
    const lastSpinner = Math.max(-1, ...table.arms[arm].map((_, i) => (spinners.has(`${arm}:${i}`) ? i : -1)));
    let at = pen(start, dir, turnTo, Math.max(turn, lastSpinner + 2), turnTo ? bound : 0);
    table.arms[arm].forEach((tile, i) => {
      const dbl = tile.near === tile.far;
      const { rect: r, pen: after } = nextTile(at, dbl);
      const [, , dx, dy] = r.from;
      // A non-double lies along its arm (horizontal when the arm runs W-E); a double lies across it.
      place(tile, r, dbl ? !r.along : r.along, dx + dy > 0, `${arm}:${i}`, arm);
      positions[`${arm}:${i}`] = [r.x + r.w / 2, r.y + r.h / 2, r.w, r.h];
      at = after;
    });
    pens[arm] = at;   // where the arm's next tile would go
  };
  walk("W", [-half, 0], [-1, 0], [0, -1]);
  walk("E", [half, 0], [1, 0], [0, 1]);
  positions[":0"] = positions[""];
  for (const arm of Object.keys(table.arms).filter((a) => a !== "W" && a !== "E")) {
    const [ax, ay, , ah] = positions[table.anchors[arm].join(":")];
    const up = arm.startsWith("N");
    walk(arm, [ax, up ? ay - ah / 2 : ay + ah / 2], up ? [0, -1] : [0, 1], null);
  }
  const box = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  const grow = (x, y, w, h) => {
    box.minX = Math.min(box.minX, x); box.minY = Math.min(box.minY, y);
    box.maxX = Math.max(box.maxX, x + w); box.maxY = Math.max(box.maxY, y + h);
  };
  const m = 0.4;
  for (const r of rects) {
    grow(r.x, r.y, r.w, r.h);
    svg.append(domino(r, playedBy.get(layout[r.tile.move])));
  }
  // Marks grow as the drawing shrinks (the tiles' scale without them is close enough).
  const [width, height] = boardSize();
  const unit = Math.min(MAX_UNIT_PX, width / (box.maxX - box.minX + 2 * m), height / (box.maxY - box.minY + 2 * m));
  const mark = unit > 0 ? Math.max(1, MIN_MARK_PX / (0.66 * unit)) : 1;
  for (const r of rects) {
    const seat = playedBy.get(layout[r.tile.move]);
    if (seat != null) svg.append(badge(r, seat, mark, grow));
  }
  const chosenDouble = choice ? new Set(choice.tile.split("-")).size === 1 : false;
  for (const arm of openArms) {
    const actions = choice?.targets.get(arm);
    if (actions) svg.append(endTarget(arm, nextTile(pens[arm], chosenDouble).rect, choice.tile, actions, grow));
    else {
      const [cx, cy, dx, dy] = nextTile(pens[arm], false).rect.from;
      svg.append(endLabel(arm, cx + dx * 0.45 * mark, cy + dy * 0.45 * mark, mark, grow));
    }
  }
  const [w, h] = [box.maxX - box.minX + 2 * m, box.maxY - box.minY + 2 * m];
  svg.setAttribute("viewBox", `${box.minX - m} ${box.minY - m} ${w} ${h}`);
  svg.style.maxWidth = `${w * MAX_UNIT_PX}px`;
  svg.style.maxHeight = `${h * MAX_UNIT_PX}px`;
  svg.setAttribute("aria-label", tr("board.tiles", rects.length));
  return svg;
}
const PIPS = { 0: [], 1: [[.5, .5]], 2: [[.25, .25], [.75, .75]], 3: [[.25, .25], [.5, .5], [.75, .75]],
  4: [[.25, .25], [.75, .25], [.25, .75], [.75, .75]], 5: [[.25, .25], [.75, .25], [.5, .5], [.25, .75], [.75, .75]],
  6: [[.25, .22], [.75, .22], [.25, .5], [.75, .5], [.25, .78], [.75, .78]] };
// One tile on the table; `by` is the seat that played it when it is one of the last moves.
function domino(r, by) {
  const dbl = r.tile.near === r.tile.far;
  const g = svgNode("g", { class: "domino" + (r.spinner ? " spinner" : "") + (r.tile.closed ? " closed" : "")
    + (by != null ? ` recent seat-${by}` : "") });
  g.dataset.tile = `${Math.min(r.tile.near, r.tile.far)}-${Math.max(r.tile.near, r.tile.far)}`;
  if (by != null) g.dataset.by = by;
  g.append(svgNode("rect", { x: r.x + 0.03, y: r.y + 0.03, width: r.w - 0.06, height: r.h - 0.06, rx: 0.12, class: "face" }));
  const [first, second] = r.nearFirst ? [r.tile.near, r.tile.far] : [r.tile.far, r.tile.near];
  const halves = r.horizontal ? [[r.x, r.y, first], [r.x + r.w / 2, r.y, second]] : [[r.x, r.y, first], [r.x, r.y + r.h / 2, second]];
  const [x1, y1, x2, y2] = r.horizontal ? [r.x + r.w / 2, r.y + .15, r.x + r.w / 2, r.y + r.h - .15] : [r.x + .15, r.y + r.h / 2, r.x + r.w - .15, r.y + r.h / 2];
  g.append(svgNode("line", { x1, y1, x2, y2, class: "mid" }));
  for (const [hx, hy, value] of dbl ? [[r.x, r.y, r.tile.near], r.horizontal ? [r.x + r.w / 2, r.y, r.tile.near] : [r.x, r.y + r.h / 2, r.tile.near]] : halves) {
    for (const [px, py] of PIPS[value]) g.append(svgNode("circle", { cx: hx + px, cy: hy + py, r: 0.09 }));
  }
  g.append(svgNode("title", {}, `${r.tile.near}-${r.tile.far}` + (r.spinner ? tr("board.spinner") : "")
    + (by != null ? tr("board.just-played", shortName(by)) : "")));
  return g;
}
// Where a tile's badge goes: on the side its arm leaves free. W's line and rows have their free side
// below (W climbs up), E's above; a climb's is outward; a spinner's N arm has it on the right, S on the
// left. A double may carry N and S arms, so its badge goes to a corner (NE, or SW on W).
function badgeSide(r) {
  const double = r.tile.near === r.tile.far;
  if (r.arm === "") return double ? "ne" : "above";
  if (!r.along) return r.stretch === "climb" ? (r.rowDx < 0 ? "left" : "right") : r.arm.startsWith("N") ? "right" : "left";
  if (r.arm === "W") return double ? "sw" : "below";
  return double ? "ne" : "above";
}
// The seat's badge beside a tile it just played; `size` scales it (1 = two thirds of a tile's width).
function badge(r, seat, size, grow) {
  const text = seat === me() ? tr("you") : String(seatNo(seat));
  const h = 0.66 * size, w = Math.max(h, (0.3 * text.length + 0.3) * size), gap = 0.06;
  const side = badgeSide(r);
  const x = { left: r.x - w - gap, sw: r.x - w - gap, right: r.x + r.w + gap, ne: r.x + r.w + gap }[side] ?? r.x + r.w / 2 - w / 2;
  const y = { above: r.y - h - gap, ne: r.y - h - gap, below: r.y + r.h + gap, sw: r.y + r.h + gap }[side] ?? r.y + r.h / 2 - h / 2;
  grow(x, y, w, h);
  const g = svgNode("g", { class: `badge seat-${seat}` });
  g.dataset.seat = seat;
  g.append(svgNode("rect", { x, y, width: w, height: h, rx: h / 2 }),
    svgNode("text", { x: x + w / 2, y: y + h / 2 + 0.16 * size, "text-anchor": "middle", "font-size": 0.44 * size }, text));
  return g;
}
function endLabel(arm, x, y, size, grow) {
  const half = 0.3 * size;
  grow(x - half, y - half, 2 * half, 2 * half);
  const t = svgNode("text", { x, y: y + 0.17 * size, "text-anchor": "middle", "font-size": 0.48 * size, class: "end-label" }, arm);
  t.dataset.arm = arm;
  return t;
}
// Where the chosen tile would lie on this end: a dashed outline named after the end, a tap plays there.
function endTarget(arm, r, tile, actions, grow) {
  grow(r.x, r.y, r.w, r.h);
  const g = svgNode("g", { class: "end-target", role: "button", tabindex: 0, "aria-label": tr("board.play-on", tile, arm) });
  g.dataset.arm = arm;
  g.dataset.action = actions.join(" ");
  g.append(svgNode("rect", { x: r.x + 0.05, y: r.y + 0.05, width: r.w - 0.1, height: r.h - 0.1, rx: 0.12 }),
    svgNode("text", { x: r.x + r.w / 2, y: r.y + r.h / 2 + 0.22, "text-anchor": "middle", "font-size": 0.62 }, arm));
  g.addEventListener("click", () => tapEnd(actions));
  g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); tapEnd(actions); } });
  return g;
}

// ---------------------------------------------------------------- Kingdomino
const TILE = Object.fromEntries(KINGDOMINO_TILES.map((t) => [t[0], t]));
const DIRS = { N: [0, 1], E: [1, 0], S: [0, -1], W: [-1, 0] };
function renderKingdomino(view) {
  const me = viewer(view);
  const legal = view.to_move === me ? view.legal || [] : [];
  // The legal actions with their structured form (the view's legal_moves, in the same order).
  const moves = legal.map((action, i) => ({ action, ...(view.legal_moves || [])[i] }));
  const places = moves.filter((m) => m.verb === "place").map(({ action, tile, square: [x, y], direction: dir }) =>
    ({ action, tile, x, y, dir, x2: x + DIRS[dir][0], y2: y + DIRS[dir][1] }));
  const discards = moves.filter((m) => m.verb === "discard").map((m) => {
    const b = document.createElement("button"); b.type = "button"; b.dataset.action = m.action; b.className = "primary";
    b.textContent = tr("kd.discard", m.tile); b.addEventListener("click", () => play(m.action)); return b;
  });
  setPrompt(places.length ? tr("kd.place", places[0].tile) :
    moves.some((m) => m.verb === "pick") ? tr("kd.pick") :
    discards.length ? tr("kd.nowhere") : "", ...discards);
  const rows = document.createElement("div");
  rows.className = "rows";
  rows.append(kingdominoRow(tr("kd.to-place"), view.current, "current", view, legal, places),
    kingdominoRow(tr("kd.next-row"), view.next, "next", view, legal, places));
  // Yours first and large, then the others'.
  const kingdoms = document.createElement("div");
  kingdoms.className = "kingdoms";
  const size = view.options?.mighty_duel ? 6 : 4;
  const order = view.grids.map((_, player) => player).sort((a, b) => (b === me) - (a === me));
  kingdoms.append(...order.map((player) => kingdom(view.grids[player], player, player === me ? places : [], size, player !== me)));
  $("board").className = "kingdomino";
  $("board").replaceChildren(rows, kingdoms, terrainLegend());
  $("hand-title").textContent = "";
  $("hand").replaceChildren();
  $("choices").replaceChildren();
  $("extra-actions").replaceChildren();
  $("round-end").hidden = !view.game_over;
  if (view.game_over) {
    const [first] = view.winners;
    $("round-result").textContent = tr("kd.over", view.winners.length === 1 ? does(first, "wins")
      : tr("kd.share", view.winners.map(name).join(tr("kd.and"))), tr("kd.decided", view.decided_by));
    $("revealed").replaceChildren();
    $("next-round").hidden = true;
  }
}
// A row of tiles: each with its number above and, when a king stands on it, the king's owner below.
function kingdominoRow(title, tiles, kind, view, legal, places) {
  const row = document.createElement("div");
  row.className = "row"; row.dataset.row = kind;
  const heading = document.createElement("span"); heading.className = "row-title"; heading.textContent = title;
  const slots = document.createElement("div"); slots.className = "slots";
  for (const t of tiles) {
    const slot = document.createElement("div"); slot.className = "slot";
    const num = document.createElement("span"); num.className = "num"; num.textContent = t.tile;
    const b = ktile(t.tile);
    const king = document.createElement("span"); king.className = "king";
    king.textContent = t.king != null ? `♚ ${shortName(view.kings[t.king])}` : "";
    if (kind === "next") {
      const action = `pick ${t.tile}`;
      if (legal.includes(action)) b.classList.add("pickable");
      b.addEventListener("click", () => play(action));
    } else if (places.some((p) => p.tile === t.tile) || legal.includes(`discard ${t.tile}`)) b.classList.add("to-place");
    slot.append(num, b, king);
    slots.append(slot);
  }
  row.append(heading, slots);
  return row;
}
function ktile(number) {
  const [, t1, c1, t2, c2] = TILE[number];
  const b = document.createElement("button");
  b.type = "button"; b.className = "ktile"; b.dataset.tile = number;
  b.setAttribute("aria-label", tr("kd.tile-aria", number, tr("terrain", t1), c1, tr("terrain", t2), c2));
  b.append(square(t1, c1), square(t2, c2));
  return b;
}
function square(terrain, crowns) {
  const s = document.createElement("span");
  s.className = `sq ${terrain}`;
  s.textContent = "♛".repeat(crowns);
  return s;
}
const TERRAINS = ["wheat", "forest", "lake", "grassland", "swamp", "mine"];
// What the colours and signs mean (RULES.md KD): a region of one terrain scores its squares times its crowns.
function terrainLegend() {
  const list = document.createElement("ul");
  list.className = "legend terrains"; list.id = "terrain-legend";
  const item = (mark, text, className = "") => {
    const li = document.createElement("li");
    const swatch = document.createElement("span"); swatch.className = `swatch ${className}`; swatch.textContent = mark;
    li.append(swatch, text);
    return li;
  };
  list.append(...TERRAINS.map((x) => item("", tr("terrain", x), x)), item("♛", tr("kd.crown"), "crown"),
    item("♜", tr("kd.castle"), "castle"));
  return list;
}
function kingdom(grid, player, places, size, small) {
  const box = document.createElement("div");
  box.className = "kingdom" + (small ? " small" : "");
  box.dataset.player = player;
  const h = document.createElement("h3"); h.textContent = name(player); box.append(h);
  const g = document.createElement("div");
  g.className = "grid";
  g.style.setProperty("--cells", 2 * size + 1);
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
  if (tile == null) { warn(tr("kd.nothing")); return; }
  play(`place ${tile} ${x},${y} E`);   // not a legal first square: the engine says why, nothing changes
}

// ---------------------------------------------------------------- play with friends: tables
// The REST contract is docs/tables.md. A seat's credential travels only in the Authorization header and
// is kept in localStorage per table (a reload, or the invite link opened again, comes back to the seat);
// the seat's event stream, which a browser's EventSource opens without headers, takes a short-lived
// ticket fetched with the credential, and after a drop a new ticket and `last_event_id` (none missed).
const tableKey = (id) => `domino-table:${id}`;
const PERSON = "person";
const SEAT_KINDS = [PERSON, "expert", "greedy", "random"];
const SCREENS = ["friends", "lobby", "join", "waiting", "table", "leaderboard", "tournament"];
const WATCH_MS = 1500;     // how often a waiting table is looked at (no stream before the match is dealt)
const WATCH_PLAYING_MS = 5000;   // ... and one being played (who sits where: someone left, someone came back)
let stream = null;         // {source, gen}: the open EventSource of the seat's match
let streamGen = 0;         // bumped whenever the stream is closed or reopened: stale callbacks do nothing
let retries = 0;           // stream reopenings since it last opened (the delay grows with them)
let watcher = null;        // the timer that polls the table (waiting for people, or for "play again")
let looking = null;        // the table's look on its way (a leave waits for its answer)
let leaving = false;       // a leave on its way: nothing is asked with the credential being given up
let lobbyCursor = null;
let joining = null;        // {id, invite}: the table the join screen is for

// The player assertion a host app's login keeps here (localStorage "domino-player": a JWT its server signed,
// docs/tables.md "Player ids"): sent with each seat taken, so the seat is its user's and the match rates (a
// guest's seat never does: it may be anyone). None: the seat is a guest's.
function vouched() {
  const assertion = localStorage.getItem("domino-player");
  return assertion ? { player: assertion } : {};
}

async function api(path, body, credential) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (credential) headers.Authorization = `Bearer ${credential}`;
  const reply = await fetch(path, body === undefined ? { headers }
    : { method: "POST", headers, body: JSON.stringify(body) });
  const data = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new Problem(reply.status, data);
  return data;
}
const problemName = (err) => String(err.body?.type || "").split("/").pop();
const tableName = (t) => t.name || tr("x.table", t.table_id.slice(0, 6));
// "kozel, 3 players, the match ends at 30 points, private (invite only)": the target, the table's or its
// variant's default, for a variant that has one.
function aboutTable(t) {
  const target = t.options?.target ?? targetOption(t.variant)?.default;
  return `${variantName(t.variant)}, ${tr("players", t.players)}, ` + (target != null ? tr("a.target", target) : "")
    + (t.public ? tr("a.public") : tr("a.private")) + (t.rated === false ? tr("a.casual") : tr("a.rated"))
    + (t.spectators ? tr("a.spectators") : "");
}
const freeSeats = (t) => t.seats.filter((s) => s.kind !== "bot" && !s.taken);
function showScreen(which) {
  for (const id of SCREENS) $(id).hidden = id !== which;
  document.body.classList.toggle("playing", which === "table");
  document.body.dataset.screen = which;
}
// What a seat's chip says under its name: a bot's level, "seat free" for a person's seat nobody holds.
function seatNote(seat) {
  if (!game.table) return seat === 0 ? "" : tr("level", game.levels[seat]);
  const s = game.table.seats[seat];
  if (!s || s.kind === "bot") return game.levels[seat] ? tr("level", game.levels[seat]) : "";
  return s.taken ? "" : tr("chip.free");
}
function fromTable(t) {
  return { variant: t.variant, players: t.players, levels: t.seats.map((s) => (s.kind === "bot" ? s.level : PERSON)),
           names: t.seats.map((s) => (s.kind === "bot" ? null : s.name)),
           playerIds: t.seats.map((s) => (s.kind === "bot" ? null : s.player ?? null)) };
}
function updateTable(t) {
  game.table = t;
  Object.assign(game, fromTable(t));
  loadRatings();
  // An invite is spent when its seat is taken: a seat freed later needs a fresh one.
  game.invites = (game.invites || []).filter((i) => !t.seats[i.seat]?.taken);
  save();
}
// A change of the seat's match (an apply's answer, an event of the stream, the seat's latest): its events
// are logged once and in order (`seen`: the last seq whose events were taken), its view shown unless a
// newer one is. The stream brings every change in order; an answer that runs ahead of it (a move made
// just after a reload, before the stream caught up) leaves its events to the stream.
function absorb(a, inOrder = false) {
  if (a.events && a.seq > game.seen && (inOrder || a.seq === game.seen + 1)) {
    for (const e of a.events) { remember(e); logEvent(e); }
    game.seen = a.seq;
  }
  if (a.view && a.seq >= game.seq) {
    game.view = a.view; game.seq = a.seq;
    keepRounds(a.view);
    game.scores = a.scores ?? a.view.ledger?.scores ?? a.view.scores ?? game.scores;
    if ("clocks" in a) takeClocks(a.clocks);
  }
  save();
}
// Away from the table (the computer, the lobby, another table): its stream and polling stop; the seat
// stays the person's (localStorage), and the table's link brings them back to it.
function leaveTable() {
  stopTournament();
  closeStream();
  stopWatching();
  document.body.classList.remove("watching");
  document.title = tr("page.title");
  if (game?.table) game = null;
  if (location.search) history.replaceState(null, "", "/play");
}
function setUpFriends() {
  const select = $("t-variant");
  select.replaceChildren(...variants.map((v) => new Option(v.name, v.name)));
  select.value = $("variant").value;
  select.addEventListener("change", fillTablePlayers);
  select.addEventListener("change", fillTableTarget);
  $("t-players").addEventListener("change", fillTableSeats);
  fillTablePlayers();
  fillTableTarget();
  $("t-target").addEventListener("invalid", refuseTarget);
  $("lobby-variant").append(...variants.map((v) => new Option(v.name, v.name)));
  const myName = localStorage.getItem("domino-name") || "";
  for (const id of ["t-your-name", "lobby-name", "join-name", "tour-name"]) $(id).value = myName;
  $("to-friends").addEventListener("click", () => {
    leaveTable(); warn(""); showScreen("friends"); showMyTables();
    $("setup-box").open = false; $("match-title").textContent = tr("modes.friends");
    say(tr("s.open"));
  });
  $("to-lobby").addEventListener("click", () => {
    leaveTable(); warn(""); $("setup-box").open = false; $("match-title").textContent = tr("modes.lobby"); showLobby();
  });
  $("table-form").addEventListener("submit", openTable);
  $("lobby-refresh").addEventListener("click", () => { warn(""); showLobby(); });
  $("lobby-variant").addEventListener("change", () => showLobby());
  $("lobby-more").addEventListener("click", () => showLobby(true));
  $("join-form").addEventListener("submit", joinFromScreen);
  $("play-again").addEventListener("click", playAgain);
  $("leave-table").addEventListener("click", leaveSeat);
  $("leave-waiting").addEventListener("click", leaveSeat);
  $("resign").addEventListener("click", () => exitMatch("resign"));
  $("abort").addEventListener("click", () => exitMatch("abort"));
  $("claim").addEventListener("click", () => exitMatch("claim"));
  $("tour-join-form").addEventListener("submit", joinTournament);
  $("to-tournaments").addEventListener("click", showTournamentLobby);
  $("tour-leave").addEventListener("click", leaveTournament);
  const spectatorsChoice = () => { $("t-spectators-row").hidden = $("t-public").checked; };
  $("t-public").addEventListener("change", spectatorsChoice);
  spectatorsChoice();
  setUpClockForm();
  setUpLeaderboard();
}
// "Your games": the seats this browser holds (their credentials in localStorage) and, for a signed-in user (the
// host app's assertion, localStorage "domino-player"), every seat of theirs, read from the gateway's inbox
// (docs/tables.md, "The inbox"): whose turn it is, the moves not seen yet, the time left; each resumes its
// table. The seats kept here are listed at once, then the inbox's answer replaces them (a match over leaves
// it; a kept credential that holds no seat any more is forgotten). No answer: the kept seats stay listed.
const INBOX_MOST = 50;     // the credentials one inbox call takes
let inboxGen = 0;          // bumped by each listing: an answer to an older one is dropped
function heldSeats() {
  return Object.keys(localStorage).filter((k) => k.startsWith("domino-table:"))
    .map((k) => { try { return JSON.parse(localStorage.getItem(k)); } catch { return null; } })
    .filter((g) => g?.table?.table_id);
}
function showMyTables() {
  const gen = ++inboxGen;
  const held = heldSeats();
  listGames(held.map((g) => keptItem(g)));
  readInbox(held).then((found) => {
    if (found && gen === inboxGen) listGames(found.games.map((g) => gameItem(g, held)));
  }).catch(() => {});    // an old gateway, no network: the kept seats stay listed
}
function listGames(items) {
  $("my-tables").querySelector("ul").replaceChildren(...items);
  $("my-tables").hidden = !items.length;
}
// An assertion that no longer checks (expired: the host app signs them for a day) leaves the kept seats' games.
async function readInbox(held, assertion = localStorage.getItem("domino-player")) {
  const credentials = held.map((g) => g.credential).filter(Boolean).slice(0, INBOX_MOST);
  if (!credentials.length && !assertion) return null;
  let found;
  try {
    found = credentials.length ? await api("/v1/inbox", { credentials }, assertion || undefined)
      : await api("/v1/inbox", undefined, assertion);
  } catch (err) {
    if (assertion && credentials.length && problemName(err) === "invalid-player") return readInbox(held, null);
    throw err;
  }
  for (const i of found.gone ?? []) localStorage.removeItem(tableKey(credentials[i].split(".")[0]));
  return found;
}
// A seat kept here, before the inbox answers: its table's link.
function keptItem(g) {
  const li = document.createElement("li");
  li.dataset.table = g.table.table_id;
  const a = document.createElement("a");
  a.href = `/play?table=${g.table.table_id}`;
  a.textContent = `${tableName(g.table)}: ${variantName(g.table.variant)}, ${tr("seat", seatNo(g.me))}`;
  li.append(a);
  return li;
}
// A game of the inbox: its table's link (a seat kept here) or its name (taken on another device), and what is
// new there: "your turn · 2 new moves · 0:40 left".
function gameItem(g, held) {
  const li = document.createElement("li");
  li.dataset.table = g.table_id;
  li.classList.toggle("your-turn", g.your_turn);
  const kept = held.some((h) => h.table.table_id === g.table_id && h.me === g.seat);
  const head = document.createElement(kept ? "a" : "span");
  if (kept) head.href = `/play?table=${g.table_id}`;
  head.textContent = `${tableName(g)}: ${variantName(g.variant)}, ${tr("seat", seatNo(g.seat))}`;
  const notes = [];
  if (g.status === "waiting" && !g.match_id) notes.push(tr("g.waiting"));
  else if (g.your_turn) notes.push(tr("g.your-turn"));
  else if (g.turn != null) notes.push(tr("g.turn-of", g.seats?.[g.turn]?.name || tr("seat", seatNo(g.turn))));
  if (g.unread) notes.push(tr("g.unread", g.unread, g.unread_more));
  const left = inboxLeft(g);
  if (left != null) notes.push(tr("g.left", clockText(left)));
  if (!kept) notes.push(tr("g.elsewhere"));
  const small = document.createElement("small");
  small.textContent = notes.join(" · ");
  li.append(head, " ", small);
  return li;
}
// The seat's time left as the inbox said it: counted down to its deadline when its clock runs.
function inboxLeft(g) {
  const c = g.clocks;
  if (!c || !Array.isArray(c.remaining)) return null;
  const given = Number(c.remaining[g.seat] ?? 0);
  return c.running === g.seat && c.deadline != null ? Math.max(0, Math.min(given, Number(c.deadline) - Date.now() / 1000)) : given;
}
function fillTablePlayers() {
  const v = variants.find((x) => x.name === $("t-variant").value);
  const counts = playerCounts(v);
  const select = $("t-players");
  const keep = Number(select.value);
  select.replaceChildren(...counts.map((n) => new Option(String(n), String(n))));
  select.value = String(counts.includes(keep) ? keep : counts.includes(4) ? 4 : counts[0]);
  fillTableSeats();
}
function fillTableSeats() {
  const n = Number($("t-players").value);
  const box = $("t-seats");
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  const you = document.createElement("label"); you.textContent = `${tr("seat", 1)}: ${tr("you.lower-self")}`;
  const seats = [you];
  for (let seat = 1; seat < n; seat++) {
    const s = document.createElement("select");
    s.id = `seat-kind-${seat}`;
    s.replaceChildren(...SEAT_KINDS.map((k) => new Option(k === PERSON ? tr("f.person") : tr("f.bot-level", k), k)));
    s.value = old[seat - 1] || PERSON;
    const label = document.createElement("label");
    label.append(`${tr("seat", seatNo(seat))} `, s);
    seats.push(label);
  }
  const legend = document.createElement("legend"); legend.textContent = tr("f.seats");
  box.replaceChildren(legend, ...seats);
}
// The option `target` of a variant's preset (the score that ends the match: the losing limit in Kozel and
// Osel, the winning score in the scoring games) as /v1/variants lists it, or null for a variant with none.
const targetOption = (variant) => variants.find((v) => v.name === variant)?.options.find((o) => o.name === "target") ?? null;
// The form asks for the target only where the variant has one, within its bounds; blank is its default.
function fillTableTarget() {
  const spec = targetOption($("t-variant").value);
  const input = $("t-target");
  input.value = "";
  input.disabled = !spec;
  input.parentElement.hidden = !spec;
  if (!spec) return;
  input.min = spec.minimum ?? "";
  input.max = spec.maximum ?? "";
  input.placeholder = `default ${spec.default}`;
}
// The browser refuses to send the form with a target out of bounds (or not a whole number): say why, as
// the page says its other refusals, instead of the browser's bubble.
function refuseTarget(event) {
  event.preventDefault();
  const spec = targetOption($("t-variant").value);
  warn(tr("x.target", spec.minimum, spec.maximum, spec.default));
  $("t-target").focus();
}
function myName(input) {
  const given = $(input).value.trim();
  if (!given) { warn(tr("s.name-first")); $(input).focus(); return null; }
  localStorage.setItem("domino-name", given);
  return given;
}

// Open a table, then take its seat 0 with that seat's invite: the person who opens it plays at it too.
async function openTable(event) {
  event.preventDefault();
  warn("");
  const given = myName("t-your-name");
  if (!given) return;
  const players = Number($("t-players").value);
  const seats = [{ kind: "open" }];
  for (let seat = 1; seat < players; seat++) {
    const kind = $(`seat-kind-${seat}`).value;
    seats.push(kind === PERSON ? { kind: "open" } : { kind: "bot", level: kind });
  }
  const body = { variant: $("t-variant").value, players, seats, public: $("t-public").checked, on_leave: $("t-on-leave").value,
                 rated: $("t-rated").value === "rated" };
  if (!body.public && $("t-spectators").checked) body.spectators = true;
  const clock = clockSetting();
  if (clock) body.clock = clock;
  if ($("t-name").value.trim()) body.name = $("t-name").value.trim();
  if ($("t-target").value) body.options = { target: Number($("t-target").value) };
  let opened;
  try { opened = await api("/v1/tables", body); } catch (err) { warn(tr("x.no-open", err.message)); return; }
  const mine = opened.invites.find((i) => i.seat === 0) || opened.invites[0];
  try {
    const joined = await api(`/v1/tables/${opened.table_id}/join`, { invite: mine.code, name: given, ...vouched() });
    seated(joined, { hostKey: opened.host_key, invites: opened.invites.filter((i) => i.seat !== joined.seat),
                     watchLink: opened.spectator_link ?? null });
  } catch (err) { warn(tr("x.open-no-seat", joinProblem(err))); }
}
function joinProblem(err) {
  switch (problemName(err)) {
    case "invalid-invite": return tr("j.invalid-invite");
    case "invite-required": return tr("j.invite-required");
    case "seat-taken": return tr("j.seat-taken");
    case "table-full": return tr("j.table-full");
    case "match-over": return tr("j.match-over");
    case "unknown-table": return tr("j.unknown-table");
    default: return tr("j.other", err.message);
  }
}
// The seat is the person's: keep its credential, leave the invite out of the address (it is spent), and
// wait for the others or play.
function seated(joined, extra = {}) {
  leaveTable();
  game = { table: joined.table, credential: joined.credential, me: joined.seat, playerId: joined.player_id,
           hostKey: extra.hostKey ?? null, invites: extra.invites ?? [], watchLink: extra.watchLink ?? null, ...fromTable(joined.table),
           matchId: null, view: null, scores: null, seq: -1, seen: -1, log: [], told: [], moves: [], keys: [] };
  save();
  history.replaceState(null, "", `/play?table=${joined.table_id}`);
  $("setup-box").open = false;
  const matchId = joined.match_id ?? joined.table.match_id;
  if (matchId) startMatch(matchId);
  else { showWaiting(); watchTable(); }
}
// /play?table=<id>[&invite=<code>]: the seat this browser holds at that table, or the screen to take one.
function openFromAddress() {
  const params = new URLSearchParams(location.search);
  if (params.get("tournament")) { openTournament(params.get("tournament"), params.get("invite")); return true; }
  const id = params.get("table");
  if (!id) return false;
  if (params.get("watch")) { showWatch(id, params.get("watch")); return true; }
  const saved = localStorage.getItem(tableKey(id));
  if (saved) resumeTable(JSON.parse(saved));
  else showJoin(id, params.get("invite"));
  return true;
}
async function resumeTable(saved) {
  game = { keys: [], log: [], moves: [], seq: -1, seen: -1, ...saved };
  $("setup-box").open = false;
  history.replaceState(null, "", `/play?table=${game.table.table_id}`);
  if (game.view) render();   // where it stood, at once; then the latest
  let t;
  try { t = await api(`/v1/tables/${game.table.table_id}`, undefined, game.credential); } catch (err) { lostSeat(err); return; }
  updateTable(t);
  if (t.match_id) startMatch(t.match_id);
  else { showWaiting(); watchTable(); }
}
// The seat's match: its latest by the credential alone, then its stream. A match other than the one the
// page held (the first, or one dealt by "play again") starts a new log.
async function startMatch(matchId) {
  stopWatching();
  const fresh = matchId !== game.matchId;
  if (fresh) Object.assign(game, { matchId, view: null, scores: null, seq: -1, seen: -1, log: [], told: [], moves: [], rounds: {},
                                   exit: null, acted: [], abortClosed: false });
  let latest;
  try { latest = await api(`/v1/matches/${matchId}/seat`, undefined, game.credential); } catch (err) { matchUnreachable(err); return; }
  if (!game?.table || game.matchId !== matchId) return;
  absorb({ seq: latest.seq, view: latest.view, scores: latest.scores, clocks: latest.clocks ?? null });
  if (fresh) game.seen = latest.seq;   // what came before is in the view
  game.over = latest.over;
  save();
  render();
  loadRatings();
  openStream();
  offerPush($("push"), matchId, game.credential, tr);
  if (!game.tournament) watchTable(WATCH_PLAYING_MS);   // a tournament's round: the tournament is looked at
}
// The seat's match answers no more: the credential is gone (the seat was left, or the table is gone), or
// the match itself is (no longer kept): then the table is still there, and "play again" can deal another.
function matchUnreachable(err) {
  if (err.status === 401 || problemName(err) === "wrong-table" || problemName(err) === "unknown-table") { lostSeat(err); return; }
  closeStream();
  live("");
  warn(tr("x.unfollowable", err.message));
  watchTable();
}
function lostSeat(err) {
  closeStream();
  stopWatching();
  const id = game?.table?.table_id;
  if (id && (err.status === 401 || err.status === 404 || problemName(err) === "wrong-table")) localStorage.removeItem(tableKey(id));
  game = null;
  showScreen("join");
  $("join-seat").disabled = true;
  say(tr("s.seat-lost"));
  warn(err.status === 404 ? "There is no such table any more." : `The seat's credential no longer works: ${err.message}`);
}
async function playAtTable(action) {
  warn("");
  try {
    absorb(await api(`/v1/matches/${game.matchId}/apply`, { action }, game.credential));
  } catch (err) {
    warn(tr("not-allowed", err.message.includes(action) ? err.message : `${action}: ${err.message}`));
    return;
  }
  pending = choosing = null;
  render();
}
async function nextRoundAtTable() {
  try {
    absorb(await api(`/v1/matches/${game.matchId}/next-round`, {}, game.credential));
    render();
  } catch (err) {
    if (err.status !== 409) { warn(`No next round: ${err.message}`); return; }
    // Another seat dealt it a moment before: the stream brings it; show the latest now.
    const latest = await api(`/v1/matches/${game.matchId}/seat`, undefined, game.credential).catch(() => null);
    if (latest) { absorb({ seq: latest.seq, view: latest.view, scores: latest.scores, clocks: latest.clocks ?? null }); render(); }
  }
}
async function playAgain() {
  warn("");
  try {
    const { table } = await api(`/v1/tables/${game.table.table_id}/again`, {}, game.credential);
    updateTable(table);
    if (table.match_id) startMatch(table.match_id);
    else { showWaiting(); watchTable(); }   // a seat was left: the new match waits for someone to take it
  } catch (err) {
    if (err.status === 409) watchTable();   // another seat asked first: its match is coming
    else warn(tr("x.no-again", err.message));
  }
}
function renderTableBar(view) {
  $("table-bar").hidden = !game.table;
  $("table-invites").hidden = true;
  if (!game.table) return;
  $("table-name").textContent = game.watching ? tr("table.watching", tableName(game.table))
    : tr("table.you-are", tableName(game.table), seatNo(game.me));
  $("play-again").hidden = game.watching || !!game.tournament || !(view.match_over || view.game_over);
  const playing = beingPlayed(view);
  $("resign").hidden = !playing;
  // a tournament's round is not aborted by a seat: leaving the tournament is its exit
  $("abort").hidden = !playing || !!game.tournament || !abortMayBeOpen();
  $("claim").hidden = !playing || !claimable().length;
  // Someone left a person's seat: whoever opened the table gets a link to send for it.
  if (game.hostKey && freeSeats(game.table).length) showInvites($("table-invites"));
}
// ---------------------------------------------------------------- the exits of a match (issue 37)
// A match this seat plays and that is not over (a spectator plays none).
const beingPlayed = (view) => !!(game?.table && !game.watching && game.matchId && view
                                  && !(view.match_over || view.game_over) && !game.exit);
// The abort button shows until every person at the table has made a move (as far as this page saw them), or
// until the server said the abort is closed.
function abortMayBeOpen() {
  if (game.abortClosed) return false;
  const people = game.table.seats.filter((s) => s.kind !== "bot").map((s) => s.seat);
  return !people.every((seat) => (game.acted ?? []).includes(seat));
}
// The other people's seats gone (no open stream, no call) for the table's claim time: the table says since
// when (`away_since`, unix seconds; polled every few seconds while a match is played).
// The seats here now (a stream's presence event): the others' people are away, since now if they were here.
function heard(here) {
  for (const s of game?.table?.seats ?? []) {
    if (s.kind === "bot" || !s.taken) continue;
    const now = here.includes(s.seat);
    if (now) { s.here = true; s.away_since = null; }
    else if (s.here !== false) { s.here = false; s.away_since = Date.now() / 1000; }
  }
}
function awayFor(s) {
  return s && s.kind !== "bot" && s.here === false && s.away_since != null ? Math.max(0, Date.now() / 1000 - s.away_since) : null;
}
function claimable() {
  const after = game.table?.claim_after;
  if (after == null) return [];
  return game.table.seats.filter((s) => s.seat !== game.me && awayFor(s) != null && awayFor(s) >= after).map((s) => s.seat);
}
// A person's presence beside their name: here (a stream open or a call lately), away (since when), or gone
// long enough to claim victory. Null for a bot, a free seat, this browser's own seat, and with no match.
function presence(seat) {
  const s = game.table?.seats[seat];
  if (!s || s.kind === "bot" || !s.taken || s.here == null || seat === game.me) return null;
  if (s.here) return { state: "here", text: tr("presence.here") };
  const away = Math.round(awayFor(s) ?? 0);
  return { state: claimable().includes(seat) ? "gone" : "away", text: tr("presence.away", clockText(away)) };
}
// Resign, abort or claim victory: the answer is a move's (its events, the view after it); a refusal says why.
async function exitMatch(kind) {
  if (kind !== "claim" && !confirm(tr(kind === "resign" ? "x.confirm-resign" : "x.confirm-abort"))) return;
  warn("");
  try {
    absorb(await api(`/v1/matches/${game.matchId}/${kind}`, {}, game.credential));
  } catch (err) {
    const why = problemName(err);
    if (why === "abort-closed") { game.abortClosed = true; save(); }
    warn(why === "abort-closed" ? tr("x.abort-closed") : why === "claim-refused" ? tr("x.claim-refused")
      : why === "illegal-action" ? tr("x.already-over") : tr("x.no-exit", err.message));
  }
  render();
}
// Leave the seat (POST leave): the credential stops working; the table goes on without this browser. Leaving
// a rated match being played is resigning it (once the abort is closed): the person is told before.
async function leaveSeat() {
  if (game?.watching) { stopSpectating(); return; }
  if (game?.tournament) { leaveTournament(); return; }
  const ratedPlay = game?.table?.rated !== false && beingPlayed(game?.view);
  if (!confirm(tr(ratedPlay ? "x.confirm-leave-rated" : "x.confirm-leave"))) return;
  warn("");
  const id = game.table.table_id;
  // Nothing is asked with the credential while it is given up (a 401 otherwise): the table's look stops, one on
  // its way is answered first, and the stream's reopening waits. A refused leave follows the table again.
  leaving = true;
  stopWatching();
  await looking?.catch(() => {});
  let refused = null;
  try { await api(`/v1/tables/${id}/leave`, {}, game.credential); }
  catch (err) { if (![401, 409].includes(err.status)) refused = err; }
  leaving = false;
  if (refused) {
    warn(tr("x.no-leave", refused.message));
    if (game?.table?.table_id === id) resumeTable(game);
    return;
  }
  localStorage.removeItem(tableKey(id));
  leaveTable();
  showScreen("friends");
  showMyTables();
  $("match-title").textContent = tr("modes.friends");
  say(tr("s.left"));
}
function live(state) {
  const el = $("live");
  el.dataset.state = state;
  el.textContent = state ? tr(`live.${state}`) : "";
}

// ---------------------------------------------------------------- the seat's stream
async function openStream() {
  closeStream();
  const gen = ++streamGen, matchId = game.matchId, credential = game.credential;
  live(retries ? "reconnecting" : "connecting");
  let ticket;
  if (!game.watching) {
    try {
      ticket = (await api(`/v1/matches/${matchId}/events/ticket`, {}, credential)).ticket;
    } catch (err) {
      if (gen !== streamGen) return;
      if ([401, 403, 404, 410].includes(err.status)) matchUnreachable(err); else retryStream(gen);
      return;
    }
  }
  if (gen !== streamGen) return;
  const query = new URLSearchParams(game.watching ? { watch: game.watchCode } : { ticket });
  if (game.seen >= 0) query.set("last_event_id", String(game.seen));
  const source = new EventSource(`/v1/matches/${matchId}/events?${query}`);
  stream = { source, gen };
  const on = (type, handle) => source.addEventListener(type, (m) => {
    if (gen !== streamGen) return;
    let data = {};
    try { data = JSON.parse(m.data || "{}"); } catch { /* an event with no JSON: its type says it all */ }
    handle(data, m);
  });
  source.onopen = () => { if (gen === streamGen) { retries = 0; live("live"); } };
  on("view", (d) => {
    absorb(d);
    game.seen = Math.max(game.seen, d.seq ?? Number(source.lastEventId));
    save(); render();
  });
  on("update", (d) => { absorb(d, true); render(); });
  on("presence", (d) => { heard(d.here); render(); });   // who is here changed (no id: not a version)
  on("end", () => {   // for "play again" by another seat; a tournament's round: the tournament goes on
    closeStream(); live("over");
    if (game?.tournament) lookTournament(); else watchTable();
  });
  on("closed", () => { source.close(); retryStream(gen); });   // the server stopped it early: come back
  source.onerror = () => {
    if (gen !== streamGen) return;
    source.close();   // not EventSource's own retry: its ticket is spent
    retryStream(gen);
  };
}
function retryStream(gen) {
  retries += 1;
  live("reconnecting");
  setTimeout(() => { if (gen === streamGen && game?.table && !leaving) openStream(); }, Math.min(5000, 250 * 2 ** retries));
}
function closeStream() {
  streamGen += 1;
  stream?.source.close();
  stream = null;
}

// ---------------------------------------------------------------- waiting for the others
// Poll the table: while it waits for people (no stream yet), after a match ends (for "play again"), and
// slowly while a match is played (the stream tells the moves, not who sits where).
function watchTable(every = WATCH_MS) {
  stopWatching();
  const id = game.table.table_id;
  const look = async () => {
    if (!game?.table || game.table.table_id !== id || leaving) return;   // a refused leave follows the table again
    try {
      // a private table shows itself to its seats (the credential) and to its spectator link's code
      looking = api(`/v1/tables/${id}` + (game.watching ? `?${new URLSearchParams({ watch: game.watchCode })}` : ""),
                    undefined, game.watching ? null : game.credential);
      const t = await looking;
      if (!game?.table || game.table.table_id !== id) return;
      const moved = JSON.stringify(t.seats) !== JSON.stringify(game.table.seats);
      updateTable(t);
      if (t.match_id && t.match_id !== game.matchId) { (game.watching ? watchMatch : startMatch)(t.match_id); return; }
      if (!t.match_id) { if (!game.watching && (moved || document.body.dataset.screen !== "waiting")) showWaiting(); }
      else if (moved && game.view) render();
      else if (game.view && document.body.dataset.screen === "table") {   // a claim's time may have come
        renderTableBar(game.view);
        renderSeats(game.view);
      }
    } catch (err) {
      // no such table any more, or (a seat's credential, asked with) the seat was given up from another device
      if (!game?.table || game.table.table_id !== id) return;
      if (err.status === 404 || (err.status === 401 && !game.watching)) { lostSeat(err); return; }
    }
    watcher = setTimeout(look, every);
  };
  watcher = setTimeout(look, game.matchId ? every : 0);
}
function stopWatching() { clearTimeout(watcher); watcher = null; }
function seatLines(t, mine = null) {
  return t.seats.map((s) => {
    const li = document.createElement("li");
    li.dataset.seat = s.seat;
    li.className = `seat-${s.seat}`;
    li.textContent = `${tr("seat", seatNo(s.seat))}: ` + (s.kind === "bot" ? tr("seats.bot", s.level)
      : s.taken ? `${s.name}${s.seat === mine ? tr("seats.you") : ""}` : tr("seats.free"));
    return li;
  });
}
async function showWaiting() {
  const t = game.table;
  showScreen("waiting");
  $("match-title").textContent = tableName(t);
  $("waiting-title").textContent = tableName(t);
  $("waiting-about").textContent = aboutTable(t);
  $("waiting-seats").replaceChildren(...seatLines(t, game.me));
  const free = freeSeats(t);
  say(free.length === 0 ? tr("w.dealing") : tr("w.waiting", free.length) + (game.hostKey ? tr("w.send") : "."));
  showInvites($("invites"));
  showWatchLink($("watch-link"));
}
// The host's invite links for the free seats (fresh ones when a free seat has none: someone left).
let fetchingInvites = false;
async function showInvites(box) {
  const t = game.table;
  const free = freeSeats(t);
  if (game.hostKey && !fetchingInvites && free.some((s) => !game.invites.some((i) => i.seat === s.seat))) {
    fetchingInvites = true;
    try { game.invites = (await api(`/v1/tables/${t.table_id}/invites`, undefined, game.hostKey)).invites; save(); }
    catch { /* the links held are shown */ }
    finally { fetchingInvites = false; }
    if (game?.table?.table_id !== t.table_id) return;
  }
  const rows = game.invites.filter((i) => free.some((s) => s.seat === i.seat)).map((i) => {
    const row = document.createElement("p");
    row.className = "invite";
    const label = document.createElement("label");
    label.htmlFor = `invite-${i.seat}`; label.textContent = tr("invite.for", seatNo(i.seat));
    const link = document.createElement("input");
    link.id = `invite-${i.seat}`; link.readOnly = true; link.dataset.seat = i.seat;
    link.value = i.link || `${location.origin}/play?table=${t.table_id}&invite=${i.code}`;
    const copy = document.createElement("button");
    copy.type = "button"; copy.textContent = tr("i.copy"); copy.dataset.seat = i.seat;
    copy.addEventListener("click", async () => {
      link.select();
      try { await navigator.clipboard.writeText(link.value); copy.textContent = tr("i.copied"); }
      catch { copy.textContent = tr("i.selected"); }
    });
    row.append(label, link, copy);
    return row;
  });
  box.replaceChildren(...rows);
  box.hidden = !rows.length;
}

// The host's spectator link of a private table opened with spectators (anyone holding it may watch).
function showWatchLink(box) {
  box.hidden = !game.watchLink;
  if (!game.watchLink) { box.replaceChildren(); return; }
  const label = document.createElement("label");
  label.htmlFor = "watch-link-text"; label.textContent = tr("i.watch");
  const link = document.createElement("input");
  link.id = "watch-link-text"; link.readOnly = true; link.value = game.watchLink;
  const copy = document.createElement("button");
  copy.type = "button"; copy.textContent = tr("i.copy");
  copy.addEventListener("click", async () => {
    link.select();
    try { await navigator.clipboard.writeText(link.value); copy.textContent = tr("i.copied"); }
    catch { copy.textContent = tr("i.selected"); }
  });
  box.replaceChildren(label, " ", link, " ", copy);
}

// ---------------------------------------------------------------- watching (a spectator link)
// /play?table=<id>&watch=<code>: the table's match as a spectator sees it (the public view, no hand), its
// stream opened with the code (no credential, no ticket). Nothing is kept: a reload opens the link again.
async function showWatch(id, code) {
  leaveTable();
  $("setup-box").open = false;
  let t;
  try { t = await api(`/v1/tables/${id}?${new URLSearchParams({ watch: code })}`); } catch (err) {
    showScreen("join");
    $("join-seat").disabled = true;
    $("join-title").textContent = tr("s.no-table");
    say(tr("s.no-watch"));
    warn(problemName(err) === "spectators-off" ? tr("x.spectators-off") : joinProblem(err));
    return;
  }
  game = { table: t, watching: true, watchCode: code, credential: null, me: -1, keys: [], invites: [], ...fromTable(t),
           matchId: null, view: null, scores: null, seq: -1, seen: -1, log: [], told: [], moves: [], acted: [] };
  document.body.classList.add("watching");
  $("match-title").textContent = tableName(t);
  if (t.match_id) watchMatch(t.match_id);
  else { showScreen("waiting"); $("waiting-title").textContent = tableName(t); $("waiting-about").textContent = aboutTable(t);
         $("waiting-seats").replaceChildren(...seatLines(t)); say(tr("w.watch-waiting")); watchTable(); }
}
function watchMatch(matchId) {
  Object.assign(game, { matchId, view: null, scores: null, seq: -1, seen: -1, log: [], told: [], moves: [], rounds: {}, exit: null });
  say(tr("w.watching"));
  openStream();
  watchTable(WATCH_PLAYING_MS);
}
function stopSpectating() {
  leaveTable();
  game = null;
  showScreen("friends");
  $("match-title").textContent = tr("modes.friends");
  say(tr("s.open"));
}

// ---------------------------------------------------------------- taking a seat: an invite, the lobby
async function showJoin(id, invite) {
  game = null;
  joining = { id, invite };
  showScreen("join");
  $("setup-box").open = false;
  $("match-title").textContent = tr("modes.friends");
  $("join-seat").disabled = false;
  $("join-about").textContent = "";   // until this table's look answers: never another one's
  say(tr("s.give-name"));
  let t;
  // a private table shows itself to the holder of an unused invite only: a spent one is refused
  try { t = await api(`/v1/tables/${id}` + (invite ? `?${new URLSearchParams({ invite })}` : "")); } catch (err) {
    $("join-seat").disabled = true;
    const spent = invite && ["spectators-off", "invalid-invite"].includes(problemName(err));
    const hidden = spent || problemName(err) === "spectators-off";   // a private table shows nothing to them
    $("join-title").textContent = tr(hidden ? "s.private-table" : "s.no-table");
    say(tr(hidden ? "s.no-seat-link" : "s.no-table-link"));
    warn(joinProblem(err.status === 404 ? Object.assign(err, { body: { type: "unknown-table" } })
      : spent ? { body: { type: "invalid-invite" } } : !invite && problemName(err) === "spectators-off" ? { body: { type: "invite-required" } } : err));
    return;
  }
  $("join-title").textContent = tableName(t);
  $("join-about").textContent = aboutTable(t);
  $("join-seats").replaceChildren(...seatLines(t));
  $("join-form").querySelector("#join-seat-number")?.parentElement.remove();
  if (!invite) {
    const free = freeSeats(t);
    if (!t.public || !free.length) {
      $("join-seat").disabled = true;
      warn(!t.public ? joinProblem({ body: { type: "invite-required" } }) : joinProblem({ body: { type: "table-full" } }));
      return;
    }
    const pick = document.createElement("select");
    pick.id = "join-seat-number";
    pick.replaceChildren(...free.map((s) => new Option(tr("seat", seatNo(s.seat)), String(s.seat))));
    const label = document.createElement("label");
    label.append(`${tr("seats.pick")} `, pick);
    $("join-seat").before(label);
  } else if (t.status === "over") {
    $("join-seat").disabled = true;
    warn(joinProblem({ body: { type: "match-over" } }));
  }
}
async function joinFromScreen(event) {
  event.preventDefault();
  warn("");
  const given = myName("join-name");
  if (!given || !joining) return;
  const body = { ...(joining.invite ? { invite: joining.invite } : { seat: Number($("join-seat-number").value) }), name: given,
                 ...vouched() };
  try { seated(await api(`/v1/tables/${joining.id}/join`, body)); } catch (err) { warn(joinProblem(err)); }
}
// The first page of the lobby is looked at again every LOBBY_MS while it is on the screen (and redrawn
// when it changed): tables come and fill up without a click on Refresh.
const LOBBY_MS = 5000;
let lobbyTimer = null, lobbyShown = "";
async function showLobby(more = false) {
  clearTimeout(lobbyTimer);
  showScreen("lobby");
  say(tr("s.lobby"));
  const query = new URLSearchParams({ limit: "20" });
  if ($("lobby-variant").value) query.set("variant", $("lobby-variant").value);
  if (more && lobbyCursor) query.set("cursor", lobbyCursor);
  let found;
  try { found = await api(`/v1/tables?${query}`); } catch (err) { warn(tr("x.no-lobby", err.message)); return; }
  lobbyCursor = found.next_cursor ?? null;
  $("lobby-more").hidden = !lobbyCursor;
  const items = found.tables.map(lobbyItem);
  if (more) { $("lobby-list").append(...items); return; }
  if (document.body.dataset.screen !== "lobby") return;   // left meanwhile
  lobbyTimer = setTimeout(() => { if (document.body.dataset.screen === "lobby" && !lobbyCursorUsed()) showLobby(); }, LOBBY_MS);
  const shown = JSON.stringify(found.tables);
  if (shown === lobbyShown && $("lobby-list").childElementCount) return;
  lobbyShown = shown;
  if (!items.length) {
    const li = document.createElement("li"); li.className = "empty";
    li.textContent = tr("s.lobby-empty");
    items.push(li);
  }
  $("lobby-list").replaceChildren(...items);
}
// A person who asked for more tables reads a longer list: it is not redrawn under them.
const lobbyCursorUsed = () => $("lobby-list").querySelectorAll("li[data-table]").length > 20;
function lobbyItem(t) {
  const li = document.createElement("li");
  li.dataset.table = t.table_id;
  const title = document.createElement("b"); title.textContent = tableName(t);
  const about = document.createElement("span"); about.textContent = ` ${variantName(t.variant)}, ${tr("players", t.players)}`;
  const seats = document.createElement("div"); seats.className = "lobby-seats";
  seats.append(...t.seats.map((s) => {
    if (s.kind !== "bot" && !s.taken) {
      const b = document.createElement("button");
      b.type = "button"; b.className = "primary"; b.dataset.seat = s.seat;
      b.textContent = tr("join.seat", seatNo(s.seat));
      b.addEventListener("click", () => joinPublic(t, s.seat));
      return b;
    }
    const span = document.createElement("span"); span.className = `taken seat-${s.seat}`;
    span.textContent = `${tr("seat", seatNo(s.seat))}: ${s.kind === "bot" ? tr("seats.bot", s.level) : s.name}`;
    return span;
  }));
  li.append(title, about, seats);
  return li;
}
async function joinPublic(t, seat) {
  warn("");
  const given = myName("lobby-name");
  if (!given) return;
  try { seated(await api(`/v1/tables/${t.table_id}/join`, { seat, name: given, ...vouched() })); } catch (err) {
    warn(joinProblem(err));
    if (err.status === 409) showLobby();   // the list as it is now
  }
}

// ---------------------------------------------------------------- turn clocks
// Each stream line (and the seat's latest) carries `clocks` (docs/tables.md, Clocks): every seat's seconds
// `remaining` as of that change, the `running` seat and its `deadline` (unix seconds). Between two lines the
// page counts down by itself: no request, a timer that only redraws the clocks' text. The running seat's
// time is the smaller of two readings: its `remaining` less the time since the line came (right for a line
// that arrives as it happens) and `deadline` less this device's clock (right for a line read later, after a
// reload, when the device's clock is set right). A clock never shows more time than the seat has.
let clockTimer = null;
function takeClocks(clocks) {
  game.clocks = clocks || null;
  game.clocksAt = performance.now();
}
// Seconds left for a seat now (null: the table has no clock).
function secondsLeft(seat) {
  const c = game?.clocks;
  if (!c || !Array.isArray(c.remaining)) return null;
  const given = Number(c.remaining[seat] ?? 0);
  if (c.running !== seat) return given;
  let left = given - (performance.now() - (game.clocksAt ?? performance.now())) / 1000;
  if (c.deadline != null) left = Math.min(left, Number(c.deadline) - Date.now() / 1000);
  return Math.max(0, left);
}
// "4:05", "0:09", "1:02:00": whole seconds, rounded up (a clock shows 0:00 only once it ran out).
function clockText(seconds) {
  const whole = Math.ceil(seconds - 1e-9);
  const h = Math.floor(whole / 3600), m = Math.floor((whole % 3600) / 60), sec = whole % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}
// A seat's clock on its chip (none without a table clock); the running one marked. What it says, for the
// chip's title.
function clockChip(seat, chip) {
  const c = game.table ? game.clocks : null;
  if (!c) return null;
  const running = c.running === seat && !(game.view?.match_over || game.view?.game_over);
  const clock = document.createElement("span");
  clock.className = "clock" + (running ? " running" : "");
  clock.dataset.seat = seat;
  chip.classList.toggle("clock-running", running);
  chip.append(clock);
  const auto = (c.autopilot || []).includes(seat);
  if (auto) {
    const note = document.createElement("small");
    note.className = "autopilot"; note.textContent = tr("autopilot", c.setting?.autopilot_level || "bot");
    chip.append(note);
  }
  showClock(clock, seat);
  return `clock ${clock.textContent}${running ? ", running" : ""}${auto ? ", on autopilot" : ""}`;
}
function showClock(el, seat) {
  const left = secondsLeft(seat);
  el.textContent = clockText(left);
  el.dataset.left = left.toFixed(1);
  el.classList.toggle("low", left < 10);
}
// Redraw the running clock's text every 200 ms while one runs (a local timer: the server is not asked).
function tickClocks() {
  const running = game?.clocks?.running;
  if (running == null || !game?.table) { clearInterval(clockTimer); clockTimer = null; return; }
  for (const el of document.querySelectorAll("#opponents .clock.running")) showClock(el, Number(el.dataset.seat));
  if (!clockTimer) clockTimer = setInterval(tickClocks, 200);
}
// The open-table form's clock: none, a limit per move, or a bank with an increment; what happens when it
// runs out. The body's `clock` (docs/tables.md), or null for none.
const CLOCKS = { "": null, "move:10": { move: 10 }, "move:30": { move: 30 }, "move:60": { move: 60 },
                 "bank:180:2": { bank: 180, increment: 2 }, "bank:300:5": { bank: 300, increment: 5 },
                 "bank:600:10": { bank: 600, increment: 10 } };
function setUpClockForm() {
  const showRule = () => { $("t-on-timeout").parentElement.hidden = !$("t-clock").value; };
  $("t-clock").addEventListener("change", showRule);
  $("t-variant").addEventListener("change", offerRule);
  showRule();
  offerRule();
}
// The variant's timeout rule is offered only where it has one (`timeout_rule`: Kozel, Kingdomino); elsewhere
// a clock that runs out hands the seat to a bot, and the service refuses `rule`.
function offerRule() {
  const hasRule = Boolean(variants.find((v) => v.name === $("t-variant").value)?.timeout_rule);
  const select = $("t-on-timeout");
  const rule = select.querySelector('option[value="rule"]');
  rule.disabled = rule.hidden = !hasRule;
  if (!hasRule && select.value === "rule") select.value = "autopilot:greedy";
}
function clockSetting() {
  const chosen = CLOCKS[$("t-clock").value];
  if (!chosen) return null;
  const [onTimeout, level] = $("t-on-timeout").value.split(":");
  return { ...chosen, on_timeout: onTimeout, ...(level ? { autopilot_level: level } : {}) };
}

// ---------------------------------------------------------------- ratings
// Each person's rating beside their name: the skill rating's ordinal (mu - 3 sigma) in the variant's family
// from GET /v1/players/{id}, "new" for a player with no archived match yet. Looked up once per player and
// table, and again when a match there is over (its ratings moved).
const ratings = new Map();   // player id -> {ordinal, points, matches} | "new" | "pending"
// A guest id is made when its seat is taken (api_gateway/archive/players.py), so a guest can have an archived
// match only from this table once a match here is over: before that it is new without asking. (The archive
// answers 404 for a player it does not know, and the browser itself reports every failed load in the
// console: a newcomer must not be looked up at all.) After a match, a guest is looked up when the record the
// page read names them (the page reads the record of a match it sees over, then looks the players up again),
// or when the page read none but an earlier match at the table is over (it was dealt again since).
function mayBeRated(id) {
  if (!id.startsWith("guest:")) return true;
  const seats = game.ratingChange?.matchId ? game.ratingChange.seats || [] : null;
  if (seats) return seats.some((s) => s.player === id);
  return (game.table?.matches ?? 0) > 1;
}
async function loadRatings(force = false) {
  const ids = (game?.playerIds || []).filter((id) => id && (force || !ratings.has(id)));
  const fam = family();
  for (const id of ids.filter((x) => !mayBeRated(x))) ratings.set(id, "new");
  await Promise.all(ids.filter(mayBeRated).map(async (id) => {
    ratings.set(id, ratings.get(id) ?? "pending");
    try {
      const player = await api(`/v1/players/${encodeURIComponent(id)}`);
      const r = (player.ratings || []).find((x) => x.family === fam);
      ratings.set(id, r ? { ordinal: r.skill.ordinal, points: r.points, matches: r.matches } : "new");
    } catch (err) {
      ratings.set(id, err.status === 404 ? "new" : "pending");
    }
  }));
  if (ids.length && game?.view && document.body.dataset.screen === "table") renderSeats(game.view);
}
const skillText = (x) => (Math.round(x * 10) / 10).toFixed(1);
function ratingChip(seat, chip) {
  if (game.tournament && game.table?.rated === false) return null;   // a casual tournament's round moves no rating
  const id = game.table ? game.playerIds?.[seat] : null;
  const r = id ? ratings.get(id) : null;
  if (!r || r === "pending") return null;
  const el = document.createElement("small");
  el.className = "rating"; el.dataset.player = id;
  el.textContent = r === "new" ? tr("rating.new") : tr("rating.of", skillText(r.ordinal));
  el.title = r === "new" ? tr("x.no-archived") : tr("x.skill", skillText(r.ordinal), r.matches)
    + (family() === "K" ? tr("x.points", r.points) : "");
  el.dataset.ordinal = r === "new" ? "" : String(r.ordinal);
  chip.append(el);
  return el.textContent;
}
// After a match: each player's rating before and after, from the archive once it holds the match (the
// gateway archives it as the match ends; with its database down, later: asked again a few times).
const RECORD_TRIES = 10;
let changeFor = null;
async function renderRatingChange(view) {
  const box = $("rating-change");
  const over = game.table && (view.match_over || view.game_over);
  if (!over) { box.hidden = true; return; }
  if (game.ratingChange?.matchId === game.matchId) { showRatingChange(game.ratingChange.seats); return; }
  if (changeFor === game.matchId) return;   // already asking
  const matchId = changeFor = game.matchId;
  box.hidden = false; box.textContent = tr("r.waiting");
  for (let i = 0; i < RECORD_TRIES; i++) {
    try {
      const archived = await api(`/v1/matches/${matchId}/record`);
      if (game?.matchId !== matchId) return;
      game.ratingChange = { matchId, seats: archived.seats, rated: archived.rated, timedOut: archived.timed_out };
      save();
      renderStatus(game.view);
      showRatingChange(archived.seats);
      loadRatings(true);
      return;
    } catch (err) {
      if (![404, 503].includes(err.status)) break;
      await new Promise((done) => setTimeout(done, 500 * (i + 1)));
    }
  }
  if (game?.matchId === matchId) box.textContent = tr("r.missing");
}
function showRatingChange(seats) {
  const box = $("rating-change");
  box.hidden = false;
  const title = document.createElement("b");
  const rated = game.ratingChange?.rated;
  title.textContent = rated === false ? tr("r.not-rated") : tr("r.after");
  const list = document.createElement("ul");
  list.append(...seats.filter((s) => s.player).map((s) => {
    const li = document.createElement("li");
    li.className = `seat-${s.seat}`; li.dataset.seat = s.seat;
    const before = s.skill_before?.ordinal ?? 0, after = s.skill_after?.ordinal ?? before;
    const delta = after - before;
    li.dataset.delta = String(delta);
    li.textContent = `${shortName(s.seat)}: ${skillText(before)} → ${skillText(after)} (${delta >= 0 ? "+" : "−"}${skillText(Math.abs(delta))})`
      + (family() === "K" ? tr("x.points", `+${s.points}`) : "") + tr("x.place", s.place);
    return li;
  }));
  box.replaceChildren(title, list);
}

// ---------------------------------------------------------------- the leaderboard
// GET /v1/leaderboard?variant=: the best players of the variant's family by skill (or the source's points),
// a page at a time (`next`: the cursor of the following page, "More players" appends it).
let boardCursor = null, boardGen = 0;   // boardGen: only the latest request's answer is shown
function setUpLeaderboard() {
  $("board-variant").replaceChildren(...variants.map((v) => new Option(v.name, v.name)));
  $("board-variant").value = $("variant").value;
  $("to-leaderboard").addEventListener("click", () => {
    leaveTable(); warn(""); $("setup-box").open = false; $("match-title").textContent = "Leaderboard"; showBoard();
  });
  $("board-variant").addEventListener("change", () => showBoard());
  $("board-by").addEventListener("change", () => showBoard());
  $("board-more").addEventListener("click", () => showBoard(true));
  $("board-refresh").addEventListener("click", () => showBoard());
}
async function showBoard(more = false) {
  showScreen("leaderboard");
  say(tr("s.board"));
  // every rated player, the provisional ones (fewer than 5 rated matches) marked with a "?"
  const query = new URLSearchParams({ variant: $("board-variant").value, by: $("board-by").value, limit: "20",
                                      provisional: "true" });
  if (more && boardCursor) query.set("cursor", boardCursor);
  const gen = ++boardGen;
  let page;
  try { page = await api(`/v1/leaderboard?${query}`); } catch (err) { warn(tr("x.no-board", err.message)); return; }
  if (gen !== boardGen || document.body.dataset.screen !== "leaderboard") return;   // asked again, or left
  boardCursor = page.next ?? null;
  $("board-more").hidden = !boardCursor;
  const rows = page.items.map(boardRow);
  if (more) { $("board-list").append(...rows); return; }
  if (!rows.length) {
    const li = document.createElement("li"); li.className = "empty";
    li.textContent = tr("s.board-empty");
    rows.push(li);
  }
  $("board-list").replaceChildren(...rows);
  document.body.dataset.boardLoads = Number(document.body.dataset.boardLoads || 0) + 1;   // for tests
}
// A player as the board names them: the name the archive keeps, else the id (a guest's shortened: the
// archive learns no name for a seat unless the app gives one).
function playerName(e) {
  if (e.name) return e.name;
  return e.player.startsWith("guest:") ? `guest ${e.player.slice(6, 12)}` : e.player.replace(/^app:/, "");
}
// The player id this browser plays as: the one its latest table seat was given (guests keep theirs per seat).
function myPlayerId() {
  if (game?.playerId) return game.playerId;
  const held = Object.keys(localStorage).filter((k) => k.startsWith("domino-table:"))
    .map((k) => { try { return JSON.parse(localStorage.getItem(k)); } catch { return null; } });
  return held.find((g) => g?.playerId)?.playerId ?? null;
}
function boardRow(e) {
  const li = document.createElement("li");
  li.dataset.player = e.player; li.dataset.rank = e.rank;
  const rank = document.createElement("b"); rank.textContent = `${e.rank}.`;
  const who = document.createElement("span"); who.className = "who"; who.textContent = playerName(e);
  if (e.player === myPlayerId()) { li.classList.add("me"); who.textContent += tr("seats.you"); }
  const skill = document.createElement("span"); skill.className = "skill"; skill.textContent = tr("rating.of", skillText(e.skill.ordinal));
  if (e.provisional) { skill.textContent += "?"; skill.title = tr("rating.provisional"); li.dataset.provisional = "1"; }
  const more = document.createElement("small");
  more.textContent = tr("x.matches-wins", e.matches, e.wins) + (e.points ? tr("x.points", e.points) : "");
  li.append(rank, " ", who, " ", skill, " ", more);
  return li;
}

// ---------------------------------------------------------------- a hosted tournament (issue 41)
// /play?tournament=<id>&invite=<code>: take a place (the join form), then follow it: its stream of standings
// (GET .../events: the view at each change, no credential) and, at each change, the tournament asked with
// this browser's tournament credential (localStorage) for `you`: the round you play (its table's seat credential:
// the round is played with the page's own table play), the round you sit out, out, over. Each round is a new
// table: when its match ends (the tournament closes it once the round is over) the next one is looked up.
const TOUR_POLL_MS = 3000;   // the tournament looked at besides its stream (a stream that stalls, a reload)
// {id, credential, index, view, source, timer, playing: the match of the round played,
//  looking: the look on its way, leaving: a leave on its way (nothing is asked with a credential being given up)}
let tour = null;
const tourKey = (id) => `domino-tournament:${id}`;
function stopTournament() {
  if (!tour) return;
  tour.source?.close();
  clearTimeout(tour.timer);
  tour = null;
  $("tour-box").hidden = true;
}
// The lobby: the public tournaments still open; one picked opens its join screen (no invite needed).
async function showTournamentLobby() {
  leaveTable();
  warn("");
  $("setup-box").open = false;
  $("match-title").textContent = tr("tour.mode");
  showScreen("tournament");
  $("tour-join-form").hidden = true;
  $("tour-lobby-box").hidden = false;
  say(tr("tour.lobby-say"));
  let found;
  try { found = (await api("/v1/tournaments/hosted?limit=50")).tournaments; } catch (err) { warn(tr("j.other", err.message)); return; }
  $("tour-lobby").replaceChildren(...found.map((v) => {
    const li = document.createElement("li");
    li.dataset.tournament = v.tournament_id;
    const b = document.createElement("button");
    b.type = "button"; b.className = "primary"; b.textContent = tr("tour.join");
    b.addEventListener("click", () => openTournament(v.tournament_id, null));
    li.append(`${tourName(v)}: ${tr("tour.about", v.participants.length, v.size, v.rated !== false, aboutFormat(v))} `, b);
    return li;
  }));
  if (!found.length) say(tr("tour.lobby-none"));
}
async function openTournament(id, invite) {
  leaveTable();
  // the address names the tournament (and the invite, until it is spent): a reload comes back here
  history.replaceState(null, "", `/play?${new URLSearchParams({ tournament: id, ...(invite ? { invite } : {}) })}`);
  $("tour-lobby-box").hidden = true;
  $("setup-box").open = false;
  $("match-title").textContent = tr("tour.mode");
  const saved = localStorage.getItem(tourKey(id));
  if (saved) { followTournament(JSON.parse(saved)); return; }
  showScreen("tournament");
  $("tour-join-form").hidden = false;
  $("tour-join").disabled = false;
  $("tour-join-form").dataset.id = id;
  $("tour-join-form").dataset.invite = invite ?? "";
  $("tour-join-about").textContent = "";   // until this tournament's look answers: never another one's
  say(tr("s.give-name"));
  try {
    const view = await api(`/v1/tournaments/hosted/${id}`);
    $("tour-join-title").textContent = tourName(view);
    $("tour-join-about").textContent = tr("tour.about", view.participants.length, view.size, view.rated !== false, aboutFormat(view));
    if (view.status !== "open") { $("tour-join").disabled = true; warn(tr("tour.started")); }
  } catch (err) {
    $("tour-join").disabled = true;
    warn(err.status === 404 ? tr("tour.unknown") : tr("j.other", err.message));
  }
}
const tourName = (view) => view.name || tr("tour.unnamed", view.tournament_id.slice(0, 6));
const isSwiss = (view) => view.format === "swiss";
// What a tournament is, for its line in the lobby and its join screen: a Swiss names its game, table and rounds.
const aboutFormat = (view) => isSwiss(view) ? tr("tour.swiss-of", variantName(view.variant), view.players, view.rounds_to_play) : null;
// A Swiss's bye is worth a match won: 1 at tables of two and in a pair game, 3 at four alone.
const byePoints = (view) => view.players === 4 && !view.options?.teams ? 3 : 1;
const points = (x) => x == null ? "" : String(x);
async function joinTournament(event) {
  event.preventDefault();
  warn("");
  const form = $("tour-join-form"), id = form.dataset.id, given = myName("tour-name");
  if (!given || !id) return;
  try {
    const joined = await api(`/v1/tournaments/hosted/${id}/join`,
                             { ...(form.dataset.invite ? { invite: form.dataset.invite } : {}), name: given, ...vouched() });
    const kept = { id, credential: joined.credential, index: joined.index };
    localStorage.setItem(tourKey(id), JSON.stringify(kept));
    history.replaceState(null, "", `/play?tournament=${id}`);   // the invite is spent
    followTournament(kept);
  } catch (err) {
    const why = problemName(err);
    warn(["invalid-invite", "invite-required", "tournament-full", "tournament-started", "seat-held"].includes(why)
      ? tr(`tour.p.${why}`) : tr("j.other", err.message));
  }
}
function followTournament(kept) {
  stopTournament();
  $("tour-lobby-box").hidden = true;
  tour = { ...kept, view: null, source: null, timer: null, playing: null, looking: null, leaving: false };
  $("tour-join-form").hidden = true;
  $("tour-box").hidden = false;
  showScreen("tournament");
  history.replaceState(null, "", `/play?tournament=${kept.id}`);
  const source = new EventSource(`/v1/tournaments/hosted/${kept.id}/events`);   // resumes by Last-Event-ID itself
  tour.source = source;
  source.addEventListener("tournament", () => lookTournament());
  source.addEventListener("end", () => { source.close(); lookTournament(); });
  lookTournament();
}
// The tournament now, with `you`; then the screen follows: the round's table, or the standings.
async function lookTournament() {
  if (!tour || tour.leaving) return;   // the leave looks once it is answered
  const followed = tour;
  clearTimeout(followed.timer);
  let view;
  try {
    followed.looking = api(`/v1/tournaments/hosted/${followed.id}`, undefined, followed.credential);
    view = await followed.looking;
  } catch (err) {
    if (tour !== followed) return;
    if (err.status === 401 || err.status === 404) {   // the place was given up (here or on another device)
      localStorage.removeItem(tourKey(followed.id));
      stopTournament();
      showScreen("tournament");
      warn(tr("tour.place-gone"));
      return;
    }
    followed.timer = setTimeout(lookTournament, TOUR_POLL_MS);
    return;
  }
  if (tour !== followed) return;
  followed.view = view;
  const you = view.you;
  if (you.status === "playing" && you.match_id && you.round != null && followed.playing !== you.match_id) {
    await playTournamentRound(you);
  }
  if (tour !== followed) return;
  if (you.status !== "playing") {   // between rounds, sitting out, out, over: the standings
    if (game?.tournament) { closeStream(); stopWatching(); game = null; }
    followed.playing = null;
    showScreen("tournament");
    $("match-title").textContent = tr("tour.mode");
    document.title = tr("page.title");
  }
  renderTournament(view);
  if (view.status !== "over") followed.timer = setTimeout(lookTournament, TOUR_POLL_MS);
  else followed.source?.close();
}
const outBefore = (view, index, number) => view.rounds.some((r) => r.number < number && (r.eliminated.includes(index) || r.forfeit === index));
// Your rounds, from the tournament itself (a reload loses nothing): each round recorded or being played that you
// were still in, with your seat, or "out" for one you sat out.
function yourRounds(view, index) {
  const rounds = [...view.rounds];
  if (view.round && !rounds.some((r) => r.number === view.round.number)) rounds.push(view.round);
  if (isSwiss(view)) return swissRounds(rounds, index);
  return rounds.filter((r) => !outBefore(view, index, r.number))
    .map((r) => [r.number, r.players.includes(index) ? r.players.indexOf(index) : "out"]);
}
// A Swiss's rounds of yours: your seat at your table, or "bye"; none once you left (seated no more).
function swissRounds(rounds, index) {
  return rounds.flatMap((r) => {
    if ((r.byes ?? []).includes(index)) return [[r.number, "bye"]];
    const table = yourTable(r, index);
    return table ? [[r.number, table.players.indexOf(index)]] : [];
  });
}
const yourTable = (round, index) => (round?.tables ?? []).find((t) => t.players.includes(index)) ?? null;
// Your round: its table (asked with the seat's credential) played with the page's own table play.
async function playTournamentRound(you) {
  const followed = tour;
  let t;
  try { t = await api(`/v1/tables/${you.table_id}`, undefined, you.credential); } catch { return; }
  if (tour !== followed) return;
  closeStream();
  stopWatching();
  followed.playing = you.match_id;
  game = { table: t, credential: you.credential, me: you.seat, playerId: you.player, tournament: followed.id,
           tournamentRound: you.round, swiss: followed.view?.format === "swiss", hostKey: null, invites: [], watchLink: null, ...fromTable(t),
           matchId: null, view: null, scores: null, seq: -1, seen: -1, log: [], told: [], moves: [], keys: [] };
  startMatch(you.match_id);
}
// The standings, the last round recorded, your rounds, and what you do now.
function renderTournament(view) {
  const you = view.you, mine = you?.index;
  $("tour-box").hidden = false;
  $("tour-box").dataset.status = you?.status ?? view.status;
  $("tour-box").dataset.version = String(view.version ?? "");
  const swiss = isSwiss(view);
  $("tour-box").dataset.format = view.format ?? "bykovo";
  $("tour-title").textContent = swiss ? tr("tour.title-swiss", tourName(view), variantName(view.variant), view.players, view.rounds_to_play)
    : tr("tour.title", tourName(view), view.limit);
  const name = (i) => view.participants.find((p) => p.index === i)?.name ?? `#${i}`;
  const mineNow = view.standings.find((s) => s.index === mine);
  // who plays with you (a Swiss: your table), else everyone playing the round
  const playing = ((swiss ? yourTable(view.round, mine)?.players : view.round?.players) ?? []).map(name).join(", ");
  const status = !you ? "" : view.status === "open" ? tr("tour.s.open", view.participants.length, view.size)
    : you.status === "playing" ? tr(swiss ? "tour.s.playing-swiss" : "tour.s.playing", you.round, seatNo(you.seat), playing, view.rounds_to_play)
    : you.status === "sitting-out" && swiss ? tr("tour.s.bye", you.round, byePoints(view), view.rounds_to_play)
    : you.status === "sitting-out" ? tr("tour.s.sitting-out", you.round, playing)
    : you.status === "waiting" ? tr("tour.s.waiting")
    : you.status === "out" && swiss ? tr("tour.s.left-swiss", points(mineNow?.score))
    : you.status === "out" ? tr("tour.s.out", mineNow?.total, view.limit)
    : tr("tour.s.over", mineNow?.place, view.standings.length);
  $("tour-status").textContent = status;
  if (document.body.dataset.screen === "tournament") say(status);
  const last = view.rounds[view.rounds.length - 1];
  $("tour-last").textContent = !last ? "" : swiss ? tr("tour.last-swiss", last.number,
    last.tables.map((t) => t.players.map((p, seat) => `${name(p)} ${points(t.result?.[seat])}`).join(" – ")).join("; "),
    (last.byes ?? []).map(name).join(", "))
    : tr("tour.last", last.number, last.players.map((p, seat) => `${name(p)} ${last.points[seat]}`).join(", "),
         last.eliminated.map(name).join(", "), last.forfeit != null ? name(last.forfeit) : null);
  // the standings' columns: Bykovo's total; a Swiss's points and Buchholz
  $("tour-total-head").textContent = tr(swiss ? "tour.points" : "tour.total");
  $("tour-buchholz-head").hidden = !swiss;
  $("tour-standings").tBodies[0].replaceChildren(...view.standings.map((s) => {
    const tr_ = document.createElement("tr");
    Object.assign(tr_.dataset, { index: s.index, place: s.place, total: s.total ?? "" },
                  swiss ? { score: points(s.score), buchholz: points(s.buchholz) } : {});
    tr_.classList.toggle("me", s.index === mine);
    const gone = swiss ? !!view.participants.find((p) => p.index === s.index)?.left : !!s.out;   // a Swiss: left it
    tr_.classList.toggle("out", gone);
    tr_.classList.toggle("official", !!s.official);
    const marks = (gone ? tr(swiss ? "tour.left-mark" : "tour.out-mark") : "") + (s.official ? tr("tour.official-mark") : "");
    const who = s.participant + (s.index === mine ? tr("seats.you") : "");
    const cells = swiss ? [String(s.place), who, points(s.score), points(s.buchholz), marks]
      : [String(s.place), who, String(s.total ?? ""), marks];
    tr_.replaceChildren(...cells.map((text) => { const td = document.createElement("td"); td.textContent = text; return td; }));
    return tr_;
  }));
  const rounds = you ? yourRounds(view, mine) : [];
  $("tour-rounds").replaceChildren(...rounds.map(([number, seat]) => {
    const li = document.createElement("li");
    li.dataset.round = number;
    if (seat === "out") { li.dataset.sitOut = "1"; li.textContent = tr("tour.r.sat-out", number); }
    else if (seat === "bye") { li.dataset.bye = "1"; li.textContent = tr("tour.r.bye", number); }
    else { li.dataset.seat = seat; li.textContent = tr("tour.r.played", number, seatNo(seat)); }
    return li;
  }));
  $("tour-leave").hidden = view.status === "over" || you?.status === "out";
}
// Leave the tournament: before its start the place is freed; after it, a forfeit (the tournament goes on).
async function leaveTournament() {
  if (!tour || !confirm(tr(tour.view?.status === "open" ? "tour.confirm-leave-open" : "tour.confirm-leave"))) return;
  const followed = tour;
  // No look goes out while the leave does (the stream tells of the leave before its answer comes), and one already
  // on its way is answered first: a place given up before the start takes its credential with it.
  followed.leaving = true;
  clearTimeout(followed.timer);
  await followed.looking?.catch(() => {});
  let refused = null;
  try { await api(`/v1/tournaments/hosted/${followed.id}/leave`, {}, followed.credential); }
  catch (err) { if (err.status !== 409) refused = err; }
  followed.leaving = false;
  if (refused) { warn(tr("tour.no-leave", refused.message)); lookTournament(); return; }
  if (followed.view?.status === "open") {
    localStorage.removeItem(tourKey(followed.id));
    stopTournament();
    say(tr("tour.left"));
    return;
  }
  if (game?.tournament) { closeStream(); stopWatching(); game = null; }
  lookTournament();
}

// ---------------------------------------------------------------- start
// The language: the static texts now, the rest as it is drawn; the switch redraws what is on the screen.
translatePage();
$("lang").value = lang;
$("lang").addEventListener("change", () => { setLanguage($("lang").value); redrawInLanguage(); });
function redrawInLanguage() {
  const variant = $("variant").value;
  for (const id of ["variant", "t-variant", "board-variant"]) {
    for (const o of $(id).options) o.textContent = variantName(o.value);
  }
  $("variant").value = variant;
  fillLevels();
  fillTableSeats();
  live($("live").dataset.state || "");
  const screen = document.body.dataset.screen;
  if (screen === "friends") say(tr("s.open"));
  else if (screen === "lobby") { lobbyShown = ""; showLobby(); }   // redrawn even when no table changed
  else if (screen === "leaderboard") showBoard();
  else if (screen === "waiting" && game?.table) showWaiting();
  if (tour?.view) renderTournament(tour.view);
  if (screen === "table" && game?.view) {
    if (game.told?.length === game.log.length) game.log = game.told.map(describe);
    save();
    render();
  } else if (!document.body.dataset.screen) say(tr("status.choose"));
}
$("setup").addEventListener("submit", newMatch);
$("next-round").addEventListener("click", nextRound);
// The arms turn where the board's width says and the marks are sized to its scale: a board of a new
// size (a phone turned sideways, a message shown) redraws the layout. The drawing, positioned over
// the board, never changes the board's size itself.
let lastSize = "";
new ResizeObserver(() => {
  const size = `${$("board").clientWidth}x${$("board").clientHeight}`;
  if (size === lastSize) return;
  lastSize = size;
  if (game && !isKD() && game.view?.layout) drawBoard();
}).observe($("board"));
loadVariants().then(() => {
  setUpFriends();
  if (openFromAddress()) return;   // /play?table=...: a seat at a table, or the invite to take one
  const saved = sessionStorage.getItem("domino-play");
  if (saved) { game = { moves: [], ...JSON.parse(saved) }; $("setup-box").open = false; render(); }
}).catch((err) => warn(`The gateway does not answer: ${err.message}`));
