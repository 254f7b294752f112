// The Llama 2 campaigns as `predict` answers them, with trees that never saw Llama 2: is the learned
// answer within 20% of the published GPU-hours only because the trees fitted Llama 2's H100 runs?
//
//   npx tsx bench/campaign-held-out.ts      (one fit, about a minute on two cores)
//
// The trees are fitted as the card's family fold fits them (every Llama-2 run out, the stack effects
// refitted without them) and applied to the campaign configuration as the shipped model is: the
// analytical estimate (shipped stack effects, as the analytical campaign line reports it), the
// shipped measurements' evidence for that model and GPU, and the tree ensemble's output.
import { loadEfficiency } from '../seeds/catalog.js';
import { fitWithout, PARAMS, trainingExamples } from '../predictor/learned/train.js';
import { predictEnsemble } from '../predictor/learned/gbdt.js';
import {
  featureNames,
  modelFeaturesOf,
  writeFeatures,
  DEFAULT_SOFTWARE,
} from '../predictor/learned/features.js';
import { predict } from '../predictor/predict.js';
import { campaignRequests, learnedCampaignHours } from '../cli/evaluate-llm.js';
import { stackRefitView } from '../cli/train-predictor.js';

const eff = loadEfficiency();
const ex = trainingExamples(eff);
const out = new Set(ex.flatMap((e, i) => (e.kind === 'llm' && e.family === 'Llama-2' ? [i] : [])));
const { model } = fitWithout(ex, out, true, PARAMS, stackRefitView(eff));
const shipped = new Map((await learnedCampaignHours(eff)).map((c) => [c.campaign.model, c]));
console.log(`trees fitted without the ${out.size} Llama-2 runs (seed ${PARAMS.seed})`);
for (const c of campaignRequests()) {
  if ('error' in c) continue;
  const p = predict(c.req, eff);
  const x = new Array<number>(featureNames(true).length).fill(0);
  const ev = model.evidence.query(
    c.req.model.id,
    c.req.gpu.id,
    c.req.precision,
    DEFAULT_SOFTWARE.framework,
    true,
  );
  writeFeatures(
    x,
    0,
    true,
    modelFeaturesOf(c.req.model),
    c.req.gpu,
    p.execution,
    p.stepTimeMs,
    p.breakdown,
    p.dominantMath,
    ev,
    DEFAULT_SOFTWARE,
  );
  const factor = Math.exp(-predictEnsemble(model.ensemble, x));
  const gpuHours = p.totalHours! * c.gpus * factor;
  const s = shipped.get(c.campaign.model)!;
  console.log(
    `${c.campaign.model}: analytical ${Math.round(p.totalHours! * c.gpus).toLocaleString('en-US')}, shipped trees ${Math.round(s.gpuHours).toLocaleString('en-US')} (x${s.ratio.toFixed(3)}), trees without Llama 2 ${Math.round(gpuHours).toLocaleString('en-US')} (x${(gpuHours / c.campaign.gpuHours!).toFixed(3)}; step factor ${factor.toFixed(3)}), published ${c.campaign.gpuHours!.toLocaleString('en-US')}`,
  );
}
