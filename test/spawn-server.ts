// Starts `trainplan serve` as a child process on 127.0.0.1 and a free port, for the tests that
// need a real process (signals, cluster, memory) and for bench/load.ts. Its JSON log lines are
// kept; spawnServerOnPort writes them to a file instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerProcess {
  proc: ChildProcess;
  /** http://127.0.0.1:PORT */
  base: string;
  url: string;
  /** Every JSON log line so far (stdout and stderr), parsed. */
  logs: Record<string, unknown>[];
  /** Sends the signal and resolves with the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  exited: Promise<number | string>;
}

export async function spawnServer(
  opts: { args?: string[]; env?: Record<string, string>; workers?: number; startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  const workers = opts.workers ?? 1;
  const args = [
    '--import',
    'tsx',
    'cli/main.ts',
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--workers',
    String(workers),
    ...(opts.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  // 'exit' can come before the last lines on the pipes are read (a primary that logs "all workers
  // stopped" and exits at once): wait for the pipes to close as well, but not past 5 s, in case a
  // killed primary's workers (or tsx's esbuild service, which inherits stderr) still hold them.
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => {
      const result = code ?? signal ?? 'unknown';
      const timer = setTimeout(() => resolve(result), 5000);
      proc.once('close', () => {
        clearTimeout(timer);
        resolve(result);
      });
    }),
  );
  let listening = 0;
  let port = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`server did not start in time; log:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`),
        ),
      opts.startTimeoutMs ?? 30_000,
    );
    exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(
          `server exited (${code}) before listening; log:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`,
        ),
      );
    });
    const onLine = (line: string) => {
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(line);
      } catch {
        j = { raw: line };
      }
      logs.push(j);
      if (j.msg === 'listening') {
        port = String(j.port);
        if (++listening === workers) {
          clearTimeout(timer);
          resolve();
        }
      }
    };
    for (const stream of [proc.stdout, proc.stderr]) {
      if (!stream) continue;
      let buf = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          onLine(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
    }
  });
  await ready;
  const base = `http://127.0.0.1:${port}`;
  return {
    proc,
    base,
    url: `${base}/graphql`,
    logs,
    exited,
    stop: (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** For benchmarks: logs go to a file (not through a pipe this process must drain), so the port is fixed. */
export async function spawnServerOnPort(
  port: number,
  opts: { workers?: number; env?: Record<string, string>; logFile: string; args?: string[] },
): Promise<ServerProcess> {
  const workers = opts.workers ?? 1;
  const args = [
    '--import',
    'tsx',
    'cli/main.ts',
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--workers',
    String(workers),
    ...(opts.args ?? []),
  ];
  const fd = openSync(opts.logFile, 'a');
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 30_000;
  // Ready when as many distinct workers have answered /ready as were asked for (or 5 s after the first did).
  const pids = new Set<number>();
  let firstAt = 0;
  while (pids.size < workers && Date.now() < until && !(firstAt && Date.now() - firstAt > 5000)) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode}); see ${opts.logFile}`);
    try {
      const r = await fetch(`${base}/ready`, { headers: { connection: 'close' } });
      if (r.ok) {
        pids.add(((await r.json()) as { pid: number }).pid);
        firstAt ||= Date.now();
      }
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!pids.size) {
    proc.kill('SIGKILL');
    throw new Error(`server did not start; see ${opts.logFile}`);
  }
  return {
    proc,
    base,
    url: `${base}/graphql`,
    logs: [],
    exited,
    stop: (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}
