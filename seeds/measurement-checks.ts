// Rows of train.csv whose figures contradict the configuration they state, found by a rule over the
// rows themselves (never by how well the predictor fits them). Such a row is kept in the file, as
// published, and left out of everything that reads the measurements: training and validating the
// learned correction, run-time evidence, the fitted constants, the memory check.

/** What the checks read of a train.csv row (catalog.ts's Measurement has these and more). */
export interface MeasuredRow {
  id: string;
  source: string;
  framework: string;
  software: string;
  model: string;
  gpu: string;
  precision: string;
  numGpus: number;
  seqLenOrImageSize: number | null;
  throughput: number | null;
  throughputUnit: string;
}

export interface ExcludedMeasurement<Row extends MeasuredRow = MeasuredRow> {
  row: Row;
  reason: string;
}

/** Units counted per sequence: a row's tokens per second are its throughput times its sequence length. */
const PER_SEQUENCE = /^sequences\/s/;

/**
 * A transformer step on longer sequences does at least as much work per token (the attention
 * grows with the length; the GEMMs are already large at 128 tokens), so on the same GPU, model,
 * precision, framework and software, tokens per second per GPU at a longer stated length cannot
 * exceed the fastest row of any shorter length (at any GPU count: more GPUs never raise the rate
 * per GPU). Where they do, the longer rows did not compute their stated length: NVIDIA's
 * PyTorch (NGC 21.11) and PaddlePaddle (22.12) BERT pre-training tables report phase 2 (512) at
 * 1.05-1.6x the tokens per second per GPU of phase 1 (128), where the padded TensorFlow runs of the
 * same tables report 0.6-0.9x; on V100 that would be FP32 above the datasheet peak. Their sequences are shorter
 * than 512 by an amount no table states, so no predictor can be right or wrong about them.
 */
export function longerButFasterPerToken<Row extends MeasuredRow>(rows: Row[]): ExcludedMeasurement<Row>[] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    if (!PER_SEQUENCE.test(r.throughputUnit) || !r.seqLenOrImageSize || !r.throughput) continue;
    const key = [r.source, r.framework, r.software, r.model, r.gpu, r.precision].join('|');
    const g = groups.get(key) ?? [];
    g.push(r);
    groups.set(key, g);
  }
  const perToken = (r: Row) => (r.throughput! * r.seqLenOrImageSize!) / r.numGpus;
  const out: ExcludedMeasurement<Row>[] = [];
  for (const g of groups.values())
    for (const long of g) {
      const short = g
        .filter((s) => s.seqLenOrImageSize! < long.seqLenOrImageSize!)
        .sort((a, b) => perToken(b) - perToken(a))[0];
      if (!short || perToken(long) <= perToken(short)) continue;
      out.push({
        row: long,
        reason: `${(perToken(long) / perToken(short)).toFixed(2)}x the tokens/s per GPU of ${short.id} at ${short.seqLenOrImageSize} tokens, the fastest shorter row of its table (same GPU, model, precision, framework): sequences shorter than the stated ${long.seqLenOrImageSize}`,
      });
    }
  return out.sort((a, b) => a.row.id.localeCompare(b.row.id));
}
