-- AlterTable
ALTER TABLE "Draft" ADD COLUMN     "flags" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "sendClaimedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Thread" ADD COLUMN     "handoffAt" TIMESTAMP(3),
ADD COLUMN     "handoffReason" TEXT,
ADD COLUMN     "promotionError" TEXT,
ADD COLUMN     "promotionFailedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "LoopState" (
    "scope" TEXT NOT NULL,
    "consecutive" INTEGER NOT NULL DEFAULT 0,
    "fingerprints" JSONB NOT NULL DEFAULT '[]',
    "lastReply" JSONB NOT NULL DEFAULT '[]',
    "stoppedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LoopState_pkey" PRIMARY KEY ("scope")
);

-- CreateIndex
CREATE INDEX "LoopState_updatedAt_idx" ON "LoopState"("updatedAt");
