/**
 * A real headless Chromium for end-to-end tests: Debian's `chromium` driven by playwright-core
 * (which downloads no browser of its own). Screenshots go to test/artifacts/ for a person to look at.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const ARTIFACTS_DIR = path.resolve(import.meta.dirname, '../artifacts');

/** Without the background-networking flags Chromium tries to reach Google's services and stalls here. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `extraFlags`: more Chromium switches, e.g. `--host-resolver-rules=MAP support.test 127.0.0.1`. */
export function launchBrowser(extraFlags: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...FLAGS, ...extraFlags] });
}

/** Saves a PNG (the whole page unless `fullPage: false`) as test/artifacts/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? true });
  return file;
}

/**
 * playwright-core has no web-first `expect`; these wait for the element first, so assertions
 * after a click see the page the click led to.
 */
export async function visible(locator: Locator, timeout = 10_000): Promise<Locator> {
  const first = locator.first();
  await first.waitFor({ state: 'visible', timeout });
  return first;
}

/** The visible text of the first match, once it is visible. */
export async function textOf(locator: Locator, timeout = 10_000): Promise<string> {
  return (await (await visible(locator, timeout)).innerText()).trim();
}
