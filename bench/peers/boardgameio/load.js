'use strict';
/**
 * The one load tool of `domino bench peers`, for both servers (bench/peers.py runs it).
 *
 *   node load.js --target ours|peer --url http://127.0.0.1:PORT --matches N
 *                --warmup S --seconds S [--rate MOVES_PER_S] [--progress S]
 *
 * `--matches` 2-player block matches are played at once, each simulated player on its own
 * connections, random legal moves, a new match as soon as one ends:
 *
 * - ours: a table per match (`POST /v1/tables`, two open seats, both joined by invite), each
 *   seat's event stream open (`GET /v1/matches/{id}/events`, its own connection), moves picked
 *   from the seat's own view on that stream (its `legal` actions, as the play page picks them)
 *   and sent by `POST /v1/matches/{id}/apply` with the seat's credential (a second keep-alive
 *   connection of that player);
 * - peer: a boardgame.io match made by its Lobby API (create, two joins), each player a
 *   `boardgame.io/client` Client on its own socket.io connection (websocket, `forceNew`),
 *   moves picked from the player's own view by game.js's `legalMoves`.
 *
 * A move counts when it has reached the other player; its delay is from sending it (the apply
 * request, the socket.io action) to its arrival on the other player's connection. `--rate`
 * paces the moves (all matches together) to that many per second; without it, as fast as the
 * server answers (saturation). Moves are counted in a window of `--seconds` after `--warmup`
 * (and after every one of the matches at once has been dealt, so the window never measures set-up);
 * the lines `window-start` and `window-end` are printed at its edges (bench/peers.py reads
 * the servers' CPU time there), then one JSON line with the results. With `--progress S` (bench/store_soak.py,
 * a long run), a line `progress {...}` every S seconds of the window: the moves counted so far, the matches
 * being played and finished, the errors, and the delays' p50/p99 since the line before.
 *
 * The hidden-hand check: every message a player receives (ours: each stream event until the
 * hand is over, when the engine reveals the hands by design; peer: every socket.io event) is
 * searched for tile names; one that the other player was dealt and has not yet played is a
 * violation. Both dealt hands are known here, each from its own player's first view.
 */
const http = require('http');
const { performance } = require('perf_hooks');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { BlockDominoes, legalMoves } = require('./game');

function options(argv) {
  const o = { target: null, url: null, matches: 8, warmup: 1, seconds: 5, rate: 0, progress: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    o[key] = typeof o[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (o.target !== 'ours' && o.target !== 'peer') throw new Error('--target ours|peer');
  if (!o.url) throw new Error('--url');
  return o;
}

const opts = options(process.argv.slice(2));
const base = new URL(opts.url);
const now = () => performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------ the run's figures

let phase = 'warmup';
/** The `finish` of every match being played: called at the window's end, so the run ends at once. */
const playing = new Set();
const stats = {
  moves: 0, delays: [], checked: 0, leaking: 0, unchecked: 0, violations: [], errors: [], errorCount: 0, matches: 0, dealt: 0,
};

function error(text) {
  stats.errorCount += 1;
  if (stats.errors.length < 20) stats.errors.push(String(text).slice(0, 500));
}

function moveArrived(sentAt, arrivedAt, sentPhase) {
  if (sentPhase !== 'window') return;
  stats.moves += 1;
  stats.delays.push(arrivedAt - sentAt);
}

let nextSlot = 0;
/** Wait for this move's turn under `--rate` (no wait without it). */
async function paced() {
  if (!opts.rate) return;
  const t = now();
  const at = Math.max(t, nextSlot);
  nextSlot = at + 1000 / opts.rate;
  if (at > t) await sleep(at - t);
}

// ------------------------------------------------------------------ the hidden-hand check

const TILE = /^([0-6])-([0-6])(@[WE])?$/;
const norm = (tile) => {
  const m = TILE.exec(tile);
  return m ? `${Math.min(m[1], m[2])}-${Math.max(m[1], m[2])}` : null;
};

function tilesIn(value, out = new Set()) {
  if (typeof value === 'string') {
    const tile = norm(value);
    if (tile) out.add(tile);
  } else if (Array.isArray(value)) {
    for (const v of value) tilesIn(v, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) tilesIn(v, out);
  }
  return out;
}

/** One match's two players as the check sees them: dealt hands, tiles sent, messages waiting. */
class Watcher {
  constructor() {
    this.dealt = [null, null];
    this.sent = [new Set(), new Set()];
    this.waiting = [];
  }

  deal(seat, hand) {
    if (this.dealt[seat] === null) this.dealt[seat] = new Set(hand.map(norm));
    this.flush();
  }

  played(seat, tile) {
    if (tile) this.sent[seat].add(norm(tile));
  }

  /** A message `seat` received: the tiles in it, against the other's hand as it is now. */
  received(seat, payload) {
    this.waiting.push({ seat, tiles: tilesIn(payload), sent: new Set(this.sent[1 - seat]) });
    this.flush();
  }

  flush() {
    if (this.dealt[0] === null || this.dealt[1] === null) return;
    if (!this.seen) {
      this.seen = true;
      stats.dealt += 1;
    }
    for (const { seat, tiles, sent } of this.waiting) {
      stats.checked += 1;
      const leaked = [...tiles].filter((tile) => this.dealt[1 - seat].has(tile) && !sent.has(tile));
      if (leaked.length === 0) continue;
      stats.leaking += 1;
      if (stats.violations.length < 20) stats.violations.push(`seat ${seat} received ${leaked} of the other hand`);
    }
    this.waiting = [];
  }

  close() {
    stats.unchecked += this.waiting.length;
    this.waiting = [];
  }
}

// ------------------------------------------------------------------ HTTP

// A kept-alive connection is dropped by the client after 2 s unused, before a server would close it
// (ours after GATEWAY_READ_TIMEOUT, 5 s): a request sent on a connection that the server closes at
// the same moment fails with "socket hang up" (once in a store soak at load 6 on 2 cores).
const KEEP_ALIVE = { keepAlive: true, timeout: 2000 };
const shared = new http.Agent({ ...KEEP_ALIVE, maxSockets: 16 });

function call(agent, method, path, body, credential) {
  return new Promise((resolve, reject) => {
    const headers = { Accept: 'application/json' };
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    if (data) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = data.length;
    }
    if (credential) headers.Authorization = `Bearer ${credential}`;
    const req = http.request({ host: base.hostname, port: base.port, method, path, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(text ? JSON.parse(text) : null);
      });
      res.on('error', reject);
    });
    req.setTimeout(30000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(data || undefined);
  });
}

/** A Server-Sent Events stream on its own connection: onEvent(kind, id, data, arrivedAt). */
function stream(path, credential, onEvent, onClose) {
  const req = http.request({ host: base.hostname, port: base.port, path, method: 'GET', agent: false,
    headers: { Authorization: `Bearer ${credential}`, Accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) {
      onClose(new Error(`events: ${res.statusCode}`));
      res.resume();
      return;
    }
    res.setEncoding('utf8');
    let buffer = '';
    res.on('data', (chunk) => {
      const arrivedAt = now();
      buffer += chunk.replace(/\r/g, '');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let kind = 'message';
        let id = null;
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) kind = line.slice(6).trim();
          else if (line.startsWith('id:')) id = Number(line.slice(3).trim());
          else if (line.startsWith('data:')) data.push(line.slice(5).trim());
        }
        if (data.length) onEvent(kind, id, JSON.parse(data.join('\n')), arrivedAt);
      }
    });
    res.on('end', () => onClose(null));
    res.on('error', () => onClose(null));
  });
  req.on('error', (e) => onClose(e));
  req.end();
  return req;
}

// ------------------------------------------------------------------ ours

async function oursMatch() {
  const opened = await call(shared, 'POST', '/v1/tables',
    { variant: 'block', players: 2, seats: [{ kind: 'open' }, { kind: 'open' }] });
  const credentials = [];
  let matchId = null;
  for (const invite of opened.invites.sort((a, b) => a.seat - b.seat)) {
    const joined = await call(shared, 'POST', `/v1/tables/${opened.table_id}/join`,
      { invite: invite.code, name: `load ${invite.seat}` });
    credentials.push(joined.credential);
    matchId = joined.match_id;
  }
  const watcher = new Watcher();
  const agents = [0, 1].map(() => new http.Agent({ ...KEEP_ALIVE, maxSockets: 1 }));
  const arrivals = [new Map(), new Map()]; // seat -> seq -> when its stream got it
  const waiting = new Map(); // seq -> {sentAt, sentPhase, to}
  const acted = [-1, -1];
  const requests = [];
  let over = false;
  let finish;
  const done = new Promise((resolve) => { finish = () => { over = true; resolve(); }; });
  playing.add(finish);

  async function act(seat, seq, legal) {
    if (acted[seat] >= seq) return;
    acted[seat] = seq;
    try {
      await paced();
      if (over) return; // the match ended (or the run did) while this move waited for its turn
      if (!legal || legal.length === 0) throw new Error(`seat ${seat}'s view at ${seq} shows no legal action on its turn`);
      const action = legal[Math.floor(Math.random() * legal.length)];
      watcher.played(seat, action);
      const sentAt = now();
      const sentPhase = phase;
      const answer = await call(agents[seat], 'POST', `/v1/matches/${matchId}/apply`, { action }, credentials[seat]);
      const arrivedAt = arrivals[1 - seat].get(answer.seq);
      if (arrivedAt !== undefined) moveArrived(sentAt, arrivedAt, sentPhase);
      else waiting.set(answer.seq, { sentAt, sentPhase, to: 1 - seat });
    } catch (e) {
      if (!over) error(e.message);
      finish();
    }
  }

  const onEvent = (seat) => (kind, id, data, arrivedAt) => {
    if (kind === 'view') {
      watcher.deal(seat, data.view.hand);
    } else if (kind === 'update') {
      arrivals[seat].set(id, arrivedAt);
      const sent = waiting.get(id);
      if (sent !== undefined && sent.to === seat) {
        waiting.delete(id);
        moveArrived(sent.sentAt, arrivedAt, sent.sentPhase);
      }
    } else if (kind === 'end' || kind === 'closed') {
      finish();
      return;
    }
    if (kind !== 'view' && kind !== 'update') return;
    if (data.turn === null || data.turn === undefined || data.over) {
      finish();
      return;
    }
    watcher.received(seat, data);
    if (data.turn === seat) act(seat, id === null ? data.seq : id, data.view && data.view.legal);
  };
  for (const seat of [0, 1]) {
    requests.push(stream(`/v1/matches/${matchId}/events`, credentials[seat], onEvent(seat), (e) => {
      if (e && !over) error(e.message);
      finish();
    }));
  }
  await done;
  playing.delete(finish);
  for (const req of requests) req.destroy();
  for (const agent of agents) agent.destroy();
  watcher.close();
}

// ------------------------------------------------------------------ peer

async function peerMatch() {
  const game = BlockDominoes.name;
  const { matchID } = await call(shared, 'POST', `/games/${game}/create`, { numPlayers: 2 });
  const credentials = [];
  for (const playerID of ['0', '1']) {
    const joined = await call(shared, 'POST', `/games/${game}/${matchID}/join`,
      { playerID, playerName: `load ${playerID}` });
    credentials.push(joined.playerCredentials);
  }
  const watcher = new Watcher();
  const pending = [null, null]; // seat -> the move it sent: {fromState, sentAt, sentPhase}
  const acted = [-1, -1];
  let over = false;
  let finish;
  const done = new Promise((resolve) => { finish = () => { over = true; resolve(); }; });
  playing.add(finish);
  const clients = [0, 1].map((seat) => Client({
    game: BlockDominoes,
    multiplayer: SocketIO({ server: opts.url, socketOpts: { transports: ['websocket'], forceNew: true } }),
    matchID,
    playerID: String(seat),
    credentials: credentials[seat],
    debug: false,
  }));

  async function act(seat, state) {
    if (acted[seat] >= state._stateID) return;
    acted[seat] = state._stateID;
    await paced();
    if (over) return; // the match ended (or the run did) while this move waited for its turn
    const moves = legalMoves(state.G.hands[seat], state.G.ends);
    const sentPhase = phase;
    pending[seat] = { fromState: state._stateID, sentAt: now(), sentPhase };
    if (moves.length === 0) {
      clients[seat].moves.pass();
    } else {
      const move = moves[Math.floor(Math.random() * moves.length)];
      watcher.played(seat, move.tile);
      pending[seat].sentAt = now();
      clients[seat].moves.play(move.tile, move.end);
    }
  }

  clients.forEach((client, seat) => {
    client.subscribe((state) => {
      if (!state) return;
      const sent = pending[1 - seat];
      if (sent && state._stateID > sent.fromState) {
        pending[1 - seat] = null;
        moveArrived(sent.sentAt, now(), sent.sentPhase);
      }
      if (state.G.hands[seat]) watcher.deal(seat, state.G.hands[seat]);
      if (state.ctx.gameover) {
        finish();
        return;
      }
      if (state.ctx.currentPlayer === String(seat)) {
        act(seat, state).catch((e) => {
          if (!over) error(e.message);
          finish();
        });
      }
    });
    client.start();
    client.transport.socket.onAny((event, ...args) => watcher.received(seat, args));
  });
  const stall = setInterval(() => {
    for (const p of pending) {
      if (p && now() - p.sentAt > 30000) {
        error('peer: a move never reached the other player in 30 s');
        finish();
      }
    }
  }, 1000);
  await done;
  playing.delete(finish);
  clearInterval(stall);
  for (const client of clients) client.stop();
  watcher.close();
}

// ------------------------------------------------------------------ the run

async function player() {
  const match = opts.target === 'ours' ? oursMatch : peerMatch;
  while (phase !== 'done') {
    try {
      await match();
      if (phase !== 'done') stats.matches += 1;
    } catch (e) {
      error(e.message);
      await sleep(100);
    }
  }
}

function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1))];
}

/** Every `--progress` seconds of the window, a line `progress {...}`: the run so far (off by default). */
function progress(started) {
  let from = 0;
  return setInterval(() => {
    const recent = stats.delays.slice(from).sort((a, b) => a - b);
    from = stats.delays.length;
    const round = (x) => (x === null ? null : Math.round(x * 100) / 100);
    process.stdout.write(`progress ${JSON.stringify({
      t: Math.round(now() - started) / 1000, moves: stats.moves, matches_played: stats.matches,
      playing: playing.size, error_count: stats.errorCount, last_error: stats.errors[stats.errors.length - 1] || null,
      delay_ms: { p50: round(percentile(recent, 50)), p99: round(percentile(recent, 99)), n: recent.length },
    })}\n`);
  }, opts.progress * 1000);
}

async function main() {
  const players = Array.from({ length: opts.matches }, () => player());
  await sleep(opts.warmup * 1000);
  const ready = now() + 30000; // and every player has a match dealt (both hands seen), at most 30 s more
  while (stats.dealt < opts.matches && now() < ready) await sleep(20);
  phase = 'window';
  process.stdout.write('window-start\n');
  const started = now();
  const cpuStart = process.cpuUsage();
  const ticker = opts.progress > 0 ? progress(started) : null;
  await sleep(opts.seconds * 1000);
  if (ticker) clearInterval(ticker);
  const window = (now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  phase = 'done';
  process.stdout.write('window-end\n');
  for (const finish of playing) finish();
  const moves = stats.moves;
  const errorCount = stats.errorCount;
  const delays = stats.delays.slice().sort((a, b) => a - b);
  await Promise.race([Promise.all(players), sleep(15000)]);
  const round = (x) => (x === null ? null : Math.round(x * 100) / 100);
  process.stdout.write(JSON.stringify({
    target: opts.target,
    matches_at_once: opts.matches,
    rate: opts.rate || null,
    window_s: Math.round(window * 1000) / 1000,
    moves,
    moves_per_s: Math.round((moves / window) * 10) / 10,
    matches_played: stats.matches,
    delay_ms: { p50: round(percentile(delays, 50)), p99: round(percentile(delays, 99)),
      max: round(delays.length ? delays[delays.length - 1] : null), n: delays.length },
    hidden_hand: { messages_checked: stats.checked, messages_leaking: stats.leaking, unchecked: stats.unchecked,
      violations: stats.violations },
    load_tool_cores: Math.round(((cpu.user + cpu.system) / 1e6 / window) * 100) / 100,
    error_count: errorCount,
    errors: stats.errors,
  }) + '\n');
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
