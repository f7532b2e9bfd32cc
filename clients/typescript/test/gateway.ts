/** The gateway the tests play against: its URL from DOMINO_GATEWAY_URL (tests/gateway/test_typescript_client.py starts one). */
import { createDominoClient, type DominoClient } from "../src/index.js";

export function gatewayUrl(): string {
  const url = process.env["DOMINO_GATEWAY_URL"];
  if (!url) throw new Error("DOMINO_GATEWAY_URL is not set: the URL of a running gateway (make ts-client-test starts none)");
  return url;
}

/** A client of its own (each player of a table has one, as each device would). */
export function client(): DominoClient {
  return createDominoClient(gatewayUrl());
}
