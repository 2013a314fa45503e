-- AlterTable
ALTER TABLE "Draft" ADD COLUMN     "imapUid" BIGINT,
ADD COLUMN     "imapUidValidity" BIGINT,
ADD COLUMN     "outcome" TEXT NOT NULL DEFAULT 'pending',
ADD COLUMN     "outcomeAt" TIMESTAMP(3),
ADD COLUMN     "outcomeMatch" TEXT,
ADD COLUMN     "outcomeMessageId" TEXT,
ADD COLUMN     "outcomeSimilarity" DOUBLE PRECISION;

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "author" TEXT NOT NULL DEFAULT 'customer';

-- CreateIndex
CREATE INDEX "Draft_threadId_outcome_idx" ON "Draft"("threadId", "outcome");

-- Rows stored before authors were recorded: outbound rows are the agent's drafts and replies
UPDATE "Message" SET "author" = 'agent' WHERE "direction" = 'outbound';
-- Drafts settled before outcomes were recorded
UPDATE "Draft" SET "outcome" = 'discarded' WHERE "status" = 'discarded';
