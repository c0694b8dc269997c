import { calculateTotal } from "../src/checkout";

describe("calculateTotal", () => {
  test("plain", () => {
    expect(calculateTotal(200, 1)).toBe(200);
  });
});
