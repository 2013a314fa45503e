-- AlterTable
ALTER TABLE "MailboxCheckpoint" ALTER COLUMN "lastUid" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "Message" ALTER COLUMN "imapUid" SET DATA TYPE BIGINT;
