"""The gateway's hosting of online tables, in parts with one job each (docs/design.md, "Hosting").

- `records`: a table's record and the pure rules about it (seats, invites, credentials, the view);
- `tables`: tables and seats (open, join, leave, invites, play again, a credential's seat and calls);
- `play`: a hosted match's changes (a seat's move, the next round, a seat handed to a bot, a timeout),
  each read once, its token opened once, advanced once;
- `matchmaking`: quick play (seek) and the bots-after filler;
- `timeouts`: turn clocks that ran out;
- `handoff`: a hosted match that ended, handed to the archive;
- `keepers`: the threads that run the timeouts, the filler and the hand-off's retries.

One direction: routes -> hosting -> matches -> engine -> store; the store wakes the streams.
"""
