/**
 * Process entry point for the IMAP poller alone, exactly `support-agent poll`:
 * `node --import tsx workers/poller.ts`. Wiring only.
 */
import { main } from '../src/cli/main.ts';

process.exitCode = await main(['poll']);
