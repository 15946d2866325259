/**
 * What the chart's pod gives the operator, for the operator run as a local process
 * (test/support/operator.ts): a ServiceAccount's token from the TokenRequest API.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import type { LogLine } from '../support/operator.ts';

/**
 * A kubeconfig that authenticates with a fresh token of `namespace/serviceAccount` (TokenRequest
 * API), trusting `caData` (base64 PEM) for an https `server`.
 */
export async function serviceAccountKubeconfig(
  admin: KubeConfig,
  o: { namespace: string; serviceAccount: string; server: string; caData: string },
): Promise<string> {
  const request = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: o.serviceAccount,
    namespace: o.namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  // Plain http (the recording proxy on loopback) has no certificate to verify; client-node
  // insists on being told so.
  const tls = o.server.startsWith('https:')
    ? { 'certificate-authority-data': o.caData }
    : { 'insecure-skip-tls-verify': true };
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: o.server, ...tls } }],
    users: [{ name: o.serviceAccount, user: { token: request.status!.token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: o.serviceAccount } }],
    'current-context': 'test',
  });
}

/** A log line reporting that the API server refused `verb` on `resource`. */
export const forbidden = (verb: string, resource: string) => (line: LogLine) =>
  JSON.stringify(line).includes(`cannot ${verb} resource \\"${resource}\\"`);
