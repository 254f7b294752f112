// Schema changes, in order, for both dialects. Kysely's Migrator records which have run (its
// kysely_migration table), so a new server applies only what is missing. Add a migration; never
// edit one that has shipped.
import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '001_measurement_run': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('measurement_run')
          .addColumn('id', dialect === 'postgres' ? 'serial' : 'integer', (c) =>
            dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('recorded_at', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('gpu', 'text', (c) => c.notNull())
          .addColumn('precision', 'text', (c) => c.notNull())
          .addColumn('framework', 'text', (c) => c.notNull())
          .addColumn('nodes', 'integer', (c) => c.notNull())
          .addColumn('gpus_per_node', 'integer', (c) => c.notNull())
          .addColumn('batch_size_per_gpu', 'integer', (c) => c.notNull())
          .addColumn('grad_accum_steps', 'integer', (c) => c.notNull())
          .addColumn('configuration', 'text', (c) => c.notNull())
          .addColumn('step_time_ms', 'double precision', (c) => c.notNull().check(sql`step_time_ms > 0`))
          .addColumn('peak_memory_gb', 'double precision')
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('note', 'text')
          .execute();
        await db.schema.createIndex('measurement_run_gpu').on('measurement_run').column('gpu').execute();
        await db.schema.createIndex('measurement_run_model').on('measurement_run').column('model').execute();
        await db.schema.createIndex('measurement_run_owner').on('measurement_run').column('owner').execute();
      },
      async down(db: Kysely<unknown>) {
        await db.schema.dropTable('measurement_run').execute();
      },
    },
    // What CUDA gave the run's process on its GPU (GiB): the memory plans on that GPU are fitted in.
    // Runs stored before it have none (null), as a run that does not say.
    '002_gpu_memory_gb': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('measurement_run')
          .addColumn('gpu_memory_gb', 'double precision')
          .execute();
      },
      async down(db: Kysely<unknown>) {
        await db.schema.alterTable('measurement_run').dropColumn('gpu_memory_gb').execute();
      },
    },
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
