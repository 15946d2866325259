/**
 * The page's calls to its own server: JSON in and out, the CSRF token on every write, and an
 * error that carries the server's message for the reader.
 */

import type { ApiError, Session } from './api-types.ts';

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, body: ApiError) {
    super(body.message);
    this.status = status;
    this.code = body.code;
  }
}

let session: Session | undefined;

async function answer<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => ({}))) as T | ApiError;
  if (!response.ok) {
    const error = body as Partial<ApiError>;
    throw new ApiFailure(response.status, {
      code: error.code ?? 'CONSOLE_REQUEST',
      message: error.message ?? `The console answered ${response.status}.`,
    });
  }
  return body as T;
}

export async function getJson<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: { accept: 'application/json' } }));
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const csrf = (await currentSession()).csrf;
  return answer<T>(
    await fetch(path, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        'x-console-csrf': csrf,
      },
      body: JSON.stringify(body),
    }),
  );
}

export async function currentSession(): Promise<Session> {
  session ??= await getJson<Session>('/api/session');
  return session;
}

/** `/api/servers/<ns>/<name>` and below, each part encoded. */
export function serverPath(namespace: string, name: string, rest = ''): string {
  return `/api/servers/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${rest}`;
}
