/**
 * Installs the Debian packages the tests need and the npm registry cannot provide, so that
 * `npm test` works on a fresh machine: every external command a test spawns comes from here, from
 * npm, or from the Go modules in test/cluster/go.
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

const PACKAGES: SystemPackage[] = [
  // The static busybox our image ships; the supervisor tests run it (test/bridge/pod.ts).
  { debian: 'busybox-static', provides: '/bin/busybox' },
  // The supervisor script is linted with it (test/bridge/supervisor.test.ts).
  { debian: 'shellcheck', provides: '/usr/bin/shellcheck' },
  // The container engine that builds our image and the stand-in base images.
  { debian: 'docker.io', provides: '/usr/sbin/dockerd' },
  // Base images are made locally from Debian packages: no image registry is reachable.
  { debian: 'debootstrap', provides: '/usr/sbin/debootstrap' },
  // The real node: its container runtime, the OCI runtime, pod networking, Service rules.
  { debian: 'containerd', provides: '/usr/bin/containerd' },
  { debian: 'runc', provides: '/usr/sbin/runc' },
  { debian: 'containernetworking-plugins', provides: '/usr/lib/cni/bridge' },
  { debian: 'iptables', provides: '/usr/sbin/iptables' },
  { debian: 'iproute2', provides: '/usr/sbin/ip' },
  // The real node's pause image is kubernetes' pause.c, compiled statically.
  { debian: 'gcc', provides: '/usr/bin/gcc' },
  { debian: 'libc6-dev', provides: '/usr/lib/x86_64-linux-gnu/libc.a' },
  // The test cluster's certificates.
  { debian: 'openssl', provides: '/usr/bin/openssl' },
  // The real browser the console's tests and bench drive (test/console/browser.ts).
  { debian: 'chromium', provides: '/usr/bin/chromium' },
];

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
