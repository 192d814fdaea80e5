/// <reference types="vitest" />
import { defineConfig } from "vite";

// JSX is compiled by esbuild (automatic runtime); no framework plugin is needed.
// In development, /api is proxied to the backend started by `make demo` (HITCURVE_API_URL).
export default defineConfig({
  esbuild: { jsx: "automatic" },
  server: {
    proxy: { "/api": process.env.HITCURVE_API_URL ?? "http://127.0.0.1:8000" },
  },
  build: { outDir: "dist", sourcemap: true },
  test: {
    environment: "jsdom",
    globals: true,
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test/setup.ts"],
    // A time-out here only catches a test that hangs: beside `make test`'s other lanes on 2 cores
    // (load 45) a render of 1 s took over the default 5 s, and with a second `make test` beside it
    // (load 60-90) one test of several fetches took 64 s. No test sets a shorter one of its own.
    testTimeout: 120_000,
  },
});
