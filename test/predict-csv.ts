// predict-csv as a user runs it: the CSV (and the files its rows name, such as a config.json) written
// to a fresh directory, the CLI run on it, and the CSV it wrote read back.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../seeds/catalog.js';

export const TRAINPLAN_BIN = fileURLToPath(new URL('../bin/trainplan.js', import.meta.url));

/** `lines` become in.csv; each of `files` (name -> JSON value) is written beside it. */
export function predictCsv(
  lines: string[],
  files: Record<string, unknown> = {},
): { stdout: string; rows: Record<string, string>[]; input: string; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'trainplan-'));
  for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(value));
  const input = join(dir, 'in.csv');
  const output = join(dir, 'out.csv');
  writeFileSync(input, lines.join('\n'));
  const stdout = execFileSync(
    process.execPath,
    [TRAINPLAN_BIN, 'predict-csv', '--in', input, '--out', output],
    {
      encoding: 'utf8',
      cwd: tmpdir(),
      timeout: 120_000,
    },
  );
  return { stdout, rows: parseCsv(readFileSync(output, 'utf8')), input, output };
}
