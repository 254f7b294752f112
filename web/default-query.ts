// The query both pages open with: ResNet-50 on ImageNet for 90 epochs, cheapest plans within a day.
export const DEFAULT_QUERY = `# Ranked plans for ResNet-50 on ImageNet-1k, 90 epochs: cheapest first, within the deadline.
# Ctrl-Enter runs it; the Docs button on the left browses every type with its units.
query Recommend($workload: WorkloadInput!, $deadlineHours: Float, $maxNodes: Int!) {
  recommend(
    input: { workload: $workload, objective: COST, deadlineHours: $deadlineHours, maxNodes: $maxNodes, limit: 5 }
  ) {
    status
    evaluated
    feasible
    plans {
      rank
      gpu { id }
      nodes
      gpusPerNode
      batchSizePerGpu
      precision
      totalHours
      totalHoursP90
      costUsd
      evidence
    }
    rejected { reason count }
  }
}
`;

export const DEFAULT_VARIABLES = {
  workload: { model: 'resnet50_v1.5', samples: 115_300_000 },
  deadlineHours: 24,
  maxNodes: 4,
};
