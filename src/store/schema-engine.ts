/**
 * Prisma's schema engine as WebAssembly, so migrations work without the native engine download
 * that is impossible offline. The package's ESM entry imports a `.wasm` file, which Node 20 cannot
 * import, so the glue module is loaded and the module instantiated here by hand.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type * as Engine from '@prisma/schema-engine-wasm';

type WasmExports = Record<string, unknown>;
type EngineModule = typeof Engine & { __wbg_set_wasm(exports: WasmExports): void };
// Node 20's type definitions leave out the WebAssembly global; this is the part used here.
interface WebAssemblyApi {
  instantiate(bytes: Uint8Array, imports: Record<string, unknown>): Promise<{ instance: { exports: WasmExports } }>;
}
const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
export type SchemaEngine = Engine.SchemaEngine;

let loaded: Promise<EngineModule> | undefined;

async function loadEngineModule(): Promise<EngineModule> {
  const require = createRequire(import.meta.url);
  const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const glue = (await import(pathToFileURL(gluePath).href)) as EngineModule;
  const wasmBytes = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
  // The engine's own timers (its connection pool's idle timeout, about 10 s) must not keep the
  // process alive: an agent stopped right after migrating would wait for them.
  const imports: Record<string, unknown> = { ...glue };
  for (const [name, fn] of Object.entries(glue)) {
    if (name.startsWith('__wbg_setTimeout_') && typeof fn === 'function') {
      imports[name] = (...args: unknown[]) => {
        const timer: unknown = (fn as (...a: unknown[]) => unknown)(...args);
        if (timer && typeof (timer as { unref?: unknown }).unref === 'function') (timer as { unref(): void }).unref();
        return timer;
      };
    }
  }
  const { instance } = await webAssembly.instantiate(wasmBytes, { './schema_engine_bg.js': imports });
  glue.__wbg_set_wasm(instance.exports);
  const start = instance.exports['__wbindgen_start'];
  if (typeof start === 'function') start();
  return glue;
}

/** Opens a schema engine bound to one database (through its driver adapter) and one schema file. */
export async function openSchemaEngine(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  schema: { path: string; content: string },
  onLog: (line: string) => void = () => {},
): Promise<SchemaEngine> {
  loaded ??= loadEngineModule();
  const engine = await loaded;
  const bound = bindMigrationAwareSqlAdapterFactory(adapterFactory);
  return engine.SchemaEngine.new({ datamodels: [[schema.path, schema.content]] }, onLog, bound);
}
