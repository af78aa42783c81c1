# The API and the worker share one image; the command picks the role (api | worker).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK is an npm workspace: npm install needs its manifest, npm run build its sources.
COPY sdk/typescript/package.json sdk/typescript/package.json
COPY sdk/typescript/bin sdk/typescript/bin
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json drizzle.config.ts ./
COPY src src
COPY workflows workflows
COPY activities activities
COPY db db
COPY sdk/typescript sdk/typescript
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js HOST=0.0.0.0
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/db/migrations db/migrations
USER node
CMD ["node", "dist/src/main.js", "api"]
