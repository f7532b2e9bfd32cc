/**
 * The gateway's refusals as one typed error. Every error answer is RFC 9457
 * `application/problem+json` (`components["schemas"]["Problem"]`); its `type` names the problem
 * (`/v1/problems/{name}`), so an app branches on `problem.name` (`"illegal-action"`,
 * `"stale-token"`, `"seat-taken"` ...) rather than on status codes alone.
 */
import type { components } from "./schema.js";

export type ProblemBody = components["schemas"]["Problem"];

/** A refusal the gateway answered (4xx or 5xx), with its problem document. */
export class DominoProblem extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The problem's short name: the last part of its `type` (`.../problems/illegal-action` -> `illegal-action`). */
  readonly problemName: string;
  /** The whole problem document, as answered (may be empty when the answer was not JSON). */
  readonly body: ProblemBody | Record<string, unknown>;
  /** Seconds the gateway asked to wait before trying again (its Retry-After: 503 and 429 answers), if any. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: unknown, retryAfter?: string | null) {
    const doc = isRecord(body) ? body : {};
    const type = typeof doc["type"] === "string" ? doc["type"] : "about:blank";
    const title = typeof doc["title"] === "string" ? doc["title"] : `HTTP ${status}`;
    const detail = typeof doc["detail"] === "string" ? `: ${doc["detail"]}` : "";
    super(`${status} ${title}${detail}`);
    this.name = "DominoProblem";
    this.status = status;
    this.problemName = type.split("/").pop() ?? type;
    this.body = doc;
    const seconds = retryAfter === undefined || retryAfter === null ? NaN : Number(retryAfter);
    this.retryAfter = Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
