import { defineConfig } from 'vitest/config';

// The C++ server (`vramplan serve`) embeds dist/ and serves /api on the same origin. During
// `npm run dev` the API calls go to a running `vramplan serve` (port 8080, or $VRAMPLAN_API).
export default defineConfig({
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 400 },
  server: { proxy: { '/api': process.env.VRAMPLAN_API ?? 'http://127.0.0.1:8080' } },
  test: { environment: 'node', include: ['src/**/*.test.ts'] },
});
