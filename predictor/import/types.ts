// What every model importer returns and accepts. A model the user brings becomes the same ModelDef
// the zoo builds, so everything downstream (costs, step time, memory, the search) treats it alike.
import type { ModelDef, OptimizerKind } from '../types.js';

/** An operator an importer could not cost: listed in the answer, never silently dropped. */
export interface UnsupportedOperator {
  opType: string;
  /** ONNX operator domain ('' for the standard one). */
  domain: string;
  count: number;
  /** Up to five node names, to find them in the graph. */
  nodes: string[];
  reason: string;
}

export interface ImportedModel {
  model: ModelDef;
  /** Approximations and defaults the importer applied, in words. */
  notes: string[];
  unsupported: UnsupportedOperator[];
}

export interface ImportOptions {
  /** Sequence length (or image size for vision models); each importer says what it defaults to. */
  seqLen?: number;
  /** Display name; default: what the input says, or a description of it. */
  name?: string;
  /** Optimizer whose state memory and step time count; default adam (AdamW for transformers). */
  optimizer?: OptimizerKind;
  /** Field errors name, e.g. 'workload.customModel.huggingFaceConfig'. */
  field?: string;
  /** Field that names the sequence length in errors, e.g. 'workload.seqLen'. */
  seqLenField?: string;
}

/** Largest inputs accepted: far beyond real models, small enough to parse quickly. */
export const IMPORT_LIMITS = {
  /** Hugging Face config.json text, characters. */
  configChars: 1_000_000,
  /** ONNX model bytes (GraphQL takes them base64: 4/3 as many characters). */
  onnxBytes: 48_000_000,
  onnxBase64Chars: 64_000_000,
  onnxNodes: 50_000,
  /** Layers in a layer list (each may repeat with `count`). */
  layers: 10_000,
  /** Any one dimension. */
  dimension: 1e9,
  /**
   * A per-sample count that is a product of dimensions (a layer's elements, a linear's rows): an
   * attention layer's scores at the longest sequence (heads x seqLen^2) fit.
   */
  elements: 1e15,
  /** Sequence length or image size. */
  seqLen: 1_048_576,
  /** Experts of one mixture-of-experts linear (DeepSeek-V3 has 256; 4,096 leaves room for finer ones). */
  experts: 4096,
} as const;
