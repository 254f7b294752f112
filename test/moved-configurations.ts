// Measured benchmark configurations corrected twice by the shipped model: as measured, and moved
// to another GPU or precision (where the roofline covers the moved one). What the twin tests and
// bench/precision-twins.ts compare.
import { loadEfficiency, loadMeasurements, type Measurement } from '../seeds/catalog.js';
import { examples, type Example } from '../predictor/learned/train.js';
import { correctionInputOf, type Corrections, type LearnedPredictor } from '../predictor/learned/model.js';

export async function correctedMoved(
  learned: LearnedPredictor,
  which: (r: Measurement) => boolean,
  move: (r: Measurement) => Measurement,
): Promise<{
  /** The measured configurations the move covers, and each one moved (same order). */
  pairs: Example[];
  movedPairs: Example[];
  asMeasured: Corrections;
  moved: Corrections;
  gaps: number[];
}> {
  const eff = loadEfficiency();
  const rows = loadMeasurements().filter(which);
  const moved = new Map(examples(rows.map(move), eff).map((e) => [e.row.id, e]));
  const pairs = examples(rows, eff).filter((e) => moved.has(e.row.id));
  const movedPairs = pairs.map((e) => moved.get(e.row.id)!);
  const a = await learned.correct(pairs.map(correctionInputOf));
  const b = await learned.correct(movedPairs.map(correctionInputOf));
  // How far the moved configuration's correction factor is from the measured one's.
  const gaps = pairs.map((_, i) => Math.abs(b.mid[i] / a.mid[i] - 1));
  return { pairs, movedPairs, asMeasured: a, moved: b, gaps };
}
