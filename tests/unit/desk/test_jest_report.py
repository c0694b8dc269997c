"""Jest's JSON report (a real one, from ts-jest): only expect's or node:assert's failure is an
assertion; a crash is a plain failure; a file that cannot run is an error of that file."""

from __future__ import annotations

from pathlib import Path

from signoff.repair.junit import jest_frames, parse_jest

REPORT = (Path(__file__).resolve().parents[2] / "data" / "desk" / "jest-report.json").read_bytes()


def test_only_an_expect_failure_is_an_assertion() -> None:
    cases = {c.id: c for c in parse_jest(REPORT, "/work/project")}
    coupon, crash = cases["tests/a.test.ts::d::coupon"], cases["tests/a.test.ts::d::typeerr"]
    assert (coupon.outcome, coupon.assertion) == ("failed", True) and "Received: -100" in coupon.message
    assert (crash.outcome, crash.assertion, crash.exception) == ("failed", False, "TypeError")
    broken = cases["tests/b.test.ts"]
    assert (broken.outcome, broken.assertion) == ("error", False) and "TS2307" in broken.message


def test_each_failure_names_where_it_was_raised() -> None:
    assert jest_frames(REPORT, "/work/project") == {"tests/a.test.ts::d::coupon": "tests/a.test.ts",
                                                    "tests/a.test.ts::d::typeerr": "tests/a.test.ts"}
