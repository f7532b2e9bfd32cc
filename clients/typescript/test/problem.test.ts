/** DominoProblem reads a problem document (and its Retry-After) the way the gateway writes them. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { DominoProblem } from "../src/index.js";

test("a problem's name, status, message and Retry-After", () => {
  const busy = new DominoProblem(503, { type: "/v1/problems/engine-unavailable", title: "The rules engine is unavailable",
                                        status: 503 }, "2");
  assert.deepEqual([busy.problemName, busy.status, busy.retryAfter], ["engine-unavailable", 503, 2]);
  assert.equal(busy.message, "503 The rules engine is unavailable");
  const illegal = new DominoProblem(409, { type: "/v1/problems/illegal-action", title: "Not allowed in this state",
                                           detail: "'pass': the round must first be led" });
  assert.equal(illegal.message, "409 Not allowed in this state: 'pass': the round must first be led");
  assert.equal(illegal.retryAfter, undefined);
  const proxy = new DominoProblem(502, "<html>Bad Gateway</html>", "soon");   // not the gateway's answer
  assert.deepEqual([proxy.problemName, proxy.message, proxy.retryAfter], ["about:blank", "502 HTTP 502", undefined]);
});
