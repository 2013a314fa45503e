import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.ts';

export interface DirectoryLock {
  release(): Promise<void>;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A pid file that keeps a second process away from a folder. A lock left by a dead process is
 * taken over, so a crash never needs manual clean-up.
 */
export async function acquireDirectoryLock(dir: string, name: string): Promise<DirectoryLock> {
  const file = path.join(dir, `${name}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return { release: () => rm(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new AppError(
          'DB_LOCKED',
          `The embedded database in ${dir} is in use by process ${holder}. Run everything in one process ` +
            '(`support-agent start`), or set DATABASE_URL to use PostgreSQL from several processes.',
        );
      }
      await rm(file, { force: true });
    }
  }
  throw new AppError('DB_LOCKED', `Could not lock ${file}`);
}
