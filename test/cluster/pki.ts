/**
 * Certificates and keys for a throwaway control plane: a CA, the API server's serving
 * certificate, an admin client certificate (group system:masters) and the service-account
 * signing key pair.
 *
 * X.509 certificates are made with the `openssl` CLI: node:crypto can parse certificates but not
 * issue them, and openssl ships with the machine image, so no dependency is needed for it. Keys
 * are ECDSA P-256, which every component accepts and which is fast to generate.
 */
import { execFile } from 'node:child_process';
import { generateKeyPair } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const generateKeyPairAsync = promisify(generateKeyPair);

export interface Pki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

/**
 * Names the API server answers to: loopback, the in-cluster `kubernetes` Service, and any address
 * it is advertised at (the real node's pods reach it there).
 */
export function servingNames(serviceIp: string, advertisedIps: readonly string[] = []): string[] {
  return [
    'IP:127.0.0.1',
    `IP:${serviceIp}`,
    ...advertisedIps.map((ip) => `IP:${ip}`),
    'DNS:localhost',
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
  ];
}

export async function createPki(
  dir: string,
  serviceIp: string,
  advertisedIps: readonly string[] = [],
): Promise<Pki> {
  const pki: Pki = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
  await openssl(pki.caCert, pki.caKey, '/CN=mcp-operator-test-ca', [
    'basicConstraints=critical,CA:TRUE',
    'keyUsage=critical,keyCertSign,cRLSign',
    'subjectKeyIdentifier=hash',
  ]);
  const signedByCa = ['-CA', pki.caCert, '-CAkey', pki.caKey];
  const leaf = ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature'];
  await Promise.all([
    openssl(
      pki.servingCert,
      pki.servingKey,
      '/CN=kube-apiserver',
      [
        ...leaf,
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${servingNames(serviceIp, advertisedIps).join(',')}`,
      ],
      signedByCa,
    ),
    // The API server maps O to groups: system:masters may do anything and bypasses RBAC.
    openssl(
      pki.adminCert,
      pki.adminKey,
      '/O=system:masters/CN=mcp-operator-test-admin',
      [...leaf, 'extendedKeyUsage=clientAuth'],
      signedByCa,
    ),
    writeServiceAccountKeys(pki),
  ]);
  return pki;
}

/**
 * A client certificate signed by the cluster's CA, for a component that is not an admin (the
 * kubelet as `system:node:<name>` in `system:nodes`, kube-proxy): the API server authorizes it as
 * that identity. Returns the certificate and key paths.
 */
export async function issueClientCertificate(
  pki: Pki,
  name: string,
  subject: string,
): Promise<{ cert: string; key: string }> {
  const cert = join(dirname(pki.caCert), `${name}.crt`);
  const key = join(dirname(pki.caCert), `${name}.key`);
  await openssl(
    cert,
    key,
    subject,
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=clientAuth',
    ],
    ['-CA', pki.caCert, '-CAkey', pki.caKey],
  );
  return { cert, key };
}

/** One `openssl req -x509` call: a new key and a certificate, self-signed or signed by `signer`. */
async function openssl(
  cert: string,
  key: string,
  subject: string,
  extensions: string[],
  signer: string[] = [],
): Promise<void> {
  const args = [
    'req',
    '-x509',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-noenc',
    '-days',
    '365',
    // An empty config: only the extensions given here, none from the system's openssl.cnf.
    '-config',
    '/dev/null',
    '-subj',
    subject,
    '-keyout',
    key,
    '-out',
    cert,
    ...signer,
    ...extensions.flatMap((extension) => ['-addext', extension]),
  ];
  try {
    await execFileAsync('openssl', args);
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(
      code === 'ENOENT'
        ? 'the test control plane needs the `openssl` command to issue its certificates; install OpenSSL 3'
        : `openssl failed to issue ${cert}: ${stderr ?? String(error)}`,
      { cause: error },
    );
  }
}

async function writeServiceAccountKeys(pki: Pki): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPairAsync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  await writeFile(pki.serviceAccountKey, privateKey, { mode: 0o600 });
  await writeFile(pki.serviceAccountPub, publicKey);
}
