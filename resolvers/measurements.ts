// Recorded runs: the service checks, stores and lists them (service/measurements.ts); this file
// maps them to the API's shapes.
import { Arg, FieldResolver, Float, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { deleteRuns, heldOutPredictions, listRuns, recordRuns } from '../service/measurements.js';
import { importRunsText, RUNS_TEXT_LIMIT } from '../service/run-rows.js';
import { Measurement, MeasurementInput, RecordMeasurementsResult } from '../schema/measurements.js';
import type { Framework } from '../predictor/learned/features.js';
import type { Precision } from '../predictor/types.js';
import { BadUserInput } from './errors.js';

const OWNER = 'The user the runs belong to (any name up to 100 characters; default "local").';

@Resolver()
@UseMiddleware(BadUserInput)
export class MeasurementsResolver {
  @Mutation(() => RecordMeasurementsResult, {
    description:
      'Record measured runs (e.g. from `trainplan harness`). Each run is checked against the catalog and physics; a run that fails is rejected with its reason and none of it is stored, the others are. Predictions and plans use the stored runs at once.',
  })
  async recordMeasurements(
    @Arg('runs', () => [MeasurementInput], { description: 'The runs, at most 1000 per call.' })
    runs: MeasurementInput[],
    @Arg('owner', () => String, { defaultValue: 'local', description: OWNER }) owner: string,
  ): Promise<RecordMeasurementsResult> {
    return recordRuns(runs, owner);
  }

  @Mutation(() => RecordMeasurementsResult, {
    description:
      'Record runs given as a runs file\'s text, read as `trainplan calibrate import` reads the file: the harness\'s CSV, or a JSON list of its rows or of MeasurementInput objects (a device name such as "NVIDIA A100-SXM4-80GB" is mapped to the catalog GPU; the trained weights the harness notes are checked against the model). A row that cannot be read or fails a check is rejected with its reason (`index`: the row, from 0) and none of it is stored, the others are. A row whose model is a file (a layer list, a Hugging Face config) is refused: only the CLI reads files, beside the runs file.',
  })
  async importMeasurements(
    @Arg('text', () => String, {
      description: `The runs file's text (at most ${RUNS_TEXT_LIMIT.toLocaleString('en-US')} characters, 1000 runs).`,
    })
    text: string,
    @Arg('owner', () => String, { defaultValue: 'local', description: OWNER }) owner: string,
  ): Promise<RecordMeasurementsResult> {
    return importRunsText(text, owner);
  }

  @Query(() => [Measurement], { description: 'Recorded runs, optionally of one model, GPU or owner.' })
  async measurements(
    @Arg('model', () => String, { nullable: true, description: 'Only runs of this model id.' })
    model?: string,
    @Arg('gpu', () => String, { nullable: true, description: 'Only runs on this GPU id.' }) gpu?: string,
    @Arg('owner', () => String, { nullable: true, description: 'Only runs of this owner.' }) owner?: string,
  ): Promise<Measurement[]> {
    const rows = await listRuns({
      model: model ?? undefined,
      gpu: gpu ?? undefined,
      owner: owner ?? undefined,
    });
    return rows.map((r) => ({
      id: r.id,
      owner: r.owner,
      recordedAt: r.recorded_at,
      model: r.model,
      gpu: r.gpu,
      precision: r.precision as Precision,
      framework: r.framework as Framework,
      nodes: r.nodes,
      gpusPerNode: r.gpus_per_node,
      batchSizePerGpu: r.batch_size_per_gpu,
      gradAccumSteps: r.grad_accum_steps,
      parallelism: r.parallelism,
      attention: r.attention,
      stepTimeMs: r.step_time_ms,
      peakMemoryGb: r.peak_memory_gb,
      gpuMemoryGb: r.gpu_memory_gb,
      source: r.source,
      note: r.note,
      predictedStepTimeMs: r.predictedStepTimeMs,
      predictedPeakMemoryGb: r.predictedPeakMemoryGb,
      modelTflopsPerGpu: r.modelTflopsPerGpu,
      mfu: r.mfu,
      // Resolved below, only when asked for: it re-predicts every run from the others.
      predictedFromOtherRunsStepTimeMs: null,
    }));
  }

  @Mutation(() => Int, {
    description:
      "Delete an owner's recorded runs (only those with the given ids, when given); answers how many were deleted.",
  })
  async deleteMeasurements(
    @Arg('owner', () => String, { description: OWNER }) owner: string,
    @Arg('ids', () => [Int], {
      nullable: true,
      description: 'Only these run ids (default: all of the owner’s runs).',
    })
    ids?: number[],
  ): Promise<number> {
    return deleteRuns(owner, ids);
  }
}

@Resolver(() => Measurement)
export class MeasurementFieldsResolver {
  @FieldResolver(() => Float, { nullable: true })
  async predictedFromOtherRunsStepTimeMs(@Root() run: Measurement): Promise<number | null> {
    // One leave-one-out pass per store version, shared by every run of the list.
    return (await heldOutPredictions()).get(run.id) ?? null;
  }
}
