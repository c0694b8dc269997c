"""A diff as reviewers read it: per file, numbered, highlighted, every line of the text shown once
and escaped (signoff.web.diffs)."""

from __future__ import annotations

import html
import re

from signoff.web.diffs import diff_files
from signoff.web.render import templates

DIFF = '''diff --git a/shop/cart.py b/shop/cart.py
index 1111111..2222222 100644
--- a/shop/cart.py
+++ b/shop/cart.py
@@ -10,4 +10,5 @@ class Cart:
     def total(self) -> int:
-        return sum(self.prices) - self.coupon
+        """Never below zero."""
+        return max(0, sum(self.prices) - self.coupon)
<blank context line>
         # done
diff --git a/README.md b/README.md
new file mode 100644
--- /dev/null
+++ b/README.md
@@ -0,0 +1,2 @@
+# Shop <script>alert(1)</script>
+\tindented
\\ No newline at end of file
'''.replace("<blank context line>", " ")


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_each_file_is_its_own_section_with_numbered_lines() -> None:
    cart, readme = diff_files(DIFF)
    assert (cart.path, cart.added, cart.deleted) == ("shop/cart.py", 2, 1)
    assert (readme.path, readme.added, readme.deleted) == ("README.md", 2, 0)
    numbered = [(line.kind, line.old, line.new) for line in cart.lines if line.kind not in ("meta", "hunk")]
    assert numbered == [("ctx", 10, 10), ("del", 11, None), ("add", None, 11), ("add", None, 12), ("ctx", 12, 13),
                        ("ctx", 13, 14)]
    assert [(line.kind, line.new) for line in readme.lines if line.kind == "add"] == [("add", 1), ("add", 2)]


def test_every_line_of_the_text_is_shown_once_in_order_and_indentation_is_kept() -> None:
    shown = [line.sign + _text(line.html) for f in diff_files(DIFF) for line in f.lines]
    assert shown == DIFF.splitlines()


def test_code_is_highlighted_by_its_language_and_markup_in_it_is_escaped() -> None:
    cart, readme = diff_files(DIFF)
    added = next(line for line in cart.lines if line.kind == "add" and "max" in str(line.html))
    assert '<span class="k">return</span>' in added.html and '<span class="nb">max</span>' in added.html
    assert any('class="sd"' in line.html or 'class="s2"' in line.html for line in cart.lines)  # the docstring
    assert "<script>" not in "".join(str(line.html) for line in readme.lines)
    assert "&lt;script&gt;" in "".join(str(line.html) for line in readme.lines)


def test_the_page_shows_each_line_on_one_row_with_its_numbers_and_no_blank_line_between() -> None:
    page = templates.get_template("diff.html").render(shown_files=diff_files(DIFF), diff_label="The diff", split=False,
                                                      diff_anchor="diff")
    rows = re.findall(r"<tr class=\"(\w+)\">(.*?)</tr>", page, re.S)
    assert len(rows) == len(DIFF.splitlines())
    assert '<td class="ln" data-ln="11"></td><td class="ln"></td>' in page  # the removed line: old number only
    assert "\n\n" not in page.split('<table class="diff">', 1)[1]
    assert page.count('class="diff-file"') == 2 and "<code>shop/cart.py</code>" in page


def test_bare_text_that_is_not_a_git_diff_is_shown_as_it_is() -> None:
    (only,) = diff_files("+x\n-y")
    assert only.path == "" and [_text(line.html) for line in only.lines] == ["+x", "-y"]
    assert diff_files("") == []


def test_side_by_side_pairs_each_removed_line_with_the_line_that_replaced_it() -> None:
    cart, readme = diff_files(DIFF)
    rows = [(r.left and (r.left.kind, r.left.old), r.right and (r.right.kind, r.right.new), r.across and r.across.kind)
            for r in cart.split() if r.across is None or r.across.kind == "hunk"]
    assert rows == [(None, None, "hunk"), (("ctx", 10), ("ctx", 10), None), (("del", 11), ("add", 11), None),
                    (None, ("add", 12), None), (("ctx", 12), ("ctx", 13), None), (("ctx", 13), ("ctx", 14), None)]
    # Every line of the file is on one side or across, once (context on both).
    shown = [line for r in cart.split() for line in dict.fromkeys([r.left, r.right, r.across]) if line is not None]
    assert shown == cart.lines
    page = templates.get_template("diff.html").render(shown_files=[cart, readme], diff_label="The diff", split=True,
                                                      diff_anchor="change")
    assert page.count('<table class="diff split">') == 2 and 'href="?#change">unified view</a>' in page
    assert '<td class="ln del" data-ln="11"></td>' in page and '<td class="ln add" data-ln="11"></td>' in page
