// seeds/calibration.json: how recorded runs move predictions (weights, and the interval of a
// calibrated prediction), read once and passed to the predictor.
import { readFileSync } from 'node:fs';
import type { CalibrationSettings } from '../predictor/learned/calibration.js';

let settings: CalibrationSettings | undefined;
export function loadCalibrationSettings(): CalibrationSettings {
  settings ??= JSON.parse(
    readFileSync(new URL('./calibration.json', import.meta.url), 'utf8'),
  ) as CalibrationSettings;
  return settings;
}
