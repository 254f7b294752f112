import { createApollo } from './server/apollo.js';
import { HF_CONFIGS } from './test/import-fixtures.js';
const server = await createApollo();
const c = JSON.stringify(HF_CONFIGS.find((x) => x.id === 'Qwen/Qwen3-30B-A3B')!.config);
const q = async (query: string, variables: any) => {
  const r: any = await server.executeOperation({ query, variables }, { contextValue: { deadlineAt: performance.now() + 60000 } });
  return r.body.singleResult;
};
const p = await q(`query($w: WorkloadInput!, $p: ParallelismInput) { predict(input: { workload: $w, gpu: "H100-SXM5-80GB", nodes: 2, gpusPerNode: 8, batchSizePerGpu: 1, gradAccumSteps: 8, precision: BF16, softwareStack: MEGATRON, parallelism: $p }) { stepTimeMs analyticalStepTimeMs fitsInMemory breakdown { dataParallelCommMs communicationMs } } }`,
  { w: { customModel: { huggingFaceConfig: c }, seqLen: 4096, samples: 1e8 }, p: { tensorParallel: 1, pipelineParallel: 2, zeroStage: 0, expertParallel: 8, recompute: 'NONE' } });
console.log(JSON.stringify(p));
const r = await q(`query($c: String!) { recommend(input: { workload: { customModel: { huggingFaceConfig: $c }, seqLen: 4096, samples: 1e8 }, gpus: ["H100-SXM5-80GB"], precisions: [BF16], maxNodes: 2, gpusPerNode: [8], batchSizes: [1], objective: TIME, softwareStack: MEGATRON, limit: 8 }) {
        status notes plans { nodes stepTimeMs analyticalStepTimeMs breakdown { dataParallelCommMs communicationMs } parallelism { dataParallel pipelineParallel expertParallel zeroStage microBatches } } } }`, { c });
console.log(JSON.stringify(r, null, 0));
await server.stop();
