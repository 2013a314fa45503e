/**
 * Customers (entities) as the console and the CLI list and show them: who they are, their
 * addresses, threads and open commitments. Facts are in `facts.ts`, the decision trail in
 * `decision-trail.ts`.
 */
import type { DbClient } from './client.ts';

export interface CustomerSummary {
  id: string;
  kind: string;
  key: string;
  name: string | null;
  updatedAt: Date;
  addresses: string[];
  threadCount: number;
  activeFactCount: number;
}

export interface CustomerRecord {
  id: string;
  kind: string;
  key: string;
  name: string | null;
  createdAt: Date;
  /** Linked addresses, alphabetical. */
  addresses: string[];
}

export interface CustomerThread {
  id: string;
  subject: string;
  topic: string | null;
  status: string;
  lastMessageAt: Date;
  closedAt: Date | null;
}

/**
 * Customers, most recently active first. A search matches key or name case-insensitively, or
 * part of an address (addresses are stored case-folded).
 */
export async function listCustomers(db: DbClient, search: string | undefined, limit: number): Promise<CustomerSummary[]> {
  const where = search
    ? {
        OR: [
          { key: { contains: search, mode: 'insensitive' as const } },
          { name: { contains: search, mode: 'insensitive' as const } },
          { addresses: { some: { address: { contains: search.toLowerCase() } } } },
        ],
      }
    : {};
  const rows = await db.entity.findMany({
    where,
    orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
    take: limit,
    select: {
      id: true,
      kind: true,
      key: true,
      name: true,
      updatedAt: true,
      addresses: { select: { address: true }, orderBy: { address: 'asc' } },
      _count: { select: { threads: true, facts: { where: { status: 'active' } } } },
    },
  });
  return rows.map(({ addresses, _count, ...e }) => ({
    ...e,
    addresses: addresses.map((a) => a.address),
    threadCount: _count.threads,
    activeFactCount: _count.facts,
  }));
}

export async function loadCustomer(db: DbClient, entityId: string): Promise<CustomerRecord | null> {
  const row = await db.entity.findUnique({
    where: { id: entityId },
    select: {
      id: true,
      kind: true,
      key: true,
      name: true,
      createdAt: true,
      addresses: { orderBy: { address: 'asc' }, select: { address: true } },
    },
  });
  return row ? { ...row, addresses: row.addresses.map((a) => a.address) } : null;
}

export async function customerExists(db: DbClient, entityId: string): Promise<boolean> {
  return (await db.entity.count({ where: { id: entityId } })) > 0;
}

/** A customer's threads, most recent first. */
export async function customerThreads(db: DbClient, entityId: string, limit: number): Promise<CustomerThread[]> {
  return db.thread.findMany({
    where: { entityId },
    orderBy: { lastMessageAt: 'desc' },
    take: limit,
    select: { id: true, subject: true, topic: true, status: true, lastMessageAt: true, closedAt: true },
  });
}

/** What the erase confirmation shows: who it is and how much will go. */
export interface ErasurePreview {
  id: string;
  key: string;
  name: string | null;
  addresses: string[];
  counts: { threads: number; messages: number; facts: number; decisions: number };
}

export async function loadErasurePreview(db: DbClient, entityId: string): Promise<ErasurePreview | null> {
  const entity = await db.entity.findUnique({
    where: { id: entityId },
    include: {
      addresses: { select: { address: true }, orderBy: { address: 'asc' } },
      _count: { select: { threads: true, messages: true, facts: true, decisions: true } },
    },
  });
  if (!entity) return null;
  return { id: entity.id, key: entity.key, name: entity.name, addresses: entity.addresses.map((a) => a.address), counts: entity._count };
}
