#!/usr/bin/env node
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { RunApiClient } from './run-api-client';
import { createMcpServer } from './tools';

/**
 * `workflow-engine-mcp` / `npm run mcp`: the agent tools over stdio, talking to any deployment's
 * API over HTTP. stdout carries the protocol only; anything for a human goes to stderr.
 */
async function main() {
  const url = process.env.WFE_URL;
  const token = process.env.WFE_TOKEN;
  if (!url || !token) {
    process.stderr.write('workflow-engine-mcp: set WFE_URL (the API origin, e.g. http://127.0.0.1:3000) and WFE_TOKEN (a bearer token)\n');
    process.exit(2);
  }
  const server = createMcpServer(new RunApiClient(url, `Bearer ${token}`));
  await server.connect(new StdioServerTransport());
}

main().catch((err: unknown) => {
  process.stderr.write(`workflow-engine-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
