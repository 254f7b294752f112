// A solver-neutral mixed-integer linear program: named columns with bounds, a type and an
// objective coefficient; named rows `lb <= sum(values[k] * x[indices[k]]) <= ub`. Plain data
// (numbers, strings, arrays), so it crosses to a worker thread by structured clone and both
// backends (HiGHS, javascript-lp-solver) read the same object.

export type VarType = 'continuous' | 'integer' | 'binary';

export interface MipVar {
  name: string;
  type: VarType;
  lb: number;
  /** Infinity for none. */
  ub: number;
  obj: number;
}

export interface MipRow {
  name: string;
  indices: number[];
  values: number[];
  /** -Infinity for none. */
  lb: number;
  /** Infinity for none. */
  ub: number;
}

export interface MipModel {
  name: string;
  sense: 'min' | 'max';
  vars: MipVar[];
  rows: MipRow[];
}

/** A warm start for the solver: a complete assignment the caller believes feasible (HiGHS only). */
export type MipStart = number[];

/** Builds a MipModel; names must be unique (both backends key results by them). */
export class MipBuilder {
  readonly vars: MipVar[] = [];
  readonly rows: MipRow[] = [];
  private readonly names = new Set<string>();

  constructor(
    readonly name: string,
    readonly sense: 'min' | 'max' = 'min',
  ) {}

  private unique(name: string): string {
    if (this.names.has(name)) throw new Error(`MipBuilder: duplicate name ${name}`);
    this.names.add(name);
    return name;
  }

  addVar(name: string, type: VarType, lb: number, ub: number, obj = 0): number {
    if (type === 'binary') {
      lb = Math.max(0, lb);
      ub = Math.min(1, ub);
    }
    this.vars.push({ name: this.unique(name), type, lb, ub, obj });
    return this.vars.length - 1;
  }

  /** Adds a row from (index, coefficient) terms; repeated indices are summed, zero coefficients dropped. */
  addRow(name: string, terms: Iterable<readonly [number, number]>, lb: number, ub: number): number {
    const acc = new Map<number, number>();
    for (const [i, v] of terms) acc.set(i, (acc.get(i) ?? 0) + v);
    const indices: number[] = [],
      values: number[] = [];
    for (const [i, v] of [...acc].sort((a, b) => a[0] - b[0]))
      if (v !== 0) {
        indices.push(i);
        values.push(v);
      }
    this.rows.push({ name: this.unique(name), indices, values, lb, ub });
    return this.rows.length - 1;
  }

  build(): MipModel {
    return { name: this.name, sense: this.sense, vars: this.vars, rows: this.rows };
  }
}

/** Objective value of an assignment. */
export function objectiveOf(m: MipModel, x: ArrayLike<number>): number {
  let s = 0;
  for (let j = 0; j < m.vars.length; j++) s += m.vars[j].obj * x[j];
  return s;
}

export function rowActivity(r: MipRow, x: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < r.indices.length; k++) s += r.values[k] * x[r.indices[k]];
  return s;
}

/** A copy of the model with another objective (dense coefficients) and sense. */
export function withObjective(
  m: MipModel,
  coefs: ArrayLike<number>,
  sense: 'min' | 'max',
  name = m.name,
): MipModel {
  return { name, sense, rows: m.rows, vars: m.vars.map((v, j) => ({ ...v, obj: coefs[j] ?? 0 })) };
}

export interface ModelSize {
  variables: number;
  integers: number;
  constraints: number;
  nonzeros: number;
}

export function modelSize(m: MipModel): ModelSize {
  return {
    variables: m.vars.length,
    integers: m.vars.filter((v) => v.type !== 'continuous').length,
    constraints: m.rows.length,
    nonzeros: m.rows.reduce((n, r) => n + r.indices.length, 0),
  };
}
