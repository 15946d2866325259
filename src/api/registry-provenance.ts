/**
 * Where an imported MCPServer came from: the MCP Registry entry `mcp-operator import` made it
 * from, as annotations on the MCPServer (metadata the user may read and edit, not spec the
 * controller acts on). `mcp-operator status` and the console show them; `mcp-operator
 * outdated` asks the registry named here whether a newer version exists.
 */

import { API_GROUP } from './names.ts';

/** The registry's API root, when the entry was looked up in a registry (not a file or URL). */
export const REGISTRY_URL_ANNOTATION = `${API_GROUP}/registry`;
/** The entry's server name, e.g. `io.github.modelcontextprotocol/server-filesystem`. */
export const REGISTRY_NAME_ANNOTATION = `${API_GROUP}/registry-name`;
/** The entry's version, the one imported. */
export const REGISTRY_VERSION_ANNOTATION = `${API_GROUP}/registry-version`;
/** The package chosen and its pin: `npm:@scope/pkg@1.2.3`, `pypi:pkg@1.2.3`, `oci:<image>`, `remote:<url>`. */
export const REGISTRY_PACKAGE_ANNOTATION = `${API_GROUP}/registry-package`;

export interface RegistryProvenance {
  /** Undefined for an entry read from a file or a URL. */
  registry: string | undefined;
  name: string;
  version: string;
  package: string | undefined;
}

/** The provenance an MCPServer's annotations record, or undefined when it was not imported. */
export function registryProvenance(
  annotations: Record<string, string> | undefined,
): RegistryProvenance | undefined {
  const name = annotations?.[REGISTRY_NAME_ANNOTATION];
  const version = annotations?.[REGISTRY_VERSION_ANNOTATION];
  if (name === undefined || version === undefined) return undefined;
  return {
    registry: annotations?.[REGISTRY_URL_ANNOTATION],
    name,
    version,
    package: annotations?.[REGISTRY_PACKAGE_ANNOTATION],
  };
}

/** The annotations that record `provenance`. */
export function provenanceAnnotations(provenance: RegistryProvenance): Record<string, string> {
  return {
    ...(provenance.registry === undefined
      ? {}
      : { [REGISTRY_URL_ANNOTATION]: provenance.registry }),
    [REGISTRY_NAME_ANNOTATION]: provenance.name,
    [REGISTRY_VERSION_ANNOTATION]: provenance.version,
    ...(provenance.package === undefined
      ? {}
      : { [REGISTRY_PACKAGE_ANNOTATION]: provenance.package }),
  };
}
