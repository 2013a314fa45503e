-- AlterTable
ALTER TABLE "Thread" ADD COLUMN     "pinnedItems" JSONB NOT NULL DEFAULT '[]';
