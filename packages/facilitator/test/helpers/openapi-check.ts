// Every answer the end-to-end suite receives, checked against the service's own OpenAPI document
// with a JSON Schema 2020-12 validator: the harness installs this on each facilitator
// it starts, so a status or body that drifts from the document fails the test file that saw it.
import type { FastifyInstance } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiPath } from '../../src/http/openapi/document.js';

const DOC_ID = 'https://svc.test/openapi.json';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

export interface ResponseCheck {
  /** Loads the document the server serves; answers before this are not checked. */
  load(baseUrl: string, headers?: Record<string, string>): Promise<void>;
  /** What did not match the document: one line each. */
  readonly violations: string[];
  /** How many answers were checked against a schema. */
  readonly checked: number;
}

/** Installs the check as an onSend hook (before the server listens). */
export function installResponseCheck(app: FastifyInstance): ResponseCheck {
  let doc: { paths: Record<string, Record<string, Operation>> } | null = null;
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats.default(ajv);
  const compiled = new Map<string, ValidateFunction | null>();
  const violations: string[] = [];
  let checked = 0;

  const validatorFor = (key: string, schema: unknown): ValidateFunction => {
    let fn = compiled.get(key);
    if (!fn) {
      // Refs inside the document's responses point at its components.
      const rebased = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`),
      ) as object;
      fn = ajv.compile(rebased);
      compiled.set(key, fn);
    }
    return fn;
  };

  app.addHook('onSend', async (request, reply, payload) => {
    const url = request.routeOptions.url;
    if (!doc || url === undefined) return payload;
    const path = openApiPath(url);
    const method = request.method.toLowerCase();
    const operation = doc.paths[path]?.[method];
    if (!operation) return payload; // not a documented route (unknown URL, HEAD)
    const status = String(reply.statusCode);
    const documented = operation.responses[status] ?? operation.responses['default'];
    const where = `${request.method} ${path} → ${status}`;
    if (!documented) {
      violations.push(`${where}: status not in the document`);
      return payload;
    }
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('application/json') || typeof payload !== 'string') return payload;
    const schema = documented.content?.['application/json']?.schema;
    if (schema === undefined) {
      violations.push(`${where}: a JSON body the document does not describe`);
      return payload;
    }
    const validate = validatorFor(`${where}`, schema);
    checked++;
    if (!validate(JSON.parse(payload)))
      violations.push(`${where}: ${ajv.errorsText(validate.errors)} — ${payload.slice(0, 300)}`);
    return payload;
  });

  return {
    async load(baseUrl, headers = {}) {
      const loaded = (await (await fetch(`${baseUrl}/openapi.json`, { headers })).json()) as {
        paths: Record<string, Record<string, Operation>>;
      };
      ajv.addSchema({ ...loaded, $id: DOC_ID });
      doc = loaded;
    },
    get violations() {
      return violations;
    },
    get checked() {
      return checked;
    },
  };
}
