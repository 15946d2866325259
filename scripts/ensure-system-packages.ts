/**
 * Installs the few Debian packages the tests need and the npm registry cannot provide, so that
 * `npm test` works on a fresh machine. Today that is one: `busybox-static`, the same static
 * busybox our image ships, which the supervisor tests run (test/bridge/pod.ts).
 *
 * Installs only when a package is missing and apt-get can run (root); otherwise says what to
 * install and fails, since the tests that need it would fail later with less context.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

interface SystemPackage {
  debian: string;
  /** A file the package provides: present means installed. */
  provides: string;
}

const PACKAGES: SystemPackage[] = [{ debian: 'busybox-static', provides: '/bin/busybox' }];

function canRunApt(): boolean {
  return process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
}

function main(): number {
  const missing = PACKAGES.filter((pkg) => !existsSync(pkg.provides));
  if (missing.length === 0) return 0;
  const names = missing.map((pkg) => pkg.debian);
  if (!canRunApt()) {
    console.error(
      `The tests need these Debian packages: ${names.join(' ')}. Install them with\n` +
        `  sudo apt-get install -y ${names.join(' ')}`,
    );
    return 1;
  }
  console.error(`Installing ${names.join(' ')} (apt-get)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...names], {
    stdio: 'inherit',
    env,
  });
  return 0;
}

process.exitCode = main();
