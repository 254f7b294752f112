// trainplan's command line: the server, and batch work over CSV files.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { graphql } from 'graphql';
import {
  csvCell,
  EFFICIENCY_FILE,
  loadEfficiency,
  loadMeasurements,
  measurementFromRow,
  parseCsv,
  readMeasurements,
} from '../seeds/catalog.js';
import { predictRow } from '../predictor/measured.js';
import { evaluate, formatEvaluation, GROUP_KEYS, type GroupKey } from './evaluate.js';
import { calibrate } from './calibrate.js';

const USAGE = `trainplan: precision-aware training-time prediction and GPU plan search

  trainplan serve [--port 4000] [--host 0.0.0.0] [--workers N] [--prices FILE] [--log-level info] [...]
      GraphQL at http://localhost:PORT/graphql (a query page for browsers, /health, /ready);
      every setting and its environment variable: trainplan serve --help
  trainplan predict-csv --in FILE --out FILE
      rows in the layout of seeds/measurements/train.csv -> every input column plus
      predicted_throughput (row's unit, all GPUs; learned model), predicted_step_time_s with
      its _p10_s/_p90_s, predicted_forward_s, predicted_backward_s, predicted_optimizer_s,
      predicted_communication_s, analytical_throughput, predicted_memory_gb_per_gpu (GiB at the
      step's peak), fits_in_memory (true/false), predictor, evidence, error.
      The model column is a zoo id or a path (relative to the CSV) to a Hugging Face config.json,
      an .onnx graph or a layer-list .json; seq_len_or_image_size overrides its default; optional
      columns tensor_parallel, pipeline_parallel, zero_stage, recompute (none/selective/full)
  trainplan evaluate [--data FILE] [--group-by precision,gpu,model,source,generation,gpus]
      MAPE of the analytical predictor on measured rows (default: the seeds' train.csv)
  trainplan evaluate --llm [--fit [--write]]
      the analytical predictor on the published LLM runs (seeds/measurements/llm_train.csv) at their
      own layouts and software stacks, per source, stack, precision, GPU and model family; FP8/BF16
      ratios of runs published in both; Llama 2 7B/13B campaign GPU-hours. --fit fits the tuned
      stacks' effects (seeds/software.json) on those runs and reports them held out by model family;
      --write stores the fit
  trainplan evaluate --learned
      cross-validation of the learned predictor holding out whole GPUs, whole (model, GPU,
      precision) combinations and whole models, beside the analytical estimate and the
      precision-unaware ablation, per precision and GPU architecture (takes minutes)
  trainplan memory-check
      the memory model against configurations that ran: train.csv and llm_train.csv fit rates per
      model with every miss, the allocator fragmentation fitted on half the GPUs and checked on the
      rest, published peak memory, configurations that cannot fit, largest batch vs measured
  trainplan calibrate [--data FILE] [--write]
      fit seeds/efficiency.json's global constants to measured rows
  trainplan calibrate import FILE [--owner NAME] [--data-dir DIR] [--database-url URL]
      record your own measured runs (the harness's CSV/JSON, or MeasurementInput objects) in the
      store the server reads; predictions and plans for that GPU and model use them at once
  trainplan harness [--model ID] [--seq-len N] [--out measure.py]
      the measurement harness (Python + PyTorch): times warm-up + N optimizer steps at a batch
      size and precision and writes runs for calibrate import (python3 measure.py --help)
  trainplan query (--file FILE | QUERY) [--variables JSON]
      run one GraphQL operation in-process and print the JSON result
  trainplan recommend --model ID --samples N [--objective COST|TIME] [--deadline H] [--budget USD]
                      [--gpus A,B] [--precisions P,Q] [--max-nodes N] [--limit N]
      ranked plans as a table (the same search as the GraphQL recommend query)
  trainplan plan-fleet --in FILE.json | plan-procurement --in FILE.json | plan-federated --in FILE.json
      coupled plans as mixed-integer programs (planFleet, planProcurement, planFederatedRound);
      FILE.json holds the query's input object; prints the JSON result (docs/coupled-planning.md)
`;

function fail(message: string): never {
  console.error(`trainplan: ${message}`);
  process.exit(2);
}

async function runQuery(query: string, variables?: Record<string, unknown>) {
  const { trainplanSchema } = await import('../server/schema.js');
  return graphql({ schema: await trainplanSchema(), source: query, variableValues: variables });
}

const RECOMMEND_QUERY = `query($input: RecommendInput!) { recommend(input: $input) {
  status predictor evaluated feasible
  plans { rank gpu { id } nodes gpusPerNode batchSizePerGpu gradAccumSteps precision stepTimeMs throughput throughputUnit totalHours totalHoursP90 costUsd memoryGbPerGpu }
  rejected { reason count } } }`;

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      // Flags and environment (service/config.ts), --workers N (Node cluster), graceful SIGTERM: server/serve.ts.
      const { serve } = await import('../server/serve.js');
      await serve(rest);
      return;
    }
    case 'predict-csv': {
      const { values } = parseArgs({
        args: rest,
        options: { in: { type: 'string' }, out: { type: 'string' } },
      });
      if (!values.in || !values.out) fail('predict-csv needs --in FILE and --out FILE');
      const raw = parseCsv(readFileSync(values.in, 'utf8'));
      const inputColumns = raw.length ? Object.keys(raw[0]) : [];
      const added = [
        'predicted_throughput',
        'predicted_step_time_s',
        'predicted_step_time_p10_s',
        'predicted_step_time_p90_s',
        'predicted_forward_s',
        'predicted_backward_s',
        'predicted_optimizer_s',
        'predicted_communication_s',
        'analytical_throughput',
        'predicted_memory_gb_per_gpu',
        'fits_in_memory',
        'predictor',
        'evidence',
        'error',
      ];
      const columns = [...inputColumns.filter((c) => !added.includes(c)), ...added];
      const lines = [columns.join(',')];
      let ok = 0;
      // A model cell is a zoo id or a path (relative to the CSV's folder) to a config.json, .onnx or layer-list file.
      const predictions = raw.map((r) =>
        predictRow(measurementFromRow(r), loadEfficiency(), { baseDir: dirname(values.in!) }),
      );
      // The learned correction scales the analytical step (and every part of it) by one factor per row.
      const { correctRows } = await import('../predictor/corrected.js');
      const { learnedPredictor } = await import('../predictor/learned/model.js');
      const learned = await learnedPredictor();
      const corrections = await correctRows(predictions, learned);
      raw.forEach((r, i) => {
        const p = predictions[i];
        const k = corrections[i];
        const b = p.prediction?.breakdown;
        const s = (ms: number | undefined, f = k.scale) => (ms === undefined ? undefined : (ms * f) / 1e3);
        const out: Record<string, unknown> = {
          ...r,
          predicted_throughput:
            p.predictedThroughput === undefined ? undefined : p.predictedThroughput / k.scale,
          predicted_step_time_s: s(p.prediction?.stepTimeMs),
          predicted_step_time_p10_s: s(p.prediction?.stepTimeMs, k.lo),
          predicted_step_time_p90_s: s(p.prediction?.stepTimeMs, k.hi),
          predicted_forward_s: s(b?.forwardMs),
          predicted_backward_s: s(b?.backwardMs),
          predicted_optimizer_s: b && s(b.optimizerMs + b.mixedPrecisionMs),
          predicted_communication_s: s(b?.communicationMs),
          analytical_throughput: p.predictedThroughput,
          predicted_memory_gb_per_gpu: p.prediction?.memory.totalGb,
          fits_in_memory: p.prediction ? String(p.prediction.fitsInMemory) : undefined,
          predictor: p.prediction ? (learned.predictor ? learned.predictor.name : 'analytical') : '',
          evidence: p.prediction ? k.evidence : '',
          error: p.error ?? '',
        };
        if (!p.error) ok++;
        lines.push(columns.map((c) => csvCell(out[c])).join(','));
      });
      writeFileSync(values.out, lines.join('\n') + '\n');
      console.log(
        `wrote ${raw.length} rows (${ok} predicted, ${raw.length - ok} with an error) to ${values.out}`,
      );
      return;
    }
    case 'memory-check': {
      const { memoryCheckReport } = await import('./memory-check.js');
      console.log(memoryCheckReport());
      return;
    }
    case 'evaluate': {
      const { values } = parseArgs({
        args: rest,
        options: {
          data: { type: 'string' },
          'group-by': { type: 'string' },
          learned: { type: 'boolean' },
          llm: { type: 'boolean' },
          fit: { type: 'boolean' },
          write: { type: 'boolean' },
        },
      });
      if (values.llm) {
        // Published LLM runs at their own layouts, FP8/BF16 pairs, Llama 2 campaigns (analytical, tuned stacks).
        const llm = await import('./evaluate-llm.js');
        let fitText = '';
        if (values.fit) {
          const f = llm.fitSoftware();
          fitText = llm.formatSoftwareFit(f);
          console.log(fitText);
          if (values.write) console.log(llm.writeSoftwareFit(f));
        }
        const evaluation = llm.formatLlmEvaluation();
        console.log(evaluation);
        if (values.fit && values.write) console.log(llm.writeLlmCardSection(fitText, evaluation));
        return;
      }
      if (values.learned) {
        // Cross-validation of the learned model (held-out GPUs, combinations, models) with the ablation; writes nothing.
        const { trainPredictor } = await import('./train-predictor.js');
        await trainPredictor(false);
        return;
      }
      const keys = (values['group-by'] ?? 'precision,generation,gpu,model')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const k of keys)
        if (!(k in GROUP_KEYS))
          fail(`--group-by: unknown key "${k}"; allowed: ${Object.keys(GROUP_KEYS).join(', ')}`);
      const rows = values.data ? readMeasurements(values.data) : loadMeasurements();
      console.log(formatEvaluation(evaluate(rows, keys as GroupKey[], loadEfficiency())));
      return;
    }
    case 'harness': {
      const { values } = parseArgs({
        args: rest,
        options: { model: { type: 'string' }, 'seq-len': { type: 'string' }, out: { type: 'string' } },
      });
      const { harnessScript } = await import('./harness.js');
      const seq = values['seq-len'] === undefined ? undefined : Number(values['seq-len']);
      if (seq !== undefined && !(Number.isInteger(seq) && seq > 0))
        fail('--seq-len must be a positive integer');
      const script = harnessScript(values.model, seq);
      if (!values.out) process.stdout.write(script);
      else {
        writeFileSync(values.out, script, { mode: 0o755 });
        console.error(`wrote ${values.out}: python3 ${values.out} --help`);
      }
      return;
    }
    case 'calibrate': {
      if (rest[0] === 'import' || rest[0] === 'refit') {
        const { calibrateRuns } = await import('./calibrate-runs.js');
        return calibrateRuns(rest);
      }
      const { values } = parseArgs({
        args: rest,
        options: { data: { type: 'string' }, write: { type: 'boolean' } },
      });
      const rows = values.data ? readMeasurements(values.data) : loadMeasurements();
      const { efficiency, loss } = calibrate(rows, loadEfficiency(), 4, (s) => console.log(s));
      const round = (x: number) => Number(x.toPrecision(3));
      const file = JSON.parse(readFileSync(EFFICIENCY_FILE, 'utf8')) as Record<string, unknown>;
      for (const [k, v] of Object.entries(efficiency)) {
        if (typeof v === 'number') file[k] = round(v);
        else if (typeof v === 'object' && v !== null)
          file[k] = Object.fromEntries(
            Object.entries(v as Record<string, number>).map(([m, x]) => [m, round(x)]),
          );
      }
      console.log(JSON.stringify(file, null, 2));
      console.log(`mean |log error| ${loss.toFixed(4)}`);
      if (values.write) {
        writeFileSync(EFFICIENCY_FILE, JSON.stringify(file, null, 2) + '\n');
        console.log(`wrote ${EFFICIENCY_FILE.pathname}`);
      }
      return;
    }
    case 'plan-fleet':
    case 'plan-procurement':
    case 'plan-federated': {
      const { values } = parseArgs({ args: rest, options: { in: { type: 'string' } } });
      if (!values.in)
        fail(`${command} needs --in FILE.json (the input object; see docs/coupled-planning.md)`);
      const { COUPLED_QUERIES, readInput } = await import('./coupled.js');
      let input: unknown;
      try {
        input = readInput(readFileSync(values.in, 'utf8'));
      } catch (e) {
        fail(`--in ${values.in}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const result = await runQuery(COUPLED_QUERIES[command], { input });
      console.log(JSON.stringify(result, null, 2));
      if (result.errors?.length) process.exitCode = 1;
      return;
    }
    case 'query': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { file: { type: 'string' }, variables: { type: 'string' } },
      });
      const source = values.file ? readFileSync(values.file, 'utf8') : positionals.join(' ');
      if (!source.trim()) fail('query needs a GraphQL operation or --file FILE');
      const result = await runQuery(source, values.variables ? JSON.parse(values.variables) : undefined);
      console.log(JSON.stringify(result, null, 2));
      if (result.errors?.length) process.exitCode = 1;
      return;
    }
    case 'recommend': {
      const { values } = parseArgs({
        args: rest,
        options: {
          model: { type: 'string' },
          samples: { type: 'string' },
          objective: { type: 'string' },
          deadline: { type: 'string' },
          budget: { type: 'string' },
          gpus: { type: 'string' },
          precisions: { type: 'string' },
          'max-nodes': { type: 'string' },
          limit: { type: 'string' },
        },
      });
      if (!values.model || !values.samples) fail('recommend needs --model ID and --samples N');
      const list = (s?: string) => (s ? s.split(',').map((x) => x.trim()) : undefined);
      const num = (s?: string) => (s === undefined ? undefined : Number(s));
      const input = {
        workload: { model: values.model, samples: Number(values.samples) },
        objective: values.objective ?? 'COST',
        deadlineHours: num(values.deadline),
        budgetUsd: num(values.budget),
        gpus: list(values.gpus),
        precisions: list(values.precisions),
        maxNodes: num(values['max-nodes']) ?? 8,
        limit: num(values.limit) ?? 10,
      };
      const result = await runQuery(RECOMMEND_QUERY, { input });
      if (result.errors?.length) fail(result.errors.map((e) => e.message).join('\n'));
      const r = (
        result.data as {
          recommend: {
            status: string;
            predictor: string;
            evaluated: number;
            feasible: number;
            plans: Record<string, unknown>[];
            rejected: { reason: string; count: number }[];
          };
        }
      ).recommend;
      console.log(
        `${r.evaluated} candidates evaluated (${r.status}), ${r.feasible} feasible; predictor ${r.predictor}`,
      );
      console.table(
        r.plans.map((p) => ({
          rank: p.rank,
          gpu: (p.gpu as { id: string }).id,
          nodes: p.nodes,
          gpusPerNode: p.gpusPerNode,
          batch: p.batchSizePerGpu,
          precision: p.precision,
          hours: Number((p.totalHours as number).toFixed(2)),
          hoursP90: Number((p.totalHoursP90 as number).toFixed(2)),
          costUsd: p.costUsd === null ? null : Number((p.costUsd as number).toFixed(2)),
          memGb: Number((p.memoryGbPerGpu as number).toFixed(1)),
        })),
      );
      if (r.rejected.length)
        console.log('rejected: ' + r.rejected.map((x) => `${x.reason} ${x.count}`).join(', '));
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      fail(`unknown command "${command}"\n\n${USAGE}`);
  }
}

await main(process.argv.slice(2));
