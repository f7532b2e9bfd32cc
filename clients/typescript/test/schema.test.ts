/**
 * The committed schema.d.ts is what openapi-typescript makes of the document the gateway serves
 * now (regenerate with `make ts-client`), and the stream's hand-written event map is the
 * document's `x-events`.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { SEAT_EVENT_SCHEMAS } from "../src/index.js";
import { gatewayUrl } from "./gateway.js";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

async function servedDocument(): Promise<Record<string, any>> {
  const response = await fetch(`${gatewayUrl()}/openapi.json`);
  assert.equal(response.status, 200);
  return (await response.json()) as Record<string, any>;
}

test("schema.d.ts is generated from the served document", { timeout: 60_000 }, async () => {
  const folder = await mkdtemp(join(tmpdir(), "domino-ts-"));
  try {
    const document = join(folder, "openapi.json");
    await writeFile(document, JSON.stringify(await servedDocument()));
    const fresh = join(folder, "schema.d.ts");
    await promisify(execFile)(join(PACKAGE, "node_modules", ".bin", "openapi-typescript"), [document, "--output", fresh],
                              { cwd: PACKAGE });
    const committed = (await readFile(join(PACKAGE, "src", "schema.d.ts"), "utf8")).split("\n");
    const generated = (await readFile(fresh, "utf8")).split("\n");
    const line = generated.findIndex((text, i) => text !== committed[i]);
    assert.ok(line === -1 && committed.length === generated.length,
              `src/schema.d.ts is stale (line ${line + 1}: ${JSON.stringify(committed[line])} is now ` +
              `${JSON.stringify(generated[line])}): run \`make ts-client\` and commit it`);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test("the seat stream's events are the document's x-events", async () => {
  const document = await servedDocument();
  const content = document["paths"]["/v1/matches/{match_id}/events"]["get"]["responses"]["200"]["content"];
  const events: Record<string, { $ref?: string }> = content["text/event-stream"]["x-events"];
  const named = Object.fromEntries(Object.entries(events).map(([name, schema]) =>
    [name, schema.$ref === undefined ? null : schema.$ref.split("/").pop()]));
  assert.deepEqual(named, SEAT_EVENT_SCHEMAS);
});
