// The GraphQL operations behind `trainplan plan-fleet | plan-procurement | plan-federated --in FILE.json`
// (cli/main.ts): FILE.json holds the operation's `input` object (docs/coupled-planning.md). Every
// configuration comes with how to time it on your own GPUs (harness), as the API gives it.
const SOLVE =
  'status solver optimalityProven gap bestBound solveTimeMs notes modelSize { candidates keptCandidates variables integers constraints nonzeros }';

export const COUPLED_QUERIES: Record<string, string> = {
  'plan-fleet': `query($input: FleetInput!) { planFleet(input: $input) { ${SOLVE} predictor objective objectiveValue totalCostUsd makespanHours weightedCompletionHours slotHours
    assignments { jobId gpu { id } onDemand nodes gpusPerNode totalGpus batchSizePerGpu precision parallelism { dataParallel tensorParallel pipelineParallel zeroStage recompute microBatches } stepTimeMs totalHours totalHoursP90 releaseHours startHours endHours deadlineHours costUsd priceUsdPerGpuHour offer { provider instance gpusPerInstance usdPerHour priceDate priceStale } interNodeGbps memoryGbPerGpu evidenceLevel evidence calibrationRuns harness { commands note } }
    gpuUsage { gpu { id } used available onDemand } unplaced { jobId reason message } } }`,
  'plan-procurement': `query($input: ProcurementInput!) { planProcurement(input: $input) { ${SOLVE} predictor objectiveValue
    cost { capitalUsd powerUsd rentalUsd totalUsd allRentUsd } orders { gpu { id } count orderMonth arrivalMonth capitalUsd } purchases { gpu { id } count capitalUsd powerUsd utilization }
    allocations { jobId owned runsPerMonth months config { gpu { id } nodes gpusPerNode totalGpus batchSizePerGpu precision parallelism { tensorParallel pipelineParallel zeroStage recompute } hoursPerRun hoursPerRunP90 gpuHoursPerRun usdPerRun priceUsdPerGpuHour offer { provider instance gpusPerInstance usdPerHour priceDate priceStale } interNodeGbps evidenceLevel evidence calibrationRuns harness { commands note } } }
    breakEven { gpu { id } breakEvenUtilization plannedUtilization rentUsdPerGpuHour capitalUsdPerGpuMonth powerUsdPerGpuHour note }
    months { month ownedGpuHours ownedCapacityGpuHours rentedGpuHours powerUsd rentalUsd ownedGpus { gpu { id } count } } unplaced { jobId reason message } } }`,
  'plan-federated': `query($input: FederatedInput!) { planFederatedRound(input: $input) { ${SOLVE} predictor roundTimeSeconds samplesPerRound slowestClient rounds totalHours
    clients { id participates precision batchSizePerGpu recompute localSteps samples computeSeconds computeSecondsP90 transferSeconds totalSeconds memoryGbPerGpu availability energyWh note evidence calibrationRuns harness { commands note } }
    roundTimeSecondsP90 expectedSamplesPerRound successProbability dropoutsTolerated energyWhPerRound participation { clientId rounds }
    schedule { round roundTimeSeconds roundTimeSecondsP90 samplesPerRound expectedSamples successProbability energyWh slowestClient clients { id participates localSteps samples } }
    infeasible { clientId reason message } } }`,
};

/** The input object from FILE.json (a bare input, or { "input": ... }). */
export function readInput(text: string): unknown {
  const v = JSON.parse(text) as Record<string, unknown>;
  return v && typeof v === 'object' && Object.keys(v).length === 1 && 'input' in v ? v.input : v;
}
