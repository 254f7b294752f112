// trainplan's command line, on commander: every command has --help with examples; a mistyped
// command or flag, or a bad value, is one line on stderr and exit code 2 (never a stack trace);
// a failure while working is one line and exit code 1. Long work draws a progress bar on a terminal.
//
// Adding a command: one `program.command(...)` block in `buildProgram` with a description, its
// options (numbers through `number`/`integer`, lists through `list`), an "Examples:" help text,
// and an action that calls into the service/predictor/optimizer code; a wrong input throws
// UsageError.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { graphql } from 'graphql';
import {
  EFFICIENCY_FILE,
  loadEfficiency,
  loadExcludedMeasurements,
  loadMeasurements,
  readMeasurements,
} from '../seeds/catalog.js';
import { layoutWords, type LayoutDegrees } from '../predictor/layout-words.js';
import { DEFAULT_STACK } from '../predictor/software.js';
import { PRECISIONS } from '../predictor/types.js';
import { InputError } from '../predictor/input-error.js';
import {
  MASTER_WEIGHTS,
  NETWORK_TRANSPORTS,
  RECOMPUTE,
  RECOMPUTE_MODULES,
  type NetworkTransport,
} from '../seeds/types.js';
import { SOFTWARE_STACKS } from '../seeds/tables.js';
import { runtimeConfig, setRuntimeConfig, SETTINGS } from '../service/config.js';
import { evaluate, formatEvaluation, GROUP_KEYS, type GroupKey } from './evaluate.js';
import { calibrate } from './calibrate.js';
import { progressBar } from './progress.js';

/** A wrong input found after parsing (a file that is not JSON, a missing operation): exit code 2. */
export class UsageError extends Error {}

// ------------------------------------------------------------------ option values

function number(value: string): number {
  const x = Number(value);
  if (value.trim() === '' || !Number.isFinite(x)) throw new InvalidArgumentError('not a number.');
  return x;
}
function integer(value: string): number {
  const x = number(value);
  if (!Number.isInteger(x)) throw new InvalidArgumentError('not an integer.');
  return x;
}
const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** commander's messages (with the suggestion on its own line) as one line. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

// ------------------------------------------------------------------ GraphQL in-process

/**
 * How long a command's search may run. The server's per-request budget (2 s) keeps one request from
 * holding a server others share; a command answers one person on their own machine, in a process that
 * starts cold (a mixture-of-experts model's first search over the catalog takes several seconds there),
 * so it may search for a minute unless TRAINPLAN_TIME_BUDGET_MS or --time-budget-ms says otherwise.
 */
const COMMAND_TIME_BUDGET_MS = 60_000;
const BUDGET = SETTINGS.find((s) => s.key === 'timeBudgetMs')!;
const timeBudgetOption = () =>
  new Option(
    '--time-budget-ms <ms>',
    `how long the search may run, ${BUDGET.min} to ${BUDGET.max} ms; a search still running then is refused (default: TRAINPLAN_TIME_BUDGET_MS, else ${COMMAND_TIME_BUDGET_MS})`,
  ).argParser((value) => {
    const x = integer(value);
    if (x < BUDGET.min! || x > BUDGET.max!)
      throw new InvalidArgumentError(`must be from ${BUDGET.min} to ${BUDGET.max}.`);
    return x;
  });
function useTimeBudget(ms: number | undefined) {
  const budget = ms ?? (process.env[BUDGET.env] ? runtimeConfig().timeBudgetMs : COMMAND_TIME_BUDGET_MS);
  // The command's user sets the budget itself: any the flag accepts may be asked for.
  setRuntimeConfig({ ...runtimeConfig(), timeBudgetMs: budget, maxTimeBudgetMs: BUDGET.max! });
}

async function runQuery(query: string, variables?: Record<string, unknown>) {
  const { trainplanSchema } = await import('../server/schema.js');
  return graphql({ schema: await trainplanSchema(), source: query, variableValues: variables });
}

function readJsonFile(option: string, path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`${option} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${option} ${path}: not valid JSON (${(e as Error).message})`);
  }
}

const RECOMMEND_QUERY = `query($input: RecommendInput!) { recommend(input: $input) {
  status predictor evaluated feasible
  plans { rank gpu { id } offer { provider instance } nodes gpusPerNode batchSizePerGpu gradAccumSteps precision stepTimeMs throughput throughputUnit totalHours totalHoursP90 costUsd memoryGbPerGpu mfu interNodeGbps interNodeTransport
    parallelism { dataParallel tensorParallel pipelineParallel virtualPipelineStages contextParallel expertParallel zeroStage recompute }
    harness { commands note } }
  rejected { reason count } notes } }`;

type Offer = { provider: string; instance: string };
interface RecommendAnswer {
  status: string;
  predictor: string;
  evaluated: number;
  feasible: number;
  plans: Record<string, unknown>[];
  rejected: { reason: string; count: number }[];
  notes: string[];
}

// ------------------------------------------------------------------ the commands

export function buildProgram(): Command {
  const program = new Command('trainplan')
    .description(
      'Which GPU type, how many nodes, which batch size and precision for a training job, and what it costs: precision-aware training-time prediction and GPU plan search.',
    )
    .showSuggestionAfterError(true)
    // One line per error, so a script's log shows it whole.
    .configureOutput({
      outputError: (text, write) => write(`trainplan: ${oneLine(text)}\n`),
    })
    .exitOverride()
    .addHelpText(
      'after',
      examples(
        'trainplan serve',
        'trainplan recommend --model resnet50_v1.5 --samples 115300000 --deadline 24',
        'trainplan predict-csv --in configs.csv --out predicted.csv',
        'trainplan help recommend',
      ),
    );
  // Subcommands inherit the one-line errors and exit handling.
  const command = (name: string) =>
    program
      .command(name)
      .showSuggestionAfterError(true)
      .configureOutput({
        outputError: (text, write) => write(`trainplan ${name}: ${oneLine(text)}\n`),
      })
      .exitOverride();

  // serve: every setting of service/config.ts is a flag (flags win over the environment).
  const serve = command('serve')
    .summary('serve GraphQL, the plan explorer and GraphiQL')
    .description(
      'Serve GraphQL at http://HOST:PORT/graphql, the plan explorer at / and GraphiQL for browsers, /health and /ready. Every flag has an environment variable; flags win.',
    );
  for (const setting of SETTINGS)
    serve.addOption(
      new Option(
        `--${setting.flag} <${setting.kind === 'int' ? 'n' : setting.kind === 'file' ? 'file' : 'value'}>`,
        `${setting.doc} Env ${setting.env}; default ${setting.default ?? 'none'}.`,
      ),
    );
  serve
    .addHelpText(
      'after',
      examples(
        'trainplan serve',
        'trainplan serve --port 8080 --workers 4',
        'PORT=8080 TRAINPLAN_LOG_LEVEL=warn trainplan serve',
        'trainplan serve --prices negotiated.csv',
      ),
    )
    .action(async (options: Record<string, string | undefined>) => {
      // Flags and environment (service/config.ts), --workers N (Node cluster), graceful SIGTERM: server/serve.ts.
      const flags: Record<string, string | undefined> = {};
      for (const option of serve.options)
        flags[option.long!.slice(2)] = options[option.attributeName()] as string | undefined;
      const { serveWith } = await import('../server/serve.js');
      await serveWith(flags);
    });

  command('predict-csv')
    .summary('predict every row of a CSV of configurations')
    .description(
      "Predict every row of a CSV: the input columns plus predicted_throughput (in the row's unit, all GPUs; learned model), predicted_step_time_s with _p10_s/_p90_s, the forward/backward/optimizer/communication split, analytical_throughput, predicted_memory_gb_per_gpu (GiB at the step's peak), fits_in_memory, predictor, evidence and error (a row that cannot be predicted says why).",
    )
    .requiredOption(
      '--in <file>',
      `CSV with at least ${['model', 'gpu', 'num_gpus', 'batch_size_per_gpu', 'precision'].join(', ')}`,
    )
    .requiredOption('--out <file>', 'CSV to write')
    .addHelpText(
      'after',
      `
Columns:
  model                  a zoo id, or a path (relative to the CSV) to a Hugging Face config.json,
                         an .onnx graph or a layer-list .json
  gpu                    a catalog GPU id (trainplan query '{ gpus { id } }')
  num_gpus               GPUs in all (num_nodes optional, default 1)
  batch_size_per_gpu     batch elements per GPU
  precision              ${PRECISIONS.join(', ')}
  optional: num_nodes, throughput_unit (default: the model's own, e.g. images/s), grad_accum_steps,
  seq_len_or_image_size, tensor_parallel, pipeline_parallel, zero_stage, recompute
  (${RECOMPUTE.join('/')}), recompute_modules (under selective, ;-separated, of
  ${RECOMPUTE_MODULES.join(', ')}; default core_attn), expert_parallel
  (mixture-of-experts models), optimizer_state (fp32/bf16), master_weights
  (${MASTER_WEIGHTS.join('/')}) and channels_last (true/false: the convolutions' memory format;
  default the framework column's, else NCHW); seeds/measurements/train.csv's layout works as it is.
${examples(
  'printf "model,gpu,num_gpus,batch_size_per_gpu,precision\\nresnet50_v1.5,A100-SXM4-80GB,8,256,AMP_FP16\\n" > c.csv',
  'trainplan predict-csv --in c.csv --out predicted.csv',
)}`,
    )
    .action(async (options: { in: string; out: string }) => {
      const { predictCsv, CsvLayoutError } = await import('./predict-csv.js');
      try {
        // Small files finish in a blink; a bar only from a thousand rows.
        const { rows, predicted } = await predictCsv(options.in, options.out, (rows) =>
          progressBar(
            'predicting',
            rows >= 1000 ? rows : 0,
            rows >= 1000
              ? process.stderr
              : {
                  write: () => true,
                },
          ),
        );
        console.log(
          `wrote ${rows} rows (${predicted} predicted, ${rows - predicted} with an error) to ${options.out}`,
        );
      } catch (e) {
        if (e instanceof CsvLayoutError) throw new UsageError(e.message);
        if ((e as NodeJS.ErrnoException).code === 'ENOENT')
          throw new UsageError(`--in ${options.in}: no such file`);
        throw e;
      }
    });

  command('evaluate')
    .summary("the predictor's error on measured rows")
    .description(
      "The predictor's error on measured rows: MAPE of the analytical predictor overall and per group, or (--learned) the cross-validation of the learned predictor on the benchmark rows and the published LLM runs together, holding out whole GPUs, whole (model, GPU, precision) combinations, whole models (LLM runs by model family) and whole sources, beside the analytical estimate and the precision-unaware ablation, per precision, GPU, source and LLM model family (takes minutes), or (--llm) the analytical predictor on the published LLM runs (seeds/measurements/llm_train.csv) at their own layouts and software stacks, per source, stack, precision, GPU and model family, with the FP8/BF16 ratios of runs published in both and the Llama 2 7B/13B campaign GPU-hours.",
    )
    .option('--data <file>', "measurement CSV in train.csv's layout (default: seeds/measurements/train.csv)")
    .option('--group-by <keys>', `comma-separated groups: ${Object.keys(GROUP_KEYS).join(', ')}`, list, [
      'precision',
      'generation',
      'gpu',
      'model',
    ])
    .option('--learned', 'cross-validate the learned predictor instead')
    .option('--llm', 'the published LLM runs, FP8/BF16 pairs and Llama 2 campaigns instead')
    .option(
      '--fit',
      "with --llm: fit the tuned stacks' effects (seeds/software.json) on those runs, held out by model family",
    )
    .option('--write', 'with --llm --fit: store the fit and the LLM section of seeds/PREDICTOR_CARD.md')
    .addHelpText(
      'after',
      examples(
        'trainplan evaluate',
        'trainplan evaluate --group-by precision,gpus',
        'trainplan evaluate --data my-runs.csv --group-by model',
        'trainplan evaluate --learned',
        'trainplan evaluate --llm --fit',
      ),
    )
    .action(
      async (options: {
        data?: string;
        groupBy: string[];
        learned?: boolean;
        llm?: boolean;
        fit?: boolean;
        write?: boolean;
      }) => {
        if (options.llm) {
          // Published LLM runs at their own layouts, FP8/BF16 pairs, Llama 2 campaigns (analytical, tuned
          // stacks; the campaigns and the runs on a GPU new to LLM runs also as predict answers them,
          // with the learned correction).
          const llm = await import('./evaluate-llm.js');
          let fitText = '';
          if (options.fit) {
            const f = llm.fitSoftware();
            fitText = llm.formatSoftwareFit(f);
            console.log(fitText);
            if (options.write) console.log(llm.writeSoftwareFit(f));
          }
          const evaluation = llm.formatLlmEvaluation(undefined, await llm.formatLearnedLines());
          console.log(evaluation);
          if (options.fit && options.write) console.log(llm.writeLlmCardSection(fitText, evaluation));
          return;
        }
        if (options.learned) {
          // Cross-validation (held-out GPUs, combinations, models, sources) with the ablation; writes nothing.
          const { trainPredictor } = await import('./train-predictor.js');
          await trainPredictor(false, foldProgress());
          return;
        }
        const unknown = options.groupBy.filter((k) => !(k in GROUP_KEYS));
        if (unknown.length)
          throw new UsageError(
            `--group-by: unknown key "${unknown[0]}"; allowed: ${Object.keys(GROUP_KEYS).join(', ')}`,
          );
        const rows = options.data ? readMeasurements(options.data) : loadMeasurements();
        const bar = progressBar('evaluating', rows.length);
        const result = evaluate(rows, options.groupBy as GroupKey[], loadEfficiency(), (done) =>
          bar.update(done),
        );
        bar.finish();
        console.log(formatEvaluation(result));
        if (!options.data)
          console.log(
            `\n${loadExcludedMeasurements().length} train.csv rows left out: they contradict the configuration they state (seeds/measurement-checks.ts; \`trainplan memory-check\` lists them)`,
          );
      },
    );

  command('memory-check')
    .summary('the memory model against configurations that ran')
    .description(
      'The memory model against configurations that ran: train.csv and llm_train.csv fit rates per model with every miss, the allocator fragmentation fitted on half the GPUs and checked on the rest, published peak memory, configurations that cannot fit, largest batch vs measured.',
    )
    .addHelpText('after', examples('trainplan memory-check'))
    .action(async () => {
      const { memoryCheckReport } = await import('./memory-check.js');
      console.log(memoryCheckReport());
    });

  const calibrateCommand = command('calibrate')
    .summary('fit the analytical constants to measured rows')
    .description(
      "Fit seeds/efficiency.json's global constants (achieved fraction of peak, launch costs, ...) to measured rows.",
    )
    .option('--data <file>', "measurement CSV in train.csv's layout (default: seeds/measurements/train.csv)")
    .option('--write', 'write the fitted constants to seeds/efficiency.json')
    .addHelpText('after', examples('trainplan calibrate', 'trainplan calibrate --write'))
    .action((options: { data?: string; write?: boolean }) => {
      const rows = options.data ? readMeasurements(options.data) : loadMeasurements();
      const { efficiency, loss } = calibrate(rows, loadEfficiency(), 4, (s) => console.log(s));
      // Only what efficiency.json holds is written back: the loaded Efficiency also carries the
      // memory constants and the measured tables, which live in their own files.
      const round = (x: unknown) => (typeof x === 'number' ? Number(x.toPrecision(3)) : x);
      const file = JSON.parse(readFileSync(EFFICIENCY_FILE, 'utf8')) as Record<string, unknown>;
      const fitted = efficiency as unknown as Record<string, unknown>;
      for (const [k, stored] of Object.entries(file)) {
        const v = fitted[k];
        if (typeof v === 'number') file[k] = round(v);
        else if (typeof v === 'object' && v !== null && typeof stored === 'object' && stored !== null)
          file[k] = Object.fromEntries(
            Object.keys(stored).map((m) => [m, round((v as Record<string, unknown>)[m])]),
          );
      }
      console.log(JSON.stringify(file, null, 2));
      console.log(`mean |log error| ${loss.toFixed(4)}`);
      if (options.write) {
        writeFileSync(EFFICIENCY_FILE, JSON.stringify(file, null, 2) + '\n');
        console.log(`wrote ${EFFICIENCY_FILE.pathname}`);
      }
    });

  calibrateCommand
    .command('import')
    .summary('record your own measured runs in the store the server reads')
    .description(
      "Record your own measured runs (the harness's CSV/JSON, or MeasurementInput objects) in the store the server reads (SQLite under --data-dir, or PostgreSQL at --database-url); predictions and plans for that GPU and model use them at once. Exit code 1 when a row is rejected (each is listed with the reason).",
    )
    .argument('<file>', "the harness's CSV or JSON")
    .option('--owner <name>', 'whose runs these are', 'local')
    .option('--data-dir <dir>', 'SQLite store folder (env TRAINPLAN_DATA_DIR)')
    .option('--database-url <url>', 'PostgreSQL instead (env DATABASE_URL)')
    .showSuggestionAfterError(true)
    .configureOutput({
      outputError: (text, write) => write(`trainplan calibrate import: ${oneLine(text)}\n`),
    })
    .exitOverride()
    .addHelpText(
      'after',
      `
FILE: the harness's CSV (model, seq_len, gpu, gpu_memory_gb, nodes, gpus_per_node, batch_size_per_gpu,
grad_accum_steps, precision, framework, step_time_ms, peak_memory_gb, source, note) or JSON (a list
of those rows, or of MeasurementInput objects). model: a zoo id, or a path (relative to FILE) to a
layer-list .json or a Hugging Face config.json; gpu: a catalog id, or the name the device reported.
${examples('trainplan calibrate import runs.csv --owner lab-a', 'trainplan calibrate import runs.json --database-url postgres://host/trainplan')}`,
    )
    .action(async (file: string, options: { owner: string; dataDir?: string; databaseUrl?: string }) => {
      const { calibrateRuns } = await import('./calibrate-runs.js');
      await calibrateRuns([
        'import',
        file,
        '--owner',
        options.owner,
        ...(options.dataDir ? ['--data-dir', options.dataDir] : []),
        ...(options.databaseUrl ? ['--database-url', options.databaseUrl] : []),
      ]);
    });

  calibrateCommand
    .command('refit')
    .summary('refit the learned correction on the shipped rows plus your recorded runs')
    .description(
      "Refit the learned correction (the shipped model's trees, features and hyper-parameters) on the shipped training rows plus an owner's recorded runs, and write it to the data dir (refit-predictor.onnx, refit-predictor.json). predict and recommend use it while that owner's runs are exactly the ones it trained on; once a run is recorded or deleted, their evidence says the refit is stale and the shipped correction answers. Exit code 1 when the owner has no run to refit on.",
    )
    .option('--owner <name>', 'whose runs to refit on', 'local')
    .option(
      '--data-dir <dir>',
      'where the refit is written, and the SQLite store folder (env TRAINPLAN_DATA_DIR)',
    )
    .option(
      '--database-url <url>',
      'read the runs from PostgreSQL instead (env DATABASE_URL); the refit still goes to the data dir',
    )
    .showSuggestionAfterError(true)
    .configureOutput({
      outputError: (text, write) => write(`trainplan calibrate refit: ${oneLine(text)}\n`),
    })
    .exitOverride()
    .addHelpText(
      'after',
      `
Runs of custom models and layouts no training row states (context parallelism, virtual pipeline
stages) are skipped and listed; they still calibrate predictions. bench/refit.ts measures what a
refit with three runs does on a GPU held out of the shipped rows (README, calibration section).
${examples('trainplan calibrate refit --owner lab-a', 'trainplan calibrate refit --database-url postgres://host/trainplan --data-dir /srv/trainplan')}`,
    )
    .action(async (options: { owner: string; dataDir?: string; databaseUrl?: string }) => {
      const { calibrateRuns } = await import('./calibrate-runs.js');
      await calibrateRuns([
        'refit',
        '--owner',
        options.owner,
        ...(options.dataDir ? ['--data-dir', options.dataDir] : []),
        ...(options.databaseUrl ? ['--database-url', options.databaseUrl] : []),
      ]);
    });

  command('harness')
    .summary('write the measurement harness (Python + PyTorch)')
    .description(
      'Write the measurement harness (Python + PyTorch): it times warm-up + N optimizer steps at a batch size and precision, on one GPU or data parallel over several (--gpus N, or torchrun across nodes), with ZeRO, recomputation, tensor parallelism within a machine, pipeline stages (1F1B or interleaved), context or expert parallelism (--zero-stage, --recompute, --tensor-parallel, --pipeline-parallel, --virtual-pipeline-stages, --context-parallel, --expert-parallel), and writes runs for `trainplan calibrate import` (python3 measure.py --help). With --model, the zoo model is embedded so the script alone runs it.',
    )
    .option('--model <id>', 'a zoo model id to embed')
    .option(
      '--seq-len <n>',
      "sequence length (or image size) of the embedded model; default: the model's own",
      integer,
    )
    .option('--out <file>', 'write the script here (default: stdout)')
    .addHelpText(
      'after',
      examples(
        'trainplan harness --model resnet50_v1.5 --out measure.py',
        'python3 measure.py --batch-size 256 --precision AMP_BF16 --gpus 8 --out runs.csv',
        'python3 measure.py --help',
      ),
    )
    .action(async (options: { model?: string; seqLen?: number; out?: string }) => {
      const { harnessScript } = await import('../service/harness-script.js');
      let script: string;
      try {
        script = harnessScript(options.model, options.seqLen, { model: '--model', seqLen: '--seq-len' });
      } catch (e) {
        if (e instanceof InputError) throw new UsageError(e.withField);
        throw e;
      }
      if (!options.out) process.stdout.write(script);
      else {
        writeFileSync(options.out, script, { mode: 0o755 });
        console.error(`wrote ${options.out}: python3 ${options.out} --help`);
      }
    });

  command('query')
    .summary('run one GraphQL operation in-process')
    .description(
      'Run one GraphQL operation in-process (no server) and print the JSON result; exit code 1 when it has errors.',
    )
    .argument('[operation...]', 'the operation text (or give --file)')
    .option('--file <file>', 'read the operation from a file')
    .option('--variables <json>', 'variables as a JSON object')
    .addOption(timeBudgetOption())
    .addHelpText(
      'after',
      examples(
        `trainplan query '{ gpus { id memoryGb priceUsdPerGpuHour } }'`,
        `trainplan query --file q.graphql --variables '{"id": "H100-SXM5-80GB"}'`,
      ),
    )
    .action(
      async (operation: string[], options: { file?: string; variables?: string; timeBudgetMs?: number }) => {
        useTimeBudget(options.timeBudgetMs);
        const source = options.file ? readFileSync(options.file, 'utf8') : operation.join(' ');
        if (!source.trim()) throw new UsageError('query needs a GraphQL operation or --file FILE');
        let variables: Record<string, unknown> | undefined;
        try {
          variables = options.variables ? JSON.parse(options.variables) : undefined;
        } catch (e) {
          throw new UsageError(`--variables: not valid JSON (${(e as Error).message})`);
        }
        const result = await runQuery(source, variables);
        console.log(JSON.stringify(result, null, 2));
        if (result.errors?.length) process.exitCode = 1;
      },
    );

  command('recommend')
    .summary('ranked plans as a table')
    .description('Ranked plans as a table: the same search as the GraphQL recommend query.')
    .requiredOption('--model <id>', 'a zoo model id (trainplan query "{ models { id } }")')
    .requiredOption('--samples <n>', "total work in the model's unit (dataset size x epochs)", number)
    .addOption(new Option('--objective <objective>', 'rank by').choices(['COST', 'TIME']).default('COST'))
    .addOption(
      new Option('--software-stack <stack>', 'what runs the training (the GraphQL softwareStack)')
        .choices([...SOFTWARE_STACKS])
        .default(DEFAULT_STACK),
    )
    .option('--deadline <hours>', 'finish within this many hours', number)
    .option('--budget <usd>', 'cost at most this many USD', number)
    .option('--gpus <ids>', 'comma-separated GPU ids (default: every GPU)', list)
    .option('--providers <names>', 'comma-separated providers whose offers to rent (default: all)', list)
    .option(
      '--inter-node-gbps <gbps>',
      "network between nodes, Gbps, for every offer (default: each offer's own; plans joining instances of an offer that states none are not ranked)",
      number,
    )
    .addOption(
      new Option(
        '--inter-node-transport <transport>',
        "how NCCL crosses that network, for every offer: TCP for nodes joined by Ethernet only (default: each offer's own)",
      ).choices([...NETWORK_TRANSPORTS]),
    )
    .option(
      '--precisions <modes>',
      `comma-separated precision modes (${PRECISIONS.join(', ')}; default: all but FP4, FP16_PURE and, for a CNN, FP8)`,
      list,
    )
    .option(
      '--global-batch <n>',
      "train every plan at this global batch (the recipe's, in the model's batch elements), accumulating as needed; pipelines then run the micro-batches it implies",
      integer,
    )
    .option('--max-nodes <n>', 'most nodes a plan may use', integer, 8)
    .option('--limit <n>', 'plans to show', integer, 10)
    .option(
      '--memory-headroom-gb <gb>',
      'GB per GPU every plan keeps free beyond its predicted peak (default 0: seeds/memory.json)',
      number,
    )
    .addOption(timeBudgetOption())
    .addHelpText(
      'after',
      examples(
        'trainplan recommend --model resnet50_v1.5 --samples 115300000 --deadline 24 --max-nodes 4',
        'trainplan recommend --model gpt2_124m --samples 9e9 --objective TIME --gpus H100-SXM5-80GB,A100-SXM4-80GB',
        'trainplan recommend --model llama3_8b --samples 2e10 --software-stack MEGATRON --gpus H100-SXM5-80GB',
      ),
    )
    .action(
      async (options: {
        model: string;
        samples: number;
        objective: string;
        softwareStack: string;
        deadline?: number;
        budget?: number;
        gpus?: string[];
        providers?: string[];
        interNodeGbps?: number;
        interNodeTransport?: NetworkTransport;
        globalBatch?: number;
        precisions?: string[];
        maxNodes: number;
        limit: number;
        memoryHeadroomGb?: number;
        timeBudgetMs?: number;
      }) => {
        useTimeBudget(options.timeBudgetMs);
        const input = {
          workload: { model: options.model, samples: options.samples },
          objective: options.objective,
          softwareStack: options.softwareStack,
          deadlineHours: options.deadline,
          budgetUsd: options.budget,
          gpus: options.gpus,
          providers: options.providers,
          interNodeGbps: options.interNodeGbps,
          interNodeTransport: options.interNodeTransport,
          globalBatch: options.globalBatch,
          precisions: options.precisions,
          maxNodes: options.maxNodes,
          limit: options.limit,
          memoryHeadroomGb: options.memoryHeadroomGb,
        };
        const result = await runQuery(RECOMMEND_QUERY, { input });
        if (result.errors?.length) throw new UsageError(result.errors.map((e) => e.message).join('; '));
        const r = (result.data as { recommend: RecommendAnswer }).recommend;
        console.log(
          `${r.evaluated} candidates evaluated (${r.status}), ${r.feasible} feasible; predictor ${r.predictor}`,
        );
        // No plan: no empty table; the first note says why.
        if (!r.plans.length) console.log('no plan');
        else
          console.table(
            r.plans.map((p) => ({
              rank: p.rank,
              gpu: (p.gpu as { id: string }).id,
              // What to rent: nodes are instances of this offer (null: no offer prices the GPU).
              offer: p.offer ? `${(p.offer as Offer).provider} ${(p.offer as Offer).instance}` : null,
              nodes: p.nodes,
              gpusPerNode: p.gpusPerNode,
              batch: p.batchSizePerGpu,
              accum: p.gradAccumSteps,
              precision: p.precision,
              layout: layoutWords(p.parallelism as LayoutDegrees),
              // Between nodes only: Gbps and how NCCL crosses it (TCP: Ethernet only).
              network:
                (p.nodes as number) > 1
                  ? `${p.interNodeGbps as number} ${p.interNodeTransport as string}`
                  : '-',
              hours: Number((p.totalHours as number).toFixed(2)),
              hoursP90: Number((p.totalHoursP90 as number).toFixed(2)),
              costUsd: p.costUsd === null ? null : Number((p.costUsd as number).toFixed(2)),
              memGb: Number((p.memoryGbPerGpu as number).toFixed(1)),
              // The share of the GPUs' peak the plan's time assumes (null: no peak for its math).
              mfu: p.mfu === null ? null : Number((p.mfu as number).toFixed(2)),
            })),
          );
        if (r.rejected.length)
          console.log('rejected: ' + r.rejected.map((x) => `${x.reason} ${x.count}`).join(', '));
        // What bound the answer and what to be wary of (an unmeasured GPU, a stale price, a plan a
        // stated network would rank): the table alone would hide it.
        for (const note of r.notes) console.log(`- ${note}`);
        // How to check plan 1 before renting it for the whole job: time it, and record the run.
        const harness = r.plans[0]?.harness as { commands: string[]; note: string } | undefined;
        if (harness)
          console.log(
            harness.commands.length
              ? `time plan 1 on your own GPUs (${harness.note}):\n${harness.commands.map((c) => `  ${c}`).join('\n')}`
              : `time plan 1 on your own GPUs: ${harness.note}`,
          );
      },
    );

  const coupled: [string, string, string][] = [
    ['plan-fleet', 'planFleet', 'docs/examples/fleet.json'],
    ['plan-procurement', 'planProcurement', 'docs/examples/procurement.json'],
    ['plan-federated', 'planFederatedRound', 'docs/examples/federated.json'],
  ];
  for (const [name, field, example] of coupled)
    command(name)
      .summary(`${field} (mixed-integer program) from a JSON input`)
      .description(
        `A coupled plan solved as a mixed-integer program (GraphQL ${field}); prints the JSON result (docs/coupled-planning.md).`,
      )
      .requiredOption('--in <file>', `JSON file holding the query's input object (or { "input": ... })`)
      .addHelpText('after', examples(`trainplan ${name} --in ${example}`))
      .action(async (options: { in: string }) => {
        const { COUPLED_QUERIES, readInput } = await import('./coupled.js');
        const input = readInput(JSON.stringify(readJsonFile('--in', options.in)));
        const result = await runQuery(COUPLED_QUERIES[name], { input });
        console.log(JSON.stringify(result, null, 2));
        if (result.errors?.length) process.exitCode = 1;
      });

  return program;
}

/** A progress bar over the cross-validation's folds, fed by its log lines ("gpu fold 3/12 (...)"). */
function foldProgress(): (line: string) => void {
  let bar: ReturnType<typeof progressBar> | undefined;
  return (line) => {
    const fold = /(\w+) fold (\d+)\/(\d+)/.exec(line);
    if (!fold) {
      bar?.finish();
      bar = undefined;
      console.error(line);
      return;
    }
    const [, split, done, total] = fold;
    // The line comes as a fold starts: the bar shows the fold being worked on.
    bar ??= progressBar(`held out by ${split}, fold`, Number(total));
    bar.update(Number(done), Number(total));
    if (!process.stderr.isTTY) console.error(line);
    else if (done === total) {
      bar.finish();
      bar = undefined;
    }
  };
}

// `trainplan ... | head` closes stdout early; that is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    // commander has printed its one-line message already; --help and --version end here too.
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UsageError) {
      console.error(`trainplan: ${e.message}`);
      return 2;
    }
    console.error(`trainplan: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
