/**
 * A real browser for the console's tests and bench: Debian's Chromium
 * (scripts/ensure-system-packages.ts installs it), headless, driven by playwright-core over the
 * DevTools protocol. No DOM emulation. Each launch gets a fresh profile (playwright passes a
 * new temporary --user-data-dir and removes it on close; it refuses one in `args`) and no
 * network of its own beyond what the page asks for: no component updates, sync, QUIC or
 * background requests, so a test talks to the console on loopback and nothing else.
 */

import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.MCP_OPERATOR_CHROMIUM ?? '/usr/bin/chromium';

export interface RealBrowser {
  browser: Browser;
  /** A fresh context (cookies, storage) per user of the console. */
  context(options?: { bypassCSP?: boolean }): Promise<BrowserContext>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<RealBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    context: (options = {}) =>
      browser.newContext({ viewport: { width: 1400, height: 900 }, ...options }),
    close: () => browser.close(),
  };
}
