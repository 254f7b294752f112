// Query-shape limits, checked before anything executes: a text guard that runs before parsing
// (the parser recurses, so a 100,000-deep `{{{{` would otherwise overflow the stack) and a
// GraphQL validation rule for depth, complexity, top-level fields and aliases, all counted with
// fragments expanded. Rejections are GRAPHQL_VALIDATION_FAILED errors whose message names the limit.
import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

// Duck-typed on purpose: graphql's isObjectType & co. use instanceof, which fails when the schema
// comes from another copy of the module (vitest loads graphql's ESM build, Apollo its CJS one).
const fieldsOf = (t: GraphQLNamedType | undefined | null) =>
  t && 'getFields' in t && !('parseValue' in t)
    ? (t.getFields() as Record<string, GraphQLField<unknown, unknown>>)
    : undefined;
function namedType(t: GraphQLOutputType): GraphQLNamedType {
  let u: GraphQLOutputType = t;
  while ('ofType' in u && u.ofType) u = u.ofType as GraphQLOutputType;
  return u as GraphQLNamedType;
}

/** Brackets nested deeper than this in the query text are refused before parsing. */
export const MAX_TEXT_NESTING = 128;

/** Deepest nesting of { [ ( in a GraphQL text, outside strings and comments; stops counting past `stopAt`. */
export function textNesting(query: string, stopAt = Infinity): number {
  let depth = 0,
    max = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query.charCodeAt(i);
    if (c === 35 /* # */) {
      while (i < query.length && query.charCodeAt(i) !== 10 && query.charCodeAt(i) !== 13) i++;
      continue;
    }
    if (c === 34 /* " */) {
      if (query.startsWith('"""', i)) {
        const end = query.indexOf('"""', i + 3);
        i = end < 0 ? query.length : end + 2;
        continue;
      }
      for (i++; i < query.length; i++) {
        const d = query.charCodeAt(i);
        if (d === 92 /* \ */) {
          i++;
          continue;
        }
        if (d === 34 || d === 10 || d === 13) break;
      }
      continue;
    }
    if (c === 123 || c === 91 || c === 40) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === 125 || c === 93 || c === 41) depth = Math.max(0, depth - 1);
  }
  return max;
}

export interface ShapeLimits {
  maxDepth: number;
  maxComplexity: number;
  maxRootFields: number;
  maxAliases: number;
}

/** Cost of fields that do real work, unless the field declares its own `complexity` (type-graphql's option). */
export const FIELD_COSTS: Record<string, number> = {
  'Query.recommend': 100,
  'Query.planFleet': 100,
  'Query.planProcurement': 100,
  'Query.planFederatedRound': 100,
  'Query.predict': 10,
};

function fieldCost(parent: GraphQLNamedType, field: GraphQLField<unknown, unknown> | undefined): number {
  const declared = field?.extensions?.complexity;
  if (typeof declared === 'number' && Number.isFinite(declared) && declared >= 0) return declared;
  return (field && FIELD_COSTS[`${parent.name}.${field.name}`]) ?? 1;
}

interface Shape {
  depth: number;
  cost: number;
  rootFields: number;
}

/** Depth, cost and top-level field count of one selection set; fragments are measured once and reused. */
class Measurer {
  private readonly fragments = new Map<string, Shape>();
  private readonly active = new Set<string>();
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly defs: Map<string, FragmentDefinitionNode>,
  ) {}

  fragment(name: string): Shape {
    const known = this.fragments.get(name);
    if (known) return known;
    const def = this.defs.get(name);
    // An unknown fragment or a cycle is another rule's error; it adds nothing here.
    if (!def || this.active.has(name)) return { depth: 0, cost: 0, rootFields: 0 };
    this.active.add(name);
    const shape = this.selectionSet(def.selectionSet, this.schema.getType(def.typeCondition.name.value));
    this.active.delete(name);
    this.fragments.set(name, shape);
    return shape;
  }

  selectionSet(set: SelectionSetNode, parent: GraphQLNamedType | undefined | null): Shape {
    let depth = 0,
      cost = 0,
      rootFields = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const field = fieldsOf(parent)?.[sel.name.value];
        const inner = sel.selectionSet
          ? this.selectionSet(sel.selectionSet, field ? namedType(field.type) : undefined)
          : { depth: 0, cost: 0, rootFields: 0 };
        depth = Math.max(depth, 1 + inner.depth);
        cost += (parent ? fieldCost(parent, field) : 1) + inner.cost;
        rootFields += 1;
      } else {
        const inner =
          sel.kind === Kind.FRAGMENT_SPREAD
            ? this.fragment(sel.name.value)
            : this.selectionSet(
                sel.selectionSet,
                sel.typeCondition ? this.schema.getType(sel.typeCondition.name.value) : parent,
              );
        depth = Math.max(depth, inner.depth);
        cost += inner.cost;
        rootFields += inner.rootFields;
      }
    }
    return { depth, cost, rootFields };
  }
}

const refuse = (
  message: string,
  node: OperationDefinitionNode | undefined,
  limit: string,
  value: number,
  max: number,
) => new GraphQLError(message, { nodes: node ? [node] : undefined, extensions: { limit, value, max } });

/** Depth, complexity, top-level fields per operation and aliases per document, fragments expanded. */
export function queryShapeRule(limits: ShapeLimits): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const doc = context.getDocument();
    const defs = new Map<string, FragmentDefinitionNode>();
    let aliases = 0;
    for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) defs.set(d.name.value, d);
    const measurer = new Measurer(context.getSchema(), defs);
    return {
      Field(node) {
        if (node.alias && node.alias.value !== node.name.value) aliases++;
      },
      OperationDefinition: {
        leave(op) {
          const root =
            op.operation === 'query'
              ? context.getSchema().getQueryType()
              : op.operation === 'mutation'
                ? context.getSchema().getMutationType()
                : context.getSchema().getSubscriptionType();
          const s = measurer.selectionSet(op.selectionSet, root);
          const name = op.name ? `operation ${op.name.value}` : 'the operation';
          if (s.depth > limits.maxDepth)
            context.reportError(
              refuse(
                `${name} nests fields ${s.depth} deep, more than the limit of ${limits.maxDepth}`,
                op,
                'maxDepth',
                s.depth,
                limits.maxDepth,
              ),
            );
          if (s.rootFields > limits.maxRootFields)
            context.reportError(
              refuse(
                `${name} asks for ${s.rootFields} top-level fields, more than the limit of ${limits.maxRootFields}: send fewer (aliased) fields per request`,
                op,
                'maxRootFields',
                s.rootFields,
                limits.maxRootFields,
              ),
            );
          if (s.cost > limits.maxComplexity)
            context.reportError(
              refuse(
                `${name} has complexity ${s.cost}, more than the limit of ${limits.maxComplexity} (each field costs 1, predict 10, recommend and the plan* solvers 100): split it into smaller requests`,
                op,
                'maxComplexity',
                s.cost,
                limits.maxComplexity,
              ),
            );
        },
      },
      Document: {
        leave() {
          if (aliases > limits.maxAliases)
            context.reportError(
              refuse(
                `the document has ${aliases} aliased fields, more than the limit of ${limits.maxAliases}`,
                undefined,
                'maxAliases',
                aliases,
                limits.maxAliases,
              ),
            );
        },
      },
    };
  };
}

// ------------------------------------------------------------------ variables, before coercion
//
// graphql-js coerces the variables against the schema before anything else looks at them, and
// every error it reports prints the offending object whole: a 1 MB object of 50,000 unknown keys
// came back as a 36-44 MB error after seconds of CPU, and a million-entry layer list was coerced
// (53 s, 1.3 GB) before the resolver's 10,000-layer check. So the JSON variables are walked once,
// iteratively, before GraphQL sees them, against limits no valid request comes near.

/** Most keys one object in the variables may have: the widest input type has far fewer fields (a test checks). */
export const MAX_INPUT_KEYS = 100;
/** Longest list in the variables: the longest list any input takes (a layer list, IMPORT_LIMITS.layers). */
export const MAX_INPUT_LIST = 10_000;
/** Most values (numbers, strings, lists, objects) in all the variables together. */
export const MAX_INPUT_VALUES = 500_000;
/** Longest error message sent; the rest is cut (graphql-js prints whole input objects into its messages). */
export const MAX_ERROR_MESSAGE_CHARS = 2000;

export interface VariablesRefusal {
  /** Where, as `$name.field[3].field`. */
  path: string;
  message: string;
}

/** The first way `variables` breaks the limits above (or holds a number that overflowed to Infinity), or undefined. */
export function variablesRefusal(variables: unknown): VariablesRefusal | undefined {
  if (variables === null || typeof variables !== 'object') return undefined;
  const stack: [unknown, string][] = [[variables, '$']];
  let values = 0;
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (++values > MAX_INPUT_VALUES)
      return {
        path: '$',
        message: `the variables hold more than ${MAX_INPUT_VALUES} values; no input of this API takes that many`,
      };
    if (typeof v === 'number') {
      // JSON.parse turns 1e999 into Infinity; GraphQL would say "cannot represent non numeric value".
      if (!Number.isFinite(v))
        return {
          path,
          message: `${path}: the number is beyond the ±1.8e308 a double holds (it was read as ${v})`,
        };
    } else if (Array.isArray(v)) {
      if (v.length > MAX_INPUT_LIST)
        return {
          path,
          message: `${path}: a list of ${v.length} entries; no input takes more than ${MAX_INPUT_LIST}`,
        };
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (keys.length > MAX_INPUT_KEYS)
        return {
          path,
          message: `${path}: an object with ${keys.length} keys; no input type has more than ${MAX_INPUT_KEYS} fields (first keys: ${keys
            .slice(0, 5)
            .map((k) => JSON.stringify(k.slice(0, 40)))
            .join(', ')})`,
        };
      for (let i = keys.length - 1; i >= 0; i--) {
        const name = keys[i].slice(0, 60);
        stack.push([(v as Record<string, unknown>)[keys[i]], path === '$' ? `$${name}` : `${path}.${name}`]);
      }
    }
  }
  return undefined;
}

/** A message cut to MAX_ERROR_MESSAGE_CHARS, saying how much was cut. */
export function cappedMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}... (${message.length - MAX_ERROR_MESSAGE_CHARS} more characters cut)`;
}
