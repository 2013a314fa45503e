-- AlterTable
ALTER TABLE "ProfileFact" ADD COLUMN     "tags" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "Turn" ADD COLUMN     "contextTrace" JSONB;
