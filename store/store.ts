// Recorded runs, persisted: an embedded SQLite file by default (better-sqlite3, WAL so several
// `--workers` processes share it), or PostgreSQL when replicas on several machines share them
// (DATABASE_URL). One typed query layer (Kysely) over both; migrations run when the store opens.
// Nothing above this layer knows which database it is.
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import { migrationProvider, type Dialect } from './migrations.js';
import type { MeasurementRunRow, NewMeasurementRun, StoreTables } from './schema.js';

export const DATABASE_FILE = 'trainplan.sqlite';

/** Where the SQLite file lives when neither --data-dir nor TRAINPLAN_DATA_DIR says: $XDG_DATA_HOME/trainplan, else ~/.local/share/trainplan. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'trainplan');
}

export interface StoreLocation {
  /** postgres://... : use PostgreSQL; otherwise SQLite in dataDir. */
  databaseUrl?: string;
  dataDir: string;
}

export interface RunFilter {
  model?: string;
  gpu?: string;
  owner?: string;
}

/** Changes whenever runs are added or deleted (cheap to read on every request). */
export interface StoreVersion {
  count: number;
  maxId: number;
}

export class MeasurementStore {
  private constructor(
    private readonly db: Kysely<StoreTables>,
    readonly dialect: Dialect,
    readonly where: string,
  ) {}

  static async open(location: StoreLocation): Promise<MeasurementStore> {
    let db: Kysely<StoreTables>, dialect: Dialect, where: string;
    if (location.databaseUrl) {
      const { default: pg } = await import('pg');
      db = new Kysely<StoreTables>({
        dialect: new PostgresDialect({
          // A host that does not answer fails a request in 5 s rather than after the system's TCP
          // connect timeout (about two minutes on Linux), or never when it accepts and stays silent.
          pool: new pg.Pool({
            connectionString: location.databaseUrl,
            max: 4,
            connectionTimeoutMillis: 5_000,
          }),
        }),
      });
      dialect = 'postgres';
      where = location.databaseUrl.replace(/\/\/[^@/]*@/, '//***@'); // never log a password
    } else {
      const { default: Database } = await import('better-sqlite3');
      mkdirSync(location.dataDir, { recursive: true });
      where = join(location.dataDir, DATABASE_FILE);
      const sqlite = new Database(where);
      // WAL: readers never block the one writer, so --workers processes share the file; a writer
      // waits up to 5 s for another's lock instead of failing at once.
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('busy_timeout = 5000');
      db = new Kysely<StoreTables>({ dialect: new SqliteDialect({ database: sqlite }) });
      dialect = 'sqlite';
    }
    const store = new MeasurementStore(db, dialect, where);
    await store.migrate();
    return store;
  }

  /** True when opening would find existing runs' database (a SQLite file that exists, or any PostgreSQL URL). */
  static exists(location: StoreLocation): boolean {
    return !!location.databaseUrl || existsSync(join(location.dataDir, DATABASE_FILE));
  }

  private async migrate(): Promise<void> {
    const { error, results } = await new Migrator({
      db: this.db,
      provider: migrationProvider(this.dialect),
    }).migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new Error(
        `measurement store ${this.where}: migration ${failed ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Inserts all runs or none (one transaction); returns their ids. */
  async insert(runs: NewMeasurementRun[]): Promise<number[]> {
    if (!runs.length) return [];
    return this.db.transaction().execute(async (tx) => {
      const ids: number[] = [];
      for (const r of runs) {
        const { id } = await tx
          .insertInto('measurement_run')
          .values(r)
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(Number(id));
      }
      return ids;
    });
  }

  /** Sets the `model` column of the given runs (one transaction). */
  async setModels(updates: readonly { id: number; model: string }[]): Promise<void> {
    if (!updates.length) return;
    await this.db.transaction().execute(async (tx) => {
      for (const u of updates)
        await tx.updateTable('measurement_run').set({ model: u.model }).where('id', '=', u.id).execute();
    });
  }

  async list(filter: RunFilter = {}): Promise<MeasurementRunRow[]> {
    let q = this.db.selectFrom('measurement_run').selectAll();
    if (filter.model !== undefined) q = q.where('model', '=', filter.model);
    if (filter.gpu !== undefined) q = q.where('gpu', '=', filter.gpu);
    if (filter.owner !== undefined) q = q.where('owner', '=', filter.owner);
    return q.orderBy('id').execute();
  }

  /** Deletes an owner's runs (only the given ids, when given); returns how many. */
  async delete(owner: string, ids?: number[]): Promise<number> {
    let q = this.db.deleteFrom('measurement_run').where('owner', '=', owner);
    if (ids) {
      if (!ids.length) return 0;
      q = q.where('id', 'in', ids);
    }
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async version(): Promise<StoreVersion> {
    const r = await this.db
      .selectFrom('measurement_run')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.max<number | null>('id').as('maxId'),
      ])
      .executeTakeFirstOrThrow();
    return { count: Number(r.count), maxId: Number(r.maxId ?? 0) };
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
