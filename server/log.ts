// Structured logs: one JSON object a line, `error` and `warn` to stderr, the rest to stdout.
// Every line has time, level, msg and pid; lines written while a request is handled also carry
// its requestId (from an AsyncLocalStorage the HTTP front sets up).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogLevel } from '../service/config.js';

/** What the HTTP front knows about the request being handled. */
export interface RequestState {
  requestId: string;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** performance.now() after which a search still running is refused, unless the request names its own budget. */
  deadlineAt: number;
  operationName?: string;
}

export const requestStore = new AsyncLocalStorage<RequestState>();

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
let threshold = RANK.info;
let sink: ((line: string, level: LogLevel) => void) | undefined;

export function setLogLevel(level: LogLevel): void {
  threshold = RANK[level];
}

/** Tests capture lines here instead of stdout/stderr; undefined restores the streams. */
export function setLogSink(fn: ((line: string, level: LogLevel) => void) | undefined): void {
  sink = fn;
}

export function log(
  level: Exclude<LogLevel, 'silent'>,
  msg: string,
  fields: Record<string, unknown> = {},
): void {
  if (RANK[level] < threshold) return;
  const requestId = requestStore.getStore()?.requestId;
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    msg,
    pid: process.pid,
    ...(requestId ? { requestId } : {}),
    ...fields,
  });
  if (sink) return sink(line, level);
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n');
}

/**
 * Exits once stdout and stderr have handed every line written so far to the OS. A pipe can take a
 * write later than `write` returns (a reader that is behind), and `process.exit` drops what is
 * still queued: a primary that logs "all workers stopped" and exits at once could lose that line.
 * Not past 2 s: a reader that never drains must not keep a stopping server alive.
 */
export function exitAfterLogs(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
  setTimeout(() => process.exit(code), 2000).unref();
}

/** An error as log fields: message and stack, never sent to clients. */
export function errorFields(e: unknown): Record<string, unknown> {
  return e instanceof Error ? { error: e.message, errorName: e.name, stack: e.stack } : { error: String(e) };
}
