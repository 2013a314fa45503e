-- AlterTable
ALTER TABLE "Draft" ADD COLUMN     "ccAddresses" JSONB NOT NULL DEFAULT '[]';
