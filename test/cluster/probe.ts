/** Health probes for components that are starting up. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';

export interface Reply {
  status: number;
  body: string;
}

/**
 * GET with a short timeout. `tls` carries the CA and client certificate for the API server;
 * `insecure` is for the self-signed health ports of the controller manager and scheduler,
 * which serve nothing but `/healthz` to us.
 */
export type Tls = Pick<RequestOptions, 'ca' | 'cert' | 'key'> | 'insecure';

export function get(url: string, tls: Tls = {}): Promise<Reply> {
  const options: RequestOptions =
    tls === 'insecure' ? { rejectUnauthorized: false } : { ...tls, rejectUnauthorized: true };
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
