/**
 * Optional dependencies: installed by `npm install`, left out of the container image
 * (`npm prune --omit=optional` in the Dockerfile). @kubernetes/client-node (64 MB) is one: only
 * kubeconfig users with an exec plugin or auth-provider and `mcp-operator dev` load it, never
 * the in-cluster controller or the bridge.
 */
import { operatorError } from './errors.ts';

const OPTIONAL_PACKAGES = ['@kubernetes/client-node'];

/**
 * Runs `load` (an `import()` that reaches an optional package); when that package is not
 * installed, throws an OperatorError that says what needs it and how to install it.
 */
export async function importOptional<T>(load: () => Promise<T>, needs: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const missing = OPTIONAL_PACKAGES.find(
      (pkg) =>
        (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
        (error as Error).message.includes(`'${pkg}'`),
    );
    if (missing === undefined) throw error;
    throw operatorError('MCPOP_OPTIONAL_DEPENDENCY', missing, needs);
  }
}
