// The tables of the measurement store, as Kysely sees them. Both dialects store the same column
// types (integers, double precision, text; booleans as 0/1), so one typed query layer serves both.
import type { Generated, Insertable, Selectable } from 'kysely';

export interface MeasurementRunTable {
  id: Generated<number>;
  /** Who recorded the run (deleting "a user's runs" deletes by this). */
  owner: string;
  /** ISO 8601 UTC. */
  recorded_at: string;
  /** Zoo id or the custom model's name: what `measurements(model:)` filters on. */
  model: string;
  gpu: string;
  precision: string;
  framework: string;
  nodes: number;
  gpus_per_node: number;
  batch_size_per_gpu: number;
  grad_accum_steps: number;
  /** The whole configuration as given (workload with any custom model, parallelism, flags), JSON. */
  configuration: string;
  step_time_ms: number;
  peak_memory_gb: number | null;
  /** What CUDA gave the run's process on its GPU, GiB (torch.cuda.get_device_properties' total_memory); null where the run does not say. */
  gpu_memory_gb: number | null;
  source: string;
  note: string | null;
}

export interface StoreTables {
  measurement_run: MeasurementRunTable;
}

export type MeasurementRunRow = Selectable<MeasurementRunTable>;
export type NewMeasurementRun = Insertable<MeasurementRunTable>;
