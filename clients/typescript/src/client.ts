/**
 * The generated client: openapi-fetch over the types openapi-typescript generated from the
 * gateway's OpenAPI document (`schema.d.ts`, `npm run generate`). Every path, body and answer is
 * typed by the document; `answer()` turns openapi-fetch's `{data, error}` into the data or a
 * thrown `DominoProblem`, so the hand-written parts read as plain calls.
 */
import createClient, { type Client } from "openapi-fetch";

import { DominoProblem } from "./problem.js";
import type { paths } from "./schema.js";

export type DominoClient = Client<paths>;

/** A client of the gateway at `baseUrl` (`http://127.0.0.1:8080`); `headers` go with every call. */
export function createDominoClient(baseUrl: string, headers?: Record<string, string>): DominoClient {
  return createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ""), headers });
}

/** The answer of a successful call, or a `DominoProblem` thrown for an error status. */
export async function answer<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    throw new DominoProblem(response.status, error, response.headers.get("Retry-After"));
  }
  return data;
}

/** The `Authorization` header of a seat's credential (or a table's host key). */
export function bearer(credential: string): { Authorization: string } {
  return { Authorization: `Bearer ${credential}` };
}
