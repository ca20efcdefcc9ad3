// SchemaSet: ids become components; a schema that reads differently as a request (input) and as a
// response (output) gets a separate `<id>Input` component, and so does whatever refers to it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SchemaSet } from '../src/http/openapi/schemas.js';

// Strict: it refuses unknown keys as a request and has none as a response, so both read the same.
const Plain = z.strictObject({ name: z.string() }).meta({ id: 'TestPlain' });
const WithDefault = z.object({ unit: z.enum(['request', 'token']).default('request') }).meta({ id: 'TestWithDefault' });
const Parent = z.strictObject({ child: WithDefault, plain: Plain }).meta({ id: 'TestParent' });
// Stripping: extra keys are accepted as a request, and absent from a response.
const Loose = z.object({ name: z.string() }).meta({ id: 'TestLoose' });

describe('SchemaSet', () => {
  it('references an id as a component, once for both directions when it reads the same', () => {
    const set = new SchemaSet();
    const asInput = set.add(z.object({ a: Plain }), 'input');
    const asOutput = set.add(Plain, 'output');
    const components = set.build();
    expect(asOutput()).toEqual({ $ref: '#/components/schemas/TestPlain' });
    expect(asInput()).toMatchObject({ properties: { a: { $ref: '#/components/schemas/TestPlain' } } });
    expect(Object.keys(components).filter((k) => k.startsWith('TestPlain'))).toEqual(['TestPlain']);
  });

  it('splits an id whose input differs (a default makes a field optional), and its parents', () => {
    const set = new SchemaSet();
    const request = set.add(Parent, 'input');
    const response = set.add(Parent, 'output');
    const components = set.build();
    expect(response()).toEqual({ $ref: '#/components/schemas/TestParent' });
    expect(request()).toEqual({ $ref: '#/components/schemas/TestParentInput' });
    expect(components['TestWithDefault']).toMatchObject({ required: ['unit'] });
    expect(components['TestWithDefaultInput']).not.toHaveProperty('required');
    expect(components['TestParentInput']).toMatchObject({
      properties: {
        child: { $ref: '#/components/schemas/TestWithDefaultInput' },
        plain: { $ref: '#/components/schemas/TestPlain' },
      },
    });
    expect(components['TestPlainInput']).toBeUndefined();
  });

  it('splits a stripping object: additional properties are allowed in, absent out', () => {
    const set = new SchemaSet();
    set.add(Loose, 'input');
    set.add(Loose, 'output');
    const components = set.build();
    expect(components['TestLoose']).toMatchObject({ additionalProperties: false });
    expect(components['TestLooseInput']).not.toHaveProperty('additionalProperties');
  });
});
