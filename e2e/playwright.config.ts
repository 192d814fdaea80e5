import { defineConfig } from "@playwright/test";

// Browser checks run Debian's Chromium (browser downloads do not work on our machines) against
// the real backend, started here on a free port with the private test services
// (scripts/e2e-server.sh migrates the database and seeds what the tests need).
const port = Number(process.env.HITCURVE_E2E_PORT ?? 18765);

export default defineConfig({
  testDir: "./tests",
  outputDir: "./test-results",
  timeout: 300_000, // per test, a hang guard: several steps, each waiting for its event; beside a second make test (load 60-90) one took over 180 s
  retries: 0,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ],
    },
  },
  webServer: {
    command: `bash ../scripts/e2e-server.sh ${port}`,
    url: `http://127.0.0.1:${port}/api/v1/health`,
    timeout: 600_000, // migrating and seeding: tens of seconds on a loaded 2-core machine, over 180 s at load 71
    reuseExistingServer: false,
  },
});
