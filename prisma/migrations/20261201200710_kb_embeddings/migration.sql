-- AlterTable
ALTER TABLE "KbPassage" ADD COLUMN     "embeddedAt" TIMESTAMP(3),
ADD COLUMN     "embedding" real[],
ADD COLUMN     "embeddingModel" TEXT,
ADD COLUMN     "inputHash" TEXT;
