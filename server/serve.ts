// `trainplan serve`: one process, or with --workers N a Node cluster whose primary forks N
// workers sharing the port, restarts a worker that dies and forwards SIGTERM/SIGINT to them. The
// server keeps no state between requests (the recommend cache is a per-process memo), so more
// machines scale behind any load balancer.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import {
  ConfigError,
  flagHelp,
  flagOptions,
  loadConfig,
  readPriceFile,
  setRuntimeConfig,
  type ServerConfig,
} from '../service/config.js';
import { errorFields, exitAfterLogs, log, setLogLevel } from './log.js';

export const SERVE_HELP = `trainplan serve [flags]
  GraphQL at http://HOST:PORT/graphql (a query page for browsers), /health (live), /ready (ready).
  Every flag has an environment variable; flags win. Settings:
${flagHelp()}
  NODE_ENV=development adds stack traces to error responses (never in production).`;

function fail(message: string): never {
  console.error(`trainplan serve: ${message}`);
  process.exit(2);
}

export async function serve(args: string[]): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options: { ...flagOptions(), help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    fail(`${(e as Error).message}\n\n${SERVE_HELP}`);
  }
  if (values.help) {
    console.log(SERVE_HELP);
    return;
  }
  return serveWith(values as Record<string, string | undefined>);
}

/** Serves with these flag values (a setting's flag name -> its text; see service/config.ts). */
export async function serveWith(flags: Record<string, string | undefined>): Promise<void> {
  let config: ServerConfig;
  try {
    config = loadConfig(process.env, flags);
    if (config.prices && cluster.isPrimary) readPriceFile(config.prices); // fail before forking anything
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  setRuntimeConfig(config);
  setLogLevel(config.logLevel);
  process.on('uncaughtExceptionMonitor', (e, origin) =>
    log('error', 'uncaught exception', { origin, ...errorFields(e) }),
  );
  const workers = config.workers === 0 ? availableParallelism() : config.workers;
  if (workers > 1 && cluster.isPrimary) return primary(config, workers);
  return single(config);
}

async function single(config: ServerConfig): Promise<void> {
  const { startServer } = await import('./app.js');
  let running;
  try {
    running = await startServer(config.port, config.host, config);
  } catch (e) {
    log('error', 'cannot start', errorFields(e));
    return exitAfterLogs(1);
  }
  log('info', 'listening', {
    url: running.url,
    port: new URL(running.url).port,
    worker: cluster.worker?.id,
    // A DATABASE_URL may carry a password: the log says where, never the password.
    config: { ...config, databaseUrl: config.databaseUrl?.replace(/\/\/[^@/]*@/, '//***@') },
  });
  const stop = (signal: string) => {
    log('info', 'shutting down: /ready fails, then the port closes and accepted requests finish', {
      signal,
      inFlight: running.inFlight(),
      delayMs: config.shutdownDelayMs,
      graceMs: config.shutdownGraceMs,
    });
    running.close().then(
      () => {
        log('info', 'stopped');
        exitAfterLogs(0);
      },
      (e) => {
        log('error', 'shutdown failed', errorFields(e));
        exitAfterLogs(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  // A second signal while draining changes nothing: close() is already under way.
  process.on('SIGTERM', () => {});
  process.on('SIGINT', () => {});
}

function primary(config: ServerConfig, n: number): void {
  log('info', 'primary started', { workers: n, port: config.port });
  let stopping = false;
  const recentCrashes: number[] = [];
  const fork = () => {
    if (!stopping) cluster.fork();
  };
  for (let i = 0; i < n; i++) fork();
  cluster.on('exit', (w: Worker, code: number | null, signal: string | null) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log('info', 'all workers stopped');
        exitAfterLogs(0);
      }
      return;
    }
    // Restart at once, but back off when workers keep dying (a broken config, a bad deploy).
    const now = Date.now();
    recentCrashes.push(now);
    while (recentCrashes.length && recentCrashes[0] < now - 60_000) recentCrashes.shift();
    const delay = recentCrashes.length > 3 ? Math.min(30_000, 500 * 2 ** (recentCrashes.length - 3)) : 0;
    log('warn', 'worker exited; starting another', {
      workerPid: w.process.pid,
      code,
      signal,
      restartInMs: delay,
    });
    setTimeout(fork, delay);
  });
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', 'primary shutting down workers', { signal });
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    if (live.length === 0) return exitAfterLogs(0);
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(
      () => {
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        log('warn', 'workers did not stop in time; killed');
        exitAfterLogs(1);
      },
      config.shutdownDelayMs + config.shutdownGraceMs + 5_000,
    ).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
