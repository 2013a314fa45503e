-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "attachmentText" TEXT NOT NULL DEFAULT '';
