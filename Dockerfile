# The agent's own image: the TypeScript sources run through tsx, no build step.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/support-agent.js"]
CMD ["start"]
