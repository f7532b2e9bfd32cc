/** docs/sdk.md's TypeScript example is examples/against-bots.ts, and it plays a whole match as written. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { gatewayUrl } from "./gateway.js";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

test("docs/sdk.md's example is examples/against-bots.ts", async () => {
  const page = await readFile(join(PACKAGE, "..", "..", "docs", "sdk.md"), "utf8");
  const block = /<!-- ts example -->\n```ts\n([\s\S]*?)```/.exec(page);
  assert.ok(block, "docs/sdk.md has no <!-- ts example --> block");
  assert.equal(block[1], await readFile(join(PACKAGE, "examples", "against-bots.ts"), "utf8"));
});

test("the example plays a whole Kozel match against three bots", { timeout: 60_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(PACKAGE, "dist", "examples", "against-bots.js")],
                                               { env: { ...process.env, DOMINO_GATEWAY_URL: gatewayUrl() } });
  assert.match(stdout, /^written points \[ -?\d+, -?\d+, -?\d+, -?\d+ \]\n$/);
});
