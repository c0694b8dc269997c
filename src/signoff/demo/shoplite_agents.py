"""Scripted agents for the ShopLite fixtures, Python and TypeScript (offline, deterministic, labelled `simulated`): the
desk's default script (`signoff.desk.engineering.SCRIPT`), filled into the agents' script registry on
import. The CLI's desk commands and the demo import this module; the desk itself never does, so on a
real project with a model provider configured no ShopLite code runs.

They stand in for models in the demo and tests. Like a model they read the dossier only as data;
unlike a model they follow fixed rules: the reproducer recognises the two seeded bugs from words in
the report, the fixer applies the matching change, triage and review give fixed advisory notes.
"""

from __future__ import annotations

from typing import Any

from signoff.agents import register_script
from signoff.desk.engineering import SCRIPT

COUPON_TEST = '''"""Regression test for {bug}: a coupon larger than the cart must not make the total negative."""

from shoplite.checkout import total


def test_coupon_larger_than_cart_is_not_negative():
    result = total(200, 1, "SAVE300")
    assert result == 0, f"a 300 coupon on a 200 cart must cost 0, not {{result}}"
'''

COUPON_TEST_2 = '''"""Regression test for {bug} (round {round}): a large coupon with several items."""

from shoplite.checkout import total


def test_large_coupon_with_two_items_is_not_negative():
    result = total(100, 2, "SAVE300")
    assert result >= 0, f"a 300 coupon on a 2 x 100 cart must not be negative, got {{result}}"
'''

OVERFLOW_TEST = '''"""Regression test for {bug}: a huge price must be refused, not become an infinite total."""

import math

from shoplite.checkout import total


def test_huge_price_is_refused_or_finite():
    try:
        result = total(1e308, 1)
    except ValueError:
        return
    assert math.isfinite(result), f"total(1e308, 1) returned {{result}}"
'''


# The TypeScript ShopLite (examples/shoplite-ts): Vitest tests, formatted as its Prettier wants them.
COUPON_TEST_TS = """// Regression test for {bug}: a coupon larger than the cart must not make the total negative.
import {{ expect, test }} from "vitest";

import {{ calculateTotal }} from "../src/checkout";

test("a coupon larger than the cart costs nothing", () => {{
  expect(calculateTotal(200, 1, "SAVE300")).toBe(0);
}});
"""

COUPON_TEST_2_TS = """// Regression test for {bug} (round {round}): a large coupon with several items.
import {{ expect, test }} from "vitest";

import {{ calculateTotal }} from "../src/checkout";

test("a large coupon with two items is not negative", () => {{
  expect(calculateTotal(100, 2, "SAVE300")).toBeGreaterThanOrEqual(0);
}});
"""

OVERFLOW_TEST_TS = """// Regression test for {bug}: a huge price must be refused, not become an infinite total.
import {{ expect, test }} from "vitest";

import {{ calculateTotal }} from "../src/checkout";

test("a huge price is refused or stays finite", () => {{
  let result: number;
  try {{
    result = calculateTotal(1e308, 1, "", false);
  }} catch (error) {{
    expect(error).toBeInstanceOf(RangeError);
    return;
  }}
  expect(Number.isFinite(result), `calculateTotal(1e308, 1, "", false) returned ${{result}}`).toBe(true);
}});
"""

TS_MODULE = "src/checkout.ts"
TS_ROUNDING = "  return Math.round(amount * 100) / 100;\n"
TS_SUBTOTAL = "  return (price * 100 * quantity) / 100;\n"


def _ts_fix(files: dict[str, str], test: str) -> dict[str, Any]:
    text = files.get(TS_MODULE, "")
    if "SAVE300" in test and TS_ROUNDING in text:
        fixed = text.replace(TS_ROUNDING, "  return Math.round(Math.max(amount, 0) * 100) / 100;\n")
        return {"summary": "never let a coupon take the total below zero",
                "files": [{"path": TS_MODULE, "content": fixed}]}
    if "1e308" in test and TS_SUBTOTAL in text:
        fixed = text.replace(TS_SUBTOTAL, "  const amount = (price * 100 * quantity) / 100;\n"
                             "  if (!Number.isFinite(amount)) {\n"
                             '    throw new RangeError("Use a valid price and a quantity between 1 and 99.");\n'
                             "  }\n  return amount;\n")
        return {"summary": "refuse prices whose total overflows", "files": [{"path": TS_MODULE, "content": fixed}]}
    return {"summary": "no rule applies to these files", "files": []}


def _report(task: dict[str, Any]) -> str:
    return str(task.get("untrusted", {}).get("report", "")).lower()


def reproducer(task: dict[str, Any]) -> dict[str, Any]:
    text = _report(task)
    path = str(task["test_path"])
    ts = path.endswith(".test.ts")
    name = path.rsplit("/", 1)[-1].removeprefix("test_").removesuffix(".py").removesuffix(".test.ts")
    bug = name.upper().replace("_", "-")
    round_ = int(task.get("round", 1))
    if "infinit" in text or "huge" in text or "overflow" in text:
        source = (OVERFLOW_TEST_TS if ts else OVERFLOW_TEST).format(bug=bug)
    elif "coupon" in text:
        first, again = (COUPON_TEST_TS, COUPON_TEST_2_TS) if ts else (COUPON_TEST, COUPON_TEST_2)
        source = (first if round_ == 1 else again).format(bug=bug, round=round_)
    else:
        source = (f'// No rule matched the report for {bug}.\nimport {{ expect, test }} from "vitest";\n\n'
                  'test("placeholder", () => {\n  expect(true).toBe(true);\n});\n') if ts else \
            f'"""No rule matched the report for {bug}."""\n\n\ndef test_placeholder():\n    assert True\n'
    return {"test_path": path, "test_source": source, "rationale": "asserts the behaviour the report expects"}


def fixer(task: dict[str, Any]) -> dict[str, Any]:
    files: dict[str, str] = dict(task.get("files", {}))
    test = str(task.get("test", {}).get("source", ""))
    if TS_MODULE in files:
        return _ts_fix(files, test)
    path = "shoplite/checkout.py"
    text = files.get(path, "")
    if "SAVE300" in test and "return round(amount, 2)" in text:
        return {"summary": "never let a coupon take the total below zero",
                "files": [{"path": path, "content": text.replace("return round(amount, 2)",
                                                                 "return round(max(amount, 0.0), 2)")}]}
    if "1e308" in test and "return price * 100 * quantity / 100" in text:
        fixed = text.replace(
            "    return price * 100 * quantity / 100\n",
            "    amount = price * 100 * quantity\n"
            "    if not math.isfinite(amount):\n"
            '        raise ValueError("Use a valid price and a quantity between 1 and 99.")\n'
            "    return amount / 100\n")
        fixed = fixed.replace('"""Checkout totals.', '"""Checkout totals.', 1)
        fixed = fixed.replace("\n\nCOUPONS", "\n\nimport math\n\nCOUPONS", 1)
        return {"summary": "refuse prices whose total overflows", "files": [{"path": path, "content": fixed}]}
    return {"summary": "no rule applies to these files", "files": []}


def triage(task: dict[str, Any]) -> dict[str, Any]:
    text = _report(task)
    severity = "high" if ("negative" in text or "infinit" in text) else "medium"
    if "coupon" in text:
        cause, test = ("the coupon amount is subtracted without a floor at zero",
                       "a coupon larger than the cart must give a total of 0")
    elif "infinit" in text or "huge" in text:
        cause, test = ("a huge price overflows the float total", "a huge price must be refused or stay finite")
    else:
        cause, test = "unknown from the report alone", "a test of the behaviour the report describes"
    return {"severity": severity, "likely_cause": cause, "proving_test": test,
            "summary": "The checkout total is wrong for some inputs (advisory guess from the dossier)."}


def reviewer(task: dict[str, Any]) -> dict[str, Any]:
    if "diff" in task:
        diff = str(task["diff"])
        guards = ("max(amount, 0.0)", "isfinite", "Math.max(amount, 0)", "Number.isFinite")
        fine = any(guard in diff for guard in guards)
        return {"recommendation": "approve" if fine else "comment",
                "summary": "advisory: the change " + ("adds the missing guard" if fine else "needs a closer look"),
                "notes": [] if fine else [{"text": "no guard against the reported input was found"}]}
    files = task.get("files", {})
    text = _report(task)
    notes = []
    for path, source in files.items():
        if "coupon" in text and "SAVE300" not in source:
            notes.append({"path": path, "text": "the report is about a coupon but the test does not use one"})
    return {"recommendation": "comment", "summary": "advisory: the test " + (
        "matches the reported behaviour" if not notes else "may not match the report"), "notes": notes}


register_script("reproducer", reproducer, name=SCRIPT)
register_script("fixer", fixer, name=SCRIPT)
register_script("desk_triage", triage, name=SCRIPT)
register_script("reviewer", reviewer, name=SCRIPT)
