// recommend asked for one configuration (one GPU, FP32, one batch size, one GPU on one node, a price),
// so its plans can be compared with predict's answer for that configuration: the calibration tests
// check that both use a user's recorded runs the same way.
import type { GraphQLResult } from './graphql-client.js';

const RECOMMEND = `query($input: RecommendInput!) { recommend(input: $input) {
  plans { gpu { id } batchSizePerGpu precision stepTimeMs evidence } } }`;

export interface OnePlan {
  gpu: { id: string };
  batchSizePerGpu: number;
  precision: string;
  stepTimeMs: number;
  evidence: string;
}

export async function plansAtConfiguration(
  run: (query: string, variables?: Record<string, unknown>) => Promise<GraphQLResult>,
  workload: Record<string, unknown>,
  gpu: string,
  batchSizePerGpu: number,
): Promise<OnePlan[]> {
  const r = await run(RECOMMEND, {
    input: {
      workload,
      gpus: [gpu],
      precisions: ['FP32'],
      batchSizes: [batchSizePerGpu],
      gpusPerNode: [1],
      maxNodes: 1,
      prices: [{ gpu, usdPerGpuHour: 1 }],
    },
  });
  if (r.errors) throw new Error(r.errors[0].message);
  return r.data!.recommend.plans as OnePlan[];
}

/**
 * recommend's input for `model` on one `gpu` at one batch and precision, plain data parallelism,
 * priced at $1 an hour: whether that configuration is planned, and at what memory.
 */
export const oneGpuSearchInput = (model: string, gpu: string, precision: string, batch: number) => ({
  workload: { model, samples: 1e6 },
  gpus: [gpu],
  precisions: [precision],
  batchSizes: [batch],
  maxNodes: 1,
  gpusPerNode: [1],
  parallelismSearch: 'OFF',
  prices: [{ gpu, usdPerGpuHour: 1 }],
});

/** planFleet's input for one job of `model` on one owned `gpu` at one batch and precision. */
export const oneGpuFleetInput = (model: string, gpu: string, precision: string, batch: number) => ({
  jobs: [{ id: 'job', workload: { model, samples: 1e6 }, deadlineHours: 1000, batchSizes: [batch] }],
  inventory: [{ gpu, count: 1, usdPerGpuHour: 1 }],
  precisions: [precision],
  gpusPerNode: [1],
  maxNodes: 1,
});
