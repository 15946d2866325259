/**
 * Starts the console as the user: decides which namespaces to show (every one when the user
 * may list MCPServers cluster-wide, else those asked for, else the context's), which kinds it
 * can watch there, fills its caches, and listens on 127.0.0.1.
 */

import type { Logger } from 'pino';
import { API_GROUP, PLURAL } from '../api/names.ts';
import { connect } from '../kube/client.ts';
import type { ClientConfig } from '../kube/config.ts';
import { Access, whoAmI } from './access.ts';
import { newSecrets } from './guard.ts';
import { consoleServer } from './server.ts';
import { ConsoleWatch } from './watch.ts';

export interface StartOptions {
  clientConfig: ClientConfig;
  /** Namespaces asked for (-n); none: every namespace the user may list, else the context's. */
  namespaces: readonly string[];
  /** 0 picks a free port. */
  port: number;
  log: Logger;
}

export interface RunningConsole {
  /** The URL to open, with the token. */
  url: string;
  port: number;
  /** Who the API server says the console acts as (SelfSubjectReview), when it says. */
  user: string | undefined;
  watch: ConsoleWatch;
  close(): Promise<void>;
}

export async function startConsole(o: StartOptions): Promise<RunningConsole> {
  const client = connect(o.clientConfig);
  const access = new Access(client);
  try {
    const namespaces = await scope(access, o);
    const may = (resource: string, group = '') =>
      everywhere(namespaces, (namespace) =>
        Promise.all(
          ['list', 'watch'].map((verb) => access.allowed({ verb, group, resource, namespace })),
        ).then((answers) => answers.every(Boolean)),
      );
    const [events, snapshots, user] = await Promise.all([
      may('events'),
      may('configmaps'),
      whoAmI(client),
    ]);
    const limits = [
      ...(events ? [] : ['Events are not shown: your credentials may not list and watch them.']),
      ...(snapshots
        ? []
        : ['Snapshots are not followed live: your credentials may not list and watch ConfigMaps.']),
    ];
    const watch = new ConsoleWatch({ client, namespaces, events, snapshots, log: o.log });
    await watch.start();
    const secrets = newSecrets();
    const server = consoleServer({
      client,
      watch,
      access,
      secrets,
      session: { user, context: o.clientConfig.context ?? '', namespaces: [...namespaces], limits },
      log: o.log,
    });
    const port = await server.listen(o.port);
    return {
      url: `http://127.0.0.1:${port}/?token=${secrets.token}`,
      port,
      user,
      watch,
      async close() {
        await server.close();
        await watch.stop();
        client.close();
      },
    };
  } catch (error) {
    client.close();
    throw error;
  }
}

/** [] (every namespace) when the user may list MCPServers cluster-wide and asked for no others. */
async function scope(access: Access, o: StartOptions): Promise<readonly string[]> {
  if (o.namespaces.length > 0) return o.namespaces;
  const clusterWide = await access.allowed({ verb: 'list', group: API_GROUP, resource: PLURAL });
  return clusterWide ? [] : [o.clientConfig.namespace ?? 'default'];
}

async function everywhere(
  namespaces: readonly string[],
  check: (namespace: string | undefined) => Promise<boolean>,
): Promise<boolean> {
  const scopes = namespaces.length === 0 ? [undefined] : namespaces;
  return (await Promise.all(scopes.map(check))).every(Boolean);
}
