// oidc-provider's own in-memory store, which its type definitions do not describe.
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { AdapterConstructor } from 'oidc-provider';
  /** The store the provider uses when given none, without its warning for production. */
  export function createMemoryAdapter(clockToleranceSeconds: number): AdapterConstructor;
}
