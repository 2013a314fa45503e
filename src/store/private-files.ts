/**
 * DATA_DIR holds the embedded database (mail, profiles, drafts): only the agent's own user may
 * read it. The folder is created 0700; an existing folder of ours that is looser is tightened; one
 * that belongs to another user is refused (tightening it would lock that user out, leaving it
 * would leave our data readable to them).
 *
 * PGlite ignores the process umask for the files it unpacks on first start (968 files of its
 * template database come out mode 0666 whatever the umask) and its own C library writes a few
 * files (`pg_internal.init`) with its built-in umask 022. So the tree is walked and tightened after
 * opening and again at close; in between, the 0700 folder already keeps everyone else out.
 */
import { chmod, lstat, mkdir, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.ts';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** This process's user id (null where the platform has none, e.g. Windows: modes mean little there). */
function ownUid(): number | null {
  return typeof process.getuid === 'function' ? process.getuid() : null;
}

/**
 * Makes `dir` (DATA_DIR) a private folder: created 0700 when missing, tightened to 0700 when ours
 * and looser, refused when it belongs to another user or is not a folder.
 */
export async function ensurePrivateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST' || error.code === 'ENOTDIR') throw notAFolder(dir);
    throw error;
  });
  const info = await lstat(dir);
  if (info.isSymbolicLink()) {
    // A link is followed for the folder it names; that folder is what must be private.
    return ensurePrivateDirectory(await realpath(dir));
  }
  if (!info.isDirectory()) throw notAFolder(dir);
  const uid = ownUid();
  if (uid !== null && info.uid !== uid) {
    throw new AppError(
      'CONFIG_INVALID',
      `DATA_DIR=${dir} belongs to user ${info.uid}, not to this process's user ${uid}: the database would not be private. ` +
        `Run the agent as the folder's owner, or give it a folder of its own (chown ${uid} "${dir}").`,
    );
  }
  if ((info.mode & 0o777) !== PRIVATE_DIR_MODE) await chmod(dir, PRIVATE_DIR_MODE);
}

/**
 * Tightens every folder under `root` (and `root`) to 0700 and every file to 0600 where looser.
 * Symbolic links are never followed. Work is linear in the number of entries.
 */
export async function tightenTree(root: string): Promise<void> {
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    await tighten(dir, PRIVATE_DIR_MODE);
    const entries = (await readdir(dir, { withFileTypes: true }).catch(notFound)) ?? [];
    for (const entry of entries) if (entry.isDirectory()) pending.push(path.join(dir, entry.name));
    // One folder's files at a time, in parallel: PGlite's base/ folder alone holds hundreds.
    await Promise.all(entries.filter((e) => e.isFile()).map((e) => tighten(path.join(dir, e.name), PRIVATE_FILE_MODE)));
  }
}

async function tighten(file: string, mode: number): Promise<void> {
  const info = await lstat(file).catch(notFound);
  // A file PGlite removed meanwhile is gone, which is private enough.
  if (!info || (info.mode & 0o777 & ~mode) === 0) return;
  try {
    await chmod(file, info.mode & 0o777 & mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new AppError('CONFIG_INVALID', `Cannot make ${file} private (mode ${mode.toString(8)}): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function notAFolder(dir: string): AppError {
  return new AppError('CONFIG_INVALID', `DATA_DIR=${dir} is not a folder: set DATA_DIR to a folder of its own`);
}

function notFound(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}
