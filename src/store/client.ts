import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from './database.ts';

/** A Prisma client or an open transaction: repository functions accept either. */
export type DbClient = Db | Prisma.TransactionClient;

/** True for a unique-constraint violation (P2002), e.g. when a concurrent process stored the same row first. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

export function jsonStringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
