'use strict';
/**
 * The peer game server of `domino bench peers`: boardgame.io's `Server` with its default
 * in-memory storage, the block game of game.js, the Lobby API and socket.io on one port.
 * Prints one JSON line `{"http": "127.0.0.1:<port>"}` once it listens (a free port).
 *
 *   node server.js [--stock]
 *
 * boardgame.io 0.50.2 hides a seat's view by `playerView` in every `sync`, `update` and
 * `patch` it sends, except one member: `sync` also carries the match's `initialState`
 * unfiltered, that is both dealt hands and the shuffle's seed (found by the bench's
 * hidden-hand check). So this server withholds it: the storage's answer to the sync's
 * fetch has no `initialState` (the client keeps it only to `reset`, which this game never
 * does). `--stock` runs the server as shipped, to show the leak (bench/peers.py does, briefly).
 */
const { Server } = require('boardgame.io/server');
const { BlockDominoes } = require('./game');

const stock = process.argv.includes('--stock');
const server = Server({ games: [BlockDominoes], origins: ['http://127.0.0.1'] });
if (!stock) {
  const fetch = server.db.fetch.bind(server.db); // InMemory: synchronous, so this stays synchronous
  server.db.fetch = (matchID, opts) => {
    const result = fetch(matchID, opts);
    if (opts && opts.initialState) result.initialState = null;
    return result;
  };
}
server.run(0).then(({ appServer }) => {
  process.stdout.write(JSON.stringify({ http: `127.0.0.1:${appServer.address().port}` }) + '\n');
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
