# SPDX-License-Identifier: Apache-2.0
# The README's Python example runs as written and prints what its comments say.
import contextlib
import io
import re

from conftest import SOURCE_DIR


def readme_python_example():
    text = (SOURCE_DIR / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README.md has no ```python example"
    return blocks[0]


def test_the_readme_python_example_runs_and_prints_its_comments():
    code = readme_python_example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
    # Every `print(...)  # expected` comment in the example is what that line printed, in order.
    expected = [m.group(1).strip() for m in re.finditer(r"print\(.*\)\s*#\s*(.+)$", code, re.M)]
    assert expected and len(printed) >= len(expected)
    for want, got in zip(expected, printed):
        assert got.startswith(want.rstrip(". …")), (want, got)
