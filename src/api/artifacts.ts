/**
 * Files generated from the API schema, with the function that produces each. `npm run crds`
 * writes them; `npm run crds:check` and test/api fail when a committed one is stale.
 */

import { CRD_FILE, crdYaml } from './crd.ts';
import { apiDocs } from './docs.ts';

export const GENERATED_FILES: Readonly<Record<string, () => string>> = {
  [CRD_FILE]: crdYaml,
  // The chart applies the CRD as a template (see charts/mcp-operator/templates/crd.yaml), and a
  // chart can only read files inside itself.
  [`charts/mcp-operator/files/${CRD_FILE}`]: crdYaml,
  'docs/api.md': apiDocs,
};
