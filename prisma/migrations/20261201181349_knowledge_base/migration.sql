-- AlterTable
ALTER TABLE "Draft" ADD COLUMN     "citations" JSONB NOT NULL DEFAULT '[]';

-- CreateTable
CREATE TABLE "KbDocument" (
    "id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "lang" TEXT,
    "tags" JSONB NOT NULL DEFAULT '[]',
    "contentHash" TEXT NOT NULL,
    "bytes" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "KbDocument_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "KbPassage" (
    "id" TEXT NOT NULL,
    "documentId" TEXT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "titlePath" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "searchText" TEXT NOT NULL,
    "searchVector" tsvector,
    "tokens" INTEGER NOT NULL,

    CONSTRAINT "KbPassage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "KbDocument_source_key" ON "KbDocument"("source");

-- CreateIndex
CREATE INDEX "KbPassage_searchVector_idx" ON "KbPassage" USING GIN ("searchVector");

-- CreateIndex
CREATE UNIQUE INDEX "KbPassage_documentId_ordinal_key" ON "KbPassage"("documentId", "ordinal");

-- AddForeignKey
ALTER TABLE "KbPassage" ADD CONSTRAINT "KbPassage_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "KbDocument"("id") ON DELETE CASCADE ON UPDATE CASCADE;
