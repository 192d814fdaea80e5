import { expect, test } from "vitest";
import { curveCsv, curveRows } from "./curveCsv";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

test("the CSV names each column's unit and carries plain numbers: bytes, hit ratios from 0 to 1, money", () => {
  const points = [
    { bytes: 512 * MiB, hit: 0.5, lo: 0.48, hi: 0.52 },
    { bytes: GiB, hit: 0.8123456789, lo: 0.8, hi: 0.83 },
    { bytes: 2 * GiB, hit: 0.9, lo: 0.88, hi: 0.92 },
    { bytes: 4 * GiB, hit: 0.93, lo: 0.9, hi: 0.95 },
  ];
  // today 1 GiB, the answer near 2 GiB, observed up to 2 GiB: 4 GiB is a lower bound
  const csv = curveCsv(curveRows(points, GiB, 2.1 * GiB, 2 * GiB), 3, "USD");
  expect(csv).toBe(
    [
      "memory (bytes),hit ratio (0 to 1),band low (hit ratio),band high (hit ratio),cost per month (USD),observed,note",
      "536870912,0.5,0.48,0.52,1.5,yes,",
      "1073741824,0.812346,0.8,0.83,3,yes,today",
      "2147483648,0.9,0.88,0.92,6,yes,target",
      "4294967296,0.93,0.9,,12,no,not observed yet: the hit ratio is a lower bound",
      "",
    ].join("\r\n"),
  );
});

test("without a band or a price those columns are left out; a cell with a comma or a quote is quoted", () => {
  const rows = curveRows([{ bytes: 64 * MiB, hit: 0.25 }], 64 * MiB, null, null);
  expect(curveCsv(rows, null, "EUR")).toBe("memory (bytes),hit ratio (0 to 1),observed,note\r\n67108864,0.25,yes,today\r\n");
  const withComma = curveCsv(rows, 1, 'a,"b"');
  expect(withComma.split("\r\n")[0]).toBe('memory (bytes),hit ratio (0 to 1),"cost per month (a,""b"")",observed,note');
});
