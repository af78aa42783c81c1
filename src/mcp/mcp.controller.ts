import { All, Controller, Post, Req, Res } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { RunApiClient } from './run-api-client';
import { createMcpServer } from './tools';

/**
 * The socket address this request arrived on: the API itself, whatever HOST and PORT it listens
 * on. Never the Host header, which the caller writes and could point at another server.
 */
function ownOrigin(req: Request): string {
  const { localAddress, localPort } = req.socket;
  const host = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
  return `http://${host}:${localPort}`;
}

/**
 * Streamable HTTP at /mcp, stateless: a fresh server and transport per POST, as the SDK
 * recommends for servers that scale horizontally (no session to pin to one process). The
 * global guard has already authenticated and rate-limited the request like any API call;
 * the tools then call the API with the same Authorization header, so they see and may do
 * exactly what the token may.
 */
@Controller('mcp')
export class McpController {
  @Post()
  async handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    const server = createMcpServer(new RunApiClient(ownOrigin(req), req.headers.authorization!));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  /** A stateless server has nothing to push outside a request: no GET stream, no session to DELETE (as the spec allows). */
  @All()
  other(@Req() req: Request): never {
    throw new ApiError(405, 'method_not_allowed', `${req.method} is not allowed here; allowed: POST`, null, { Allow: 'POST' });
  }
}
