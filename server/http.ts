// HTTP plumbing of the front: request ids, reading a body within its limit, plain JSON error
// bodies, and sending a response once.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A client's x-request-id if it is a sane token, else a fresh UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && /^[\w.:-]{1,128}$/.test(v) ? v : randomUUID();
}

/** Past this many bytes an oversized body is no longer drained: the connection is cut. */
export const drainCap = (max: number) => 4 * max + 16_000_000;

export const TOO_LARGE = Symbol('too large');
export const ABORTED = Symbol('aborted');
/**
 * The body as text; TOO_LARGE when it passes `max` bytes; ABORTED when the client went away.
 * An oversized body is read to its end and dropped (a client that is still sending would
 * otherwise see a reset instead of the 413), up to drainCap; beyond that the connection is cut.
 */
export function readBody(
  req: IncomingMessage,
  max: number,
): Promise<string | typeof TOO_LARGE | typeof ABORTED> {
  return new Promise((resolve) => {
    let size = 0;
    let chunks: Buffer[] | null = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (chunks && size > max) chunks = null;
      if (chunks) chunks.push(c);
      else if (size > drainCap(max)) {
        req.destroy();
        resolve(TOO_LARGE);
      }
    });
    req.on('end', () => resolve(chunks ? Buffer.concat(chunks).toString('utf8') : TOO_LARGE));
    req.on('error', () => resolve(ABORTED));
    req.on('close', () => {
      if (!req.complete) resolve(ABORTED);
    });
  });
}

export const errorBody = (message: string, code: string, requestId?: string, field?: string) =>
  JSON.stringify({
    errors: [
      { message, extensions: { code, ...(field ? { field } : {}), ...(requestId ? { requestId } : {}) } },
    ],
  });

export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
) {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
  res.end(body);
}
