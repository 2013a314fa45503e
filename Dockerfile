# The agent's own image: the TypeScript sources run through tsx, no build step.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_ENV=production
# node itself is the entry point (no npm, no shell): `docker stop` reaches the agent, which
# listens for SIGTERM from its first moment (test/integration/supervisor.test.ts).
ENTRYPOINT ["node", "bin/support-agent.js"]
CMD ["start"]
