/**
 * The domino gateway's TypeScript client: the generated types and calls (`createDominoClient`,
 * `paths`, `components`), and the few hand-written parts around them: a sealed match against
 * bots (`SealedMatch`), online tables (`createTable`, `TableSeat`) and a seat's event stream with
 * Last-Event-ID resume (`seatEvents`).
 */
export { answer, bearer, createDominoClient, type DominoClient } from "./client.js";
export {
  seatEvents, SEAT_EVENT_SCHEMAS, type Reconnect, type SeatEvent, type SeatEventData, type SeatStreamOptions,
} from "./events.js";
export { DominoProblem, type ProblemBody } from "./problem.js";
export type { components, operations, paths } from "./schema.js";
export { SealedMatch, type BotSeat, type MatchEvent, type SealedMatchRequest, type View } from "./sealed.js";
export { createTable, getTable, TableSeat, type NewTable, type NewTableAnswer, type Table, type TableAccess } from "./tables.js";
