/**
 * Schema builders for Kubernetes structural schemas, on top of TypeBox. TypeBox gives us the
 * static type and the JSON schema from one definition; these helpers produce the shapes that
 * TypeBox writes differently from what the API server accepts (enums as `type` + `enum`
 * instead of `anyOf` of literals, maps as `additionalProperties` instead of
 * `patternProperties`, int-or-string quantities) and attach CEL rules.
 *
 * Structural schema rules: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 */

import { Type, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

/**
 * A CEL validation rule (`x-kubernetes-validations`). `fieldPath` points the error at a child
 * field so that `kubectl apply` reports `spec.port: ...` instead of `spec: ...`.
 * https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules
 */
export interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?:
    'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Schema options plus the Kubernetes extensions we use. */
export interface KubeOptions extends SchemaOptions {
  description: string;
  'x-kubernetes-validations'?: CelRule[];
}

/** A string restricted to `values`, written as `type: string` + `enum` (structural). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: KubeOptions,
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A map from string keys to strings (labels, annotations, node selectors). */
export function StringMap(
  options: KubeOptions & { maxProperties?: number },
): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({
    ...options,
    type: 'object',
    additionalProperties: { type: 'string' },
  });
}

/**
 * An object whose content the API server keeps as is. Only for values that are arbitrary JSON
 * by nature (a tool's JSON Schema), never to avoid writing a schema.
 */
export function FreeForm(options: KubeOptions): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({
    ...options,
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

/** resource.Quantity as the core API writes it: an integer or a string such as `500m`, `1Gi`. */
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

export function Quantity(options: KubeOptions): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    ...options,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  });
}

/**
 * Go-style duration (`30s`, `5m`, `1h30m`, `1.5h`), the form `kubectl` users know from core
 * fields such as `terminationGracePeriod` flags. CEL's `duration()` parses the same syntax
 * (minus `µs`), so one rule checks syntax first and bounds second; `&&` short-circuits, so a
 * malformed value yields this message and not a CEL runtime error.
 */
export const DURATION_PATTERN = '^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$';

export interface DurationBounds {
  /** The field's path as the user writes it, for the message (`spec.discovery.interval`). */
  path: string;
  min: string;
  max: string;
  default?: string;
  description: string;
}

export function Duration(bounds: DurationBounds): TUnsafe<string> {
  const { path, min, max, description } = bounds;
  return Type.Unsafe<string>({
    description,
    type: 'string',
    maxLength: 32,
    ...(bounds.default === undefined ? {} : { default: bounds.default }),
    'x-kubernetes-validations': [
      {
        rule: `self.matches('${DURATION_PATTERN}') && duration(self) >= duration('${min}') && duration(self) <= duration('${max}')`,
        message: `${path} must be a duration such as 30s, 5m or 1h30m, from ${min} to ${max}`,
      },
    ],
  });
}
