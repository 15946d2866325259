/**
 * What `spec.oauth` adds to a server's bridge, stdio or proxy mode alike: the --oauth-* flags,
 * and the introspection credentials as files only the bridge reads (re-read when the Secret
 * changes, so not part of the pod checksum). The per-tool scopes travel in the policy file
 * (src/bridge/policy/gate.ts).
 */

import type { V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import {
  OAUTH_CLIENT_ID_KEY,
  OAUTH_CLIENT_SECRET_KEY,
  OAUTH_DEFAULT_CLOCK_SKEW,
} from '../../api/v1alpha1/oauth.ts';
import type { StoredMCPServer } from '../../api/v1alpha1/stored.ts';
import type { BridgeSettings } from '../../bridge/pod-contract.ts';

const INTROSPECTION_VOLUME = 'oauth-introspection';
const INTROSPECTION_MOUNT_PATH = '/var/run/secrets/mcp-operator/oauth-introspection';

type OAuthSettings = Pick<
  BridgeSettings,
  'oauthIssuer' | 'oauthResource' | 'oauthScopes' | 'oauthClockSkew' | 'oauthIntrospectionDir'
>;

export function oauthBridgeSettings(server: StoredMCPServer): OAuthSettings {
  const oauth = server.spec.oauth;
  if (!oauth) return {};
  return {
    oauthIssuer: oauth.issuer,
    oauthResource: oauth.resource,
    ...(oauth.scopes?.length ? { oauthScopes: oauth.scopes.join(' ') } : {}),
    oauthClockSkew: oauth.clockSkew ?? OAUTH_DEFAULT_CLOCK_SKEW,
    ...(oauth.introspection ? { oauthIntrospectionDir: INTROSPECTION_MOUNT_PATH } : {}),
  };
}

export function oauthBridgeVolumes(
  server: StoredMCPServer,
  secretFileMode: number,
): { volume: V1Volume; mount: V1VolumeMount }[] {
  const secretRef = server.spec.oauth?.introspection?.secretRef;
  if (!secretRef) return [];
  return [
    {
      volume: {
        name: INTROSPECTION_VOLUME,
        secret: {
          secretName: secretRef.name,
          items: [OAUTH_CLIENT_ID_KEY, OAUTH_CLIENT_SECRET_KEY].map((key) => ({ key, path: key })),
          defaultMode: secretFileMode,
        },
      },
      mount: { name: INTROSPECTION_VOLUME, mountPath: INTROSPECTION_MOUNT_PATH, readOnly: true },
    },
  ];
}
