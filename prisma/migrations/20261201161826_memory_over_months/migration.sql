-- AlterTable
ALTER TABLE "Commitment" ADD COLUMN     "closeEvidence" TEXT,
ADD COLUMN     "closedByMessageId" TEXT,
ADD COLUMN     "dueAt" TIMESTAMP(3),
ADD COLUMN     "sourceMessageId" TEXT,
ADD COLUMN     "tags" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "promotedBy" TEXT;

-- AlterTable
ALTER TABLE "ProfileFact" ADD COLUMN     "retiredAt" TIMESTAMP(3),
ADD COLUMN     "validFrom" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "PromotionRun" ADD COLUMN     "coveredMessageIds" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "error" TEXT;

-- Backfill: facts recorded before the ledger were valid from when they were recorded, and a
-- retired one stopped being believed when it stopped being valid. Messages of threads already
-- promoted were shown to a promotion pass (before passes were recorded per message).
-- (No semicolons in comments: the schema engine splits the file on them.)
UPDATE "ProfileFact" SET "validFrom" = "createdAt" WHERE "validFrom" IS NULL;
UPDATE "ProfileFact" SET "retiredAt" = "validUntil" WHERE "status" <> 'active' AND "retiredAt" IS NULL;
UPDATE "Message" m SET "promotedBy" = 'before-watermarks'
  FROM "Thread" t WHERE m."threadId" = t."id" AND t."needsPromotion" = false AND m."direction" = 'inbound';
UPDATE "Commitment" SET "status" = 'fulfilled' WHERE "status" = 'done';
