/**
 * Methods and notifications that differ between the two protocol eras: what 2026-07-28 removed
 * from the handshake era, and how its `subscriptions/listen` opts in to list changes.
 */

/** Handshake-era methods that 2026-07-28 removed (changelog, major changes 2, 4 and 5). */
export const HANDSHAKE_ONLY_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

/**
 * The notifications a client of 2026-07-28 opts in to on a `subscriptions/listen` stream
 * (schema `SubscriptionFilter`, basic/patterns/subscriptions).
 */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  /** `notifications/resources/updated` for these URIs; replaces `resources/subscribe`. */
  resourceSubscriptions?: string[];
}

/** The list-change notifications, by the filter flag a subscription opts in to each with. */
export const LIST_CHANGED: Readonly<Record<string, keyof SubscriptionFilter>> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
};
