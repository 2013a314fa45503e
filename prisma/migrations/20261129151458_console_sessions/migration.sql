-- CreateTable
CREATE TABLE "ConsoleSession" (
    "tokenHash" TEXT NOT NULL,
    "csrfToken" TEXT NOT NULL,
    "passwordCheck" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ConsoleSession_pkey" PRIMARY KEY ("tokenHash")
);

-- CreateIndex
CREATE INDEX "ConsoleSession_lastSeenAt_idx" ON "ConsoleSession"("lastSeenAt");

-- CreateIndex
CREATE INDEX "ConsoleSession_createdAt_idx" ON "ConsoleSession"("createdAt");
