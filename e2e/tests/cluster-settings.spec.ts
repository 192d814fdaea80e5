import { test } from "@playwright/test";
import { api, expect, expectedBytesText, GiB, logIn, plain, shots } from "./helpers";

// A cluster's settings are edited on its page (target, price, node size, name), a server is added
// to it and taken out of it there, and the cluster is deleted there; what the page saves is what
// the API then answers.
test("a cluster is created, edited, given a server and deleted from the dashboard", async ({ page }) => {
  await logIn(page);
  const name = `edit-me-${Date.now()}`;
  await page.getByRole("button", { name: "New cluster" }).click();
  await page.getByLabel("Name").fill(name);
  await page.getByRole("button", { name: "Create" }).click();
  await page.getByRole("link", { name }).click();

  const panel = page.getByTestId("cluster-settings");
  await expect(panel.getByTestId("cluster-node-size")).toContainText("not set");
  await panel.getByRole("button", { name: "Edit settings" }).click();
  const form = page.getByTestId("cluster-settings-form");
  await form.getByLabel("Target hit rate (%)").fill("95");
  await form.getByLabel("Price per GB-month ($)").fill("7.5");
  await form.getByRole("spinbutton", { name: "Node size" }).fill("2");
  await form.getByLabel("Node size unit").selectOption("GiB");
  await form.getByLabel("Name").fill(`${name}-renamed`);
  // misses priced per prefix: a line the form cannot read is named and nothing is saved
  await form.getByLabel("Miss cost per prefix").fill("page = 40\nsess");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.getByRole("alert")).toContainText("line 2 (“sess”)");
  await form.getByLabel("Miss cost per prefix").fill("page = 40\nsess = 0.5");
  await shots(page, "cluster-settings-form"); // the open form fits 390 px too (its selects included)
  await form.getByRole("button", { name: "Save" }).click();

  await expect(panel.getByTestId("cluster-target")).toHaveText(/^95\s%$/);
  await expect(panel.getByTestId("cluster-prefix-costs")).toContainText("page: $40, sess: $0.50 per million misses");
  expect(plain(await panel.getByTestId("cluster-node-size").textContent())).toBe(expectedBytesText(2 * GiB));
  await panel.scrollIntoViewIfNeeded();
  await shots(page, "cluster-settings");
  const id = page.url().split("/").pop()!;
  const saved = await api<{ name: string; target_hit_ratio: number; price_per_gb_month: number; node_size_bytes: number; prefix_miss_costs: Record<string, number> }>(
    page,
    `/clusters/${id}`,
  );
  expect(saved).toMatchObject({
    name: `${name}-renamed`, target_hit_ratio: 0.95, price_per_gb_month: 7.5, node_size_bytes: 2 * GiB,
    prefix_miss_costs: { page: 40, sess: 0.5 },
  });

  // members: the seed's unassigned server joins from the page and leaves again (back to no cluster)
  const members = page.getByTestId("cluster-members");
  await expect(members).toContainText("No server is assigned to this cluster yet.");
  // the curve's place says what the cluster waits for
  await expect(page.getByText("This cluster has no server yet")).toBeVisible();
  const quiet = "10.0.0.10:11211";
  const addOption = members.getByTestId("cluster-add-server").locator("option", { hasText: quiet });
  await members.getByTestId("cluster-add-server").selectOption((await addOption.getAttribute("value"))!);
  await members.getByRole("button", { name: "Add to this cluster" }).click();
  await expect(members.getByRole("status")).toContainText(`${quiet} added to this cluster.`);
  await expect(members.getByTestId("servers").locator("tbody tr")).toHaveCount(1);
  await expect(members.getByTestId("servers")).toContainText(quiet);
  await expect(page.getByText("from its server's first processed snapshots")).toBeVisible();
  type S = { address: string; cluster_id: string | null };
  const clusterOf = async () => (await api<S[]>(page, "/servers")).find((s) => s.address === quiet)!.cluster_id;
  expect(await clusterOf()).toBe(id);
  await members.scrollIntoViewIfNeeded();
  await shots(page, "cluster-members");
  await members.getByLabel(`Cluster of ${quiet}`).selectOption("");
  await expect(members.getByRole("status")).toContainText(`${quiet} is in no cluster now.`);
  await expect(members).toContainText("No server is assigned to this cluster yet.");
  expect(await clusterOf()).toBeNull();

  page.once("dialog", (d) => d.accept());
  await panel.getByRole("button", { name: "Delete cluster" }).click();
  await expect(page.getByRole("heading", { name: "Clusters" })).toBeVisible();
  await expect(page.getByRole("link", { name: `${name}-renamed` })).toHaveCount(0);
  const r = await page.request.get(`/api/v1/clusters/${id}`);
  expect(r.status()).toBe(404);
});
