import { describe, expect, test } from "vitest";

import { calculateTotal } from "../src/checkout";

describe("calculateTotal", () => {
  test("plain checkout", () => {
    expect(calculateTotal(200, 1)).toBe(200);
  });

  test("small coupon", () => {
    expect(calculateTotal(200, 1, "SAVE10")).toBe(190);
  });

  test("quantity and gift wrap", () => {
    expect(calculateTotal(25, 4, "", true)).toBe(130);
  });
});
