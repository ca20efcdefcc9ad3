// zod → JSON Schema 2020-12 for the OpenAPI document. Every schema that carries `.meta({ id })`
// becomes one entry of `components/schemas`, referenced with `$ref`, so a shared wire type (Error,
// Channel, Receipt…) is declared once in the document as it is in code (docs/architecture.md#one-source-for-wire-shapes).
//
// Requests are described as the schema's input (defaults make a field optional), responses as its
// output. When one id reads differently in the two directions, the request side gets `<id>Input`.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;
export type Io = 'input' | 'output';

const DEFS = '#/$defs/';
const COMPONENTS = '#/components/schemas/';

/** Collects the schemas of a document, then converts them all at once (one consistent set of ids). */
export class SchemaSet {
  private readonly uses: { schema: z.ZodType; io: Io }[] = [];
  private result: { slots: JsonSchema[]; components: Record<string, JsonSchema> } | null = null;

  /** Registers a schema; returns a handle that resolves to its JSON Schema after `build()`. */
  add(schema: z.ZodType, io: Io): () => JsonSchema {
    if (this.result) throw new Error('SchemaSet: add() after build()');
    const index = this.uses.push({ schema, io }) - 1;
    return () => {
      if (!this.result) throw new Error('SchemaSet: read before build()');
      return this.result.slots[index]!;
    };
  }

  /** Converts everything; returns `components/schemas`. */
  build(): Record<string, JsonSchema> {
    const output = this.convert('output');
    const input = this.convert('input');
    const inputNames = inputNaming(input.defs, output.defs);
    const outputNames = (id: string) => id;
    const components: Record<string, JsonSchema> = {};
    for (const [id, def] of Object.entries(output.defs)) components[id] = rewriteRefs(def, outputNames);
    for (const [id, def] of Object.entries(input.defs)) components[inputNames(id)] = rewriteRefs(def, inputNames);
    const slots = this.uses.map(({ io }, i) => {
      const converted = io === 'output' ? output.slots.get(i) : input.slots.get(i);
      return rewriteRefs(converted ?? {}, io === 'output' ? outputNames : inputNames);
    });
    this.result = { slots, components };
    return components;
  }

  /** One conversion per direction, through a wrapper object, so shared ids come out once. */
  private convert(io: Io): { slots: Map<number, JsonSchema>; defs: Record<string, JsonSchema> } {
    const shape: Record<string, z.ZodType> = {};
    this.uses.forEach((use, i) => {
      if (use.io === io) shape[`s${i}`] = use.schema;
    });
    const json = z.toJSONSchema(z.object(shape), { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
    const properties = (json['properties'] ?? {}) as Record<string, JsonSchema>;
    const slots = new Map(Object.entries(properties).map(([key, value]) => [Number(key.slice(1)), value]));
    return { slots, defs: (json['$defs'] ?? {}) as Record<string, JsonSchema> };
  }
}

/**
 * The component name of each input-side id: the plain id when it reads the same as the output
 * side (or has no output side), `<id>Input` otherwise. A def that points at a renamed def differs
 * too, so renaming repeats until nothing changes.
 */
function inputNaming(
  inputDefs: Record<string, JsonSchema>,
  outputDefs: Record<string, JsonSchema>,
): (id: string) => string {
  const renamed = new Set<string>();
  const name = (id: string) => (renamed.has(id) ? `${id}Input` : id);
  for (let changed = true; changed;) {
    changed = false;
    for (const [id, def] of Object.entries(inputDefs)) {
      const out = outputDefs[id];
      if (renamed.has(id) || out === undefined) continue;
      if (
        !isDeepStrictEqual(
          rewriteRefs(def, name),
          rewriteRefs(out, (i) => i),
        )
      ) {
        renamed.add(id);
        changed = true;
      }
    }
  }
  return name;
}

/** Points `#/$defs/<id>` references at `#/components/schemas/<name(id)>`. */
function rewriteRefs(value: JsonSchema, name: (id: string) => string): JsonSchema {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, inner]) => [
        k,
        k === '$ref' && typeof inner === 'string' && inner.startsWith(DEFS)
          ? COMPONENTS + name(inner.slice(DEFS.length))
          : walk(inner),
      ]),
    );
  };
  return walk(value) as JsonSchema;
}
