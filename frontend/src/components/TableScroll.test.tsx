import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, expect, test } from "vitest";
import { TableScroll } from "./TableScroll";

// jsdom lays nothing out: the widths a 390 px phone gives the servers table are set here
const saved = ["scrollWidth", "clientWidth"].map((k) => [k, Object.getOwnPropertyDescriptor(HTMLElement.prototype, k)] as const);
function widths(scroll: number, client: number) {
  Object.defineProperty(HTMLElement.prototype, "scrollWidth", { configurable: true, get: () => scroll });
  Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => client });
}
afterEach(() => {
  for (const [k, d] of saved) if (d) Object.defineProperty(HTMLElement.prototype, k, d);
});

const table = (
  <TableScroll label="servers">
    <table>
      <tbody>
        <tr>
          <td>a</td>
        </tr>
      </tbody>
    </table>
  </TableScroll>
);

test("a table wider than its card says it scrolls: a fade on the hidden side and a described hint", () => {
  widths(820, 366);
  render(table);
  const region = screen.getByRole("region", { name: "servers" });
  const hint = screen.getByTestId("scroll-hint");
  expect(hint.textContent).toBe("More columns to the right: scroll sideways");
  expect(region.getAttribute("aria-describedby")).toBe(hint.id);
  expect(region.getAttribute("tabindex")).toBe("0");
  const box = region.parentElement!;
  expect(box.hasAttribute("data-more-right")).toBe(true);
  expect(box.hasAttribute("data-more-left")).toBe(false);
  // scrolled to the end: the fade moves to the left edge
  region.scrollLeft = 454;
  fireEvent.scroll(region);
  expect(box.hasAttribute("data-more-left")).toBe(true);
  expect(box.hasAttribute("data-more-right")).toBe(false);
  expect(screen.getByTestId("scroll-hint").textContent).toBe("More columns to the left: scroll back");
});

test("a table that fits says nothing", () => {
  widths(600, 600);
  render(table);
  expect(screen.queryByTestId("scroll-hint")).toBeNull();
  expect(screen.getByRole("region", { name: "servers" }).hasAttribute("aria-describedby")).toBe(false);
});
